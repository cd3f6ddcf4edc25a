/**
 * `daybook scheduler`: node-cron ticks in the configured zone enqueue the day's work. The cycle
 * or list date of a tick comes from its scheduled time, never from an instance's clock; several
 * instances are safe (node-cron's distributed run coordinator over Redis SET NX PX, plus
 * deterministic job ids). node-cron keeps no state, so on start the scheduler enqueues the work
 * of the latest tick that should already have happened (idempotent thanks to the job ids).
 */
import { EventEmitter } from 'node:events';
import { createTask, type RunCoordinator, type ScheduledTask } from 'node-cron';
import { scheduledPulls } from '../../jobs/products.ts';
import type { Config } from '../config/config.ts';
import type { Logger } from '../log/log.ts';
import { cycleOf, pacificDate } from '../time/cycles.ts';
import type { Queues } from './queues.ts';
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
  task: 'enterprise' | 'products';
  scheduledAt: Date;
  reason: 'tick' | 'catch-up';
  jobIds: string[];
}

export interface SchedulerDeps {
  config: Config;
  queues: Queues;
  redis: RedisClient;
  log: Logger;
  now: () => Date;
}

export interface RunningScheduler {
  events: EventEmitter<{ tick: [TickEvent] }>;
  tasks: ScheduledTask[];
  stop(): Promise<void>;
}

/** What a tick of each task enqueues, from its scheduled time. */
export async function enqueueForTick(
  deps: Pick<SchedulerDeps, 'config' | 'queues'>,
  task: TickEvent['task'],
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

export async function startScheduler(deps: SchedulerDeps): Promise<RunningScheduler> {
  const { config, log } = deps;
  const events = new EventEmitter<{ tick: [TickEvent] }>();
  const coordinator = new RedisRunCoordinator(deps.redis, deps.queues.prefix);
  const fire = async (task: TickEvent['task'], scheduledAt: Date, reason: TickEvent['reason']) => {
    try {
      const jobIds = await enqueueForTick(deps, task, scheduledAt);
      log.info(
        { task, scheduledAt: scheduledAt.toISOString(), reason, jobIds },
        `scheduler enqueued ${task} work`,
      );
      events.emit('tick', { task, scheduledAt, reason, jobIds });
    } catch (err) {
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
  return {
    events,
    tasks,
    stop: async () => {
      for (const t of tasks) await t.destroy();
    },
  };
}
