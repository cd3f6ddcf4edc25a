/**
 * Where the change-rate planner keeps its state (src/plan/estimate.ts, due.ts, learn.ts): each watch entry's
 * observations, estimate, weight, boost and due time (columns of `watchlist`), the cohort priors
 * (`change_cohorts`) and the scale (`planner_state`).
 *
 * A successful fetch notes its observation in the transaction that completes it
 * (`noteRefresh`), so an entry's estimate moves exactly once per fetch whatever runs at once.
 * Each plan refreshes the cohort priors and the scale from the whole watchlist
 * (`refreshPlannerState`): two aggregate scans a cycle, outside the plan's own transaction.
 */

import { inTransaction, type Sql } from '../db/connect.ts';
import type { DriverRow, Recast } from '../db/rows.ts';
import type { plannerState as plannerStateTable, watchlist } from '../db/schema.ts';
import { cohortLevels } from '../normalize/cohort.ts';
import type { Severity } from '../terms/changes.ts';
import { type EntryEstimate, type EntryReplan, setEstimates, setPlans } from '../watch/store.ts';
import {
  basisMoved,
  INITIAL_MODEL,
  modelOf,
  type PlannerModel,
  planBasis,
  plannedScale,
  type ScaleBucket,
  tailDays,
} from './due.ts';
import {
  afterRefresh,
  type CohortObservations,
  type CohortPrior,
  cohortPriors,
  entryPlan,
  priorFor,
  replanned,
} from './estimate.ts';
import {
  APART_MARGIN,
  emptySums,
  learnModel,
  type ModelSums,
  NO_APPROVAL,
  RECENT_APPROVAL_DAYS,
  watchlistSpread,
} from './learn.ts';
import { DEFAULT_PRIOR, historyOf, MAX_RATE, MIN_RATE, type RatePrior, SILENT_INTERVALS } from './model.ts';
import { clustered, SPREAD_SAMPLE, type Spread, spreadInUse } from './spread.ts';

/** What a successful fetch saw, for the estimate. */
export interface RefreshObservation {
  /** When the answer landed. */
  refreshedAt: Date;
  /** The answer differed from the stored version (a new version, or a reappearance). */
  changed: boolean;
  /** The highest severity among its changes, when it changed. */
  severity: Severity | null;
  /** The cohort of the enterprise as it now stands (src/normalize/cohort.ts cohortKey). */
  cohort: string | null;
  /** False when the answer was older than what was stored (it says nothing of the interval). */
  usable: boolean;
  /** The record's last approval (APPRDATE) and establishment (ESDATE) dates. */
  approval?: string | null;
  established?: string | null;
}

/**
 * What an enterprise answer applied to history says (src/history/ingest.ts
 * `EnterpriseIngestResult` has this shape): its landing time, what it changed, its cohort and dates.
 */
export interface AppliedAnswer {
  landedAt: Date;
  summary: {
    changed: number;
    reappeared: number;
    stale: number;
    bySeverity: Record<Severity, number>;
  } | null;
  cohort: string | null;
  approval: string | null;
  established: string | null;
}

/** What an applied answer says of the entry's change rate (src/plan/store.ts). */
export function refreshObservation(r: AppliedAnswer): RefreshObservation {
  const s = r.summary;
  const changed = s !== null && s.changed + s.reappeared > 0;
  const severity: Severity | null = !changed
    ? null
    : s.bySeverity.high > 0
      ? 'high'
      : s.bySeverity.medium > 0
        ? 'medium'
        : 'low';
  return {
    refreshedAt: r.landedAt,
    changed,
    severity,
    cohort: r.cohort,
    usable: s !== null && s.stale === 0,
    approval: r.approval,
    established: r.established,
  };
}

/** The scale the planner set last, or null before its first plan. */
export async function plannerScale(sql: Sql): Promise<number | null> {
  return (await plannerState(sql)).scale;
}

/** The scale and the model the last plan set (INITIAL_MODEL before any). */
export async function plannerState(sql: Sql): Promise<{ scale: number | null; model: PlannerModel }> {
  const [row] = await sql<
    Pick<DriverRow<typeof plannerStateTable>, 'scale' | 'model'>[]
  >`select scale, model from planner_state`;
  return { scale: row?.scale ?? null, model: modelOf(row?.model ?? null) };
}

/** The prior of a cohort: its most specific level that has one, as strong as the model's shape says. */
export async function priorOf(
  sql: Sql,
  cohort: string | null,
  model: PlannerModel = INITIAL_MODEL,
): Promise<RatePrior> {
  if (cohort === null) return priorFor(null, new Map(), model.shape, spreadInUse(model));
  const levels = cohortLevels(cohort);
  const rows = await sql<CohortPrior[]>`
    select cohort, entries, rate, days from change_cohorts where cohort in ${sql(levels)}`;
  return priorFor(cohort, new Map(rows.map((r) => [r.cohort, r])), model.shape, spreadInUse(model));
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

/** An entry as a refresh estimates it again (its cycle read `::text`). */
type EntryToEstimate = Recast<
  Pick<
    DriverRow<typeof watchlist>,
    'id' | 'change_history' | 'boost_left' | 'change_cohort' | 'refreshed_cycle' | 'change_rate'
  >,
  'refreshed_cycle',
  string
>;

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
    EntryToEstimate[]
  >`select id, refreshed_cycle::text, change_history, boost_left, change_cohort, change_rate
    from published.watch_entries where id = any(${ids}::bigint[]) order by id for update`;
  const byId = new Map(entries.map((e) => [Number(e.id), e]));
  const { scale, model } = await plannerState(tx);
  const priors = new Map<string | null, Awaited<ReturnType<typeof priorOf>>>();
  const updates: EntryEstimate[] = [];
  for (const { watchId, seen: o } of refreshes) {
    const entry = byId.get(watchId);
    if (!entry) continue;
    // The interval starts at the cycle of the previous refresh (kept with the observations; for an
    // entry refreshed before the planner existed, its refresh cycle).
    const previous = historyOf(entry.change_history);
    const next = afterRefresh(
      {
        history: previous,
        boost: entry.boost_left,
        cohort: entry.change_cohort,
        rate: entry.change_rate,
        mean: model.rate,
      },
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
    const { history, cohort } = next;
    // A high-severity change boosts its firm only while changes are seen to cluster.
    const boost = model.boost ? next.boost : 0;
    const since = previous.cycle ?? entry.refreshed_cycle;
    if (!priors.has(cohort)) priors.set(cohort, await priorOf(tx, cohort, model));
    const prior = priors.get(cohort) as Awaited<ReturnType<typeof priorOf>>;
    // Due times count from the start of the refresh's cycle, so they order with cycles whatever
    // the clocks (a rehearsal's simulated time, the database's own).
    const { rate, weight, due } = entryPlan({
      history,
      prior,
      boost,
      from: o.usable || since === null ? cycle : since,
      model,
      scale,
      maxStalenessDays,
    });
    updates.push({ id: watchId, history, rate, weight, cohort, boost, due: due.toISOString() });
  }
  if (updates.length === 0) return;
  await setEstimates(tx, updates);
}

/**
 * The evidence (nats) that an entry (its intervals: columns n, c, days; its registry-dated
 * changes: de over dd days) changes more often than the rate `g` (an SQL expression) says:
 * src/plan/due.ts entryEvidence, in SQL.
 */
function evidence(g: string): string {
  return `(case when n > 0 and days > 0 and ${g} > 0
      and least(1, c / n) > 1 - exp(-${g} * days / n) and 1 - exp(-${g} * days / n) > 0
    then n * (least(1, c / n) * ln(least(1, c / n) / (1 - exp(-${g} * days / n)))
      + case when c / n >= 1 then 0 else (1 - c / n) * ln((1 - c / n) / exp(-${g} * days / n)) end)
    else 0 end
    + case when coalesce(de, 0) > ${g} * coalesce(dd, 0) and ${g} * coalesce(dd, 0) > 0
      then de * ln(de / (${g} * dd)) - de + ${g} * dd else 0 end)`;
}

/** Entries a cycle can take at full budget, for the scale (the plan's own capacity may be what is left). */
export interface CycleCapacity {
  perDay: number;
}

/** Active entries counted by √(w·λ), in buckets of 1/16 of a natural log: a computed shape. */
interface RootBucket {
  b: number;
  n: number;
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
  opts: { replan?: boolean } = {},
): Promise<{
  scale: number;
  cohorts: number;
  entries: number;
  model: PlannerModel;
  /** Refreshed entries read and planned again (`replanEntries`), when the basis moved. */
  replanned: { read: number; written: number } | null;
}> {
  const pooled = await sql<CohortObservations[]>`
    select change_cohort as cohort, count(*)::int as entries,
           coalesce(sum((change_history->>'n')::float8), 0)::float8 as n,
           coalesce(sum((change_history->>'changes')::float8), 0)::float8 as changes,
           coalesce(sum((change_history->>'days')::float8), 0)::float8 as days,
           coalesce(sum((change_history->>'datedDays')::float8), 0)::float8 as "datedDays",
           coalesce(sum((change_history->>'datedEvents')::float8), 0)::float8 as "datedEvents",
           coalesce(sum((change_history->>'seedDays')::float8), 0)::float8 as "seedDays",
           coalesce(sum((change_history->>'seedEvents')::float8), 0)::float8 as "seedEvents"
    from published.watch_entries where active and change_cohort is not null
    group by change_cohort`;
  // The registry dates count in the cohorts' rates as far as the last plan found they predict.
  const previous = (await plannerState(sql)).model;
  const priors = cohortPriors(pooled, previous.datedWeight);
  const rows = [...priors.values()].map((p) => ({
    cohort: p.cohort,
    entries: p.entries,
    rate: p.rate,
    days: p.days,
  }));
  const fallback = priors.get('*')?.rate ?? DEFAULT_PRIOR.rate;
  const model = { ...learnModel(await modelSums(sql, priors), maxStalenessDays, fallback) };
  model.spread = await learnedSpread(sql, priors, model.datedWeight, previous.spread);
  if (clustered(model.spread)) model.clustered = true;
  // √(w·λ) of every active entry as the model plans it (src/plan/due.ts shortTermRate and
  // plannedWeight), in buckets of 1/16 of a natural log (about 6%): an entry never estimated
  // counts at the whole watchlist's prior.
  // An entry planned apart (due.ts isApart) takes its own rate and weight (equal 0); a waking one
  // (model.ts isWaking: its last interval ended changed after a silence) counts ×wake (or ×hot
  // when more), another hot one ×hot.
  // (due.ts equalOf: the pull, and as far again as the estimates' spread is not trusted).
  const trust = Math.min(1, Math.max(0, model.trust ?? 1));
  const apartRate = model.apartRate ?? null;
  const apartNats = model.apartNats ?? null;
  const buckets = await sql<RootBucket[]>`
    with x as (
      select change_weight, change_rate, change_history,
             (change_history->'all'->>0)::float8 as n, (change_history->'all'->>1)::float8 as c,
             (change_history->'all'->>2)::float8 as days,
             (change_history->>'datedEvents')::float8 as de, (change_history->>'datedDays')::float8 as dd
      from published.watch_entries where active
    ), y as (
      select x.*,
             case when ${apartRate}::float8 is not null and (${sql.unsafe(evidence(`${apartRate ?? 0}::float8`))}) > ${apartNats ?? 0}::float8
               then 0::float8 else ${1 - (1 - Math.min(1, Math.max(0, model.equal))) * trust}::float8 end as e,
             coalesce(jsonb_array_length(change_history->'recent'), 0) >= ${SILENT_INTERVALS + 1}
               and (change_history->'recent'->-1->>1)::int = 1
               and not exists (select 1 from jsonb_array_elements(change_history->'recent') with ordinality as r(v, k)
                               where r.k > jsonb_array_length(change_history->'recent') - ${SILENT_INTERVALS + 1}
                                 and r.k < jsonb_array_length(change_history->'recent')
                                 and (r.v->>1)::int <> 0) as waking
      from x
    )
    select round(8 * ln(greatest(1e-9,
             power(greatest(1e-6, change_weight), 1 - e)
             * exp((1 - e) * ln(greatest(${MIN_RATE}::float8, coalesce(change_rate, ${fallback}::float8)))
                   + e * ln(${Math.max(MIN_RATE, model.rate)}::float8))
             * case when e >= 1 or not coalesce((change_history->>'lastChanged')::boolean, false) then 1
                    when waking then ${Math.max(model.hot, model.wake ?? 1)}::float8
                    else ${model.hot}::float8 end
           )))::int as b,
           count(*)::int as n
    from y group by 1`;
  const scaleBuckets: ScaleBucket[] = buckets.map((r) => ({ root: Math.exp(r.b / 16), entries: r.n }));
  const entries = scaleBuckets.reduce((a, b) => a + b.entries, 0);
  model.tailDays = tailDays(scaleBuckets, capacity.perDay, maxStalenessDays);
  const scale = plannedScale(scaleBuckets, capacity.perDay, model.tailDays, model);
  // The due times stay planned under the basis they were planned under, until it moves.
  if (previous.basis) model.basis = previous.basis;
  else delete model.basis;
  await inTransaction(sql, async (tx) => {
    if (rows.length > 0)
      await tx`insert into change_cohorts ${tx(rows)}
               on conflict (cohort) do update set entries = excluded.entries, rate = excluded.rate,
                 days = excluded.days, updated_at = now()`;
    await tx`insert into planner_state (singleton, scale, cycle, capacity, entries, model, updated_at)
             values (true, ${scale}, ${cycle}, ${Math.min(2_147_483_647, Math.floor(capacity.perDay))}, ${entries},
                     ${tx.json(model as never)}, now())
             on conflict (singleton) do update set scale = excluded.scale, cycle = excluded.cycle,
               capacity = excluded.capacity, entries = excluded.entries, model = excluded.model, updated_at = now()`;
  });
  // Every refreshed entry planned again once what its due time rests on has moved: a firm
  // refreshed while the watchlist looked alike is not left at round robin's due time once the
  // firms are seen to differ. The basis is stored once they all are.
  const basis = planBasis(model, scale);
  let replanned: { read: number; written: number } | null = null;
  if (opts.replan && basisMoved(previous.basis, basis)) {
    replanned = await replanEntries(sql, { model, scale, priors }, maxStalenessDays);
    model.basis = basis;
    await sql`update planner_state set model = ${sql.json(model as never)}`;
  }
  return { scale, cohorts: rows.length, entries, model, replanned };
}

/**
 * The spread of the firms' rates (src/plan/learn.ts `watchlistSpread`) from the last plan's: one
 * read of at most SPREAD_SAMPLE histories, every k-th by id of the active entries in
 * a cohort with intervals of their own.
 */
export async function learnedSpread(
  sql: Sql,
  priors: ReadonlyMap<string, CohortPrior>,
  datedWeight: number,
  from: Spread | undefined,
): Promise<number[]> {
  const withIntervals = sql`active and change_cohort is not null
    and coalesce((change_history->'all'->>0)::float8, (change_history->>'n')::float8, 0) > 0`;
  // One scan: the sample's ids, every k-th (sampleStride of their count), then their histories.
  const rows = await sql<Pick<DriverRow<typeof watchlist>, 'change_history' | 'change_cohort'>[]>`
    with s as (
      select id, row_number() over (order by id) as k, count(*) over () as n
      from published.watch_entries where ${withIntervals})
    select w.change_history, w.change_cohort
    from s join published.watch_entries w on w.id = s.id
    where (s.k - 1) % greatest(1, ceil(s.n::numeric / ${SPREAD_SAMPLE}))::bigint = 0
    order by s.k`;
  const sample = rows.map((r) => ({ history: historyOf(r.change_history), cohort: r.change_cohort }));
  return watchlistSpread(sample, priors, datedWeight, from);
}

/** An entry as a plan plans it again (its cycle read `::text`). */
type EntryToReplan = EntryToEstimate & Pick<DriverRow<typeof watchlist>, 'due_at'>;

/** Entries a plan reads, plans again and writes in one transaction. */
export const REPLAN_BATCH = 2000;

/**
 * Plans every refreshed entry again under the model, priors and scale the plan just learned
 * (src/plan/estimate.ts `replanned`): its estimate and due time as its last refresh would have set
 * them had it known what the watchlist knows now. Only an entry whose plan moved is written. An
 * entry whose last attempt failed keeps its due time (a rest, or a retry), and one a worker holds
 * is left to its refresh, which plans it anyway; one refreshed before the planner existed keeps
 * its order until its next fetch gives it an estimate. In batches by id, each its own transaction.
 * Returns the entries read and written.
 */
export async function replanEntries(
  sql: Sql,
  learned: { model: PlannerModel; scale: number; priors: ReadonlyMap<string, CohortPrior> },
  maxStalenessDays: number,
): Promise<{ read: number; written: number }> {
  const { model, scale, priors } = learned;
  const prior = new Map<string | null, RatePrior>();
  let after = 0;
  let read = 0;
  let written = 0;
  for (;;) {
    const batch = await inTransaction(sql, async (tx) => {
      const rows = await tx<EntryToReplan[]>`
        select id, refreshed_cycle::text, change_history, boost_left, change_cohort, change_rate, due_at
        from published.watch_entries
        where active and id > ${after} and due_at is not null and last_outcome = 'success'
          and change_history is not null
        order by id limit ${REPLAN_BATCH} for update skip locked`;
      const plans: EntryReplan[] = [];
      for (const e of rows) {
        const history = historyOf(e.change_history);
        const from = history.cycle ?? e.refreshed_cycle;
        if (!from || e.due_at === null) continue;
        let p = prior.get(e.change_cohort);
        if (p === undefined) {
          p = priorFor(e.change_cohort, priors, model.shape, spreadInUse(model));
          prior.set(e.change_cohort, p);
        }
        const next = replanned(
          { history, prior: p, boost: e.boost_left, from, model, scale, maxStalenessDays },
          { rate: e.change_rate, due: e.due_at },
        );
        if (next) plans.push({ id: Number(e.id), rate: next.rate, due: next.due.toISOString() });
      }
      await setPlans(tx, plans);
      return { rows: rows.length, last: rows.at(-1)?.id, written: plans.length };
    });
    read += batch.rows;
    written += batch.written;
    if (batch.rows < REPLAN_BATCH || batch.last === undefined) break;
    after = Number(batch.last);
  }
  return { read, written };
}

/** The first `k` numbers of an aggregate's array (0 where it has none), as a tuple of `k`. */
function sized<T extends number[]>(x: number[] | undefined, k: T['length']): T {
  return Array.from({ length: k }, (_, j) => x?.[j] ?? 0) as T;
}
const triple = (x: number[] | undefined) => sized<[number, number, number]>(x, 3);
const five = (x: number[] | undefined) => sized<[number, number, number, number, number]>(x, 5);

/**
 * learn.ts addSplit in SQL, over `modelSums`'s rows, at the test's rate (`ga` the watchlist's, `rg`
 * the rest's, null for an entry it does not test): [Σ residual, Σ variance, Σ chance, entries] of
 * the entries with a recent approval (key below the median), then of the others. Fixed text, no input.
 */
function splitSums(rate: 'ga' | 'rg'): string {
  const q = `exp(-${rate} * days)`;
  const parts = [`(case when c > 0 then 1 else 0 end) - (1 - ${q})`, `(1 - ${q}) * ${q}`, `1 - ${q}`, '1'];
  const group = (where: string) =>
    parts.map(
      (x) => `coalesce(sum(${x}) filter (where ${rate} is not null and n > 0 and days > 0 and ${where}), 0)`,
    );
  return `array[${[...group('k < split'), ...group('not (k < split)')].join(', ')}]::float8[]`;
}

/** The sums of `modelSums` as one aggregate row returns them: a computed shape. */
interface ModelSumsRow {
  r2: number;
  v: number;
  v2: number;
  d2: number;
  a: number[];
  b: number[];
  hot: number[];
  g: number[];
  ci: number[];
  gr: number[];
  woke: number[];
  calib: number[];
  ds: number[];
  dr: number[];
  apart: number;
  ga: number | null;
  nats: number | null;
}

/**
 * The sums the model is learned from (src/plan/learn.ts addToSums), over every active entry in
 * one aggregate scan: each entry's cohort rate is its full cohort's prior (`priors`).
 */
export async function modelSums(sql: Sql, priors: ReadonlyMap<string, CohortPrior>): Promise<ModelSums> {
  // Each full cohort's rate as an entry's prior takes it (a closed status: the closed rate).
  const rates = [...priors.values()].map((p) => ({
    cohort: p.cohort,
    rate: priorFor(p.cohort, priors).rate,
  }));
  const [r] = await sql<ModelSumsRow[]>`
    with e as (
      select (w.change_history->'all'->>0)::float8 as n, (w.change_history->'all'->>1)::float8 as c,
             (w.change_history->'all'->>2)::float8 as days,
             greatest(${MIN_RATE}::float8, coalesce(p.rate, ${priors.get('*')?.rate ?? DEFAULT_PRIOR.rate}::float8)) as m,
             (w.change_history->>'seedDays')::float8 as sd, (w.change_history->>'seedEvents')::float8 as se,
             (w.change_history->>'datedEvents')::float8 as de, (w.change_history->>'datedDays')::float8 as dd,
             w.change_history->'hot' as hot, w.change_history->'woke' as woke, w.change_history->'calib' as calib,
             -- learn.ts approvalKey: how recent the first fetch's approval was (null without its dates).
             case when (w.change_history->>'seedDays')::float8 > 0 then
               case when (w.change_history->>'seedEvents')::float8 > 0 then (w.change_history->>'seedDays')::float8
                    else ${NO_APPROVAL}::float8 end end as k
      from published.watch_entries w
      left join jsonb_to_recordset(${sql.json(rates as never)}) as p(cohort text, rate float8) on p.cohort = w.change_cohort
      where w.active and w.change_cohort is not null
    ), a as (
      -- The whole watchlist's rate from its intervals alone (learn.ts intervalRate), and the
      -- evidence above which an entry is planned apart (learn.ts apartNatsFor).
      select case when sum(n) > 0 and sum(days) > 0 then
               least(${MAX_RATE}::float8, greatest(${MIN_RATE}::float8,
                 -sum(n) * ln(1 - least(sum(c) / sum(n), 1 - 1 / (2 * sum(n) + 2))) / sum(days)))
             end as ga,
             ln(greatest(1, count(*))) + ${APART_MARGIN}::float8 as nats,
             -- learn.ts datesSplit: the median approval key.
             percentile_disc(0.5) within group (order by k) filter (where k is not null) as split
      from e where n > 0 and days > 0
    ), o as (
      select e.*, a.ga, a.nats, a.split,
             a.ga is not null and (${sql.unsafe(evidence('a.ga'))}) > a.nats as out
      from e cross join a
    ), w as (
      -- The rate of the entries that could not be planned apart: the centre of the test of the rest.
      select case when sum(n) > 0 and sum(days) > 0 then
               least(${MAX_RATE}::float8, greatest(${MIN_RATE}::float8,
                 -sum(n) * ln(1 - least(sum(c) / sum(n), 1 - 1 / (2 * sum(n) + 2))) / sum(days)))
             end as g
      from o where n > 0 and days > 0 and not out
    ), q as (
      select o.*, case when n > 0 and days > 0 then exp(-m * days / n) end as q,
             case when n > 0 and days > 0 and o.ga is not null then exp(-o.ga * days / n) end as gq,
             case when n > 0 and days > 0 and w.g is not null and not out then exp(-w.g * days / n) end as rq,
             case when not out then w.g end as rg
      from o cross join w
    )
    select
      coalesce(sum((c - n * (1 - q)) ^ 2) filter (where q is not null), 0)::float8 as r2,
      coalesce(sum(n * (1 - q) * q) filter (where q is not null), 0)::float8 as v,
      coalesce(sum(2 * (n * (1 - q) * q) ^ 2 + n * (1 - q) * q * (1 - 6 * q * (1 - q))) filter (where q is not null), 0)::float8 as v2,
      coalesce(sum((days * q * m) ^ 2) filter (where q is not null), 0)::float8 as d2,
      array[coalesce(sum(n) filter (where sd > 0 and se > 0 and sd < ${RECENT_APPROVAL_DAYS}), 0),
            coalesce(sum(c) filter (where sd > 0 and se > 0 and sd < ${RECENT_APPROVAL_DAYS}), 0),
            coalesce(sum(days) filter (where sd > 0 and se > 0 and sd < ${RECENT_APPROVAL_DAYS}), 0),
            coalesce(sum(se) filter (where sd > 0 and se > 0 and sd < ${RECENT_APPROVAL_DAYS}), 0),
            coalesce(sum(sd) filter (where sd > 0 and se > 0 and sd < ${RECENT_APPROVAL_DAYS}), 0)]::float8[] as a,
      array[coalesce(sum(n) filter (where sd > 0 and not (se > 0 and sd < ${RECENT_APPROVAL_DAYS})), 0),
            coalesce(sum(c) filter (where sd > 0 and not (se > 0 and sd < ${RECENT_APPROVAL_DAYS})), 0),
            coalesce(sum(days) filter (where sd > 0 and not (se > 0 and sd < ${RECENT_APPROVAL_DAYS})), 0),
            coalesce(sum(se) filter (where sd > 0 and not (se > 0 and sd < ${RECENT_APPROVAL_DAYS})), 0),
            coalesce(sum(sd) filter (where sd > 0 and not (se > 0 and sd < ${RECENT_APPROVAL_DAYS})), 0)]::float8[] as b,
      array[coalesce(sum((hot->>0)::float8), 0), coalesce(sum((hot->>1)::float8), 0),
            coalesce(sum((hot->>2)::float8), 0)]::float8[] as hot,
      array[coalesce(sum((calib->>0)::float8), 0), coalesce(sum((calib->>1)::float8), 0),
            coalesce(sum((calib->>2)::float8), 0), coalesce(sum((calib->>3)::float8), 0),
            coalesce(sum((calib->>4)::float8), 0), coalesce(sum((calib->>5)::float8), 0),
            coalesce(sum((calib->>6)::float8), 0), coalesce(sum((calib->>7)::float8), 0)]::float8[] as calib,
      array[coalesce(sum((woke->>0)::float8), 0), coalesce(sum((woke->>1)::float8), 0),
            coalesce(sum((woke->>2)::float8), 0)]::float8[] as woke,
      array[coalesce(sum((c - n * (1 - gq)) ^ 2) filter (where gq is not null), 0),
            coalesce(sum(n * (1 - gq) * gq) filter (where gq is not null), 0),
            coalesce(sum(2 * (n * (1 - gq) * gq) ^ 2 + n * (1 - gq) * gq * (1 - 6 * gq * (1 - gq))) filter (where gq is not null), 0)]::float8[] as g,
      array[coalesce(sum((c - n * (1 - rq)) ^ 2) filter (where rq is not null), 0),
            coalesce(sum(n * (1 - rq) * rq) filter (where rq is not null), 0),
            coalesce(sum(2 * (n * (1 - rq) * rq) ^ 2 + n * (1 - rq) * rq * (1 - 6 * rq * (1 - rq))) filter (where rq is not null), 0)]::float8[] as gr,
      array[coalesce(sum((c - n * (1 - q)) ^ 2) filter (where q is not null and not out), 0),
            coalesce(sum(n * (1 - q) * q) filter (where q is not null and not out), 0),
            coalesce(sum(2 * (n * (1 - q) * q) ^ 2 + n * (1 - q) * q * (1 - 6 * q * (1 - q))) filter (where q is not null and not out), 0)]::float8[] as ci,
      -- learn.ts ModelSums.ds and .dr: the dates' split test (an entry without dates is in neither group).
      ${sql.unsafe(splitSums('ga'))} as ds,
      ${sql.unsafe(splitSums('rg'))} as dr,
      (count(*) filter (where q is not null and out))::int as apart,
      max(ga) as ga, max(nats) as nats
    from q`;
  return r
    ? {
        r2: r.r2,
        v: r.v,
        v2: r.v2,
        d2: r.d2,
        a: five(r.a),
        b: five(r.b),
        hot: triple(r.hot),
        g: triple(r.g),
        c: triple(r.ci),
        gr: triple(r.gr),
        woke: triple(r.woke),
        calib: sized<ModelSums['calib']>(r.calib, 8),
        ds: sized<ModelSums['ds']>(r.ds, 8),
        dr: sized<ModelSums['dr']>(r.dr, 8),
        apart: r.apart,
        ...(r.ga === null ? {} : { apartAt: { rate: r.ga, nats: r.nats as number } }),
      }
    : emptySums();
}
