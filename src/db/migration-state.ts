/**
 * How far a database is migrated, read without changing anything: the migrations this daybook
 * has (migrations/) against the last one drizzle's table records (src/db/migrate.ts says how
 * that table is kept).
 */
import { readMigrationFiles } from 'drizzle-orm/migrator';
import type { Sql } from './connect.ts';
import { MIGRATIONS_DIR } from './migrate.ts';

/** A computed shape: whether drizzle's table exists and may be read (to_regclass, has_table_privilege). */
interface RecordTable {
  exists: boolean;
  readable: boolean;
}

/** A computed shape: the latest `created_at` recorded (its int8 `max`, read `::text`). */
interface LastMigration {
  last: string | null;
}

export interface MigrationState {
  /** The migrations this daybook has. */
  total: number;
  /** How many of them the database records as applied. */
  applied: number;
  /** The database records a migration newer than any this daybook has (a newer daybook ran). */
  newer: boolean;
  /** False when the user of `sql` may not read the record (then nothing else is known). */
  readable: boolean;
}

/** What the database at `sql` records of the migrations; changes nothing. */
export async function migrationState(sql: Sql): Promise<MigrationState> {
  const all = readMigrationFiles({ migrationsFolder: MIGRATIONS_DIR }).map((m) => m.folderMillis);
  const newest = Math.max(0, ...all);
  const [t] = await sql<RecordTable[]>`
    select to_regclass('drizzle.__drizzle_migrations') is not null as exists,
      coalesce(has_table_privilege(to_regclass('drizzle.__drizzle_migrations'), 'SELECT'), false) as readable`;
  if (!t?.exists) return { total: all.length, applied: 0, newer: false, readable: true };
  if (!t.readable) return { total: all.length, applied: 0, newer: false, readable: false };
  const [r] = await sql<LastMigration[]>`
    select max(created_at)::text as last from drizzle.__drizzle_migrations`;
  const last = Number(r?.last ?? 0);
  return {
    total: all.length,
    applied: all.filter((m) => m <= last).length,
    newer: last > newest,
    readable: true,
  };
}
