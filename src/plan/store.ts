/**
 * Where the change-rate planner keeps its state (src/plan/estimate.ts): each watch entry's
 * observations, estimate, weight, boost and due time (columns of `watchlist`), the cohort priors
 * (`change_cohorts`) and the scale (`planner_state`).
 *
 * A successful fetch notes its observation in the transaction that completes it
 * (`noteRefresh`), so an entry's estimate moves exactly once per fetch whatever runs at once.
 * Each plan refreshes the cohort priors and the scale from the whole watchlist
 * (`refreshPlannerState`): two aggregate scans a cycle, outside the plan's own transaction.
 */

import { inTransaction, type Sql } from '../db/connect.ts';
import type { Severity } from '../terms/changes.ts';
import { cycleStart } from '../time/cycles.ts';
import { type EntryEstimate, setEstimates } from '../watch/store.ts';
import {
  afterRefresh,
  type CohortObservations,
  type CohortPrior,
  calibrateScale,
  cohortLevels,
  cohortPriors,
  DEFAULT_PRIOR,
  dueAfter,
  estimateRate,
  historyOf,
  priorFor,
  type RatePrior,
  SCALE_FILL,
  type ScaleBucket,
  weightOf,
} from './estimate.ts';

/** What a successful fetch saw, for the estimate. */
export interface RefreshObservation {
  /** When the answer landed. */
  refreshedAt: Date;
  /** The answer differed from the stored version (a new version, or a reappearance). */
  changed: boolean;
  /** The highest severity among its changes, when it changed. */
  severity: Severity | null;
  /** The cohort of the enterprise as it now stands (src/plan/estimate.ts cohortKey). */
  cohort: string | null;
  /** False when the answer was older than what was stored (it says nothing of the interval). */
  usable: boolean;
  /** The record's last approval (APPRDATE) and establishment (ESDATE) dates. */
  approval?: string | null;
  established?: string | null;
}

/** The scale the planner set last, or null before its first plan. */
export async function plannerScale(sql: Sql): Promise<number | null> {
  const [row] = await sql<{ scale: number | null }[]>`select scale from planner_state`;
  return row?.scale ?? null;
}

/** The prior of a cohort: its most specific level that has one. */
export async function priorOf(sql: Sql, cohort: string | null): Promise<RatePrior> {
  if (cohort === null) return DEFAULT_PRIOR;
  const levels = cohortLevels(cohort);
  const rows = await sql<CohortPrior[]>`
    select cohort, entries, rate, days from change_cohorts where cohort in ${sql(levels)}`;
  return priorFor(cohort, new Map(rows.map((r) => [r.cohort, r])));
}

/**
 * Notes a successful refresh of watch entry `watchId` in cycle `cycle`: the interval since its
 * previous refresh and whether it ended changed, the new estimate, weight, boost and due time.
 * Runs in the caller's transaction, before the entry's `last_refreshed_at` moves.
 */
export async function noteRefresh(
  tx: Sql,
  watchId: number,
  cycle: string,
  o: RefreshObservation,
  maxStalenessDays: number,
): Promise<void> {
  await noteRefreshes(tx, cycle, [{ watchId, seen: o }], maxStalenessDays);
}

/** `noteRefresh` for many entries of one cycle at once: one read, one write. */
export async function noteRefreshes(
  tx: Sql,
  cycle: string,
  refreshes: readonly { watchId: number; seen: RefreshObservation }[],
  maxStalenessDays: number,
): Promise<void> {
  if (refreshes.length === 0) return;
  const ids = refreshes.map((r) => r.watchId);
  const entries = await tx<
    {
      id: string;
      change_history: unknown;
      boost_left: number;
      change_cohort: string | null;
      refreshed_cycle: string | null;
    }[]
  >`select id, refreshed_cycle::text, change_history, boost_left, change_cohort
    from watchlist where id = any(${ids}::bigint[]) order by id for update`;
  const byId = new Map(entries.map((e) => [Number(e.id), e]));
  const scale = await plannerScale(tx);
  const priors = new Map<string | null, Awaited<ReturnType<typeof priorOf>>>();
  const updates: EntryEstimate[] = [];
  for (const { watchId, seen: o } of refreshes) {
    const entry = byId.get(watchId);
    if (!entry) continue;
    // The interval starts at the cycle of the previous refresh (kept with the observations; for an
    // entry refreshed before the planner existed, its refresh cycle).
    const previous = historyOf(entry.change_history);
    const next = afterRefresh(
      { history: previous, boost: entry.boost_left, cohort: entry.change_cohort },
      {
        cycle,
        changed: o.changed,
        severity: o.severity,
        cohort: o.cohort,
        usable: o.usable,
        lastApproval: o.approval ?? null,
        established: o.established ?? null,
      },
      previous.cycle ?? entry.refreshed_cycle,
    );
    const { history, boost, cohort } = next;
    const since = previous.cycle ?? entry.refreshed_cycle;
    if (!priors.has(cohort)) priors.set(cohort, await priorOf(tx, cohort));
    const prior = priors.get(cohort) as Awaited<ReturnType<typeof priorOf>>;
    const rate = estimateRate(history, prior);
    const weight = weightOf(history);
    // Due times count from the start of the refresh's cycle, so they order with cycles whatever
    // the clocks (a rehearsal's simulated time, the database's own).
    const from = o.usable || since === null ? cycle : since;
    const due = dueAfter({
      refreshedAt: cycleStart(from),
      rate,
      weight,
      boostLeft: boost,
      // Before the first calibration: the staleness bound (round robin), as before this planner.
      scale: scale ?? Number.POSITIVE_INFINITY,
      maxStalenessDays,
    });
    updates.push({ id: watchId, history, rate, weight, cohort, boost, due: due.toISOString() });
  }
  if (updates.length === 0) return;
  await setEstimates(tx, updates);
}

/** Entries a cycle can take at full budget, for the scale (the plan's own capacity may be what is left). */
export interface CycleCapacity {
  perDay: number;
}

/**
 * Refreshes the cohort priors and the scale from the whole active watchlist (two grouped scans),
 * for the refreshes of the cycle that follow. Returns the scale.
 */
export async function refreshPlannerState(
  sql: Sql,
  cycle: string,
  capacity: CycleCapacity,
  maxStalenessDays: number,
): Promise<{ scale: number; cohorts: number; entries: number }> {
  const pooled = await sql<CohortObservations[]>`
    select change_cohort as cohort, count(*)::int as entries,
           coalesce(sum((change_history->>'n')::float8), 0)::float8 as n,
           coalesce(sum((change_history->>'changes')::float8), 0)::float8 as changes,
           coalesce(sum((change_history->>'days')::float8), 0)::float8 as days,
           coalesce(sum((change_history->>'datedDays')::float8), 0)::float8 as "datedDays",
           coalesce(sum((change_history->>'datedEvents')::float8), 0)::float8 as "datedEvents"
    from watchlist where active and change_cohort is not null
    group by change_cohort`;
  const priors = cohortPriors(pooled);
  const rows = [...priors.values()].map((p) => ({
    cohort: p.cohort,
    entries: p.entries,
    rate: p.rate,
    days: p.days,
  }));
  const fallback = priors.get('*')?.rate ?? DEFAULT_PRIOR.rate;
  // √(w·λ) of every active entry, in buckets of 1/16 of a natural log (about 6%): an entry never
  // estimated counts at the whole watchlist's prior.
  const buckets = await sql<{ b: number; n: number }[]>`
    select round(8 * ln(greatest(1e-9, change_weight * coalesce(change_rate, ${fallback}))))::int as b,
           count(*)::int as n
    from watchlist where active group by 1`;
  const scaleBuckets: ScaleBucket[] = buckets.map((r) => ({ root: Math.exp(r.b / 16), entries: r.n }));
  const entries = scaleBuckets.reduce((a, b) => a + b.entries, 0);
  const scale = calibrateScale(scaleBuckets, capacity.perDay * SCALE_FILL, maxStalenessDays);
  await inTransaction(sql, async (tx) => {
    if (rows.length > 0)
      await tx`insert into change_cohorts ${tx(rows)}
               on conflict (cohort) do update set entries = excluded.entries, rate = excluded.rate,
                 days = excluded.days, updated_at = now()`;
    await tx`insert into planner_state (singleton, scale, cycle, capacity, entries, updated_at)
             values (true, ${scale}, ${cycle}, ${Math.min(2_147_483_647, Math.floor(capacity.perDay))}, ${entries}, now())
             on conflict (singleton) do update set scale = excluded.scale, cycle = excluded.cycle,
               capacity = excluded.capacity, entries = excluded.entries, updated_at = now()`;
  });
  return { scale, cohorts: rows.length, entries };
}
