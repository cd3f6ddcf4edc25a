/** What commands share: the configuration and the database, opened once and closed on exit. */
import { type Config, ConfigError, loadConfig } from '../config/config.ts';
import { type Database, openDatabase } from '../db/connect.ts';
import { migrateDatabase } from '../db/migrate.ts';
import { UsageError } from './usage.ts';

/** Loads the configuration; a bad value is a usage error (exit 2). */
export function configOrExit(): Config {
  try {
    return loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) throw new UsageError(err.message);
    throw err;
  }
}

/** The database URL, or a usage error saying how to set one. */
export function databaseUrlOf(config: Config): string {
  if (!config.DATABASE_URL) {
    throw new UsageError(
      'DATABASE_URL is not set: export DATABASE_URL=postgres://user@host:5432/db (see README, Configuration)',
    );
  }
  return config.DATABASE_URL;
}

/** Runs `fn` with a migrated database, closing it afterwards whatever happens. */
export async function withDatabase<T>(config: Config, fn: (db: Database) => Promise<T>): Promise<T> {
  const url = databaseUrlOf(config);
  await migrateDatabase(url);
  const db = openDatabase(url);
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}
