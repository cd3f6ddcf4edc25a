/**
 * Applies the committed migrations (migrations/, drizzle-kit's format). Safe to run twice and
 * from two processes at once: an advisory lock serialises runners and drizzle records what ran.
 */
import { fileURLToPath } from 'node:url';
import { drizzle } from 'drizzle-orm/postgres-js';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations', import.meta.url));
const LOCK_KEY = 7_302_414_771; // any constant; the same for every daybook process

/** Migrates the database at `url`; returns how many migrations were newly applied. */
export async function migrateDatabase(url: string): Promise<number> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await sql`select pg_advisory_lock(${LOCK_KEY})`;
    const before = await appliedCount(sql);
    await migrate(drizzle(sql), { migrationsFolder: MIGRATIONS_DIR });
    const after = await appliedCount(sql);
    await sql`select pg_advisory_unlock(${LOCK_KEY})`;
    return after - before;
  } finally {
    await sql.end({ timeout: 5 });
  }
}

async function appliedCount(sql: postgres.Sql): Promise<number> {
  const [exists] = await sql<
    { t: string | null }[]
  >`select to_regclass('drizzle.__drizzle_migrations')::text as t`;
  if (!exists?.t) return 0;
  const [row] = await sql<{ n: number }[]>`select count(*)::int as n from drizzle.__drizzle_migrations`;
  return row?.n ?? 0;
}
