/**
 * `daybook plan explain`: for a watch entry, its change-rate estimate, the parts of its score, and
 * why the plan of a cycle chose or deferred it. Read-only: it plans the cycle as the plan job
 * would (the same read of the head of the plan order, the same pure planner) without recording
 * anything.
 */

import type { Config } from '../config/config.ts';
import { inTransaction, type Sql } from '../db/connect.ts';
import type { DriverRow } from '../db/rows.ts';
import type { watchlist } from '../db/schema.ts';
import { daysBetween } from '../time/cycles.ts';
import { type CandidateRow, candidateOf, decidePlan } from './decide.ts';
import {
  DEFAULT_PRIOR,
  estimateRate,
  historyOf,
  intervalDays,
  type RatePrior,
  weightOf,
} from './estimate.ts';
import { type Plan, type PlanClass, planClassOf, planOrder, type WatchCandidate } from './planner.ts';
import { plannerScale, priorOf } from './store.ts';

/** Days in a month, for "changes per month". */
export const DAYS_PER_MONTH = 30.44;

export type Decision =
  | { kind: 'selected' }
  | { kind: 'deferred'; reason: string }
  | { kind: 'skipped'; reason: string; detail?: string }
  | { kind: 'done'; status: string }
  | { kind: 'inactive' };

export interface Explanation {
  watchId: number;
  keyword: string;
  pid: string | null;
  priority: number;
  cycle: string;
  /** Estimated changes per day, and per month; null before the first fetch. */
  rate: number | null;
  changesPerMonth: number | null;
  /** Undated intervals (changed or not), and changes the registry dated (APPRDATE) with the quiet days after them. */
  observations: { intervals: number; changed: number; days: number; datedChanges: number; datedDays: number };
  prior: RatePrior;
  cohort: string | null;
  weight: number;
  boostLeft: number;
  lastRefreshedAt: Date | null;
  /** The cycle of the last successful refresh. */
  refreshedCycle: string | null;
  /** Days since the last refresh, at the cycle's start. */
  ageDays: number | null;
  /** 1 − e^(−λ·age): the chance it changed since its last refresh. */
  changeProbability: number | null;
  /** weight × changeProbability. */
  expectedValue: number | null;
  scale: number | null;
  intervalDays: number | null;
  dueAt: Date | null;
  planClass: PlanClass;
  /** Its place in the plan order (1 = first), and how many entries the cycle takes. */
  position: number;
  capacity: number;
  decision: Decision;
}

/** A watch entry as the plan reads it, and what the estimate keeps. */
type EntryRow = CandidateRow &
  Pick<
    DriverRow<typeof watchlist>,
    'active' | 'change_rate' | 'change_weight' | 'change_history' | 'change_cohort' | 'boost_left'
  >;

/** The entries `--pid` (a PID, a keyword or a watch id) names. */
export async function entriesNamed(sql: Sql, what: string): Promise<number[]> {
  const asId = /^\d+$/.test(what) ? Number(what) : null;
  const rows = await sql<{ id: string }[]>`
    select id from watchlist
    where pid = ${what} or keyword = ${what} ${asId !== null && Number.isSafeInteger(asId) ? sql`or id = ${asId}` : sql``}
    order by active desc, priority desc, id`;
  return rows.map((r) => Number(r.id));
}

/**
 * Explains the plan of `cycle` for the given watch entries, or for the first `top` entries of the
 * plan order when `ids` is null.
 */
export async function explainPlan(
  sql: Sql,
  config: Config,
  now: () => Date,
  cycle: string,
  which: { ids: number[] } | { top: number },
): Promise<Explanation[]> {
  return inTransaction(
    sql,
    async (tx) => {
      const deps = { sql: tx, config, now };
      const { plan, input } = await decidePlan(deps, cycle);
      const order = new Map<number, number>();
      const decided = new Map<number, Decision>();
      for (const e of plan.selected) decided.set(e.id, { kind: 'selected' });
      for (const d of plan.deferred) decided.set(d.entry.id, { kind: 'deferred', reason: d.reason });
      for (const s of plan.skipped)
        decided.set(s.entry.id, {
          kind: 'skipped',
          reason: s.reason,
          ...(s.detail ? { detail: s.detail } : {}),
        });
      const walked = orderedIds(input.candidates, plan, config.DAYBOOK_MAX_STALENESS_DAYS);
      for (const [k, id] of walked.entries()) order.set(id, k + 1);
      const ids = 'ids' in which ? which.ids : walked.slice(0, which.top);
      const rows = ids.length
        ? await tx<EntryRow[]>`
          select id, keyword, priority, pid, active, last_refreshed_at, refreshed_cycle::text, last_outcome, last_cycle::text,
                 added_at, due_at, change_rate, change_weight, change_history, change_cohort, boost_left
          from watchlist where id in ${tx(ids)}`
        : [];
      const byId = new Map(rows.map((r) => [Number(r.id), r]));
      const done = new Map(
        (
          await tx<{ watch_id: string; status: string }[]>`
            select watch_id, status from cycle_fetches where cycle = ${cycle} and watch_id in ${tx(ids.length ? ids : [0])}`
        ).map((r) => [Number(r.watch_id), r.status]),
      );
      const scale = await plannerScale(tx);
      const out: Explanation[] = [];
      for (const id of ids) {
        const r = byId.get(id);
        if (!r) continue;
        const history = historyOf(r.change_history);
        const prior = r.change_cohort === null ? DEFAULT_PRIOR : await priorOf(tx, r.change_cohort);
        const rate = r.last_refreshed_at === null ? null : (r.change_rate ?? estimateRate(history, prior));
        const age = r.refreshed_cycle === null ? null : Math.max(0, daysBetween(r.refreshed_cycle, cycle));
        const p = rate === null || age === null ? null : -Math.expm1(-rate * age);
        const candidate = candidateOf(r);
        let position = order.get(id);
        if (position === undefined) position = await positionOf(tx, candidate, input.candidates.length);
        const status = done.get(id);
        const decision: Decision = !r.active
          ? { kind: 'inactive' }
          : (decided.get(id) ??
            (status && status !== 'planned' && status !== 'deferred'
              ? { kind: 'done', status }
              : { kind: 'deferred', reason: plan.deferReason }));
        out.push({
          watchId: id,
          keyword: r.keyword,
          pid: r.pid,
          priority: r.priority,
          cycle,
          rate,
          changesPerMonth: rate === null ? null : rate * DAYS_PER_MONTH,
          observations: {
            intervals: history.n,
            changed: history.changes,
            days: history.days,
            datedChanges: history.datedEvents ?? 0,
            datedDays: history.datedDays ?? 0,
          },
          prior,
          cohort: r.change_cohort,
          weight: r.change_weight ?? weightOf(history),
          boostLeft: r.boost_left,
          lastRefreshedAt: r.last_refreshed_at,
          refreshedCycle: r.refreshed_cycle,
          ageDays: age,
          changeProbability: p,
          expectedValue: p === null ? null : p * (r.change_weight ?? 1),
          scale,
          intervalDays:
            rate === null
              ? null
              : r.boost_left > 0
                ? 1
                : intervalDays(
                    rate,
                    r.change_weight ?? 1,
                    scale ?? Number.POSITIVE_INFINITY,
                    config.DAYBOOK_MAX_STALENESS_DAYS,
                  ),
          dueAt: r.due_at,
          planClass: planClassOf(candidate, cycle, config.DAYBOOK_MAX_STALENESS_DAYS),
          position,
          capacity: plan.capacity.limit,
          decision,
        });
      }
      return out;
    },
    'isolation level repeatable read read only',
  );
}

/** The candidates in plan order. */
function orderedIds(candidates: readonly WatchCandidate[], plan: Plan, maxStalenessDays: number): number[] {
  const order = planOrder(candidates, plan.cycle, maxStalenessDays);
  return Array.from(order, (i) => (candidates[i] as WatchCandidate).id);
}

/**
 * Where an entry the plan did not read stands: 1 + the active entries before it in the order of
 * watchlist_due_order_idx (priority, due time, id; the owed ones of its priority aside).
 */
async function positionOf(tx: Sql, c: WatchCandidate, read: number): Promise<number> {
  const [r] =
    c.dueAt === null
      ? await tx<{ n: number }[]>`
          select count(*)::int as n from watchlist where active and (priority > ${c.priority}
            or (priority = ${c.priority} and due_at is null and id < ${c.id}))`
      : await tx<{ n: number }[]>`
          select count(*)::int as n from watchlist where active and (priority > ${c.priority}
            or (priority = ${c.priority} and (due_at is null or due_at < ${c.dueAt}
                or (due_at = ${c.dueAt} and id < ${c.id}))))`;
  return Math.max(read + 1, (r?.n ?? 0) + 1);
}
