/**
 * The daily planner: given the active watch entries, what was already done this cycle, the
 * credits left and the rate window, choose this cycle's work. The order (`planOrder`) is priority
 * first, always; within a priority, entries never fetched, then entries owed a refresh by the
 * staleness bound (last refreshed `maxStalenessDays` cycles ago or more, oldest first), then the
 * rest by due time (src/plan/due.ts: the entries whose expected value per credit is highest
 * are due first), then id. Everything that does not fit is deferred
 * with the constraint that bound it; nothing is dropped: every candidate ends up selected,
 * deferred or skipped, exactly once.
 *
 * The candidates may be every active entry, or only the head of that order: the plan job reads
 * the few thousand entries a cycle can afford, and says how many active entries come after them
 * (`beyond`). Those are deferred without being looked at, for the same reason, unless the head ran
 * out before the capacity was filled; then the plan is not `complete`, and the job reads a longer
 * head. Pure and fast (one sort over precomputed keys).
 */

import { PERMANENT_ERROR_QUIET_DAYS, PERMANENT_OUTCOMES } from '../terms/outcomes.ts';
import { addDays, daysBetween } from '../time/cycles.ts';
import { RELATED_PRIORITY } from '../watch/csv.ts';
import { DEFAULT_MAX_STALENESS_DAYS } from './due.ts';

export interface WatchCandidate {
  id: number;
  keyword: string;
  priority: number;
  pid: string | null;
  lastRefreshedAt: Date | null;
  /** The cycle of its last successful refresh; the staleness bound counts cycles from it. */
  refreshedCycle: string | null;
  lastOutcome: string | null;
  lastCycle: string | null;
  addedAt: Date;
  /** When the entry is next due (src/plan/due.ts); null when it was never fetched. */
  dueAt: Date | null;
}

/** What bounds a cycle's work: credits left, the rate window, an optional cap. */
export interface PlanLimits {
  creditsPerQuery: number;
  /** Credits left for this cycle (budget − spent − reserved). */
  creditBudget: number;
  rateLimitPerMinute: number;
  /** Minutes of the cycle the plan may use. */
  windowMinutes: number;
  /** Optional cap on entries per cycle (0 = none). */
  maxEntries?: number;
  /**
   * Percent of the cycle's capacity that entries watched only as shareholders may take
   * (DAYBOOK_RELATED_SHARE; absent: no cap of their own).
   */
  relatedShare?: number;
}

export interface PlanInput extends PlanLimits {
  cycle: string;
  /** Every active entry, or the head of the plan order (priority desc, never refreshed first, oldest refresh, id). */
  candidates: readonly WatchCandidate[];
  /** Active entries after the candidates in the plan order, not read (0 when the candidates are all of them). */
  beyond?: number;
  /** Cycles after which an entry is owed a refresh (DAYBOOK_MAX_STALENESS_DAYS). */
  maxStalenessDays?: number;
  /** Watch entries already fetched successfully (or settled) this cycle. */
  doneWatchIds: ReadonlySet<number>;
  /** PIDs already bought this cycle. */
  donePids: ReadonlySet<string>;
}

export type DeferReason = 'credit_budget' | 'rate_window' | 'max_entries' | 'related_share';

/** Whether an entry is watched only as a shareholder of a watched company (src/watch/related.ts). */
export function isRelatedEntry(c: Pick<WatchCandidate, 'priority'>): boolean {
  return c.priority <= RELATED_PRIORITY;
}
export type SkipReason = 'already_fetched_this_cycle' | 'duplicate_pid' | 'permanent_error_recent';

export interface Plan {
  cycle: string;
  selected: WatchCandidate[];
  /** Candidates that did not fit, with the constraint that bound them. */
  deferred: { entry: WatchCandidate; reason: DeferReason }[];
  skipped: { entry: WatchCandidate; reason: SkipReason; detail?: string }[];
  /** Active entries after the candidates, deferred unseen for `deferReason`. */
  deferredBeyond: number;
  /** The constraint that binds this cycle: the reason of every deferral. */
  deferReason: DeferReason;
  /**
   * False when the candidates ran out before the capacity was filled while entries remain beyond
   * them: the head was too short (too many skips in it); read a longer one and plan again.
   */
  complete: boolean;
  creditsNeeded: number;
  capacity: { byCredits: number; byRate: number; limit: number };
}

/**
 * How many entries a cycle can take, and what binds it; `entries` is how many there are at all
 * (the bound when queries cost nothing and nothing else limits).
 */
export function capacityOf(
  limits: PlanLimits,
  entries: number,
): { byCredits: number; byRate: number; limit: number; binding: DeferReason } {
  const byCredits =
    limits.creditsPerQuery > 0
      ? Math.floor(Math.max(0, limits.creditBudget) / limits.creditsPerQuery)
      : entries;
  const byRate = Math.max(0, Math.floor(limits.rateLimitPerMinute * limits.windowMinutes));
  const maxEntries =
    limits.maxEntries && limits.maxEntries > 0 ? limits.maxEntries : Number.POSITIVE_INFINITY;
  const limit = Math.min(byCredits, byRate, maxEntries);
  const binding: DeferReason =
    limit === maxEntries ? 'max_entries' : limit === byCredits ? 'credit_budget' : 'rate_window';
  return { byCredits, byRate, limit, binding };
}

export { PERMANENT_ERROR_QUIET_DAYS, PERMANENT_OUTCOMES };

/** Where an entry stands within its priority: never fetched, owed by the staleness bound, or by due time. */
export type PlanClass = 'never_fetched' | 'owed' | 'due';

/**
 * The last cycle whose refresh leaves an entry owed one in `cycle`: `cycle − maxStalenessDays`.
 * An entry refreshed in it or before is owed.
 */
export function owedThrough(cycle: string, maxStalenessDays: number): string {
  return addDays(cycle, -Math.max(1, maxStalenessDays));
}

function classOf(c: WatchCandidate, owedCycle: string): PlanClass {
  if (c.dueAt === null) return 'never_fetched';
  if (c.refreshedCycle !== null && c.refreshedCycle <= owedCycle) return 'owed';
  return 'due';
}

/** The class of an entry in `cycle` with the staleness bound `maxStalenessDays`. */
export function planClassOf(c: WatchCandidate, cycle: string, maxStalenessDays: number): PlanClass {
  return classOf(c, owedThrough(cycle, maxStalenessDays));
}

const CLASS_RANK: Record<PlanClass, number> = { never_fetched: 0, owed: 1, due: 2 };

/**
 * The plan order of `candidates` (indices into it): priority desc; within a priority, never
 * fetched, then owed (oldest refresh first), then due time; then id. Pure, deterministic, one sort
 * over precomputed keys (no per-entry scoring at plan time).
 */
export function planOrder(
  candidates: readonly WatchCandidate[],
  cycle: string,
  maxStalenessDays = DEFAULT_MAX_STALENESS_DAYS,
): Uint32Array {
  const n = candidates.length;
  const order = new Uint32Array(n);
  const priority = new Float64Array(n);
  const rank = new Uint8Array(n);
  const key = new Float64Array(n);
  const ids = new Float64Array(n);
  const owedCycle = owedThrough(cycle, maxStalenessDays);
  for (let i = 0; i < n; i++) {
    const c = candidates[i] as WatchCandidate;
    order[i] = i;
    priority[i] = c.priority;
    const cls = classOf(c, owedCycle);
    rank[i] = CLASS_RANK[cls];
    key[i] =
      cls === 'never_fetched'
        ? 0
        : cls === 'owed'
          ? Date.parse(c.refreshedCycle as string)
          : (c.dueAt as Date).getTime();
    ids[i] = c.id;
  }
  order.sort(
    (a, b) =>
      (priority[b] as number) - (priority[a] as number) ||
      (rank[a] as number) - (rank[b] as number) ||
      (key[a] as number) - (key[b] as number) ||
      (ids[a] as number) - (ids[b] as number),
  );
  return order;
}

export function planCycle(input: PlanInput): Plan {
  const n = input.candidates.length;
  const order = planOrder(input.candidates, input.cycle, input.maxStalenessDays);

  const beyond = Math.max(0, input.beyond ?? 0);
  const { byCredits, byRate, limit, binding } = capacityOf(input, n + beyond);

  const plan: Plan = {
    cycle: input.cycle,
    selected: [],
    deferred: [],
    skipped: [],
    deferredBeyond: 0,
    deferReason: binding,
    complete: true,
    creditsNeeded: 0,
    capacity: { byCredits, byRate, limit },
  };
  const heldPids = new Map<string, number>();
  const relatedCap =
    input.relatedShare === undefined ? limit : Math.floor((limit * Math.max(0, input.relatedShare)) / 100);
  let related = 0;
  let relatedCapped = false;
  for (let k = 0; k < n; k++) {
    const entry = input.candidates[order[k] as number] as WatchCandidate;
    if (input.doneWatchIds.has(entry.id)) {
      plan.skipped.push({ entry, reason: 'already_fetched_this_cycle' });
      continue;
    }
    if (entry.pid !== null) {
      if (input.donePids.has(entry.pid)) {
        plan.skipped.push({
          entry,
          reason: 'duplicate_pid',
          detail: `PID ${entry.pid} already bought this cycle`,
        });
        continue;
      }
      const holder = heldPids.get(entry.pid);
      if (holder !== undefined) {
        plan.skipped.push({ entry, reason: 'duplicate_pid', detail: `same PID as watch entry ${holder}` });
        continue;
      }
    }
    if (
      entry.lastOutcome !== null &&
      PERMANENT_OUTCOMES.has(entry.lastOutcome) &&
      entry.lastCycle !== null &&
      daysBetween(entry.lastCycle, input.cycle) < PERMANENT_ERROR_QUIET_DAYS
    ) {
      plan.skipped.push({
        entry,
        reason: 'permanent_error_recent',
        detail: `${entry.lastOutcome} in cycle ${entry.lastCycle}`,
      });
      continue;
    }
    if (plan.selected.length >= limit) {
      plan.deferred.push({ entry, reason: binding });
      continue;
    }
    if (isRelatedEntry(entry)) {
      // Shareholders come last in the order (their priority) and within their share.
      if (related >= relatedCap) {
        plan.deferred.push({ entry, reason: 'related_share' });
        relatedCapped = true;
        continue;
      }
      related++;
    }
    plan.selected.push(entry);
    if (entry.pid !== null) heldPids.set(entry.pid, entry.id);
  }
  if (beyond > 0) {
    if (plan.selected.length >= limit) plan.deferredBeyond = beyond;
    else if (relatedCapped) {
      // What comes after a capped shareholder in the order is a shareholder too.
      plan.deferredBeyond = beyond;
      plan.deferReason = 'related_share';
    } else plan.complete = false;
  }
  plan.creditsNeeded = plan.selected.length * input.creditsPerQuery;
  return plan;
}

/** One human line about a plan. */
export function summarizePlan(plan: Plan): string {
  const count = (keys: Iterable<[string, number]>) => {
    const m = new Map<string, number>();
    for (const [k, n] of keys) if (n > 0) m.set(k, (m.get(k) ?? 0) + n);
    return [...m].map(([k, v]) => `${v} ${k.replaceAll('_', ' ')}`).join(', ');
  };
  const parts = [`cycle ${plan.cycle}: ${plan.selected.length} selected (${plan.creditsNeeded} credits)`];
  const deferred = plan.deferred.length + plan.deferredBeyond;
  if (deferred > 0) {
    const reasons = count([
      ...plan.deferred.map((d): [string, number] => [d.reason, 1]),
      [plan.deferReason, plan.deferredBeyond],
    ]);
    parts.push(`${deferred} deferred (${reasons})`);
  }
  if (plan.skipped.length > 0)
    parts.push(`${plan.skipped.length} skipped (${count(plan.skipped.map((s) => [s.reason, 1]))})`);
  return parts.join(', ');
}
