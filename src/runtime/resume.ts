/**
 * Resuming a cycle's enterprise work paused by insufficient credits (`daybook resume`), inline or
 * on the queue. Entries deferred with a row (by a worker refused credits, or a re-plan) are planned
 * again, in the plan's own transaction under its lock; their jobs ran already, so on the queue they
 * are enqueued under new ids (a resume round). The plan then decides over these and the entries it
 * deferred without a row, within the budget (raised by the command beforehand).
 */
import { processPlan } from '../../jobs/plan.ts';
import type { Sql } from '../db/connect.ts';
import { replanDeferred } from '../purchase/fetches.ts';
import { type InlineSummary, runInline } from './inline.ts';
import type { JobProcess } from './process.ts';
import { Queues, retryPolicy } from './queues.ts';
import { coordinationKey, type RedisClient } from './redis.ts';

/** The deferred entries planned again, and the hook that plans them in the plan's transaction. */
function replanning(cycle: string) {
  const again = { ids: new Set<number>() };
  const replan = async (tx: Sql) => {
    again.ids = new Set(await replanDeferred(tx, cycle));
  };
  return { again, replan };
}

/** Resumes `cycle` in this process: its deferred entries bought now, as `daybook run` buys. */
export function resumeInline(proc: JobProcess, cycle: string): Promise<InlineSummary> {
  return runInline(proc, {
    cycle,
    only: 'enterprises',
    concurrency: proc.config.DAYBOOK_WORKER_CONCURRENCY,
    beforePlan: async (tx) => {
      await replanDeferred(tx, cycle);
    },
  });
}

/** What a resume on the queue planned: selected and still deferred, and how many were deferred before. */
export interface QueuedResume {
  selected: number;
  deferred: number;
  rerun: number;
}

/** Resumes `cycle` on the queue: plans it again and enqueues the entries the workers will buy. */
export async function resumeQueued(
  proc: Pick<JobProcess, 'sql' | 'config' | 'log' | 'now'>,
  redis: RedisClient,
  cycle: string,
): Promise<QueuedResume> {
  const { config } = proc;
  const queues = new Queues(redis, config.DAYBOOK_REDIS_PREFIX, retryPolicy(config));
  const { again, replan } = replanning(cycle);
  let rerun = 0;
  try {
    const round = Number(await redis.incr(coordinationKey(config.DAYBOOK_REDIS_PREFIX, 'resume', cycle)));
    const report = await processPlan(
      {
        ...proc,
        enqueue: {
          async enterprises(c, ids) {
            const before = ids.filter((id) => again.ids.has(id));
            rerun += before.length;
            return (
              (await queues.enterprises(
                c,
                ids.filter((id) => !again.ids.has(id)),
              )) + (await queues.enterprises(c, before, round))
            );
          },
        },
      },
      { cycle },
      `resume-${cycle}-r${round}`,
      replan,
    );
    const c = report.counts ?? {};
    return { selected: c.selected ?? 0, deferred: c.deferred ?? 0, rerun };
  } finally {
    await queues.close();
  }
}
