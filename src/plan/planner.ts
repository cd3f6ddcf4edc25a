/**
 * The daily planner: given the active watch entries, what was already done this cycle, the
 * credits left and the rate window, choose this cycle's work by priority, then staleness (never
 * refreshed first, then the oldest refresh), then id. Everything that does not fit is deferred
 * with the constraint that bound it; nothing is dropped: every candidate ends up selected,
 * deferred or skipped, exactly once. Pure and fast (one sort over precomputed keys).
 */
import { daysBetween } from '../time/cycles.ts';

export interface WatchCandidate {
  id: number;
  keyword: string;
  priority: number;
  pid: string | null;
  lastRefreshedAt: Date | null;
  lastOutcome: string | null;
  lastCycle: string | null;
  addedAt: Date;
}

export interface PlanInput {
  cycle: string;
  candidates: readonly WatchCandidate[];
  /** Watch entries already fetched successfully (or settled) this cycle. */
  doneWatchIds: ReadonlySet<number>;
  /** PIDs already bought this cycle. */
  donePids: ReadonlySet<string>;
  creditsPerQuery: number;
  /** Credits left for this cycle (budget − spent − reserved). */
  creditBudget: number;
  rateLimitPerMinute: number;
  /** Minutes of the cycle the plan may use. */
  windowMinutes: number;
  /** Optional cap on entries per cycle (0 = none). */
  maxEntries?: number;
}

export type DeferReason = 'credit_budget' | 'rate_window' | 'max_entries';
export type SkipReason = 'already_fetched_this_cycle' | 'duplicate_pid' | 'permanent_error_recent';

export interface Plan {
  cycle: string;
  selected: WatchCandidate[];
  deferred: { entry: WatchCandidate; reason: DeferReason }[];
  skipped: { entry: WatchCandidate; reason: SkipReason; detail?: string }[];
  creditsNeeded: number;
  capacity: { byCredits: number; byRate: number };
}

/**
 * An entry whose last answer was a permanent error (not_found, invalid_parameter) is not asked
 * again for this many days: asking costs nothing when not found, but it spends rate; after a
 * week it is retried, since a company may reappear in the registry.
 */
export const PERMANENT_ERROR_QUIET_DAYS = 7;
const PERMANENT_OUTCOMES = new Set(['not_found', 'invalid_parameter']);

export function planCycle(input: PlanInput): Plan {
  const n = input.candidates.length;
  // Sort indices by precomputed keys: priority desc, never refreshed first, oldest first, id.
  const order = new Uint32Array(n);
  const priority = new Float64Array(n);
  const staleness = new Float64Array(n);
  const ids = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const c = input.candidates[i] as WatchCandidate;
    order[i] = i;
    priority[i] = c.priority;
    staleness[i] = c.lastRefreshedAt === null ? Number.NEGATIVE_INFINITY : c.lastRefreshedAt.getTime();
    ids[i] = c.id;
  }
  order.sort(
    (a, b) =>
      (priority[b] as number) - (priority[a] as number) ||
      (staleness[a] as number) - (staleness[b] as number) ||
      (ids[a] as number) - (ids[b] as number),
  );

  const byCredits =
    input.creditsPerQuery > 0 ? Math.floor(Math.max(0, input.creditBudget) / input.creditsPerQuery) : n;
  const byRate = Math.max(0, Math.floor(input.rateLimitPerMinute * input.windowMinutes));
  const maxEntries = input.maxEntries && input.maxEntries > 0 ? input.maxEntries : Number.POSITIVE_INFINITY;
  const limit = Math.min(byCredits, byRate, maxEntries);
  const binding: DeferReason =
    limit === maxEntries ? 'max_entries' : limit === byCredits ? 'credit_budget' : 'rate_window';

  const plan: Plan = {
    cycle: input.cycle,
    selected: [],
    deferred: [],
    skipped: [],
    creditsNeeded: 0,
    capacity: { byCredits, byRate },
  };
  const heldPids = new Map<string, number>();
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
    plan.selected.push(entry);
    if (entry.pid !== null) heldPids.set(entry.pid, entry.id);
  }
  plan.creditsNeeded = plan.selected.length * input.creditsPerQuery;
  return plan;
}

/** One human line about a plan. */
export function summarizePlan(plan: Plan): string {
  const count = <T>(items: T[], key: (t: T) => string) => {
    const m = new Map<string, number>();
    for (const i of items) m.set(key(i), (m.get(key(i)) ?? 0) + 1);
    return [...m].map(([k, v]) => `${v} ${k.replaceAll('_', ' ')}`).join(', ');
  };
  const parts = [`cycle ${plan.cycle}: ${plan.selected.length} selected (${plan.creditsNeeded} credits)`];
  if (plan.deferred.length > 0)
    parts.push(`${plan.deferred.length} deferred (${count(plan.deferred, (d) => d.reason)})`);
  if (plan.skipped.length > 0)
    parts.push(`${plan.skipped.length} skipped (${count(plan.skipped, (s) => s.reason)})`);
  return parts.join(', ');
}
