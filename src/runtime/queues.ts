/**
 * The BullMQ side: three queues (plan, enterprise, products) under one Redis prefix, job options
 * as data, and deterministic job identity enforced twice: a fixed `jobId` and BullMQ
 * deduplication with a ttl longer than a cycle. (Postgres's cycle_fetches key is the third line.)
 */
import { type JobsOptions, Queue } from 'bullmq';
import { Redis, type RedisOptions } from 'ioredis';
import { ENTERPRISE_JOB, type EnterpriseJobData, enterpriseJobId } from '../../jobs/enterprise.ts';
import { PLAN_JOB, type PlanJobData, planJobId } from '../../jobs/plan.ts';
import { PRODUCTS_JOB, type ProductsJobData, productsJobId } from '../../jobs/products.ts';
import type { Enqueuer } from './deps.ts';

export const QUEUE_NAMES = { plan: PLAN_JOB, enterprise: ENTERPRISE_JOB, products: PRODUCTS_JOB } as const;
export type QueueKind = keyof typeof QUEUE_NAMES;

/** How failed jobs are retried: exponential backoff with jitter, then kept as failed. */
export const RETRY_POLICY = {
  attempts: 8,
  backoff: { type: 'exponential', delay: 2_000, jitter: 0.5 },
} as const satisfies Pick<JobsOptions, 'attempts' | 'backoff'>;

/** Longer than a cycle, so a job of a cycle is never added twice while that cycle lasts. */
export const DEDUP_TTL_MS = 3 * 24 * 3600_000;

/** Redis memory stays bounded: completed jobs kept a week, failed ones a month. */
export const KEEP = {
  removeOnComplete: { age: 7 * 24 * 3600, count: 100_000 },
  removeOnFail: { age: 30 * 24 * 3600 },
} as const;

function jobOptions(jobId: string): JobsOptions {
  return { jobId, deduplication: { id: jobId, ttl: DEDUP_TTL_MS }, ...RETRY_POLICY, ...KEEP };
}

/** A Redis connection as BullMQ wants it for blocking commands. */
export function redisConnection(url: string, extra: RedisOptions = {}): Redis {
  return new Redis(url, { maxRetriesPerRequest: null, enableReadyCheck: true, ...extra });
}

export class Queues implements Enqueuer {
  readonly plan: Queue;
  readonly enterprise: Queue;
  readonly products: Queue;
  readonly prefix: string;

  constructor(connection: Redis, prefix: string) {
    this.prefix = prefix;
    const opts = { connection, prefix };
    this.plan = new Queue(QUEUE_NAMES.plan, opts);
    this.enterprise = new Queue(QUEUE_NAMES.enterprise, opts);
    this.products = new Queue(QUEUE_NAMES.products, opts);
  }

  all(): Queue[] {
    return [this.plan, this.enterprise, this.products];
  }

  async addPlan(data: PlanJobData): Promise<string> {
    const id = planJobId(data.cycle);
    await this.plan.add(PLAN_JOB, data, jobOptions(id));
    return id;
  }

  async addProducts(data: ProductsJobData): Promise<string> {
    const id = productsJobId(data.date, data.pull);
    await this.products.add(PRODUCTS_JOB, data, jobOptions(id));
    return id;
  }

  /** Enqueues one refresh job per watch entry; `round` > 0 gives new ids after a resume. */
  async enterprises(cycle: string, watchIds: readonly number[], round = 0): Promise<number> {
    for (let i = 0; i < watchIds.length; i += 1000) {
      const part = watchIds.slice(i, i + 1000);
      await this.enterprise.addBulk(
        part.map((watchId) => {
          const data: EnterpriseJobData = { cycle, watchId };
          return { name: ENTERPRISE_JOB, data, opts: jobOptions(enterpriseJobId(cycle, watchId, round)) };
        }),
      );
    }
    return watchIds.length;
  }

  async counts(): Promise<Record<QueueKind, Record<string, number>>> {
    const states = ['waiting', 'active', 'delayed', 'completed', 'failed', 'prioritized'] as const;
    return {
      plan: await this.plan.getJobCounts(...states),
      enterprise: await this.enterprise.getJobCounts(...states),
      products: await this.products.getJobCounts(...states),
    };
  }

  async close(): Promise<void> {
    await Promise.all(this.all().map((q) => q.close()));
  }
}
