/**
 * `daybook doctor`: the whole setup checked in one command, each check a line saying what it
 * found and, when it failed, how to fix it; a check that does not apply says why it was skipped.
 * Exit code 1 when a check failed, 0 otherwise (2 only for bad usage).
 *
 * It changes nothing and spends no credit: it reads Postgres (never migrating it) and Redis,
 * resolves names, makes TCP and TLS connections, sends a HEAD to the upstream's origin (no
 * operation, no key), and says EHLO to the SMTP server (a login only over TLS). Each check waits
 * at most --timeout seconds for a server. Secrets never appear in what it prints: URLs lose their
 * passwords, subscriptions' URLs their tokens, and every secret of the configuration is cut out of
 * each line as a last resort.
 */
import type { Command } from 'commander';
import type { Config } from '../config/config.ts';
import { parseClusterNodes } from '../config/redis-nodes.ts';
import { smtpSecrets } from '../delivery/mailer.ts';
import { redactSecrets } from '../log/redact.ts';
import { command } from './about.ts';
import {
  clockCheck,
  listenCheck,
  migrationsCheck,
  openChecked,
  readerCheck,
  subscriptionChecks,
} from './doctor-database.ts';
import { configCheck, diskChecks, scheduleChecks } from './doctor-local.ts';
import { smtpChecks, upstreamChecks } from './doctor-network.ts';
import { redisChecks } from './doctor-redis.ts';
import { type CheckResult, fail, inWords, skip } from './doctor-result.ts';
import { forTerminal } from './terminal.ts';
import { secondsArg } from './usage.ts';

export type { CheckResult };

/** How long a check waits for a server unless --timeout says otherwise. */
export const DEFAULT_TIMEOUT_S = 5;

/** Every secret of the configuration: none of them may appear in the output. */
function secretsOf(config: Config | null): string[] {
  if (!config) return [];
  const passwordOf = (url: string | undefined) => {
    try {
      const p = url ? new URL(url).password : '';
      return p ? [p, decodeURIComponent(p)] : [];
    } catch {
      return [];
    }
  };
  let cluster: string[] = [];
  try {
    const seeds = config.REDIS_CLUSTER_NODES ? parseClusterNodes(config.REDIS_CLUSTER_NODES) : null;
    cluster = seeds?.password ? [seeds.password] : [];
  } catch {
    cluster = [];
  }
  return [
    config.DAYBOOK_API_KEY,
    config.DAYBOOK_ADMIN_TOKEN,
    ...(config.DAYBOOK_SMTP_URL ? smtpSecrets(config.DAYBOOK_SMTP_URL) : []),
    ...passwordOf(config.DATABASE_URL),
    ...passwordOf(config.DAYBOOK_LISTEN_URL),
    ...passwordOf(config.REDIS_URL),
    ...cluster,
  ].filter((s): s is string => typeof s === 'string' && s.length > 0);
}

/** A group of checks that cannot throw: an unexpected error is a failed check, in one line. */
async function guarded(
  check: string,
  work: () => Promise<CheckResult | CheckResult[]>,
): Promise<CheckResult[]> {
  try {
    const r = await work();
    return Array.isArray(r) ? r : [r];
  } catch (err) {
    return [
      fail(
        check,
        `the check could not finish: ${inWords(err)}`,
        'run daybook doctor again (a longer --timeout if the server is slow)',
      ),
    ];
  }
}

/**
 * Every check after the configuration, started at once; the results in a fixed order, each group
 * as soon as it and the groups before it are done (so a person sees lines come). `close` ends the
 * connections they hold.
 */
function startChecks(
  config: Config,
  timeoutMs: number,
): { groups: Promise<CheckResult[]>[]; close: () => Promise<void> } {
  const db = openChecked(config, timeoutMs);
  const withDb = (
    check: string,
    f: (sql: Awaited<typeof db>['sql']) => Promise<CheckResult | CheckResult[]>,
  ) => db.then((d) => guarded(check, () => f(d.sql)));
  // First on the one connection, so that no other query's wait counts in its round trip.
  const clock = withDb('clock', (sql) => clockCheck(config, sql, timeoutMs));
  const groups = [
    db.then((d) => [d.result]),
    withDb('migrations', (sql) => migrationsCheck(config, sql, timeoutMs)),
    withDb('read-only role', (sql) => readerCheck(config, sql, timeoutMs)),
    clock,
    guarded('Redis', () => redisChecks(config, timeoutMs)),
    guarded('upstream', () => upstreamChecks(config, timeoutMs)),
    guarded('SMTP', () => smtpChecks(config, timeoutMs)),
    withDb('new events', (sql) => listenCheck(config, sql, timeoutMs)),
    withDb('subscriptions', (sql) => subscriptionChecks(config, sql, timeoutMs)),
    guarded('schedules', () => scheduleChecks(config, new Date())),
    guarded('folders', () => diskChecks(config)),
  ];
  return {
    groups,
    close: async () => {
      const { sql } = await db;
      await sql?.end({ timeout: 1 }).catch(() => {});
    },
  };
}

const MARK = { pass: '✔', fail: '✗', skip: '-' } as const;
const NAME_WIDTH = 20;

/** One check for a person: its mark, name and detail, and under a failed one its fix. */
function humanLines(r: CheckResult): string {
  const mark = r.skipped ? MARK.skip : r.ok ? MARK.pass : MARK.fail;
  const name = r.check.length < NAME_WIDTH ? r.check.padEnd(NAME_WIDTH) : `${r.check} `;
  const lines = [`${mark} ${name}${r.skipped ? `skipped: ${r.detail}` : r.detail}`];
  if (r.fix) lines.push(`  ${' '.repeat(NAME_WIDTH)}fix: ${r.fix}`);
  return `${lines.map(forTerminal).join('\n')}\n`;
}

/** The closing line: how many failed, or that all passed. */
function summary(results: readonly CheckResult[]): string {
  const failed = results.filter((r) => !r.ok).length;
  const skipped = results.filter((r) => r.skipped).length;
  const skippedNote = skipped > 0 ? ` (${skipped} skipped)` : '';
  if (failed === 0) return `\nNo problems found${skippedNote}.\n`;
  return `\n${failed} problem${failed === 1 ? '' : 's'} found${skippedNote}: fix ${failed === 1 ? 'it' : 'them'} and run daybook doctor again.\n`;
}

/** Runs every check, printing as it goes (or the JSON array at the end); true when none failed. */
async function doctor(opts: { json?: boolean; timeout: number }): Promise<boolean> {
  const timeoutMs = Math.round(opts.timeout * 1000);
  const { config, results: first } = configCheck();
  const secrets = secretsOf(config);
  const clean = (r: CheckResult): CheckResult => ({
    ...r,
    detail: redactSecrets(r.detail, secrets),
    fix: r.fix === null ? null : redactSecrets(r.fix, secrets),
  });
  const all: CheckResult[] = [];
  const emit = (rs: readonly CheckResult[]) => {
    for (const r of rs.map(clean)) {
      all.push(r);
      if (!opts.json) process.stdout.write(humanLines(r));
    }
  };
  emit(first);
  if (!config) emit([skip('other checks', 'they need a valid configuration: fix it first')]);
  else {
    const { groups, close } = startChecks(config, timeoutMs);
    try {
      for (const g of groups) emit(await g);
    } finally {
      await close();
    }
  }
  if (opts.json) process.stdout.write(`${JSON.stringify(all, null, 2)}\n`);
  else process.stdout.write(summary(all));
  return all.every((r) => r.ok);
}

export function doctorCommand(): Command {
  return command('doctor')
    .option('--json', 'print the checks as a JSON array of {check, ok, skipped, detail, fix}')
    .option(
      '--timeout <seconds>',
      'how long each check waits for a server before it fails',
      secondsArg('--timeout'),
      DEFAULT_TIMEOUT_S,
    )
    .addHelpText(
      'after',
      `
Each line is a check: ✔ passed, ✗ failed (with the fix under it), - skipped (with why). Nothing
is changed, and no upstream operation is called (no credit is spent). docs/doctor.md lists the
checks.

Exit code: 0 when no check failed, 1 when one did, 2 for bad usage.`,
    )
    .action(async (opts: { json?: boolean; timeout: number }) => {
      const ok = await doctor(opts);
      if (!ok) process.exitCode = 1;
      // A server that accepted a connection and never let go must not keep the command running.
      setTimeout(() => process.exit(), 2000).unref();
    });
}
