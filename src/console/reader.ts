/**
 * How the console reads: as the database's sql reader (migration 0007, the role `daybook sql`
 * runs as), which may SELECT the `analytics` and `console` views and nothing else, in read-only
 * transactions with a statement timeout. On a Postgres server it logs in as that role with a pool
 * of its own; on the embedded database, whose one user is a superuser, each transaction enters
 * the role with SET LOCAL ROLE once the ways back out of it are closed (src/db/roles.ts).
 * Whichever way, a transaction first checks that it runs as the reader.
 */
import type postgres from 'postgres';
import { openDatabase } from '../db/connect.ts';
import { closeRoleEscapes, ensureSqlReader, ident, sqlReaderProblem } from '../db/roles.ts';

/** A statement of a page runs at most this long: a page that takes longer is a bug to see. */
export const PAGE_STATEMENT_TIMEOUT_MS = 10_000;

export type ReadTx = postgres.TransactionSql;

export interface ConsoleReader {
  /** The reader's role name. */
  readonly role: string;
  /** Runs `body` in a read-only transaction as the reader. */
  read<T>(body: (tx: ReadTx) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** The role a session runs as: a computed shape. */
interface CurrentUser {
  who: string;
}

/** The console cannot read as the sql reader here; the message says why. */
export class ConsoleReaderError extends Error {
  override readonly name = 'ConsoleReaderError';
}

function readerOn(
  sql: postgres.Sql,
  role: string,
  setRole: boolean,
  close: () => Promise<void>,
): ConsoleReader {
  return {
    role,
    async read<T>(body: (tx: ReadTx) => Promise<T>): Promise<T> {
      return (await sql.begin('read only', async (tx) => {
        await tx.unsafe(`set local statement_timeout = ${PAGE_STATEMENT_TIMEOUT_MS}`);
        if (setRole) await tx.unsafe(`set local role ${ident(role)}`);
        const [who] = await tx<CurrentUser[]>`select current_user::text as who`;
        if (who?.who !== role)
          throw new ConsoleReaderError(`the console's session runs as ${who?.who}, not ${role}`);
        return body(tx);
      })) as T;
    },
    close,
  };
}

/**
 * The reader of the database `sql` is connected to (`url` is its address, used to log in as the
 * reader on a server). `embedded`: the embedded database, entered with SET ROLE instead.
 */
export async function openConsoleReader(
  sql: postgres.Sql,
  url: string,
  embedded: boolean,
): Promise<ConsoleReader> {
  const found = await ensureSqlReader(sql);
  if (found === 'unreadable')
    throw new ConsoleReaderError('only the owner of the table sql_reader may read which role the reader is');
  if (found === null)
    throw new ConsoleReaderError(
      'this database has no sql reader role yet: run `daybook sql "select 1"` once with a DATABASE_URL whose user may create roles',
    );
  const problem = await sqlReaderProblem(sql, found.role);
  if (problem) throw new ConsoleReaderError(problem);
  if (embedded) {
    const left = await closeRoleEscapes(sql, found.role);
    if (left) throw new ConsoleReaderError(left);
    return readerOn(sql, found.role, true, async () => {});
  }
  const { sql: login, close } = openDatabase(url, {
    max: 4,
    prepare: false,
    login: found,
    applicationName: 'daybook console',
  });
  try {
    const [who] = await login<{ who: string }[]>`select session_user::text as who`;
    if (who?.who !== found.role)
      throw new ConsoleReaderError(`logging in as ${found.role} gave a session of ${who?.who}`);
  } catch (err) {
    await close();
    const e = err as { code?: string; message?: string };
    if (e.code)
      throw new ConsoleReaderError(
        `it could not log in as ${found.role} (${e.message}): let pg_hba.conf, and any pooler in between, accept that role with its password`,
      );
    throw err;
  }
  return readerOn(login, found.role, false, close);
}
