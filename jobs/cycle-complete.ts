/**
 * The cycle-complete step: once every planned entry of a cycle has settled (and the cycle is not
 * paused), write `cycle.completed` and the day's digest, then the warehouse export when
 * DAYBOOK_EXPORT_DIR is set. A refresh job that settles an entry only asks for this step; it
 * knows nothing of digests or exports. The step runs under a deterministic id (the cycle and a
 * mark of the state its work was in), and writing the events is idempotent under the outbox's
 * lock, so any number of askers, processes and retries write them once.
 */
import { z } from 'zod';
import { writeCycleCompletion } from '../src/events/outbox.ts';
import { exportAfterCycle } from '../src/export/scheduled.ts';
import { settledMark } from '../src/purchase/fetches.ts';
import { isCalendarDate } from '../src/time/cycles.ts';
import type { JobDeps, JobReport } from './deps.ts';

export const CYCLE_COMPLETE_JOB = 'cycle-complete';

export const CycleCompleteJobData = z.object({
  cycle: z.string().refine(isCalendarDate, 'cycle must be a real calendar date YYYY-MM-DD'),
  mark: z.string().regex(/^[0-9]+$/, 'mark must be digits'),
});
export type CycleCompleteJobData = z.infer<typeof CycleCompleteJobData>;

export function cycleCompleteJobId(cycle: string, mark: string): string {
  return `cycle-complete-${cycle}-${mark}`;
}

/** What completing a cycle needs: no upstream client, no rate limiter, no queue. */
export type CycleCompleteDeps = Pick<JobDeps, 'sql' | 'config' | 'log' | 'now'>;

export async function processCycleComplete(
  deps: CycleCompleteDeps,
  data: Pick<CycleCompleteJobData, 'cycle'>,
): Promise<JobReport> {
  // Settled now (not only when the step was asked for), then written once under the outbox lock.
  const completed =
    (await settledMark(deps.sql, data.cycle)) !== null &&
    (await writeCycleCompletion(deps.sql, data.cycle, deps.now()));
  if (!completed)
    return {
      outcome: 'skipped',
      entity: data.cycle,
      detail: 'not complete yet, or its completion is already written',
    };
  await exportAfterCycle(deps.sql, deps.config, deps.log, data.cycle);
  return { outcome: 'succeeded', entity: data.cycle };
}
