/** What commands share: the configuration and the database, opened once and closed on exit. */
import type postgres from 'postgres';
import { type Config, ConfigError, loadConfig } from '../config/config.ts';
import { openDatabase } from '../db/connect.ts';
import { migrateDatabase } from '../db/migrate.ts';
import { isConnectionLoss } from '../db/outage.ts';
import { withoutPassword } from '../runtime/reachability.ts';
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

/** The server database URL, for commands that need one shared by several processes. */
export function sharedDatabaseUrl(config: Config, command: string): string {
  if (!config.DATABASE_URL) {
    throw new UsageError(
      `${command} needs a Postgres server shared by every process: set DATABASE_URL=postgres://user@host:5432/db (the embedded database serves one process only)`,
    );
  }
  return config.DATABASE_URL;
}

export interface Store {
  sql: postgres.Sql;
  url: string;
  embedded: boolean;
  /** Migrations applied when it was opened. */
  migrated: number;
  close(): Promise<void>;
}

/**
 * Opens the configured database, migrated: DATABASE_URL when set, else the embedded PGlite
 * database under DAYBOOK_DATA_DIR (said in one line on stderr).
 */
export async function openStore(
  config: Config,
  options: { max?: number; quiet?: boolean } = {},
): Promise<Store> {
  if (config.DATABASE_URL) {
    const migrated = await migrateDatabase(config.DATABASE_URL).catch((err: unknown) => {
      if (!isConnectionLoss(err)) throw err;
      // A server that is down is not a bug of daybook's: one line naming the variable, no stack.
      throw new Error(
        `Postgres at ${withoutPassword(config.DATABASE_URL ?? '')} (DATABASE_URL) is unreachable: ${err instanceof Error ? err.message : String(err)}`,
      );
    });
    const db = openDatabase(config.DATABASE_URL, {
      max: options.max ?? 5,
      prepare: config.DAYBOOK_DB_PREPARE,
    });
    return { sql: db.sql, url: config.DATABASE_URL, embedded: false, migrated, close: db.close };
  }
  if (!options.quiet) {
    process.stderr.write(
      `daybook: DATABASE_URL is not set: using the embedded database (PGlite) in ${config.DAYBOOK_DATA_DIR}/\n`,
    );
  }
  // PGlite is loaded only when it is used: queue-mode processes never pay for it.
  const { startEmbedded } = await import('../db/embedded.ts');
  const embedded = await startEmbedded(config.DAYBOOK_DATA_DIR);
  let migrated: number;
  try {
    migrated = await migrateDatabase(embedded.url);
  } catch (err) {
    await embedded.close();
    throw err;
  }
  // PGlite runs one query at a time: one connection keeps transactions whole.
  const db = openDatabase(embedded.url, { max: 1 });
  return {
    sql: db.sql,
    url: embedded.url,
    embedded: true,
    migrated,
    close: async () => {
      await db.close();
      await embedded.close();
    },
  };
}

/** Runs `fn` with the configured database, closing it afterwards whatever happens. */
export async function withStore<T>(
  config: Config,
  fn: (store: Store) => Promise<T>,
  max?: number,
): Promise<T> {
  const store = await openStore(config, max === undefined ? {} : { max });
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}
