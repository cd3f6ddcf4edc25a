/**
 * Opens the database through the `postgres` driver. Every query in daybook goes through this
 * one seam (`Sql`). The drizzle schema (schema.ts) defines the tables and drizzle-kit writes the
 * migrations, but no drizzle instance wraps this client: drizzle's postgres-js adapter replaces
 * the client's date and json serializers with pass-throughs, which would break the bulk writes
 * (Date and sql.json parameters) that the history layer relies on.
 */
import postgres from 'postgres';
import { parseJsonExact, stringifyExact } from '../upstream/json.ts';

/** The driver, or a transaction of it: the seam every read and write takes. */
export type Sql = postgres.Sql | postgres.TransactionSql;

export interface Database {
  sql: postgres.Sql;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** Pool size; the embedded database takes exactly one. */
  max?: number;
  /** Application name shown in pg_stat_activity. */
  applicationName?: string;
  /**
   * Named prepared statements (the driver's `prepare`, default true). False for PgBouncer in
   * transaction pooling mode before 1.21, which cannot keep them across server connections.
   */
  prepare?: boolean;
  /** The role to log in as, with its password, instead of the user `url` names. */
  login?: { role: string; password: string };
  /**
   * json and jsonb read by the driver's own parser instead of EXACT_JSON: the connection `daybook
   * sql` runs text on as the sql reader.
   */
  driverJson?: boolean;
}

/**
 * json and jsonb, numbers to the last digit both ways: a number a double cannot hold is read as
 * an ExactNumber and written back as its digits (src/upstream/json.ts).
 */
export const EXACT_JSON = {
  to: 114,
  from: [114, 3802],
  serialize: (x: unknown) => stringifyExact(x),
  parse: (x: string) => parseJsonExact(x),
};

/** Opens a pool to `url`. Server notices are not for daybook's users and are dropped. */
export function openDatabase(url: string, options: OpenOptions = {}): Database {
  const sql = postgres(url, {
    max: options.max ?? 5,
    prepare: options.prepare ?? true,
    ...(options.login ? { username: options.login.role, password: options.login.password } : {}),
    onnotice: () => {},
    connection: { application_name: options.applicationName ?? 'daybook' },
    ...(options.driverJson ? {} : { types: { json: EXACT_JSON } }),
  });
  return { sql, close: () => sql.end({ timeout: 5 }) };
}

/**
 * Runs `body` in a transaction: a new one on a pool (with `mode`, such as an isolation level),
 * or the caller's own when `sql` is already a transaction.
 */
export async function inTransaction<T>(sql: Sql, body: (tx: Sql) => Promise<T>, mode?: string): Promise<T> {
  if ('begin' in sql) {
    const run = (tx: postgres.TransactionSql) => body(tx);
    return (mode ? await sql.begin(mode, run) : await sql.begin(run)) as T;
  }
  return body(sql);
}
