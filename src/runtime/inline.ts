/**
 * `daybook run`: the same job processors, in-process, without Redis: the same rate limiter and
 * claims as the workers (both in Postgres), the same job boundary (boundary.ts: backoff with
 * jitter, rate limits not counted as attempts), and bounded concurrency with p-limit. For a
 * one-shot run (a CronJob, a CI step) and the embedded demo; safe beside workers and other runs.
 */
import pLimit from 'p-limit';
import { CYCLE_COMPLETE_JOB, processCycleComplete } from '../../jobs/cycle-complete.ts';
import type { JobDeps, JobReport } from '../../jobs/deps.ts';
import { processEnterprise } from '../../jobs/enterprise.ts';
import { processPlan, topUpBatch } from '../../jobs/plan.ts';
import { processProducts, scheduledPulls } from '../../jobs/products.ts';
import type { Sql } from '../db/connect.ts';
import { latestPlan } from '../plan/decide.ts';
import { newSincePlan, topUpOf } from '../plan/topup.ts';
import type { LimitedOperation } from '../purchase/limiter.ts';
import { isFinalAttempt } from '../retry/decision.ts';
import { pacificDate } from '../time/cycles.ts';
import { MAX_SHAREHOLDER_DEPTH } from '../watch/related.ts';
import { afterFailure } from './boundary.ts';
import { type JobProcess, jobDepsOf } from './process.ts';
import { retryDelayMs, retryPolicy } from './queues.ts';

export interface InlineSummary {
  cycle: string;
  productPulls: { date: string; outcome: string; detail?: string }[];
  enterprises: Record<string, number>;
  failures: { entity: string; error: string }[];
  /** Set when the job boundary paused the cycle's enterprise work (credits, the upstream refusing). */
  paused?: boolean;
}

export type Sleep = (ms: number) => Promise<void>;
export const realSleep: Sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs one job body with the queue's retry semantics: the job boundary decides, this carries it
 * out in process. An entry another process is buying is left to it (`skipped`).
 */
export async function withRetries(
  deps: JobDeps,
  op: LimitedOperation,
  label: string,
  body: (lastAttempt: boolean) => Promise<JobReport>,
  sleep: Sleep,
  cycle: string | null = null,
): Promise<JobReport | { outcome: 'failed'; detail: string; paused?: boolean }> {
  const policy = retryPolicy(deps.config);
  let attempt = 1;
  for (;;) {
    try {
      const report = await body(isFinalAttempt(attempt, policy.attempts));
      await deps.limiter.answered(op);
      return report;
    } catch (err) {
      const next = await afterFailure(err, {
        sql: deps.sql,
        limiter: deps.limiter,
        now: deps.now(),
        op,
        cycle,
        attempt,
        attempts: policy.attempts,
      });
      switch (next.do) {
        case 'fail':
          await deps.limiter.answered(op);
          return { outcome: 'failed', detail: next.message };
        case 'pause':
          return { outcome: 'failed', detail: next.message, paused: true };
        case 'yield':
          return { outcome: 'skipped', detail: `in flight elsewhere: ${next.message}` };
        case 'wait':
          deps.log.warn(
            { label, waitMs: next.ms, refusals: next.refusals },
            'rate limited by the upstream; waiting',
          );
          await sleep(next.ms);
          continue;
        case 'retry': {
          await deps.limiter.answered(op);
          // The queue's wait to the millisecond: workers compute it with the same function.
          const wait = retryDelayMs(attempt, policy.backoff);
          deps.log.warn({ label, attempt, waitMs: wait, error: next.message }, 'transient failure; retrying');
          attempt++;
          await sleep(wait);
        }
      }
    }
  }
}

export interface InlineOptions {
  cycle: string;
  only?: 'products' | 'enterprises';
  /** Product list dates to pull; by default the scheduled pulls of today's Pacific date. */
  productDates?: { date: string; pull: string }[];
  /** Days the scheduled pulls look back (DAYBOOK_PRODUCT_LOOKBACK_DAYS by default). */
  productLookbackDays?: number;
  concurrency: number;
  /** Runs in the plan's transaction, under its lock, before it plans (a resume re-plans deferred rows there). */
  beforePlan?: (tx: Sql) => Promise<void>;
  sleep?: Sleep;
  onProgress?: (done: number, total: number) => void;
}

export async function runInline(proc: JobProcess, options: InlineOptions): Promise<InlineSummary> {
  const sleep = options.sleep ?? realSleep;
  const summary: InlineSummary = { cycle: options.cycle, productPulls: [], enterprises: {}, failures: [] };
  const planned: number[] = [];
  let completeAsked = false;
  const full = jobDepsOf(proc, {
    enterprises: async (_cycle, ids) => {
      planned.push(...ids);
      return ids.length;
    },
    cycleComplete: async () => {
      completeAsked = true;
    },
  });

  if (options.only !== 'enterprises') {
    const pulls =
      options.productDates ??
      scheduledPulls(
        pacificDate(full.now()),
        options.productLookbackDays ?? full.config.DAYBOOK_PRODUCT_LOOKBACK_DAYS,
      );
    for (const p of pulls) {
      const data = { ...p, limit: full.config.DAYBOOK_PRODUCT_LIMIT, cycle: options.cycle };
      const r = await withRetries(
        full,
        'product-listing',
        `products ${p.date}`,
        (last) => processProducts(full, data, `inline-products-${p.date}-${p.pull}`, last),
        sleep,
      );
      summary.productPulls.push({
        date: p.date,
        outcome: r.outcome,
        ...(r.detail ? { detail: r.detail } : {}),
      });
      full.log.info({ kind: 'products', date: p.date, ...r }, `products ${r.outcome}`);
    }
  }

  if (options.only !== 'products') {
    await processPlan(full, { cycle: options.cycle }, `inline-plan-${options.cycle}`, options.beforePlan);
    let done = 0;
    // Then top-ups, as the scheduler asks for them: the shareholders a refresh watched anew
    // (src/watch/related.ts) are bought in the same cycle, one level of a chain per round.
    for (let round = 0; planned.length > 0 && round <= MAX_SHAREHOLDER_DEPTH; round++) {
      const batch = planned.splice(0);
      done = await runEnterprises(full, options, batch, summary, done, sleep);
      if (summary.paused) break;
      // As the scheduler's tick: only for entries added since the last plan of the cycle.
      const last = await latestPlan(full.sql, options.cycle);
      if (!last || (await newSincePlan(full.sql, options.cycle, last)).entries === 0) break;
      const topUp = await topUpOf({ sql: full.sql, config: full.config, now: full.now }, options.cycle);
      if (topUp.kind === 'due')
        await processPlan(
          full,
          { cycle: options.cycle, topUp: topUp.mark },
          `inline-plan-${options.cycle}-${topUpBatch(topUp.mark)}`,
        );
    }
    // The cycle-complete step, once, after this run's entries: as a worker would run it.
    if (completeAsked) await completeCycle(full, options.cycle);
  }
  return summary;
}

/** Runs the enterprise jobs of `ids`, `options.concurrency` at a time; returns how many are done. */
async function runEnterprises(
  full: JobDeps,
  options: InlineOptions,
  ids: readonly number[],
  summary: InlineSummary,
  doneBefore: number,
  sleep: Sleep,
): Promise<number> {
  const limit = pLimit(options.concurrency);
  let done = doneBefore;
  const total = doneBefore + ids.length;
  await Promise.all(
    ids.map((watchId) =>
      limit(async () => {
        const started = performance.now();
        const r = await withRetries(
          full,
          'enterprise-search',
          `enterprise ${watchId}`,
          (last) =>
            processEnterprise(
              full,
              { cycle: options.cycle, watchId },
              `inline-enterprise-${options.cycle}-${watchId}`,
              last,
            ),
          sleep,
          options.cycle,
        );
        summary.enterprises[r.outcome] = (summary.enterprises[r.outcome] ?? 0) + 1;
        if (r.outcome === 'failed') summary.failures.push({ entity: String(watchId), error: r.detail ?? '' });
        full.log.info(
          {
            kind: 'enterprise',
            cycle: options.cycle,
            entity: 'entity' in r ? r.entity : String(watchId),
            outcome: r.outcome,
            credits: 'credits' in r ? r.credits : 0,
            durationMs: Math.round(performance.now() - started),
          },
          `enterprise ${r.outcome}`,
        );
        options.onProgress?.(++done, total);
        // The boundary paused the cycle: what is still queued here would only be deferred.
        if ('paused' in r && r.paused) {
          summary.paused = true;
          limit.clearQueue();
        }
      }),
    ),
  );
  return done;
}

async function completeCycle(deps: JobDeps, cycle: string): Promise<void> {
  try {
    const r = await processCycleComplete(deps, { cycle });
    deps.log.info({ kind: CYCLE_COMPLETE_JOB, cycle, outcome: r.outcome }, `cycle-complete ${r.outcome}`);
  } catch (err) {
    deps.log.warn(
      { cycle, err: err instanceof Error ? err.message : String(err) },
      'could not complete the cycle; the next run of it will',
    );
  }
}
