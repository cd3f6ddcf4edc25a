/**
 * `daybook scheduler`: node-cron ticks in the configured zone enqueue the day's work. The cycle
 * or list date of a tick comes from its scheduled time, never from an instance's clock; several
 * instances are safe (node-cron's distributed run coordinator over Redis SET NX PX, plus
 * deterministic job ids). node-cron keeps no state, so on start the scheduler enqueues the work
 * of the latest tick that should already have happened (idempotent thanks to the job ids).
 *
 * Given the database, it also looks every minute for watch entries added after the current
 * cycle's plan (src/plan/topup.ts) and, when the cycle can take some of them, enqueues a top-up
 * of that plan: an entry added today is bought today while the budget and the rate allow.
 */
import { EventEmitter } from 'node:events';
import { createTask, type RunCoordinator, type ScheduledTask } from 'node-cron';
import type postgres from 'postgres';
import { scheduledPulls } from '../../jobs/products.ts';
import type { Config } from '../config/config.ts';
import { isConnectionLoss } from '../db/outage.ts';
import type { Logger } from '../log/log.ts';
import { latestPlan } from '../plan/decide.ts';
import { newSincePlan, topUpOf } from '../plan/topup.ts';
import { cycleOf, pacificDate } from '../time/cycles.ts';
import type { Queues } from './queues.ts';
import type { Reachability } from './reachability.ts';
import { coordinationKey, type RedisClient } from './redis.ts';

/** Elects one scheduler instance per tick: the first to SET the tick's key wins. */
export class RedisRunCoordinator implements RunCoordinator {
  private readonly redis: RedisClient;
  private readonly prefix: string;
  constructor(redis: RedisClient, prefix: string) {
    this.redis = redis;
    this.prefix = prefix;
  }
  async shouldRun(key: string, ttlMs: number): Promise<boolean> {
    const ok = await this.redis.set(
      coordinationKey(this.prefix, 'cron', key),
      '1',
      'PX',
      Math.max(1000, ttlMs),
      'NX',
    );
    return ok === 'OK';
  }
}

/** The latest minute ≤ `now` (within `maxMinutes`) that `matches`; null when none. Pure. */
export function lastTickAtOrBefore(
  matches: (d: Date) => boolean,
  now: Date,
  maxMinutes = 2 * 24 * 60,
): Date | null {
  const start = Math.floor(now.getTime() / 60_000) * 60_000;
  for (let i = 0; i <= maxMinutes; i++) {
    const t = new Date(start - i * 60_000);
    if (matches(t)) return t;
  }
  return null;
}

export interface TickEvent {
  task: 'enterprise' | 'products' | 'top-up';
  scheduledAt: Date;
  reason: 'tick' | 'catch-up';
  jobIds: string[];
}

/** When the scheduler looks for entries added after the cycle's plan: every minute. */
export const TOP_UP_CRON = '* * * * *';

export interface SchedulerDeps {
  config: Config;
  queues: Queues;
  redis: RedisClient;
  log: Logger;
  now: () => Date;
  /** The database: with it, the scheduler tops up the current cycle's plan (src/plan/topup.ts). */
  sql?: postgres.Sql;
  /** When it looks (node-cron, in DAYBOOK_CRON_TZ); TOP_UP_CRON by default. */
  topUpCron?: string;
  /** Told when Postgres fails or answers, so an outage is said once, not once a minute. */
  reach?: Reachability;
}

export interface RunningScheduler {
  events: EventEmitter<{ tick: [TickEvent] }>;
  tasks: ScheduledTask[];
  stop(): Promise<void>;
}

/** What a tick of each task enqueues, from its scheduled time. */
export async function enqueueForTick(
  deps: Pick<SchedulerDeps, 'config' | 'queues'>,
  task: 'enterprise' | 'products',
  scheduledAt: Date,
): Promise<string[]> {
  if (task === 'enterprise') return [await deps.queues.addPlan({ cycle: cycleOf(scheduledAt) })];
  const ids: string[] = [];
  for (const p of scheduledPulls(pacificDate(scheduledAt), deps.config.DAYBOOK_PRODUCT_LOOKBACK_DAYS)) {
    ids.push(
      await deps.queues.addProducts({
        ...p,
        limit: deps.config.DAYBOOK_PRODUCT_LIMIT,
        cycle: cycleOf(scheduledAt),
      }),
    );
  }
  return ids;
}

/**
 * What a top-up tick enqueues: a top-up of the plan of the tick's cycle when entries came after
 * that plan and the cycle can take some of them. Asking costs an index range on the watchlist;
 * the plan is previewed only when those entries changed since the last look (`memo`), so entries
 * that wait for the budget are not previewed again every minute.
 */
export async function topUpForTick(
  deps: Pick<SchedulerDeps, 'config' | 'queues' | 'now'> & { sql: postgres.Sql },
  scheduledAt: Date,
  memo: { seen?: string } = {},
): Promise<string[]> {
  const cycle = cycleOf(scheduledAt);
  const plan = await latestPlan(deps.sql, cycle);
  if (!plan) return [];
  const fresh = await newSincePlan(deps.sql, cycle, plan);
  if (fresh.entries === 0) return [];
  const seen = `${cycle}/${plan.plans}/${fresh.entries}/${fresh.last}`;
  if (memo.seen === seen) return [];
  const topUp = await topUpOf({ sql: deps.sql, config: deps.config, now: deps.now }, cycle);
  const ids = topUp.kind === 'due' ? [await deps.queues.addPlan({ cycle, topUp: topUp.mark })] : [];
  // Remembered once the top-up is on the queue (or there is none): asked again if adding failed.
  memo.seen = seen;
  return ids;
}

/** node-cron's messages about a task, as debug lines of the log. */
function cronLogger(log: Logger, task: string) {
  const line = (message: string | Error, err?: Error) =>
    log.debug(
      { task, ...(err ? { err: err.message } : {}) },
      message instanceof Error ? message.message : message,
    );
  return { info: line, warn: line, error: line, debug: line };
}

export async function startScheduler(deps: SchedulerDeps): Promise<RunningScheduler> {
  const { config, log } = deps;
  const events = new EventEmitter<{ tick: [TickEvent] }>();
  const coordinator = new RedisRunCoordinator(deps.redis, deps.queues.prefix);
  const memo: { seen?: string } = {};
  const enqueue = (task: TickEvent['task'], scheduledAt: Date): Promise<string[]> => {
    if (task !== 'top-up') return enqueueForTick(deps, task, scheduledAt);
    const sql = deps.sql;
    return sql ? topUpForTick({ ...deps, sql }, scheduledAt, memo) : Promise.resolve([]);
  };
  const fire = async (task: TickEvent['task'], scheduledAt: Date, reason: TickEvent['reason']) => {
    try {
      const jobIds = await enqueue(task, scheduledAt);
      if (task === 'top-up') deps.reach?.answered('postgres');
      // A top-up tick that found nothing to do says nothing: it comes every minute.
      if (task !== 'top-up' || jobIds.length > 0)
        log.info(
          { task, scheduledAt: scheduledAt.toISOString(), reason, jobIds },
          `scheduler enqueued ${task} work`,
        );
      events.emit('tick', { task, scheduledAt, reason, jobIds });
    } catch (err) {
      if (task === 'top-up' && deps.reach && isConnectionLoss(err)) {
        deps.reach.failed('postgres', err);
        return;
      }
      log.error(
        { task, err: err instanceof Error ? err.message : String(err) },
        'scheduler could not enqueue',
      );
    }
  };
  const tasks: ScheduledTask[] = [];
  for (const [name, expression] of [
    ['enterprise', config.DAYBOOK_ENTERPRISE_CRON],
    ['products', config.DAYBOOK_PRODUCTS_CRON],
  ] as const) {
    const task = createTask(expression, (ctx) => fire(name, ctx.date, 'tick'), {
      name: `daybook-${name}`,
      timezone: config.DAYBOOK_CRON_TZ,
      distributed: true,
      runCoordinator: coordinator,
      distributedLease: 10 * 60_000,
      noOverlap: true,
    });
    tasks.push(task);
    const last = lastTickAtOrBefore((d) => task.match(d), deps.now());
    if (last) await fire(name, last, 'catch-up');
    await task.start();
  }
  if (deps.sql) {
    const task = createTask(deps.topUpCron ?? TOP_UP_CRON, (ctx) => fire('top-up', ctx.date, 'tick'), {
      name: 'daybook-top-up',
      timezone: config.DAYBOOK_CRON_TZ,
      distributed: true,
      runCoordinator: coordinator,
      distributedLease: 60_000,
      noOverlap: true,
      // A tick skipped (one still running, Redis down for the election) is no news every minute:
      // node-cron's own words go to the log at debug level, never to the console.
      logger: cronLogger(log, 'top-up'),
      suppressMissedWarning: true,
    });
    tasks.push(task);
    await task.start();
  }
  return {
    events,
    tasks,
    stop: async () => {
      for (const t of tasks) await t.destroy();
    },
  };
}
