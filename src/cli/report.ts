/** Read-only commands: `daybook status` and `daybook changes`. */

import { Command } from 'commander';
import { deferredEntries } from '../plan/decide.ts';
import { budgetOf } from '../purchase/credits.ts';
import type { Config } from '../config/config.ts';
import { lastExports } from '../export/package.ts';
import { driftReport } from '../history/drift-store.ts';
import { Queues, redisConnection } from '../runtime/queues.ts';
import { redisLabel } from '../runtime/redis.ts';
import { cycleOf } from '../time/cycles.ts';
import { configOrExit, openStore } from './context.ts';
import { dateArg } from './pipeline.ts';
import { forTerminal } from './terminal.ts';
import { choiceArg, intArg, UsageError } from './usage.ts';

/** Columns a terminal gives a character: 2 for East Asian wide and fullwidth ones and emoji, else 1. */
function charWidth(ch: string): number {
  return /[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6\u{1f300}-\u{1f64f}\u{1f680}-\u{1f6ff}\u{1f900}-\u{1f9ff}\u{1fa70}-\u{1faff}\u{20000}-\u{3fffd}]/u.test(
    ch,
  )
    ? 2
    : 1;
}

function textWidth(s: string): number {
  let w = 0;
  for (const ch of s) w += charWidth(ch);
  return w;
}

/**
 * Prints rows as an aligned text table. Every cell and header goes through forTerminal (control
 * characters, tab and newline among them, shown as inert escapes), and the widths are those of
 * the escaped text.
 */
export function formatTable(rows: readonly Record<string, unknown>[], columns?: string[]): string {
  if (rows.length === 0) return '(no rows)\n';
  const cols = columns ?? Object.keys(rows[0] as object);
  const cell = (v: unknown) =>
    forTerminal(
      v === null || v === undefined
        ? ''
        : v instanceof Date
          ? v.toISOString()
          : typeof v === 'object'
            ? JSON.stringify(v)
            : String(v),
    ).replace(/\s+/g, ' ');
  const headers = cols.map((c) => forTerminal(c).replace(/\s+/g, ' '));
  const text = rows.map((r) => cols.map((c) => cell(r[c])));
  const widths = headers.map((h, i) =>
    Math.min(60, Math.max(textWidth(h), ...text.map((t) => textWidth(t[i] as string)))),
  );
  const pad = (s: string, w: number) => {
    const sw = textWidth(s);
    if (sw <= w) return s + ' '.repeat(w - sw);
    // Cut whole characters to leave a column for the ellipsis, then pad what a wide one left.
    let out = '';
    let ow = 0;
    for (const ch of s) {
      const cw = charWidth(ch);
      if (ow + cw > w - 1) break;
      out += ch;
      ow += cw;
    }
    return `${out}…${' '.repeat(w - 1 - ow)}`;
  };
  const line = (vals: string[]) =>
    vals
      .map((v, i) => pad(v, widths[i] as number))
      .join('  ')
      .trimEnd();
  return `${[line(headers), line(widths.map((w) => '-'.repeat(w))), ...text.map(line)].join('\n')}\n`;
}

/**
 * The queue counts, asked of Redis once: a Redis that does not answer within 2 s is said in
 * one line naming REDIS_URL, with no retries and no reconnect stack dumps.
 */
async function queueCounts(
  config: Config,
): Promise<{ counts: Record<string, Record<string, number>> | null; error: string | null }> {
  let lastError: Error | null = null;
  const redis = redisConnection(config, {
    lazyConnect: true,
    connectTimeout: 2000,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  redis.on('error', (err: Error) => {
    lastError = err;
  });
  let q: Queues | null = null;
  try {
    // Connected first: a BullMQ queue made on a lazy connection starts connecting it itself.
    await redis.connect();
    q = new Queues(redis, config.DAYBOOK_REDIS_PREFIX);
    for (const queue of q.all()) queue.on('error', () => {});
    return { counts: await q.counts(), error: null };
  } catch (err) {
    const why = (lastError ?? (err instanceof Error ? err : new Error(String(err)))).message;
    return {
      counts: null,
      error: `${redisLabel(config)} is unreachable: ${why}`,
    };
  } finally {
    await q?.close().catch(() => {});
    redis.disconnect();
  }
}

export function statusCommand(): Command {
  return new Command('status')
    .description(
      'Show the current cycle: progress, credits against budget, deferred entries, recent failures and queue counts.',
    )
    .option('--cycle <date>', 'the cycle to show (default: the current one)', dateArg('--cycle'))
    .option('--json', 'print as JSON')
    .option('--no-queues', 'do not ask Redis for queue counts')
    .action(async (opts: { cycle?: string; json?: boolean; queues: boolean }) => {
      const config = configOrExit();
      const db = await openStore(config);
      try {
        const cycle = opts.cycle ?? cycleOf(new Date());
        const progress = await db.sql<{ status: string; n: number }[]>`
          select status, count(*)::int as n from cycle_fetches where cycle = ${cycle} group by status order by status`;
        const budget = await budgetOf(db.sql, cycle);
        // Credits of calls cut off before their answer (a process died): counted as spent.
        const [presumed] = await db.sql<{ credits: number }[]>`
          select coalesce(sum(credits), 0)::int as credits from credit_ledger
          where cycle = ${cycle} and status = 'presumed'`;
        // Deferred entries: rows, and the active entries the cycle's plan did not reach (no row).
        const deferred = await deferredEntries(db.sql, cycle, 20);
        const byStatus = new Map(progress.map((p) => [p.status, p.n]));
        if (deferred.total > 0) byStatus.set('deferred', deferred.total);
        const failures = await db.sql`
          select r.kind, coalesce(r.entity, r.list_date::text) as entity, r.error_code, r.error_message, r.finished_at
          from runs r
          where r.outcome = 'failed' and r.started_at > now() - interval '7 days'
          order by r.finished_at desc limit 20`;
        // Watch entries that failed for good in this cycle: permanent errors, or retries used up.
        const failedEntries = await db.sql`
          select w.keyword, f.watch_id::int as watch_id, f.error_code as reason, f.error_message as detail,
                 f.attempts, f.updated_at
          from cycle_fetches f join watchlist w on w.id = f.watch_id
          where f.cycle = ${cycle} and f.status = 'failed'
          order by f.error_code, w.keyword`;
        // Product pulls whose latest run failed (a later success clears it), and jobs refused as bad data.
        const failedPulls = await db.sql`
          select * from (
            select distinct on (coalesce(r.list_date::text, r.entity), r.kind)
              coalesce(r.list_date::text, r.entity) as date, r.kind, r.entity as pull, r.outcome,
              r.error_code as reason, r.error_message as detail, r.finished_at
            from runs r
            where r.kind = 'products' and r.outcome in ('succeeded', 'failed')
              and r.started_at > now() - interval '7 days'
            order by coalesce(r.list_date::text, r.entity), r.kind, r.started_at desc, r.id desc) latest
          where outcome = 'failed' order by date`;
        const drift = await driftReport(db.sql, { limit: 10 });
        const [driftTotals] = await db.sql<
          { unknown: number; missing: number; variants: number; last_seen_at: Date | null }[]
        >`
          select count(*) filter (where kind = 'unknown_field')::int as unknown,
                 count(*) filter (where kind = 'missing_field')::int as missing,
                 count(*) filter (where kind = 'type_variant')::int as variants,
                 max(last_seen_at) as last_seen_at
          from format_drift`;
        const watch = await db.sql<{ active: number; total: number }[]>`
          select count(*) filter (where active)::int as active, count(*)::int as total from watchlist`;
        const exports = await lastExports(db.sql);
        let queues: Record<string, Record<string, number>> | null = null;
        let queueError: string | null = null;
        if (opts.queues) {
          const counted = await queueCounts(config);
          queues = counted.counts;
          queueError = counted.error;
        }
        const report = {
          cycle,
          watchlist: watch[0],
          progress: Object.fromEntries([...byStatus].sort(([a], [b]) => a.localeCompare(b))),
          credits: budget ? { ...budget, presumed: presumed?.credits ?? 0 } : null,
          deferred: deferred.first.map(({ watch_id: _w, ...rest }) => rest),
          deferredCount: deferred.total,
          deferredByReason: deferred.byReason,
          failed: {
            enterprises: failedEntries,
            productPulls: failedPulls.map(({ outcome: _o, kind: _k, ...rest }) => rest),
          },
          recentFailures: failures,
          formatDrift: { ...driftTotals, latest: drift },
          queues,
          ...(queueError ? { queueError } : {}),
          exports,
        };
        if (opts.json) {
          process.stdout.write(`${JSON.stringify(report)}\n`);
          return;
        }
        const out: string[] = [];
        out.push(`cycle ${cycle}`);
        out.push(`  watchlist: ${watch[0]?.active ?? 0} active of ${watch[0]?.total ?? 0}`);
        out.push(
          `  progress: ${
            [...byStatus]
              .sort(([a], [b]) => a.localeCompare(b))
              .map(([status, n]) => `${n} ${forTerminal(status)}`)
              .join(', ') || 'nothing planned yet'
          }`,
        );
        if (budget) {
          out.push(
            `  credits: ${budget.spent} spent${presumed?.credits ? ` (${presumed.credits} presumed: calls cut off before their answer)` : ''} + ${budget.reserved} reserved of ${budget.budget}${budget.pausedAt ? `; PAUSED: ${forTerminal(String(budget.pausedReason))} (daybook resume)` : ''}`,
          );
        }
        if (queues) {
          out.push(
            `  queues: ${Object.entries(queues)
              .map(
                ([k, c]) =>
                  `${k} ${c.waiting ?? 0} waiting/${c.active ?? 0} active/${c.delayed ?? 0} delayed/${c.failed ?? 0} failed`,
              )
              .join('; ')}`,
          );
        } else if (queueError) out.push(`  queues: unavailable (${forTerminal(queueError)})`);
        if (exports.length === 0 && config.DAYBOOK_EXPORT_DIR)
          out.push(`  export: none written yet to ${forTerminal(config.DAYBOOK_EXPORT_DIR)}`);
        for (const e of exports)
          out.push(
            `  export: load ${e.load_id} (${e.kind}, ${e.format}, ${e.rows} rows) at ${e.completed_at.toISOString()} in ${forTerminal(e.destination)}`,
          );
        process.stdout.write(`${out.join('\n')}\n`);
        if (deferred.total > 0) {
          const reasons = Object.entries(deferred.byReason)
            .map(([r, n]) => `${n} ${forTerminal(r.replaceAll('_', ' '))}`)
            .join(', ');
          process.stdout.write(
            `\ndeferred: ${deferred.total} (${reasons}); the first ${deferred.first.length}:\n${formatTable(deferred.first, ['keyword', 'reason', 'detail'])}`,
          );
        }
        if (failedEntries.length > 0) {
          process.stdout.write(
            `\nfailed in cycle ${cycle} (${failedEntries.length}; not retried this cycle):\n${formatTable(failedEntries, ['keyword', 'reason', 'detail', 'attempts'])}`,
          );
        }
        if (failedPulls.length > 0) {
          process.stdout.write(
            `\nproduct pulls failed (last 7 days):\n${formatTable(failedPulls, ['date', 'pull', 'reason', 'detail'])}`,
          );
        }
        if (failures.length > 0) process.stdout.write(`\nrecent failures:\n${formatTable(failures)}`);
        if (drift.length > 0 && driftTotals) {
          process.stdout.write(
            `\nformat drift: ${driftTotals.unknown} unknown fields, ${driftTotals.missing} missing fields, ${driftTotals.variants} type variants (latest first; all in daybook drift):\n${formatTable(drift, DRIFT_COLUMNS)}`,
          );
        }
      } finally {
        await db.close();
      }
    });
}

const DRIFT_COLUMNS = [
  'operation',
  'field',
  'kind',
  'seen',
  'expected',
  'responses',
  'first_seen_at',
  'last_seen_at',
];

export function driftCommand(): Command {
  return new Command('drift')
    .description(
      'Format drift seen in upstream answers: unknown fields, documented fields that were missing, and type or format variants, per operation, with counts and first and last seen.',
    )
    .option(
      '--operation <op>',
      'enterprise-search or product-listing',
      choiceArg('--operation', ['enterprise-search', 'product-listing'] as const),
    )
    .option('--since <date>', 'drift last seen on or after this date (YYYY-MM-DD)', dateArg('--since'))
    .option('--json', 'print as JSON lines')
    .action(async (opts: { operation?: string; since?: string; json?: boolean }) => {
      const config = configOrExit();
      const db = await openStore(config);
      try {
        const rows = await driftReport(db.sql, {
          ...(opts.operation ? { operation: opts.operation } : {}),
          ...(opts.since ? { since: new Date(`${opts.since}T00:00:00Z`) } : {}),
        });
        if (opts.json)
          process.stdout.write(rows.map((r) => JSON.stringify(r)).join('\n') + (rows.length ? '\n' : ''));
        else if (rows.length === 0) process.stdout.write('no format drift seen\n');
        else {
          const columns = [...DRIFT_COLUMNS];
          columns.splice(columns.indexOf('responses') + 1, 0, 'records');
          process.stdout.write(formatTable(rows, [...columns, 'example']));
        }
      } finally {
        await db.close();
      }
    });
}

export function changesCommand(): Command {
  return new Command('changes')
    .description(
      'Read the change log (analytics.enterprise_changes), newest first. --since and --until select by the cycle shown (the Beijing date of the refresh the change was found in); --detected-since by when daybook found it.',
    )
    .option('--since <date>', 'changes of this cycle or later (YYYY-MM-DD)', dateArg('--since'))
    .option('--until <date>', 'changes of this cycle or earlier (YYYY-MM-DD)', dateArg('--until'))
    .option(
      '--detected-since <date>',
      'changes daybook found on or after this date, UTC (YYYY-MM-DD)',
      dateArg('--detected-since'),
    )
    .option(
      '--severity <level>',
      'high, medium or low (and above)',
      choiceArg('--severity', ['high', 'medium', 'low'] as const),
    )
    .option('--pid <pid>', 'only this enterprise')
    .option('--limit <n>', 'at most this many rows', intArg('--limit', 1, 100_000), 100)
    .option('--json', 'print as JSON lines')
    .action(
      async (opts: {
        since?: string;
        until?: string;
        detectedSince?: string;
        severity?: 'high' | 'medium' | 'low';
        pid?: string;
        limit: number;
        json?: boolean;
      }) => {
        if (opts.since && opts.until && opts.since > opts.until)
          throw new UsageError(`--since ${opts.since} is after --until ${opts.until}`);
        const config = configOrExit();
        const db = await openStore(config);
        try {
          const levels = { high: ['high'], medium: ['high', 'medium'], low: ['high', 'medium', 'low'] };
          const severities = levels[opts.severity ?? 'low'];
          const rows = await db.sql`
          select cycle::text, detected_at, pid, current_name as name, category, field, kind, before, after, severity
          from analytics.enterprise_changes
          where severity = any(${severities})
            ${opts.since ? db.sql`and cycle >= ${opts.since}::date` : db.sql``}
            ${opts.until ? db.sql`and cycle <= ${opts.until}::date` : db.sql``}
            ${opts.detectedSince ? db.sql`and detected_at >= ${`${opts.detectedSince}T00:00:00Z`}::timestamptz` : db.sql``}
            ${opts.pid ? db.sql`and pid = ${opts.pid}` : db.sql``}
          order by detected_at desc, change_id desc limit ${opts.limit}`;
          if (opts.json)
            process.stdout.write(rows.map((r) => JSON.stringify(r)).join('\n') + (rows.length ? '\n' : ''));
          else
            process.stdout.write(
              formatTable(rows, [
                'cycle',
                'name',
                'category',
                'field',
                'kind',
                'before',
                'after',
                'severity',
              ]),
            );
        } finally {
          await db.close();
        }
      },
    );
}
