/** `daybook status`: the current cycle at a glance. */
import type { Command } from 'commander';
import type postgres from 'postgres';
import type { Config } from '../config/config.ts';
import { lastExports } from '../export/package.ts';
import { driftReport } from '../history/drift-store.ts';
import { deferredEntries } from '../plan/decide.ts';
import { budgetOf } from '../purchase/credits.ts';
import { Queues, redisConnection } from '../runtime/queues.ts';
import { redisLabel } from '../runtime/redis.ts';
import { cycleOf } from '../time/cycles.ts';
import { command } from './about.ts';
import { configOrExit, withStore } from './context.ts';
import { DRIFT_COLUMNS, formatTable, forTerminal } from './terminal.ts';
import { dateOption } from './usage.ts';

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

/** What status reads of a cycle, in the database and (unless `withQueues` is false) in Redis. */
async function readStatus(sql: postgres.Sql, config: Config, cycle: string, withQueues: boolean) {
  const progress = await sql<{ status: string; n: number }[]>`
    select status, count(*)::int as n from cycle_fetches where cycle = ${cycle} group by status order by status`;
  const budget = await budgetOf(sql, cycle);
  // Credits of calls cut off before their answer (a process died): counted as spent.
  const [presumed] = await sql<{ credits: number }[]>`
    select coalesce(sum(credits), 0)::int as credits from credit_ledger
    where cycle = ${cycle} and status = 'presumed'`;
  // Deferred entries: rows, and the active entries the cycle's plan did not reach (no row).
  const deferred = await deferredEntries(sql, cycle, 20);
  const byStatus = new Map(progress.map((p) => [p.status, p.n]));
  if (deferred.total > 0) byStatus.set('deferred', deferred.total);
  const failures = await sql`
    select r.kind, coalesce(r.entity, r.list_date::text) as entity, r.error_code, r.error_message, r.finished_at
    from runs r
    where r.outcome = 'failed' and r.started_at > now() - interval '7 days'
    order by r.finished_at desc limit 20`;
  // Watch entries that failed for good in this cycle: permanent errors, or retries used up.
  const failedEntries = await sql`
    select w.keyword, f.watch_id::int as watch_id, f.error_code as reason, f.error_message as detail,
           f.attempts, f.updated_at
    from cycle_fetches f join watchlist w on w.id = f.watch_id
    where f.cycle = ${cycle} and f.status = 'failed'
    order by f.error_code, w.keyword`;
  // Product pulls whose latest run failed (a later success clears it), and jobs refused as bad data.
  const failedPulls = await sql`
    select * from (
      select distinct on (coalesce(r.list_date::text, r.entity), r.kind)
        coalesce(r.list_date::text, r.entity) as date, r.kind, r.entity as pull, r.outcome,
        r.error_code as reason, r.error_message as detail, r.finished_at
      from runs r
      where r.kind = 'products' and r.outcome in ('succeeded', 'failed')
        and r.started_at > now() - interval '7 days'
      order by coalesce(r.list_date::text, r.entity), r.kind, r.started_at desc, r.id desc) latest
    where outcome = 'failed' order by date`;
  const drift = await driftReport(sql, { limit: 10 });
  const [driftTotals] = await sql<
    { unknown: number; missing: number; variants: number; last_seen_at: Date | null }[]
  >`
    select count(*) filter (where kind = 'unknown_field')::int as unknown,
           count(*) filter (where kind = 'missing_field')::int as missing,
           count(*) filter (where kind = 'type_variant')::int as variants,
           max(last_seen_at) as last_seen_at
    from format_drift`;
  const watch = await sql<{ active: number; total: number }[]>`
    select count(*) filter (where active)::int as active, count(*)::int as total from watchlist`;
  const exports = await lastExports(sql);
  let queues: Record<string, Record<string, number>> | null = null;
  let queueError: string | null = null;
  if (withQueues) {
    const counted = await queueCounts(config);
    queues = counted.counts;
    queueError = counted.error;
  }
  return {
    cycle,
    byStatus,
    budget,
    presumed,
    deferred,
    failures,
    failedEntries,
    failedPulls,
    drift,
    driftTotals,
    watch,
    exports,
    queues,
    queueError,
  };
}

type Status = Awaited<ReturnType<typeof readStatus>>;

/** The status as `--json` prints it. */
function statusJson(s: Status) {
  return {
    cycle: s.cycle,
    watchlist: s.watch[0],
    progress: Object.fromEntries([...s.byStatus].sort(([a], [b]) => a.localeCompare(b))),
    credits: s.budget ? { ...s.budget, presumed: s.presumed?.credits ?? 0 } : null,
    deferred: s.deferred.first.map(({ watch_id: _w, ...rest }) => rest),
    deferredCount: s.deferred.total,
    deferredByReason: s.deferred.byReason,
    failed: {
      enterprises: s.failedEntries,
      productPulls: s.failedPulls.map(({ outcome: _o, kind: _k, ...rest }) => rest),
    },
    recentFailures: s.failures,
    formatDrift: { ...s.driftTotals, latest: s.drift },
    queues: s.queues,
    ...(s.queueError ? { queueError: s.queueError } : {}),
    exports: s.exports,
  };
}

/** The summary lines at the head of the text status. */
function statusLines(s: Status, config: Config): string[] {
  const { cycle, byStatus, budget, presumed, watch, queues, queueError, exports } = s;
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
  return out;
}

/** The tables after the summary: deferred and failed entries, failed pulls, recent failures, drift. */
function writeStatusTables(s: Status): void {
  const { cycle, deferred, failedEntries, failedPulls, failures, drift, driftTotals } = s;
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
}

export function statusCommand(): Command {
  return command('status')
    .addOption(dateOption('--cycle', 'the cycle to show (default: the current one)'))
    .option('--json', 'print as JSON')
    .option('--no-queues', 'do not ask Redis for queue counts')
    .action(async (opts: { cycle?: string; json?: boolean; queues: boolean }) => {
      const config = configOrExit();
      await withStore(config, async ({ sql }) => {
        const status = await readStatus(sql, config, opts.cycle ?? cycleOf(new Date()), opts.queues);
        if (opts.json) {
          process.stdout.write(`${JSON.stringify(statusJson(status))}\n`);
          return;
        }
        process.stdout.write(`${statusLines(status, config).join('\n')}\n`);
        writeStatusTables(status);
      });
    });
}
