/**
 * `daybook worker`: BullMQ workers for the four queues, sharing one rate limiter per upstream
 * operation and one credit budget (both in Postgres), and the job boundary (boundary.ts) with
 * every other mode. Each job is at most one upstream call, and an entry is claimed in Postgres
 * (cycle_fetches) before it is bought, so a job whose BullMQ lock lapsed cannot buy it twice.
 * SIGTERM/SIGINT close the workers, which finish in-flight jobs first.
 */
import { EventEmitter } from 'node:events';
import { DelayedError, type Job, UnrecoverableError, Worker } from 'bullmq';
import type { ZodType } from 'zod';
import { CycleCompleteJobData, processCycleComplete } from '../../jobs/cycle-complete.ts';
import type { JobDeps, JobReport } from '../../jobs/deps.ts';
import { ENTERPRISE_JOB, EnterpriseJobData, processEnterprise } from '../../jobs/enterprise.ts';
import { PlanJobData, processPlan } from '../../jobs/plan.ts';
import { ProductsJobData, processProducts } from '../../jobs/products.ts';
import { isConnectionLoss } from '../db/outage.ts';
import { finishRun, startRun } from '../landing/runs.ts';
import type { LimitedOperation } from '../purchase/limiter.ts';
import { isFinalAttempt } from '../retry/decision.ts';
import { afterFailure, BadJobDataError, parseJobData } from './boundary.ts';
import { type JobProcess, jobDepsOf } from './process.ts';
import { backoffStrategy, QUEUE_NAMES, type QueueKind, type Queues } from './queues.ts';
import { isRedisUnreachable, type Reachability } from './reachability.ts';
import { queuePrefix, type RedisClient } from './redis.ts';
import { type JobEvent, STALLED_TOO_OFTEN, watchStalls } from './stalls.ts';

/** The default job lock: BullMQ's own, renewed every 15 s by a live worker. */
export const DEFAULT_LOCK_MS = 30_000;

/**
 * How many times a job may stall (its worker died while running it) before BullMQ fails it for
 * good. A job stalls by no doing of its own, and its claim keeps a rerun from buying twice; but a
 * worker killed again and again (an OOM loop, a deploy gone wrong) takes up the same jobs first
 * each time it starts, so the count must outlast such a run.
 */
export const DEFAULT_MAX_STALLED_COUNT = 20;

export type { JobEvent };
export { STALLED_TOO_OFTEN };

/** No retry follows this attempt if it fails (rate limits use no attempt). */
function isLastAttempt(job: Job): boolean {
  return isFinalAttempt(job.attemptsMade + 1, job.opts.attempts ?? 1);
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
  /** Told when Postgres or Redis fails or answers: one rate-limited log line per outage. */
  reach?: Reachability;
  /**
   * How many times a job may stall before BullMQ fails it for good (DAYBOOK_JOB_MAX_STALLS,
   * default DEFAULT_MAX_STALLED_COUNT). An enterprise job failed so fails its entry for the cycle.
   */
  maxStalledCount?: number;
}

export interface RunningWorkers {
  events: EventEmitter<{ job: [JobEvent] }>;
  workers: Worker[];
  /** Closes the workers: waits for jobs in flight, unless `force` (Redis is down: they cannot finish). */
  close(force?: boolean): Promise<void>;
}

/** What every job processor shares: the deps, the queues, the options and the event stream. */
interface ProcessorContext {
  deps: JobDeps;
  queues: Queues;
  options: WorkerOptions;
  events: EventEmitter<{ job: [JobEvent] }>;
}

/** What a processor hands back: its report, and the cycle or date the job was of. */
type Processed = { report: JobReport; cycle?: string; date?: string };

/** A BullMQ processor around `run`: logs and emits its outcome, and turns a failure into BullMQ's next step. */
function jobProcessor(
  { deps, queues, options, events }: ProcessorContext,
  kind: string,
  op: LimitedOperation | null,
  run: (job: Job) => Promise<Processed>,
): (job: Job, token?: string) => Promise<JobReport> {
  return async (job: Job, token?: string): Promise<JobReport> => {
    const started = performance.now();
    const base = { kind, jobId: job.id ?? '?' };
    const dataOf = job.data as { cycle?: string; date?: string };
    try {
      const { report, cycle, date } = await run(job);
      options.reach?.answered('postgres');
      if (op) await deps.limiter.answered(op);
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
      const durationMs = Math.round(performance.now() - started);
      const ctx = { ...base, cycle: dataOf.cycle, date: dataOf.date, durationMs };
      if (isConnectionLoss(err)) options.reach?.failed('postgres', err);
      const next = await afterFailure(err, {
        sql: deps.sql,
        limiter: deps.limiter,
        now: deps.now(),
        op,
        cycle: kind === ENTERPRISE_JOB ? (dataOf.cycle ?? null) : null,
        attempt: job.attemptsMade + 1,
        attempts: job.opts.attempts ?? 1,
      });
      switch (next.do) {
        case 'wait':
        case 'pause': {
          const queue = kind === ENTERPRISE_JOB ? queues.enterprise : queues.products;
          const waitMs = next.do === 'wait' ? next.ms : 60_000;
          await queue.rateLimit(waitMs);
          deps.log.warn({ ...ctx, waitMs, refusals: next.refusals }, `${kind} rate limited by the upstream`);
          if (next.do === 'pause')
            deps.log.error(
              { cycle: dataOf.cycle, refusals: next.refusals },
              'upstream keeps refusing: enterprise work paused for the cycle',
            );
          events.emit('job', { ...ctx, outcome: 'rate_limited', detail: next.message });
          throw Worker.RateLimitError();
        }
        case 'yield': {
          deps.log.info({ ...ctx, waitMs: next.ms, detail: next.message }, `${kind} held elsewhere; later`);
          await job.moveToDelayed(Date.now() + next.ms, token);
          throw new DelayedError();
        }
        case 'fail': {
          if (op) await deps.limiter.answered(op);
          if (err instanceof BadJobDataError) {
            // Nothing ran, so no run row says so yet: record one, for `daybook status`.
            const runId = await startRun(deps.sql, { kind, entity: base.jobId, jobId: base.jobId });
            await finishRun(deps.sql, runId, {
              outcome: 'failed',
              errorCode: 'bad_job_data',
              errorMessage: next.message,
            });
          }
          deps.log.warn(
            { ...ctx, attempt: job.attemptsMade + 1, error: next.message },
            `${kind} failed${next.permanent ? ' permanently' : ''}`,
          );
          events.emit('job', { ...ctx, outcome: 'failed', detail: next.message });
          if (next.permanent) throw new UnrecoverableError(next.message);
          throw err;
        }
        case 'retry': {
          if (op) await deps.limiter.answered(op);
          deps.log.warn({ ...ctx, attempt: job.attemptsMade + 1, error: next.message }, `${kind} will retry`);
          events.emit('job', { ...ctx, outcome: 'retrying', detail: next.message });
          throw err;
        }
      }
    }
  };
}

/** Starts the workers; `connection` must be a BullMQ-ready Redis (maxRetriesPerRequest null). */
export function startWorkers(
  proc: JobProcess,
  queues: Queues,
  connection: RedisClient,
  options: WorkerOptions,
): RunningWorkers {
  // The jobs put what they plan on these queues.
  const deps = jobDepsOf(proc, queues);
  const events = new EventEmitter<{ job: [JobEvent] }>();
  const lockDuration = options.lockMs ?? DEFAULT_LOCK_MS;
  const maxStalledCount = options.maxStalledCount ?? DEFAULT_MAX_STALLED_COUNT;

  const context: ProcessorContext = { deps, queues, options, events };
  const common = {
    connection,
    lockDuration,
    // Stalled jobs (their worker died) are looked for as often as a lock can lapse.
    stalledInterval: lockDuration,
    // Past this count BullMQ fails the job for good: settleStalled says so, and fails its entry.
    maxStalledCount,
    // Retry waits: the jobs' backoff type is daybook's own, computed as the inline runner does.
    settings: { backoffStrategy },
  };
  /** A worker of one queue: its jobs' data checked by `schema`, then handed to `run`. */
  const worker = <T>(
    queue: QueueKind,
    op: LimitedOperation | null,
    schema: ZodType<T>,
    run: (data: T, job: Job) => Promise<Processed>,
    concurrency = 1,
  ) => {
    const kind = QUEUE_NAMES[queue];
    return new Worker(
      kind,
      jobProcessor(context, kind, op, async (job) => run(parseJobData(schema, job.data, kind), job)),
      { ...common, prefix: queuePrefix(queues.prefix, kind), concurrency },
    );
  };
  const workers = [
    worker(
      'enterprise',
      'enterprise-search',
      EnterpriseJobData,
      async (data, job) => ({
        report: await processEnterprise(deps, data, job.id ?? '', isLastAttempt(job)),
        cycle: data.cycle,
      }),
      options.concurrency,
    ),
    worker('products', 'product-listing', ProductsJobData, async (data, job) => ({
      report: await processProducts(deps, data, job.id ?? '', isLastAttempt(job)),
      date: data.date,
    })),
    worker('cycle', null, CycleCompleteJobData, async (data) => ({
      report: await processCycleComplete(deps, data),
      cycle: data.cycle,
    })),
    worker('plan', null, PlanJobData, async (data, job) => ({
      report: await processPlan(deps, data, job.id ?? ''),
      cycle: data.cycle,
    })),
  ];
  const stalls = watchStalls({ deps, queues, events, maxStalledCount, lockDuration });

  for (const w of workers) {
    // A job failed for stalling too often never reached its processor: it is settled here.
    w.on('failed', (job, err) => {
      if (!job || (err?.message ?? job.failedReason) !== STALLED_TOO_OFTEN) return;
      stalls.settle(w.name, job);
    });
    // A worker's own errors are logged, never thrown into the void; a Redis that cannot be
    // reached is said once per outage (reachability.ts), not once per reconnect.
    w.on('error', (err) => {
      if (options.reach && isRedisUnreachable(err)) options.reach.failed('redis', err);
      else deps.log.error({ err: err.message, queue: w.name }, 'worker error');
    });
    // A lock that lapsed while its worker lives (a starved event loop) means the job may run twice.
    w.on('stalled', (jobId) =>
      deps.log.warn({ queue: w.name, jobId }, 'job stalled: its lock lapsed; it runs again'),
    );
  }
  return {
    events,
    workers,
    close: async (force = false) => {
      stalls.stop();
      await Promise.all(workers.map((w) => w.close(force)));
      await stalls.stopped();
    },
  };
}
