/**
 * Plan a cycle: decide which watch entries are refreshed in it (priority, then staleness, within
 * the credit budget and the rate window), record the decision in cycle_fetches (the claims a
 * buyer takes, src/purchase/fetches.ts), and enqueue one enterprise job per selected entry. The
 * reading and the writing are one transaction under a per-cycle lock, so two plans of a cycle, or
 * a plan and a `daybook resume`, never interleave; jobs are enqueued once it commits.
 *
 * Only the head of the plan order is read: the entries the cycle can afford, plus a margin for
 * the ones the planner skips (an index scan on watchlist_plan_order_idx), and a count of the
 * rest. Deferral is recorded without writing a row per deferred entry: an active watch entry with
 * no `cycle_fetches` row in a planned cycle is deferred, for the reason the plan run keeps in its
 * counts (`deferredReason`); `daybook status` counts and lists them, and `daybook resume` plans
 * them again. Rows are written for what the plan decided about the entries it read: `planned`
 * for the selected, `skipped` (with the reason) for duplicate PIDs and resting permanent errors,
 * and `deferred` for rows an earlier plan of the cycle had planned and this one does not select.
 */
import { z } from 'zod';
import type { Sql } from '../src/db/connect.ts';
import { finishRun, startRun } from '../src/landing/runs.ts';
import { PLAN_RUN_KIND, planLocked } from '../src/plan/decide.ts';
import { capacityOf, summarizePlan } from '../src/plan/planner.ts';
import { refreshPlannerState } from '../src/plan/store.ts';
import { ensureCycleBudget } from '../src/purchase/credits.ts';
import { isCalendarDate } from '../src/time/cycles.ts';
import { compactBookkeeping } from './compact.ts';
import type { Enqueuer, JobDeps, JobReport } from './deps.ts';

export const PLAN_JOB = PLAN_RUN_KIND;

export const PlanJobData = z.object({
  cycle: z.string().refine(isCalendarDate, 'cycle must be a real calendar date YYYY-MM-DD'),
  /**
   * A top-up of the cycle's plan (src/plan/topup.ts): its mark, which names the plans before it
   * and what it was asked for. Absent for the cycle's own plan.
   */
  topUp: z
    .string()
    .regex(/^[a-z0-9-]{1,64}$/, 'topUp is a mark of lower-case letters, digits and -')
    .optional(),
});
export type PlanJobData = z.infer<typeof PlanJobData>;

/** The id of the cycle's plan: one per cycle, whoever asks for it. */
export function planJobId(cycle: string): string {
  return `plan-${cycle}`;
}

/**
 * The id of a top-up of the cycle's plan: apart from the cycle's own plan, and one per mark
 * (src/plan/topup.ts topUpMark), so everyone asking for the same top-up adds one job.
 */
export function topUpJobId(cycle: string, mark: string): string {
  return `plan-${cycle}-${topUpBatch(mark)}`;
}

/** What the job ids of the enterprises a top-up planned end with (jobs/enterprise.ts enterpriseJobId). */
export function topUpBatch(mark: string): string {
  return `top-${mark}`;
}

/** What planning needs: no upstream client, no rate limiter. */
export type PlanDeps = Pick<JobDeps, 'sql' | 'config' | 'log' | 'now'> & {
  enqueue: Pick<Enqueuer, 'enterprises'>;
};

/**
 * Plans the cycle. `beforePlan` runs first in the plan's transaction, under its lock (a resume
 * plans its deferred rows again there).
 */
export async function processPlan(
  deps: PlanDeps,
  data: PlanJobData,
  jobId: string,
  beforePlan?: (tx: Sql) => Promise<void>,
): Promise<JobReport> {
  const { sql } = deps;
  const { cycle, topUp } = data;
  const runId = await startRun(sql, { kind: PLAN_JOB, cycle, jobId });
  await ensureCycleBudget(sql, cycle, deps.config.DAYBOOK_CREDIT_BUDGET);
  const { plan, input, inFlight, newlyPlanned, highWater } = await planLocked(deps, cycle, beforePlan);
  // The cycle's own plan enqueues every selected and in-flight entry under the cycle's ids (a
  // repeat adds nothing; after a Redis that lost its jobs, it brings them back). A top-up
  // enqueues only what it planned anew, under ids of its own: an entry deferred earlier in the
  // cycle may have had a job under the cycle's id already, and BullMQ would not add it again.
  const enqueued =
    topUp === undefined
      ? await deps.enqueue.enterprises(cycle, [...plan.selected.map((e) => e.id), ...inFlight])
      : await deps.enqueue.enterprises(cycle, newlyPlanned, topUpBatch(topUp));
  // The cohort priors and the scale the refreshes of this cycle set their next due times with:
  // the scale spreads the whole watchlist's refreshes over what a full cycle can take.
  const full = capacityOf(
    { ...input, creditBudget: deps.config.DAYBOOK_CREDIT_BUDGET, windowMinutes: 24 * 60 },
    input.candidates.length + (input.beyond ?? 0),
  );
  const planner = await refreshPlannerState(
    sql,
    cycle,
    { perDay: full.limit },
    deps.config.DAYBOOK_MAX_STALENESS_DAYS,
    // Every refreshed entry planned again when the model moved: by the cycle's own plan.
    { replan: topUp === undefined },
  );
  // The bookkeeping of cycles long finished, compacted (jobs/compact.ts), by the cycle's own
  // plan: a top-up leaves it to that one.
  const compacted =
    topUp === undefined
      ? await compactBookkeeping(
          sql,
          cycle,
          deps.config.DAYBOOK_BOOKKEEPING_DAYS,
          deps.config.DAYBOOK_ERROR_RETENTION_DAYS,
        )
      : { cycleFetches: 0, runs: 0, sightings: 0, errorCalls: 0 };
  const counts = {
    selected: plan.selected.length,
    /** Selected entries that were not planned before this plan. */
    newlyPlanned: newlyPlanned.length,
    inFlight: inFlight.length,
    deferred: plan.deferred.length + plan.deferredBeyond,
    skipped: plan.skipped.length,
    enqueued,
    creditsNeeded: plan.creditsNeeded,
    /** Watch entries read from the head of the plan order. */
    read: input.candidates.length,
  };
  await finishRun(sql, runId, {
    outcome: 'succeeded',
    counts: {
      ...counts,
      deferredReason: plan.deferReason,
      // The watchlist's high-water mark the plan saw, and whether it topped up (src/plan/topup.ts).
      highWater,
      topUp: topUp ?? 0,
      scale: Number.isFinite(planner.scale) ? planner.scale : String(planner.scale),
      cohorts: planner.cohorts,
      // What the plan learned from the whole watchlist (src/plan/due.ts PlannerModel).
      equal: planner.model.equal,
      hot: planner.model.hot,
      boost: planner.model.boost ? 1 : 0,
      // Refreshed entries whose estimate or due time moved under what the plan learned.
      replanned: planner.replanned?.written ?? 0,
      compactedFetches: compacted.cycleFetches,
      compactedRuns: compacted.runs,
      compactedSightings: compacted.sightings,
      droppedErrorAnswers: compacted.errorCalls,
    },
  });
  deps.log.info({ cycle, ...counts, deferredReason: plan.deferReason }, summarizePlan(plan));
  return { outcome: 'succeeded', entity: cycle, counts };
}
