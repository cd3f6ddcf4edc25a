/**
 * What a command hands the runtime, and the one place a job's dependencies are built from it. A
 * command (src/cli) opens the database, makes the upstream client, the logger and the clock; it
 * never builds a job's dependencies nor calls a processor: it asks the runtime to run the work
 * (inline.ts, products.ts, resume.ts here, or the workers of worker.ts), which adds the shared
 * rate limiter and the queue (or the inline runner's list) and calls the jobs of jobs/.
 */
import type postgres from 'postgres';
import type { Enqueuer, JobDeps } from '../../jobs/deps.ts';
import type { Config } from '../config/config.ts';
import type { Logger } from '../log/log.ts';
import { DatabaseRateLimiter, perMinute, type RateLimiter } from '../purchase/limiter.ts';
import type { UpstreamClient } from '../upstream/client.ts';

/** A command's process: its database, upstream client, configuration, log and clock. */
export interface JobProcess {
  sql: postgres.Sql;
  client: UpstreamClient;
  config: Config;
  log: Logger;
  now: () => Date;
  /** The rate limiter; by default the one every daybook process on the database shares. */
  limiter?: RateLimiter;
}

/** The configured rate of each limited operation. */
export function rateRules(config: Config) {
  return {
    'enterprise-search': perMinute(config.DAYBOOK_ENTERPRISE_RATE),
    'product-listing': perMinute(config.DAYBOOK_PRODUCT_RATE),
  } as const;
}

/** The rate limiter every daybook process on the database shares, whatever its mode. */
export function limiterFor(config: Config, sql: postgres.Sql): RateLimiter {
  return new DatabaseRateLimiter(sql, rateRules(config));
}

/** Nothing is enqueued: the product commands' jobs plan no other job. */
export const ENQUEUES_NOTHING: Enqueuer = {
  enterprises: async () => 0,
  cycleComplete: async () => {},
};

/** The jobs' dependencies of `proc`, with `enqueue` as where the jobs put the work they plan. */
export function jobDepsOf(proc: JobProcess, enqueue: Enqueuer): JobDeps {
  const { limiter, ...rest } = proc;
  return { ...rest, limiter: limiter ?? limiterFor(proc.config, proc.sql), enqueue };
}
