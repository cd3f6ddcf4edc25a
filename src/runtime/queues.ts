/**
 * The BullMQ side: four queues (plan, enterprise, products, cycle), each under a hash-tagged prefix of
 * its own (redis.ts: one Redis or a Redis Cluster), job options as data, and deterministic job
 * identity enforced twice: a fixed `jobId` and BullMQ deduplication with a ttl longer than a
 * cycle. (Postgres's cycle_fetches key is the third line.)
 */
import { type BackoffStrategy, type JobsOptions, Queue } from 'bullmq';
import {
  CYCLE_COMPLETE_JOB,
  type CycleCompleteJobData,
  cycleCompleteJobId,
} from '../../jobs/cycle-complete.ts';
import type { Enqueuer } from '../../jobs/deps.ts';
import { ENTERPRISE_JOB, type EnterpriseJobData, enterpriseJobId } from '../../jobs/enterprise.ts';
import { PLAN_JOB, type PlanJobData, planJobId, topUpJobId } from '../../jobs/plan.ts';
import { PRODUCTS_JOB, type ProductsJobData, productsJobId } from '../../jobs/products.ts';
import type { Config } from '../config/config.ts';
import { backoffMs } from '../retry/backoff.ts';
import { queuePrefix, type RedisClient } from './redis.ts';

export { keyPattern, redisConnection } from './redis.ts';

export const QUEUE_NAMES = {
  plan: PLAN_JOB,
  enterprise: ENTERPRISE_JOB,
  products: PRODUCTS_JOB,
  cycle: CYCLE_COMPLETE_JOB,
} as const;
export type QueueKind = keyof typeof QUEUE_NAMES;

/**
 * The backoff type jobs carry: BullMQ asks the workers' `backoffStrategy` for each wait, so
 * the queue and the inline runner compute it the same way (retryDelayMs). Jobs added with
 * BullMQ's built-in 'exponential' type before keep it, and the same waits.
 */
export const BACKOFF_TYPE = 'daybook';

/** How failed jobs are retried: exponential backoff with jitter, then kept as failed. */
export interface RetryPolicy {
  /** Tries in all, the first included. */
  attempts: number;
  /** As BullMQ job options: the first wait (`delay`, doubling) and the share taken off at random. */
  backoff: { type: typeof BACKOFF_TYPE; delay: number; jitter: number };
}

/** The default policy: 8 tries, 2 s doubling, up to half of each wait taken off at random. */
export const RETRY_POLICY: RetryPolicy = {
  attempts: 8,
  backoff: { type: BACKOFF_TYPE, delay: 2_000, jitter: 0.5 },
};

/**
 * The wait after failed attempt `attempt` (1 for the first): `delay` doubling each attempt, up to
 * `jitter` of it taken off at random (backoff.ts, 'down': BullMQ's built-in 'exponential'
 * formula to the millisecond). Workers (through `backoffStrategy`) and the inline runner both use it.
 */
export function retryDelayMs(
  attempt: number,
  backoff: { delay: number; jitter: number },
  random: () => number = Math.random,
): number {
  return backoffMs(
    attempt - 1,
    { baseMs: backoff.delay, jitter: backoff.jitter, jitterMode: 'down' },
    random,
  );
}

/**
 * The workers' BullMQ `settings.backoffStrategy`. BullMQ passes the number of the attempt that
 * failed (attemptsMade + 1); the delay and jitter are the job's own, as it was added.
 */
export const backoffStrategy: BackoffStrategy = (attempt, _type, _err, job) => {
  const b = job?.opts.backoff;
  const given = typeof b === 'object' ? b : undefined;
  return retryDelayMs(attempt, {
    delay: given?.delay ?? RETRY_POLICY.backoff.delay,
    jitter: given?.jitter ?? 0,
  });
};

/** The policy the configuration asks for (DAYBOOK_RETRY_ATTEMPTS, DAYBOOK_RETRY_BASE_MS). */
export function retryPolicy(
  config: Pick<Config, 'DAYBOOK_RETRY_ATTEMPTS' | 'DAYBOOK_RETRY_BASE_MS'>,
): RetryPolicy {
  return {
    attempts: config.DAYBOOK_RETRY_ATTEMPTS,
    backoff: { ...RETRY_POLICY.backoff, delay: config.DAYBOOK_RETRY_BASE_MS },
  };
}

/** Longer than a cycle, so a job of a cycle is never added twice while that cycle lasts. */
export const DEDUP_TTL_MS = 3 * 24 * 3600_000;

/** Redis memory stays bounded: completed jobs kept a week, failed ones a month. */
export const KEEP = {
  removeOnComplete: { age: 7 * 24 * 3600, count: 100_000 },
  removeOnFail: { age: 30 * 24 * 3600 },
} as const;

function jobOptions(jobId: string, retry: RetryPolicy): JobsOptions {
  return {
    jobId,
    deduplication: { id: jobId, ttl: DEDUP_TTL_MS },
    attempts: retry.attempts,
    backoff: { ...retry.backoff },
    ...KEEP,
  };
}

export class Queues implements Enqueuer {
  readonly plan: Queue;
  readonly enterprise: Queue;
  readonly products: Queue;
  /** The cycle-complete step of each cycle (jobs/cycle-complete.ts). */
  readonly cycle: Queue;
  /** DAYBOOK_REDIS_PREFIX: each queue's keys are under `{<prefix>:<queue>}` (queuePrefix). */
  readonly prefix: string;
  readonly retry: RetryPolicy;

  /** `retry` applies to the jobs these queues add (the workers read it from each job). */
  constructor(connection: RedisClient, prefix: string, retry: RetryPolicy = RETRY_POLICY) {
    this.prefix = prefix;
    this.retry = retry;
    const queue = (name: string) => new Queue(name, { connection, prefix: queuePrefix(prefix, name) });
    this.plan = queue(QUEUE_NAMES.plan);
    this.enterprise = queue(QUEUE_NAMES.enterprise);
    this.products = queue(QUEUE_NAMES.products);
    this.cycle = queue(QUEUE_NAMES.cycle);
  }

  all(): Queue[] {
    return [this.plan, this.enterprise, this.products, this.cycle];
  }

  /** The cycle's plan, or with `topUp` a top-up of it (its own id: jobs/plan.ts topUpJobId). */
  async addPlan(data: PlanJobData): Promise<string> {
    const id = data.topUp === undefined ? planJobId(data.cycle) : topUpJobId(data.cycle, data.topUp);
    await this.plan.add(PLAN_JOB, data, jobOptions(id, this.retry));
    return id;
  }

  async addProducts(data: ProductsJobData): Promise<string> {
    const id = productsJobId(data.date, data.pull);
    await this.products.add(PRODUCTS_JOB, data, jobOptions(id, this.retry));
    return id;
  }

  /**
   * Enqueues one refresh job per watch entry; `round` > 0 gives new ids after a resume, a string
   * the ids of a top-up of the cycle's plan (jobs/enterprise.ts enterpriseJobId).
   */
  async enterprises(cycle: string, watchIds: readonly number[], round: number | string = 0): Promise<number> {
    for (let i = 0; i < watchIds.length; i += 1000) {
      const part = watchIds.slice(i, i + 1000);
      await this.enterprise.addBulk(
        part.map((watchId) => {
          const data: EnterpriseJobData = { cycle, watchId };
          return {
            name: ENTERPRISE_JOB,
            data,
            opts: jobOptions(enterpriseJobId(cycle, watchId, round), this.retry),
          };
        }),
      );
    }
    return watchIds.length;
  }

  /** Adds the cycle-complete step of `cycle` for the settled state `mark` (once per mark). */
  async cycleComplete(cycle: string, mark: string): Promise<void> {
    const data: CycleCompleteJobData = { cycle, mark };
    await this.cycle.add(CYCLE_COMPLETE_JOB, data, jobOptions(cycleCompleteJobId(cycle, mark), this.retry));
  }

  async counts(): Promise<Record<QueueKind, Record<string, number>>> {
    const states = ['waiting', 'active', 'delayed', 'completed', 'failed', 'prioritized'] as const;
    return {
      plan: await this.plan.getJobCounts(...states),
      enterprise: await this.enterprise.getJobCounts(...states),
      products: await this.products.getJobCounts(...states),
      cycle: await this.cycle.getJobCounts(...states),
    };
  }

  async close(): Promise<void> {
    await Promise.all(this.all().map((q) => q.close()));
  }
}

/**
 * Closes a Redis connection within `ms`: QUIT when it is connected, else (or when QUIT does not
 * return) a disconnect, which also stops its reconnect attempts.
 */
export async function closeRedis(redis: RedisClient, ms = 2000): Promise<void> {
  if (redis.status === 'ready') {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      redis.quit().catch(() => {}),
      new Promise<void>((r) => {
        timer = setTimeout(r, ms);
      }),
    ]);
    clearTimeout(timer);
  }
  redis.disconnect();
}
