/**
 * Applies the committed migrations (migrations/, drizzle-kit's format). Safe to run twice and
 * from two processes at once, directly or through PgBouncer in transaction pooling mode: the
 * whole run is one transaction that first takes a transaction-scoped advisory lock (a session
 * lock could be taken and released on different server connections behind a pooler and leak),
 * and drizzle's table records what ran.
 *
 * This does what drizzle's pg migrator (drizzle-orm/pg-core/dialect.js, `migrate`) does, with
 * the same table, hash and created_at values, so databases migrated by either are the same to
 * the other: the migrations whose folderMillis is newer than the last recorded created_at are
 * applied in order, statement by statement, each recorded as (hash, folderMillis).
 */
import { fileURLToPath } from 'node:url';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import postgres from 'postgres';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations', import.meta.url));
// Any constant, the same for every daybook process. Session and transaction-level advisory
// locks share one key space, so this also excludes a runner of the former session-lock code.
const LOCK_KEY = 7_302_414_771;

/**
 * A row of drizzle's own table `__drizzle_migrations` (not in src/db/schema.ts), as read here: its
 * `created_at` is an int8, which the driver returns as a string.
 */
interface MigrationRecord {
  created_at: string | null;
}

/** Migrates the database at `url`; returns how many migrations were newly applied. */
export async function migrateDatabase(url: string): Promise<number> {
  const migrations = readMigrationFiles({ migrationsFolder: MIGRATIONS_DIR });
  // No named prepared statements: PgBouncer before 1.21 cannot keep them in transaction mode.
  const sql = postgres(url, { max: 1, prepare: false, onnotice: () => {} });
  try {
    return await sql.begin(async (tx) => {
      // First, so that two runners cannot race even on `create schema if not exists`.
      await tx`select pg_advisory_xact_lock(${LOCK_KEY})`;
      await tx`create schema if not exists "drizzle"`;
      await tx`
        create table if not exists "drizzle"."__drizzle_migrations" (
          id serial primary key,
          hash text not null,
          created_at bigint
        )`;
      // Read after the lock: a runner that waited sees what the one before it committed.
      const [last] = await tx<MigrationRecord[]>`
        select created_at from "drizzle"."__drizzle_migrations" order by created_at desc limit 1`;
      let applied = 0;
      for (const migration of migrations) {
        if (last && Number(last.created_at) >= migration.folderMillis) continue;
        for (const statement of migration.sql) await tx.unsafe(statement);
        await tx`
          insert into "drizzle"."__drizzle_migrations" ("hash", "created_at")
          values (${migration.hash}, ${migration.folderMillis})`;
        applied++;
      }
      return applied;
    });
  } finally {
    await sql.end({ timeout: 5 });
  }
}
