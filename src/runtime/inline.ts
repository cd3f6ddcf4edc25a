/**
 * `daybook run`: the same job processors, in-process, without Redis: the same rate limiter and
 * claims as the workers (both in Postgres), the same job boundary (boundary.ts: backoff with
 * jitter, rate limits not counted as attempts), and bounded concurrency with p-limit. For a
 * one-shot run (a CronJob, a CI step) and the embedded demo; safe beside workers and other runs.
 */
import pLimit from 'p-limit';
import { processEnterprise } from '../../jobs/enterprise.ts';
import { processPlan } from '../../jobs/plan.ts';
import { processProducts, scheduledPulls } from '../../jobs/products.ts';
import type { LimitedOperation } from '../purchase/limiter.ts';
import type { Sql } from '../db/connect.ts';
import { pacificDate } from '../time/cycles.ts';
import { afterFailure } from './boundary.ts';
import type { JobDeps, JobReport } from '../../jobs/deps.ts';
import { type RetryPolicy, retryPolicy } from './queues.ts';

export interface InlineSummary {
  cycle: string;
  productPulls: { date: string; outcome: string; detail?: string }[];
  enterprises: Record<string, number>;
  failures: { entity: string; error: string }[];
}

/** Exponential backoff with jitter, as the queue does it. */
export function backoffMs(attempt: number, policy: RetryPolicy): number {
  const { delay, jitter } = policy.backoff;
  const base = delay * 2 ** (attempt - 1);
  return Math.round(base * (1 - jitter * Math.random()));
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
      const report = await body(attempt >= policy.attempts);
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
          const wait = backoffMs(attempt, policy);
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
  concurrency: number;
  /** Runs in the plan's transaction, under its lock, before it plans (a resume re-plans deferred rows there). */
  beforePlan?: (tx: Sql) => Promise<void>;
  sleep?: Sleep;
  onProgress?: (done: number, total: number) => void;
}

export async function runInline(
  deps: Omit<JobDeps, 'enqueue'>,
  options: InlineOptions,
): Promise<InlineSummary> {
  const sleep = options.sleep ?? realSleep;
  const summary: InlineSummary = { cycle: options.cycle, productPulls: [], enterprises: {}, failures: [] };
  const planned: number[] = [];
  const full: JobDeps = {
    ...deps,
    enqueue: {
      enterprises: async (_cycle, ids) => {
        planned.push(...ids);
        return ids.length;
      },
    },
  };

  if (options.only !== 'enterprises') {
    const pulls =
      options.productDates ??
      scheduledPulls(pacificDate(deps.now()), deps.config.DAYBOOK_PRODUCT_LOOKBACK_DAYS);
    for (const p of pulls) {
      const data = { ...p, limit: deps.config.DAYBOOK_PRODUCT_LIMIT, cycle: options.cycle };
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
      deps.log.info({ kind: 'products', date: p.date, ...r }, `products ${r.outcome}`);
    }
  }

  if (options.only !== 'products') {
    await processPlan(full, { cycle: options.cycle }, `inline-plan-${options.cycle}`, options.beforePlan);
    const limit = pLimit(options.concurrency);
    let done = 0;
    await Promise.all(
      planned.map((watchId) =>
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
          if (r.outcome === 'failed')
            summary.failures.push({ entity: String(watchId), error: r.detail ?? '' });
          deps.log.info(
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
          options.onProgress?.(++done, planned.length);
          // The boundary paused the cycle: what is still queued here would only be deferred.
          if ('paused' in r && r.paused) limit.clearQueue();
        }),
      ),
    );
  }
  return summary;
}
