/** What every job processor is handed: its dependencies, passed in rather than imported. */
import type postgres from 'postgres';
import type { Config } from '../src/config/config.ts';
import type { Logger } from '../src/log/log.ts';
import type { LimitedOperation, RateLimiter } from '../src/purchase/limiter.ts';
import type { UpstreamClient } from '../src/upstream/client.ts';

/** Puts jobs on the queue (or the inline runner's list). */
export interface Enqueuer {
  /**
   * One enterprise refresh job per watch entry. `batch` names the top-up of the cycle's plan that
   * planned them: their job ids are its own, apart from the ids of the cycle's first plan.
   */
  enterprises(cycle: string, watchIds: readonly number[], batch?: string): Promise<number>;
  /**
   * The cycle-complete step of `cycle`, asked for when its work looked settled; `mark` names that
   * state, so the step is added once per state however many jobs ask (jobs/cycle-complete.ts).
   */
  cycleComplete(cycle: string, mark: string): Promise<void>;
}

export interface JobDeps {
  sql: postgres.Sql;
  client: UpstreamClient;
  limiter: RateLimiter;
  config: Config;
  log: Logger;
  enqueue: Enqueuer;
  now: () => Date;
  /** Called when an upstream call is about to be made (metrics hooks). */
  onUpstreamCall?: (op: LimitedOperation, outcome: string, durationMs: number) => void;
}

/** What a processor reports back; the runtime logs it as the job's one line (src/terms/report.ts). */
export type { JobReport } from '../src/terms/report.ts';
