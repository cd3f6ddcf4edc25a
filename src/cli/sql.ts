/**
 * `daybook sql "<query>"`: one read-only statement against the configured database (embedded or
 * not), run with the rights of a reader, never with those of DATABASE_URL's user.
 *
 * Why another role, and why a login of its own. DATABASE_URL's user is often a
 * superuser, which may run programs (`copy … to program`), read the server's files
 * (`pg_read_file`), signal any backend and write anything; a read-only transaction stops none
 * but the writes, and not even those once the text says `commit; insert …`. A `SET ROLE` to a
 * reader in that same session is not enough: its session user is still the superuser, so
 * `reset role`, `set role postgres`, `set_config('role', …)` or a DO block can step back out,
 * inside the very statement. So, on a Postgres server, the text runs on a second connection that
 * logs in as the database's sql reader (made by migration 0007: no superuser, member of no role,
 * read-only by default, a statement timeout, SELECT on the analytics views only), with the
 * password kept in the owner-only table `sql_reader`; that session has nothing to step back to.
 * Whatever the role, the text also runs:
 *
 * - as one statement: the extended protocol (the driver's `unsafe` with `simple: false`) refuses
 *   several in one text, so `commit; insert …` never reaches a second statement;
 * - in a read-only transaction whose snapshot is taken first (so `set transaction read write`
 *   is refused) and that is always rolled back, never committed: a large object, which Postgres
 *   15 lets a read-only transaction create, is gone with it;
 * - after a check that the session is who it should be (a pooler or proxy may log in as someone
 *   else than asked, as the embedded database's socket does).
 *
 * When that login is not possible, the fallbacks, in order:
 *
 * - the embedded database (PGlite, DATABASE_URL unset) has one user, a superuser, whatever name
 *   a client gives: the text runs after `SET LOCAL ROLE` to the reader, once PUBLIC (so the
 *   reader) may neither call set_config nor run DO blocks in that database, the two ways out of
 *   the role within one statement. Its one user owns the database's files anyway;
 * - a DATABASE_URL user that is no superuser and holds none of the server's dangerous roles runs
 *   the text as itself (it can do no more than that user can already, and within the rules
 *   above; it can still signal its own role's backends);
 * - otherwise the query is refused (exit 2), saying why.
 *
 * The sql reader reads the `analytics` views only (as the analytics role does): the internal
 * tables are for `psql` with DATABASE_URL. This command never migrates: a database behind the
 * migrations is an error (exit 1), and the embedded one is not created when missing.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import type postgres from 'postgres';
import type { Config } from '../config/config.ts';
import { openDatabase } from '../db/connect.ts';
import { migrationState } from '../db/migration-state.ts';
import {
  closeRoleEscapes,
  ensureSqlReader,
  ident,
  sessionUserProblem,
  sqlReaderProblem,
} from '../db/roles.ts';
import { command } from './about.ts';
import { configOrExit } from './context.ts';
import { formatTable } from './terminal.ts';
import { intArg, secondsArg, UsageError } from './usage.ts';

/** One CSV field (RFC 4180). */
function csvField(v: unknown): string {
  if (v === null || v === undefined) return '';
  const s = v instanceof Date ? v.toISOString() : typeof v === 'object' ? JSON.stringify(v) : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The configured database, opened as it is: not migrated, not created. */
interface Opened {
  sql: postgres.Sql;
  embedded: boolean;
  /**
   * The embedded database only: ends a statement from this side, as it does not end one itself
   * at its statement_timeout (src/db/embedded.ts says why). The database is closed after it.
   */
  kill?: () => Promise<void>;
  close(): Promise<void>;
}

async function openAsIs(config: Config): Promise<Opened> {
  if (config.DATABASE_URL) {
    const db = openDatabase(config.DATABASE_URL, {
      max: 1,
      prepare: config.DAYBOOK_DB_PREPARE,
      applicationName: 'daybook sql',
    });
    return { sql: db.sql, embedded: false, close: db.close };
  }
  process.stderr.write(
    `daybook: DATABASE_URL is not set: using the embedded database (PGlite) in ${config.DAYBOOK_DATA_DIR}/\n`,
  );
  if (!existsSync(join(resolve(config.DAYBOOK_DATA_DIR), 'pgdata', 'PG_VERSION'))) {
    throw new Error(
      `there is no embedded database in ${config.DAYBOOK_DATA_DIR}/ yet: run \`daybook migrate\` (or \`daybook demo\`) first, or set DATABASE_URL`,
    );
  }
  const { startEmbeddedWorker } = await import('../db/embedded.ts');
  const embedded = await startEmbeddedWorker(config.DAYBOOK_DATA_DIR);
  const db = openDatabase(embedded.url, { max: 1, applicationName: 'daybook sql' });
  return {
    sql: db.sql,
    embedded: true,
    kill: embedded.kill,
    close: async () => {
      await db.close();
      await embedded.close();
    },
  };
}

/** Throws (exit 1) when the database lacks migrations this daybook has. */
async function assertMigrated(sql: postgres.Sql): Promise<void> {
  const state = await migrationState(sql);
  // A user who may not read the record cannot tell: the queries below will.
  if (!state.readable) return;
  if (state.applied < state.total) {
    throw new Error(
      `the database is not migrated yet (${state.applied} of ${state.total} migrations applied): run \`daybook migrate\` first`,
    );
  }
}

/** Who runs the text: a login of its own, the reader entered with SET ROLE, or the session user. */
type Runner =
  | { kind: 'login'; role: string; sql: postgres.Sql }
  | { kind: 'set-role'; role: string }
  | { kind: 'self'; role: string };

function refused(why: string): UsageError {
  return new UsageError(`daybook sql runs queries as a read-only role, and cannot here: ${why}`);
}

async function chooseRunner(config: Config, opened: Opened): Promise<Runner> {
  const found = await ensureSqlReader(opened.sql);
  const reader = typeof found === 'object' ? found : null;
  const problem = reader ? await sqlReaderProblem(opened.sql, reader.role) : null;
  if (opened.embedded) {
    if (!reader) throw refused('the embedded database has no sql reader role');
    if (problem) throw refused(problem);
    const left = await closeRoleEscapes(opened.sql, reader.role);
    if (left) throw refused(left);
    return { kind: 'set-role', role: reader.role };
  }
  const url = config.DATABASE_URL as string;
  let why: string;
  if (found === 'unreadable') {
    why = 'only the owner of the table sql_reader may read which role that is';
  } else if (!reader) {
    why =
      'this database has no sql reader role yet, and this user may not make one: run `daybook sql` once with a DATABASE_URL whose user is a superuser or has CREATEROLE';
  } else if (problem) {
    why = problem;
  } else {
    const { sql: login } = openDatabase(url, {
      max: 1,
      prepare: false,
      login: reader,
      applicationName: 'daybook sql',
      driverJson: true,
    });
    let kept = false;
    try {
      const [who] = await login<{ session_user: string; current_user: string }[]>`
        select session_user::text as session_user, current_user::text as current_user`;
      if (who?.session_user === reader.role && who.current_user === reader.role) {
        kept = true;
        return { kind: 'login', role: reader.role, sql: login };
      }
      why = `logging in as ${reader.role} gave a session of ${who?.session_user} (a pooler or proxy that changes the user?)`;
    } catch (err) {
      const e = err as { message?: string; code?: string };
      if (!e.code) throw err;
      why = `it could not log in as ${reader.role} (${e.message}): let pg_hba.conf, and any pooler in between, accept that role with its password`;
    } finally {
      if (!kept) await login.end({ timeout: 5 });
    }
  }
  const self = await sessionUserProblem(opened.sql);
  if (!self.problem) return { kind: 'self', role: self.user };
  throw refused(`${why}; and DATABASE_URL's user ${self.problem}`);
}

const ROLLBACK = Symbol('rollback');

const DATE_OID = 1082;
const DATE_ARRAY_OID = 1182;

/** A date value as the driver gives it (a Date at UTC midnight, or a list of them) as YYYY-MM-DD. */
function calendarDay(v: unknown): unknown {
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? String(v) : v.toISOString().slice(0, 10);
  if (Array.isArray(v)) return v.map(calendarDay);
  return v;
}

/** Who a session logged in as and who it runs as: a computed shape. */
interface SessionUsers {
  session_user: string;
  current_user: string;
}

/** How far the text may go: its statement_timeout, and the rows to fetch (null: every row). */
interface Limits {
  timeoutSeconds: number;
  maxRows: number | null;
}

interface Answer {
  rows: Record<string, unknown>[];
  columns: string[];
  /** Rows were left out: there were more than Limits.maxRows. */
  more: boolean;
}

/** The statement ran past its statement_timeout and the server cancelled it. */
class StatementTimeout extends Error {
  override readonly name = 'StatementTimeout';
}

/** A failed statement as the person should see it: a timeout (exit 1), else a usage error (exit 2). */
function statementFailure(err: unknown): unknown {
  const e = err as { message?: string; code?: string; position?: string };
  if (!e.code) return err;
  // 57014 is also a cancel by hand (pg_cancel_backend): only the timeout's message names it.
  if (e.code === '57014' && /statement timeout/.test(e.message ?? '')) return new StatementTimeout(e.message);
  // A person's SQL mistake, or a refusal: the server's message, no stack.
  const several =
    e.code === '42601' && /multiple commands/.test(e.message ?? '')
      ? ' (daybook sql runs one statement at a time)'
      : '';
  return new UsageError(
    `query failed: ${e.message}${e.position ? ` (at character ${e.position})` : ''}${several}`,
  );
}

/**
 * Runs the statement: every row, or with a row limit the first `maxRows + 1` through a cursor (a
 * portal the server stops after that many rows, then closed), so that a large answer is neither
 * sent nor held. The extra row tells that rows were left out.
 */
async function fetchRows(
  sql: postgres.Sql,
  tx: postgres.TransactionSql,
  text: string,
  maxRows: number | null,
): Promise<{ result: postgres.RowList<postgres.Row[]>; more: boolean }> {
  const query = tx.unsafe(text, [], { simple: false } as postgres.UnsafeQueryOptions);
  if (maxRows === null) return { result: await query, more: false };
  let first: postgres.Row[] | undefined;
  const done = await query.cursor(maxRows + 1, (rows) => {
    first ??= rows;
    return sql.CLOSE;
  });
  // A COPY answers with a stream, whatever came before: the caller refuses it.
  if (!Array.isArray(done) || !first)
    return { result: done as postgres.RowList<postgres.Row[]>, more: false };
  const result = first as postgres.RowList<postgres.Row[]>;
  return { result, more: result.length > maxRows };
}

/**
 * Runs `text` as one statement in a read-only transaction that is always rolled back. With `kill`
 * (the embedded database), a timer here ends a statement that runs past the timeout.
 */
async function runText(
  sql: postgres.Sql,
  runner: Runner,
  text: string,
  limits: Limits,
  kill?: () => Promise<void>,
): Promise<Answer> {
  let answer: Answer | undefined;
  let timer: NodeJS.Timeout | undefined;
  let killed = false;
  try {
    await sql.begin('read only', async (tx) => {
      // For this transaction only: a pooler in transaction mode hands on no session setting.
      await tx.unsafe(`set local statement_timeout = ${Math.round(limits.timeoutSeconds * 1000)}`);
      if (runner.kind === 'set-role') await tx.unsafe(`set local role ${ident(runner.role)}`);
      // Takes the snapshot (so `set transaction read write` is refused) and checks who runs it.
      const [who] = await tx<SessionUsers[]>`
        select session_user::text as session_user, current_user::text as current_user`;
      if (
        who?.current_user !== runner.role ||
        (runner.kind !== 'set-role' && who.session_user !== runner.role)
      ) {
        throw new Error(`daybook sql: the session runs as ${who?.current_user}, not ${runner.role}`);
      }
      let fetched: Awaited<ReturnType<typeof fetchRows>>;
      if (kill) {
        timer = setTimeout(() => {
          killed = true;
          void kill();
        }, limits.timeoutSeconds * 1000);
      }
      try {
        fetched = await fetchRows(sql, tx, text, limits.maxRows);
      } catch (err) {
        throw statementFailure(err);
      } finally {
        clearTimeout(timer);
      }
      const { result, more } = fetched;
      if (!Array.isArray(result)) {
        // COPY … TO STDOUT answers with a stream; the transaction is rolled back, the connection closed.
        (result as unknown as NodeJS.ReadableStream).resume();
        throw new UsageError('query failed: daybook sql does not run COPY; --csv prints rows as CSV');
      }
      // A date is a calendar day: printed YYYY-MM-DD in every format, not a midnight timestamp.
      const dates = (result.columns ?? []).filter((c) => c.type === DATE_OID || c.type === DATE_ARRAY_OID);
      const kept = limits.maxRows === null ? [...result] : [...result].slice(0, limits.maxRows);
      const rows = (kept as Record<string, unknown>[]).map((r) => {
        for (const c of dates) r[c.name] = calendarDay(r[c.name]);
        return r;
      });
      answer = { rows, columns: result.columns?.map((c) => c.name) ?? Object.keys(rows[0] ?? {}), more };
      throw ROLLBACK;
    });
  } catch (err) {
    // Whatever the driver says of the connection that was cut.
    if (killed) throw new StatementTimeout('the statement ran past its timeout and was ended');
    if (err !== ROLLBACK) throw err;
  }
  if (!answer) throw new Error('daybook sql: the query gave no answer');
  return answer;
}

/** A count as a person reads it: 1,000. */
const count = (n: number) => n.toLocaleString('en-US');

export function sqlCommand(): Command {
  return command('sql')
    .argument('<query>', 'the SQL, e.g. "select * from analytics.product_trending limit 5"')
    .option('--json', 'print rows as a JSON array (every row)')
    .option('--csv', 'print rows as CSV with a header (every row)')
    .option(
      '--timeout <seconds>',
      'cancel the statement when it runs longer than this (a number above 0, as 60 or 0.5)',
      secondsArg('--timeout'),
      DEFAULT_TIMEOUT_SECONDS,
    )
    .option(
      '--max-rows <n>',
      'the table shows at most this many rows, 1,000 unless given (not with --json or --csv, which print every row)',
      intArg('--max-rows', 1, MAX_ROWS_LIMIT),
    )
    .addHelpText(
      'after',
      `
The statement runs as the database's sql reader, a login role made by \`daybook migrate\` (when its
user may create roles) that can read the analytics views and nothing else, in a read-only
transaction that is rolled back. A database migrated by a user that could not make it gets it
from the first \`daybook sql\` whose DATABASE_URL user can (a superuser, or CREATEROLE). Without
it, or when it cannot log in (pg_hba.conf, a pooler), a DATABASE_URL user that is no superuser
runs the statement itself, read-only and rolled back; a superuser's is refused.

Two limits, each said on stderr with exit code 1 when it is reached:
  --timeout     a statement that runs longer is cancelled (statement_timeout, set for the
                statement's transaction only; the embedded database, which does not act on it,
                is stopped by daybook); 60 s unless given.
  --max-rows    the table (without --json or --csv) shows at most this many rows, 1,000 unless
                given, and fetches no more than one beyond them; --json and --csv print every row.

Examples:
  daybook sql "select list_date, position, name, votes_count from analytics.product_trending where is_latest_pull order by list_date desc, position limit 10"
  daybook sql --csv "select * from analytics.enterprise_changes where severity = 'high'" > high.csv
  daybook sql --timeout 300 --json "select * from analytics.enterprise_history"`,
    )
    .action(async (query: string, opts: SqlOptions) => {
      if (opts.json && opts.csv) throw new UsageError('choose one of --json and --csv');
      if (opts.maxRows !== undefined && (opts.json || opts.csv)) {
        throw new UsageError(
          `--max-rows limits the table only; --${opts.json ? 'json' : 'csv'} prints every row: leave one of them out`,
        );
      }
      if (query.trim() === '') throw new UsageError('the query is empty');
      const table = !opts.json && !opts.csv;
      const limits = {
        timeoutSeconds: opts.timeout,
        maxRows: table ? (opts.maxRows ?? DEFAULT_MAX_ROWS) : null,
      };
      const answer = await answerOf(query, limits);
      if (answer === 'timeout') {
        process.stderr.write(
          `daybook sql: the statement ran longer than ${opts.timeout} s and was cancelled (statement_timeout); raise it with --timeout SECONDS\n`,
        );
        process.exitCode = 1;
        return;
      }
      const { rows, columns, more } = answer;
      if (opts.json) process.stdout.write(`${JSON.stringify(rows)}\n`);
      else if (opts.csv) {
        process.stdout.write(`${columns.map(csvField).join(',')}\n`);
        for (const r of rows) process.stdout.write(`${columns.map((c) => csvField(r[c])).join(',')}\n`);
      } else {
        process.stdout.write(formatTable(rows, columns));
        const n = `${count(rows.length)} row${rows.length === 1 ? '' : 's'}`;
        process.stdout.write(more ? `(the first ${n}; more were left out)\n` : `(${n})\n`);
      }
      if (more) {
        process.stderr.write(
          `daybook sql: showing the first ${count(rows.length)} row${rows.length === 1 ? '' : 's'}; more were left out — use --max-rows N, --csv or --json for all of them\n`,
        );
        process.exitCode = 1;
      }
    });
}

interface SqlOptions {
  json?: boolean;
  csv?: boolean;
  timeout: number;
  maxRows?: number;
}

const DEFAULT_TIMEOUT_SECONDS = 60;
const DEFAULT_MAX_ROWS = 1_000;
/** A table of more rows than this is no longer read on a terminal: --csv or --json. */
const MAX_ROWS_LIMIT = 1_000_000;

/** Opens the database, picks who runs the text, and runs it; 'timeout' when it ran too long. */
async function answerOf(query: string, limits: Limits): Promise<Answer | 'timeout'> {
  const config = configOrExit();
  const opened = await openAsIs(config);
  let runner: Runner | undefined;
  try {
    await assertMigrated(opened.sql);
    runner = await chooseRunner(config, opened);
    return await runText(
      runner.kind === 'login' ? runner.sql : opened.sql,
      runner,
      query,
      limits,
      opened.kill,
    );
  } catch (err) {
    if (err instanceof StatementTimeout) return 'timeout';
    throw err;
  } finally {
    if (runner?.kind === 'login') await runner.sql.end({ timeout: 5 });
    await opened.close();
  }
}
