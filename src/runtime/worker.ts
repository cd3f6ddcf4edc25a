/**
 * `daybook worker`: BullMQ workers for the three queues, sharing one global rate limiter per
 * upstream operation (Redis), the Postgres credit budget, and the job boundary. Each job is at
 * most one upstream call. SIGTERM/SIGINT close the workers, which finish in-flight jobs first.
 */
import { EventEmitter } from 'node:events';
import { type Job, UnrecoverableError, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { ENTERPRISE_JOB, EnterpriseJobData, processEnterprise } from '../../jobs/enterprise.ts';
import { PLAN_JOB, PlanJobData, processPlan } from '../../jobs/plan.ts';
import { PRODUCTS_JOB, ProductsJobData, processProducts } from '../../jobs/products.ts';
import { pauseCycle } from '../budget/credits.ts';
import type { LimitedOperation } from '../budget/limiter.ts';
import { openClaims } from '../db/claims.ts';
import { finishRun, startRun } from '../db/runs.ts';
import { BadJobDataError, decide, parseJobData } from './boundary.ts';
import type { JobDeps, JobReport } from './deps.ts';
import { QUEUE_NAMES, type Queues } from './queues.ts';

/** After this many rate-limit refusals in a row, the upstream is taken to be refusing for the day. */
export const MAX_CONSECUTIVE_REFUSALS = 30;

/** The default job lock: BullMQ's own, renewed every 15 s by a live worker. */
export const DEFAULT_LOCK_MS = 30_000;

/** Another worker holds the entry: this run buys nothing and looks again after a backoff. */
export class InFlightElsewhereError extends Error {
  override readonly name = 'InFlightElsewhereError';
}

/** No retry follows this attempt if it fails (rate limits use no attempt). */
function isLastAttempt(job: Job): boolean {
  return job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
}

export interface JobEvent {
  kind: string;
  jobId: string;
  outcome: JobReport['outcome'] | 'failed' | 'retrying' | 'rate_limited';
  cycle?: string;
  date?: string;
  entity?: string;
  credits?: number;
  durationMs: number;
  detail?: string;
}

export interface WorkerOptions {
  concurrency: number;
  /** The upstream timeout. A job may take longer than its lock: a live worker renews the lock. */
  upstreamTimeoutMs: number;
  /**
   * How long a job's lock lives without renewal (DAYBOOK_JOB_LOCK_MS, default 30 s). A live
   * worker renews it every half of this, however long the job takes; it lapses only when the
   * worker died, and that worker's jobs are taken over within about twice this time.
   */
  lockMs?: number;
}

export interface RunningWorkers {
  events: EventEmitter<{ job: [JobEvent] }>;
  workers: Worker[];
  close(): Promise<void>;
}

/** Starts the workers; `connection` must be a BullMQ-ready Redis (maxRetriesPerRequest null). */
export function startWorkers(
  deps: JobDeps,
  queues: Queues,
  connection: Redis,
  options: WorkerOptions,
): RunningWorkers {
  const events = new EventEmitter<{ job: [JobEvent] }>();
  const lockDuration = options.lockMs ?? DEFAULT_LOCK_MS;
  // BullMQ's lock is a lease: a starved worker can lose it mid-job and a second worker start the
  // same job. The claim in Postgres holds while its connection does, so the second one waits.
  const databaseUrl = deps.config.DATABASE_URL;
  if (!databaseUrl)
    throw new Error('queue workers need DATABASE_URL (a Postgres server shared by every worker)');
  const claims = openClaims(databaseUrl);
  const refusalsKey = `${queues.prefix}:refusals`;

  const wrap =
    (
      kind: string,
      op: LimitedOperation | null,
      run: (job: Job) => Promise<{ report: JobReport; cycle?: string; date?: string }>,
    ) =>
    async (job: Job): Promise<JobReport> => {
      const started = performance.now();
      const base = { kind, jobId: job.id ?? '?' };
      const dataOf = job.data as { cycle?: string; date?: string };
      try {
        const { report, cycle, date } = await run(job);
        if (op) await connection.del(`${refusalsKey}:${op}`);
        const event: JobEvent = {
          ...base,
          outcome: report.outcome,
          durationMs: Math.round(performance.now() - started),
        };
        if (cycle) event.cycle = cycle;
        if (date) event.date = date;
        if (report.entity) event.entity = report.entity;
        if (report.credits !== undefined) event.credits = report.credits;
        if (report.detail) event.detail = report.detail;
        deps.log.info(event, `${kind} ${report.outcome}`);
        events.emit('job', event);
        return report;
      } catch (err) {
        const decision = decide(err, deps.now());
        const durationMs = Math.round(performance.now() - started);
        const ctx = { ...base, cycle: dataOf.cycle, date: dataOf.date, durationMs };
        if (decision.kind === 'rate_limited' && op) {
          const queue = kind === ENTERPRISE_JOB ? queues.enterprise : queues.products;
          await deps.limiter.block(op, decision.waitMs);
          await queue.rateLimit(decision.waitMs);
          const refusals = await connection.incr(`${refusalsKey}:${op}`);
          await connection.pexpire(`${refusalsKey}:${op}`, 6 * 3600_000);
          deps.log.warn(
            { ...ctx, waitMs: decision.waitMs, refusals },
            `${kind} rate limited by the upstream`,
          );
          events.emit('job', { ...ctx, outcome: 'rate_limited', detail: decision.message });
          if (refusals >= MAX_CONSECUTIVE_REFUSALS && dataOf.cycle) {
            await pauseCycle(
              deps.sql,
              dataOf.cycle,
              `the upstream refused ${refusals} calls in a row (a daily call cap?): stopped for the cycle`,
            );
            deps.log.error(
              { cycle: dataOf.cycle, refusals },
              'upstream keeps refusing: enterprise work paused for the cycle',
            );
          }
          throw Worker.RateLimitError();
        }
        if (decision.kind === 'permanent') {
          if (err instanceof BadJobDataError) {
            // Nothing ran, so no run row says so yet: record one, for `daybook status`.
            const runId = await startRun(deps.sql, { kind, entity: base.jobId, jobId: base.jobId });
            await finishRun(deps.sql, runId, {
              outcome: 'failed',
              errorCode: 'bad_job_data',
              errorMessage: decision.message,
            });
          }
          deps.log.warn({ ...ctx, error: decision.message }, `${kind} failed permanently`);
          events.emit('job', { ...ctx, outcome: 'failed', detail: decision.message });
          throw new UnrecoverableError(decision.message);
        }
        const last = isLastAttempt(job);
        deps.log.warn(
          { ...ctx, attempt: job.attemptsMade + 1, error: decision.message },
          `${kind} ${last ? 'failed' : 'will retry'}`,
        );
        events.emit('job', { ...ctx, outcome: last ? 'failed' : 'retrying', detail: decision.message });
        throw err;
      }
    };

  const common = {
    connection,
    prefix: queues.prefix,
    lockDuration,
    // Stalled jobs (their worker died) are looked for as often as a lock can lapse.
    stalledInterval: lockDuration,
    maxStalledCount: 3,
  };
  const workers = [
    new Worker(
      QUEUE_NAMES.enterprise,
      wrap(ENTERPRISE_JOB, 'enterprise-search', async (job) => {
        const data = parseJobData(EnterpriseJobData, job.data, ENTERPRISE_JOB);
        const claim = await claims.take(`daybook:enterprise:${data.cycle}`, data.watchId);
        if (!claim) {
          throw new InFlightElsewhereError(
            `watch entry ${data.watchId} of cycle ${data.cycle} is in flight in another worker`,
          );
        }
        try {
          return {
            report: await processEnterprise(deps, data, job.id ?? '', isLastAttempt(job)),
            cycle: data.cycle,
          };
        } finally {
          await claim.release();
        }
      }),
      { ...common, concurrency: options.concurrency },
    ),
    new Worker(
      QUEUE_NAMES.products,
      wrap(PRODUCTS_JOB, 'product-listing', async (job) => {
        const data = parseJobData(ProductsJobData, job.data, PRODUCTS_JOB);
        return {
          report: await processProducts(deps, data, job.id ?? '', isLastAttempt(job)),
          date: data.date,
        };
      }),
      { ...common, concurrency: 1 },
    ),
    new Worker(
      QUEUE_NAMES.plan,
      wrap(PLAN_JOB, null, async (job) => {
        const data = parseJobData(PlanJobData, job.data, PLAN_JOB);
        return { report: await processPlan(deps, data, job.id ?? ''), cycle: data.cycle };
      }),
      { ...common, concurrency: 1 },
    ),
  ];
  for (const w of workers) {
    // A worker's own errors (a lost Redis connection) are logged, never thrown into the void.
    w.on('error', (err) => deps.log.error({ err: err.message, queue: w.name }, 'worker error'));
    // A lock that lapsed while its worker lives (a starved event loop) means the job may run twice.
    w.on('stalled', (jobId) =>
      deps.log.warn({ queue: w.name, jobId }, 'job stalled: its lock lapsed; it runs again'),
    );
  }
  return {
    events,
    workers,
    close: async () => {
      await Promise.all(workers.map((w) => w.close()));
      await claims.close();
    },
  };
}
