/**
 * Top-ups: the entries due in a cycle that its plan has not planned, planned in the same cycle.
 *
 * A cycle is planned once (the scheduler's tick, jobs/plan.ts). A watch entry added after that,
 * by `watch add` or `watch import`, has no row in the cycle: it would wait for the next cycle's
 * plan. A top-up is the cycle's plan run again (the same job, the same lock, the same claims):
 * what it selects that was not planned yet is planned and enqueued, within the credits left and
 * the rate window; nothing planned, in flight or settled is touched, and the claims in
 * `cycle_fetches` keep every entry bought at most once per cycle whatever runs at once.
 *
 * `daybook enqueue` asks for one when the cycle was planned and something due is not; the
 * scheduler looks every minute for entries above the latest plan's high-water mark and asks for
 * one when they fit. Both name it by `topUpMark`: the number of plans of the cycle so far and
 * the entries it is asked for, so everyone asking for the same top-up adds one job, and a top-up
 * never shares an id with the cycle's own plan or an earlier top-up.
 */
import { createHash } from 'node:crypto';
import type postgres from 'postgres';
import { type LatestPlan, latestPlan, type PlanReader, planPreview } from './decide.ts';
import type { DeferReason } from './planner.ts';

/** The entries no plan of the cycle has seen (src/plan/decide.ts). */
export { newSincePlan } from './decide.ts';

/** Entries due in the cycle that it cannot take, and why (all of them, planned before or not). */
export interface Waiting {
  entries: number;
  reason: DeferReason;
}

export type TopUp =
  /** The cycle was never planned: its own plan comes first (and plans everything due). */
  | { kind: 'unplanned' }
  /** Entries due and not planned that the cycle can take: a top-up plans them. */
  | { kind: 'due'; mark: string; entries: number[]; plan: LatestPlan; waiting: Waiting }
  /** Everything due that the cycle can take is planned, bought or in flight. */
  | { kind: 'none'; plan: LatestPlan; waiting: Waiting };

/**
 * The mark of a top-up: the plans of the cycle so far, then a digest of the entries it is asked
 * for (`2-5d41402abc` after one plan). Two askers that see the same state name the same top-up;
 * once it ran, the count of plans moved on.
 */
export function topUpMark(plans: number, entries: readonly number[]): string {
  const digest = createHash('sha256')
    .update([...entries].sort((a, b) => a - b).join(','))
    .digest('hex')
    .slice(0, 10);
  return `${plans}-${digest}`;
}

/**
 * What a top-up of `cycle` would plan now: the entries the cycle's plan would select that are
 * not planned yet (added after it, watched again, or deferred earlier while the credits now
 * allow), and what waits for the budget or the rate window.
 */
export async function topUpOf(reader: PlanReader & { sql: postgres.Sql }, cycle: string): Promise<TopUp> {
  const plan = await latestPlan(reader.sql, cycle);
  if (!plan) return { kind: 'unplanned' };
  const preview = await planPreview(reader, cycle);
  const entries = preview.plan.selected
    .map((e) => e.id)
    .filter((id) => !preview.plannedBefore.has(id))
    .sort((a, b) => a - b);
  const waiting: Waiting = {
    entries: preview.plan.deferred.length + preview.plan.deferredBeyond,
    reason: preview.plan.deferReason,
  };
  if (entries.length === 0) return { kind: 'none', plan, waiting };
  return { kind: 'due', mark: topUpMark(plan.plans, entries), entries, plan, waiting };
}
