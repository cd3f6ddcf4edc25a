/**
 * Plan a cycle: decide which watch entries are refreshed in it (priority, then staleness, within
 * the credit budget and the rate window), record the decision in cycle_fetches (the Postgres
 * guard against buying twice), and enqueue one enterprise job per selected entry. Deferred
 * entries are recorded with their reason, never dropped silently.
 */
import { z } from 'zod';
import { budgetOf, ensureCycleBudget } from '../src/budget/credits.ts';
import { finishRun, startRun } from '../src/db/runs.ts';
import { type PlanInput, planCycle, summarizePlan, type WatchCandidate } from '../src/plan/planner.ts';
import type { JobDeps, JobReport } from '../src/runtime/deps.ts';
import { cycleStart, isCalendarDate, nextRefresh } from '../src/time/cycles.ts';

export const PLAN_JOB = 'plan';

export const PlanJobData = z.object({
  cycle: z.string().refine(isCalendarDate, 'cycle must be a real calendar date YYYY-MM-DD'),
});
export type PlanJobData = z.infer<typeof PlanJobData>;

export function planJobId(cycle: string): string {
  return `plan-${cycle}`;
}

export async function processPlan(deps: JobDeps, data: PlanJobData, jobId: string): Promise<JobReport> {
  const { sql } = deps;
  const { cycle } = data;
  const runId = await startRun(sql, { kind: PLAN_JOB, cycle, jobId });
  const plan = planCycle(await readPlanInput(deps, cycle));

  const rows = [
    ...plan.selected.map((e) => ({
      cycle,
      watch_id: e.id,
      status: 'planned',
      error_code: null,
      error_message: null,
    })),
    ...plan.deferred.map((d) => ({
      cycle,
      watch_id: d.entry.id,
      status: 'deferred',
      error_code: d.reason,
      error_message: `deferred by the planner: ${d.reason.replace('_', ' ')}`,
    })),
  ];
  for (let i = 0; i < rows.length; i += 5000) {
    const part = rows.slice(i, i + 5000);
    await sql`
      insert into cycle_fetches ${sql(part)}
      on conflict (cycle, watch_id) do update set status = excluded.status, error_code = excluded.error_code,
        error_message = excluded.error_message, updated_at = now()
      where cycle_fetches.status in ('planned', 'deferred')`;
  }
  // Entries already in flight are enqueued again too. Their job keeps running when it exists
  // (the same job id makes the add a no-op); when it was lost (a Redis that kept nothing across a
  // restart, a `daybook run` that died), this is what brings them back instead of stranding them.
  const inFlight = await sql<{ watch_id: string }[]>`
    select watch_id from cycle_fetches where cycle = ${cycle} and status in ('fetching', 'retrying')`;
  const enqueued = await deps.enqueue.enterprises(cycle, [
    ...plan.selected.map((e) => e.id),
    ...inFlight.map((r) => Number(r.watch_id)),
  ]);
  const counts = {
    selected: plan.selected.length,
    inFlight: inFlight.length,
    deferred: plan.deferred.length,
    skipped: plan.skipped.length,
    enqueued,
    creditsNeeded: plan.creditsNeeded,
  };
  await finishRun(sql, runId, { outcome: 'succeeded', counts });
  deps.log.info({ cycle, ...counts }, summarizePlan(plan));
  return { outcome: 'succeeded', entity: cycle, counts };
}

/** Reads what the planner decides from: the active watch entries, this cycle's settled work, credits left. */
export async function readPlanInput(
  deps: Pick<JobDeps, 'sql' | 'config' | 'now'>,
  cycle: string,
): Promise<PlanInput> {
  const { sql, config } = deps;
  await ensureCycleBudget(sql, cycle, config.DAYBOOK_CREDIT_BUDGET);
  const budget = await budgetOf(sql, cycle);
  const candidates = await sql<
    {
      id: string;
      keyword: string;
      priority: number;
      pid: string | null;
      last_refreshed_at: Date | null;
      last_outcome: string | null;
      last_cycle: string | null;
      added_at: Date;
    }[]
  >`select id, keyword, priority, pid, last_refreshed_at, last_outcome, last_cycle::text, added_at
    from watchlist where active`;
  const done = await sql<{ watch_id: string; pid: string | null }[]>`
    select watch_id, pid from cycle_fetches
    where cycle = ${cycle} and status in ('succeeded', 'duplicate', 'failed', 'fetching', 'retrying')`;
  const now = deps.now();
  const cycleEnd = nextRefresh(cycleStart(cycle)).getTime();
  return {
    cycle,
    candidates: candidates.map(
      (c): WatchCandidate => ({
        id: Number(c.id),
        keyword: c.keyword,
        priority: c.priority,
        pid: c.pid,
        lastRefreshedAt: c.last_refreshed_at,
        lastOutcome: c.last_outcome,
        lastCycle: c.last_cycle,
        addedAt: c.added_at,
      }),
    ),
    doneWatchIds: new Set(done.map((d) => Number(d.watch_id))),
    donePids: new Set(done.flatMap((d) => (d.pid ? [d.pid] : []))),
    creditsPerQuery: config.DAYBOOK_CREDITS_PER_QUERY,
    creditBudget: budget ? Math.max(0, budget.budget - budget.spent - budget.reserved) : 0,
    rateLimitPerMinute: config.DAYBOOK_ENTERPRISE_RATE,
    // A late plan (or a past cycle run by hand) still gets at least an hour of window.
    windowMinutes: Math.max(60, Math.floor((cycleEnd - now.getTime()) / 60_000)),
  };
}
