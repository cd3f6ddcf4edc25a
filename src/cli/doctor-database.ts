/**
 * `daybook doctor`'s checks that read the database: Postgres itself (reachable, its version),
 * the migrations, the sql reader role, the clock against Postgres's, whether new events are
 * heard as they commit, and each subscription's receiver. Nothing is written: the database is opened as it is, never migrated.
 */
import pLimit from 'p-limit';
import postgres from 'postgres';
import type { Config } from '../config/config.ts';
import { migrationState } from '../db/migration-state.ts';
import { readerState } from '../db/reader-state.ts';
import { checkTarget, hostOf, isPrivateAddress, parseWebhookUrl } from '../delivery/address.ts';
import { safeUrl } from '../delivery/engine.ts';
import { mailAddresses } from '../delivery/mailer.ts';
import { listSubscriptions, type Subscription } from '../delivery/store.ts';
import { EventsHeard } from '../delivery/wake.ts';
import { createLogger } from '../log/log.ts';
import { withoutPassword } from '../log/urls.ts';
import { within } from '../time/deadline.ts';
import { databaseProblem } from './database-errors.ts';
import { type CheckResult, codeOf, fail, inWords, pass, skip } from './doctor-result.ts';

/** The oldest Postgres daybook's migrations run on (gen_random_uuid() is built in from 13). */
const MIN_POSTGRES = 13;
/** How far this machine's clock and Postgres's may be apart. */
export const CLOCK_TOLERANCE_MS = 5_000;

const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;

/** The server's version, as text and as a number: a computed shape (settings, no table). */
interface ServerVersion {
  version: string;
  num: number;
}

/** The server's clock, in milliseconds since the epoch: a computed shape. */
interface ServerClock {
  ms: number;
}

/** Whether a table exists: a computed shape. */
interface TableExists {
  exists: boolean;
}

/** The configured database as the checks use it: one connection, or null when none was made. */
export interface CheckedDatabase {
  /** The Postgres line. */
  result: CheckResult;
  sql: postgres.Sql | null;
}

/** Why Postgres cannot be used, and how to fix it. */
function postgresFailure(err: unknown, url: string, timeoutMs: number): CheckResult {
  const where = withoutPassword(url);
  const code = codeOf(err);
  const problem = databaseProblem(err, url);
  if (problem !== null) {
    const [first = '', createdb = ''] = problem.split('\n');
    return fail(
      'Postgres',
      first.replace(/\s*Create it, then run the command again:$/, ''),
      `create it (${createdb.trim()}), then run daybook migrate`,
    );
  }
  if (code === '28P01')
    return fail('Postgres', `${where}: ${inWords(err)}`, 'correct the user and password in DATABASE_URL');
  if (code === '28000')
    return fail(
      'Postgres',
      `${where}: ${inWords(err)}`,
      "let the server's pg_hba.conf accept this user from this machine, or use another user in DATABASE_URL",
    );
  if ((err instanceof Error && err.name === 'DeadlineError') || code === 'CONNECT_TIMEOUT')
    return fail(
      'Postgres',
      `${where} did not answer within ${seconds(timeoutMs)}`,
      'start Postgres, or correct the host and port in DATABASE_URL (a firewall may drop the connection)',
    );
  return fail(
    'Postgres',
    `${where} cannot be reached: ${inWords(err)}`,
    'start Postgres, or correct the host and port in DATABASE_URL',
  );
}

/** Connects to DATABASE_URL and reads the server's version; the embedded database is skipped. */
export async function openChecked(config: Config, timeoutMs: number): Promise<CheckedDatabase> {
  const url = config.DATABASE_URL;
  if (!url)
    return {
      result: skip(
        'Postgres',
        `DATABASE_URL is not set: the embedded database in ${config.DAYBOOK_DATA_DIR}/ is used, by one process at a time`,
      ),
      sql: null,
    };
  const sql = postgres(url, {
    max: 1,
    prepare: false,
    connect_timeout: Math.max(1, Math.ceil(timeoutMs / 1000)),
    onnotice: () => {},
    connection: { application_name: 'daybook doctor' },
  });
  try {
    const [v] = await within(
      sql<ServerVersion[]>`
        select current_setting('server_version') as version,
          current_setting('server_version_num')::int as num`,
      // The driver's connect_timeout says it first when the server does not answer at all.
      timeoutMs + 1000,
      'Postgres',
    );
    const version = (v?.version ?? '?').split(' ')[0] ?? '?';
    const where = withoutPassword(url);
    if ((v?.num ?? 0) < MIN_POSTGRES * 10_000)
      return {
        result: fail(
          'Postgres',
          `PostgreSQL ${version} at ${where} is too old`,
          `use PostgreSQL ${MIN_POSTGRES} or newer`,
        ),
        sql,
      };
    return { result: pass('Postgres', `PostgreSQL ${version} at ${where}`), sql };
  } catch (err) {
    await sql.end({ timeout: 0 }).catch(() => {});
    return { result: postgresFailure(err, url, timeoutMs), sql: null };
  }
}

/** Why the checks that need the database do not run. */
function noDatabase(config: Config, check: string, embedded: string): CheckResult {
  return skip(check, config.DATABASE_URL ? 'Postgres cannot be reached (above)' : embedded);
}

/** The migrations: all applied, none missing, none newer than this daybook. */
export async function migrationsCheck(
  config: Config,
  sql: postgres.Sql | null,
  timeoutMs: number,
): Promise<CheckResult> {
  if (!sql)
    return noDatabase(config, 'migrations', 'the embedded database is migrated when a command opens it');
  const s = await within(migrationState(sql), timeoutMs, 'reading the migrations');
  if (!s.readable)
    return skip('migrations', "DATABASE_URL's user may not read which migrations ran (drizzle's table)");
  if (s.newer)
    return fail(
      'migrations',
      'the database has migrations this daybook does not have: a newer daybook migrated it',
      'run the newer daybook here too',
    );
  if (s.applied < s.total)
    return fail('migrations', `${s.applied} of ${s.total} migrations applied`, 'run daybook migrate');
  return pass('migrations', `all ${s.total} applied`);
}

/** The sql reader: recorded, present on the server, safe to run a person's text as. */
export async function readerCheck(
  config: Config,
  sql: postgres.Sql | null,
  timeoutMs: number,
): Promise<CheckResult> {
  const check = 'read-only role';
  if (!sql) return noDatabase(config, check, "the embedded database's reader is made by daybook sql");
  const r = await within(readerState(sql), timeoutMs, 'reading the sql reader');
  const make =
    'run daybook migrate, then daybook sql "select 1" once, with a DATABASE_URL whose user is a superuser or has CREATEROLE: it makes the role';
  switch (r.kind) {
    case 'no-table':
      return skip(check, 'the database is not migrated yet (above)');
    case 'unreadable':
      return skip(
        check,
        "only the owner of the table sql_reader may read its name, and DATABASE_URL's user is not",
      );
    case 'none':
      return fail(check, 'this database has no read-only role for daybook sql yet', make);
    default:
      if (r.problem?.endsWith('does not exist on this server'))
        return fail(check, `the read-only role ${r.problem}`, make);
      if (r.problem)
        return fail(
          check,
          `${r.problem}: daybook sql will not run text as it`,
          `take those rights away (ALTER ROLE ${r.role} NOSUPERUSER …, REVOKE …), or drop the role and run daybook sql once to make it again`,
        );
      if (!r.canConnect || !r.readsAnalytics)
        return fail(
          check,
          `${r.role} exists but may not ${r.canConnect ? 'read the analytics views' : 'connect to this database'}`,
          'run daybook sql "select 1" once with a DATABASE_URL whose user owns the database: it completes the grants',
        );
      return pass(check, `${r.role} exists and reads the analytics views only`);
  }
}

/** This machine's clock against Postgres's: within CLOCK_TOLERANCE_MS (and half the round trip). */
export async function clockCheck(
  config: Config,
  sql: postgres.Sql | null,
  timeoutMs: number,
): Promise<CheckResult> {
  if (!sql) return noDatabase(config, 'clock', "the embedded database runs on this machine's clock");
  const before = Date.now();
  const [r] = await within(
    sql<ServerClock[]>`select (extract(epoch from clock_timestamp()) * 1000)::float8 as ms`,
    timeoutMs,
    'reading the clock of Postgres',
  );
  const after = Date.now();
  const skew = Number(r?.ms ?? 0) - (before + after) / 2;
  const note =
    config.DAYBOOK_CLOCK === undefined
      ? ''
      : ` (DAYBOOK_CLOCK is set: commands take their time from it instead, running on from ${new Date(config.DAYBOOK_CLOCK).toISOString()})`;
  if (Math.abs(skew) > CLOCK_TOLERANCE_MS + (after - before) / 2)
    return fail(
      'clock',
      `this machine's clock is ${seconds(Math.abs(skew))} ${skew > 0 ? 'behind' : 'ahead of'} Postgres's${note}`,
      'set both clocks by NTP (timedatectl set-ntp true): cycle dates and lease times come from both',
    );
  return pass(
    'clock',
    `this machine and Postgres agree within ${seconds(Math.max(100, Math.abs(skew)))}${note}`,
  );
}

/** One subscription's receiver: a mail list with SMTP set, or a URL resolving where it may go. */
async function receiverProblem(
  config: Config,
  s: Subscription,
): Promise<{ detail: string; fix: string } | null> {
  const remove = `daybook subscribe remove ${s.id}`;
  if (s.format === 'email') {
    try {
      mailAddresses(s.url);
    } catch (err) {
      return { detail: (err as Error).message, fix: `remove it (${remove}) and subscribe the right address` };
    }
    if (!config.DAYBOOK_SMTP_URL || !config.DAYBOOK_SMTP_FROM)
      return {
        detail: 'a mail subscription, and DAYBOOK_SMTP_URL or DAYBOOK_SMTP_FROM is not set',
        fix: `set DAYBOOK_SMTP_URL and DAYBOOK_SMTP_FROM, or remove it (${remove})`,
      };
    return null;
  }
  const shown = safeUrl(s.url);
  let url: URL;
  try {
    url = parseWebhookUrl(s.url);
  } catch (err) {
    return {
      detail: `${shown}: ${(err as Error).message}`,
      fix: `remove it (${remove}) and subscribe a valid URL`,
    };
  }
  let addresses: string[];
  try {
    addresses = await checkTarget(url, true);
  } catch {
    return {
      detail: `${shown}: ${hostOf(url)} does not resolve`,
      fix: `correct the receiver's host name (or this machine's DNS), or remove it (${remove})`,
    };
  }
  const blocked = addresses.filter(isPrivateAddress);
  if (blocked.length > 0 && !s.allow_private)
    return {
      detail: `${shown} resolves to a private address (${blocked.join(', ')}): deliveries to it are refused`,
      fix: `if the receiver is meant to be on your own network, subscribe it again with --allow-private (${remove}, then daybook subscribe add … --allow-private); else remove it`,
    };
  return null;
}

/** Each subscription's receiver; the ones that pass are counted on one line. */
export async function subscriptionChecks(
  config: Config,
  sql: postgres.Sql | null,
  timeoutMs: number,
): Promise<CheckResult[]> {
  if (!sql)
    return [
      noDatabase(config, 'subscriptions', 'the embedded database is not opened here (one process at a time)'),
    ];
  const [t] = await within(
    sql<TableExists[]>`select to_regclass('public.subscriptions') is not null as exists`,
    timeoutMs,
    'looking for the subscriptions',
  );
  if (!t?.exists) return [skip('subscriptions', 'the database is not migrated yet (above)')];
  const subs = await within(listSubscriptions(sql), timeoutMs, 'listing the subscriptions');
  if (subs.length === 0) return [skip('subscriptions', 'none yet (daybook subscribe add)')];
  const limit = pLimit(8);
  const problems = await Promise.all(
    subs.map((s) =>
      limit(() =>
        within(receiverProblem(config, s), timeoutMs, `subscription ${s.id}`).catch(() => ({
          detail: `${safeUrl(s.url)}: its host name did not resolve within ${seconds(timeoutMs)}`,
          fix: "check this machine's DNS, or remove it",
        })),
      ),
    ),
  );
  const out: CheckResult[] = [];
  problems.forEach((p, i) => {
    const s = subs[i] as Subscription;
    const state = s.state === 'active' ? '' : ` (${s.state})`;
    if (p) out.push(fail(`subscription ${s.id}${state}`, p.detail, p.fix));
  });
  const good = subs.length - out.length;
  const all = subs.length === 1 ? 'the one receiver resolves' : `all ${good} receivers resolve`;
  if (good > 0)
    out.unshift(
      pass(
        'subscriptions',
        `${good === subs.length ? all : `${good} of ${subs.length} receivers resolve`} and may be reached`,
      ),
    );
  return out;
}

/**
 * Whether webhook delivery hears new events as they commit: the engine's own listener
 * (delivery/wake.ts) listens on DAYBOOK_LISTEN_URL, or DATABASE_URL, and a probe is sent through
 * DATABASE_URL, as events are written. Through PgBouncer in transaction mode it does not arrive:
 * delivery still works, looking every second, so that passes with the fix in its line; a
 * DAYBOOK_LISTEN_URL that does not hear fails.
 */
export async function listenCheck(
  config: Config,
  sql: postgres.Sql | null,
  timeoutMs: number,
): Promise<CheckResult> {
  if (!sql || !config.DATABASE_URL)
    return noDatabase(config, 'new events', 'the embedded database: daybook run delivers as it ends');
  const check = 'new events';
  const direct = config.DAYBOOK_LISTEN_URL;
  const url = direct ?? config.DATABASE_URL;
  const heard = new EventsHeard(
    { url, prepare: false, probeMs: Math.min(timeoutMs, 3_000) },
    sql,
    () => {},
    createLogger({ level: 'silent', pretty: false }),
  );
  let listening: boolean;
  let failure: unknown;
  try {
    await heard.check();
    listening = heard.listening;
    failure = heard.failure;
  } finally {
    await heard.close();
  }
  const where = withoutPassword(url);
  if (listening)
    return pass(
      check,
      direct
        ? `heard as they commit, on DAYBOOK_LISTEN_URL (${where}): webhooks go out at once`
        : 'heard as they commit (LISTEN/NOTIFY): webhooks go out at once',
    );
  const why = inWords(failure);
  if (direct)
    return fail(
      check,
      `a notification sent through DATABASE_URL did not arrive on DAYBOOK_LISTEN_URL (${where}): ${why}`,
      'set DAYBOOK_LISTEN_URL to the same database, reached directly (not through PgBouncer in transaction mode), or unset it',
    );
  return pass(
    check,
    `not heard through DATABASE_URL (${why}; PgBouncer in transaction mode does not pass notifications on): webhooks go out within a second instead of at once. For at once, set DAYBOOK_LISTEN_URL to a URL that reaches Postgres directly`,
  );
}
