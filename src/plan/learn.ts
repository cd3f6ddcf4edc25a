/**
 * What the watchlist as a whole teaches the planner (its `PlannerModel`, src/plan/due.ts): sums
 * over every entry's observations (`addToSums`) and the tests run on them (`learnModel`): whether
 * the firms' rates differ beyond chance (`shape`, `equal`), whether the registry's approval dates
 * predict changes (the dates test: the entries with a recent approval against the others, which
 * sets `datedWeight`), and whether changes cluster (`hot`). `learnPlanner` is the plan job's
 * whole learning step in memory; src/plan/store.ts does the same with aggregates in SQL.
 */

import { statusOfCohort } from '../normalize/cohort.ts';
import {
  bucketOf,
  entryEvidence,
  INITIAL_MODEL,
  MAX_HOT,
  MAX_SHAPE,
  MIN_BOOST_HOT,
  MIN_SHAPE,
  type PlannerModel,
  plannedScale,
  type ScaleBucket,
  tailDays,
} from './due.ts';
import {
  type CohortObservations,
  type CohortPrior,
  cohortPriors,
  isClosedStatus,
  noObservations,
  priorFor,
} from './estimate.ts';
import { type ChangeHistory, DEFAULT_PRIOR, DEFAULT_PRIOR_RATE, MAX_RATE, MIN_RATE } from './model.ts';
import { SHIFT_PRIOR } from './shift-test.ts';
import { clustered, entryLogLik, hasIntervals, learnSpread, type Spread, sampleStride } from './spread.ts';

/** One entry's part of what the model is learned from (`addToSums`). */
export interface ModelRow {
  history: ChangeHistory;
  /** The rate of its cohort's prior. */
  cohortRate: number;
  /** The whole watchlist's rate from its intervals alone (`intervalRate`): the centre of the test for `equal`. */
  watchlistRate?: number;
  /** The same rate of the entries not planned apart: the centre of the test for `equal` of the rest. */
  restRate?: number;
  /** The entry could be planned apart (`isApart`): it counts in `apart`, not in the tests of the rest. */
  apart?: boolean;
  /** The split of the dates' split test (`datesSplit`): an entry whose `approvalKey` is below it has a recent approval. */
  split?: number;
}

/** Sums over the watchlist that the model is learned from (aggregates: SQL computes the same). */
export interface ModelSums {
  /**
   * Shape: Σ (changed − expected)², Σ binomial variance v, Σ the variance of (changed − expected)²
   * under one shared rate (2v² + v(1 − 6pq) for n intervals each changed with probability p, q = 1 − p:
   * from the binomial's fourth moment), Σ (d expected / d rate · rate)².
   */
  r2: number;
  v: number;
  v2: number;
  d2: number;
  /** Dates: intervals, changed intervals, days, dated changes and days, of entries with a recent approval (a) and the others (b). */
  a: [number, number, number, number, number];
  b: [number, number, number, number, number];
  /** Hot intervals: count, changed, expected. */
  hot: [number, number, number];
  /**
   * The same r2, v and v2 around one rate for the whole watchlist, from its intervals alone (no
   * cohort, no registry date): the test for `equal`, whether the firms' rates differ at all. Dates
   * that mislead cannot make it see a spread that is not there.
   */
  g: [number, number, number];
  /** The same r2, v and v2 around the cohorts' rates, of the entries not planned apart (the test of the rest once dates are trusted). */
  c: [number, number, number];
  /** The same r2, v and v2 as `g`, of the entries not planned apart, around their own rate: the test of the rest. */
  gr: [number, number, number];
  /** Whether the estimates predict: the quiet and the busy intervals (ChangeHistory.calib). */
  calib: [number, number, number, number, number, number, number, number];
  /** Intervals after a wake: count, changed, expected (ChangeHistory.woke). */
  woke: [number, number, number];
  /**
   * The dates' split test, around the whole watchlist's interval rate (`ds`) and around the rest's
   * (`dr`, without the entries planned apart): for the entries whose first fetch found an approval
   * more recent than the watchlist's median, then the others, whether each entry has changed at all
   * in its intervals against the chance one shared rate gives it: Σ (changed − chance), Σ variance,
   * Σ chance and the entries. Where the dates say nothing, both groups change alike. Each entry
   * counts once however often it changed, so a handful of hyperactive firms cannot tip it.
   */
  ds: SplitSums;
  dr: SplitSums;
  /** Entries planned apart. */
  apart: number;
  /** The rate and the evidence the entries planned apart are tested against (PlannerModel.apartRate, apartNats); none without intervals. */
  apartAt?: { rate: number; nats: number };
}

/** [recent: Σ residual, Σ variance, Σ chance, entries, then the same of the others]. */
export type SplitSums = [number, number, number, number, number, number, number, number];

export function emptySums(): ModelSums {
  return {
    r2: 0,
    v: 0,
    v2: 0,
    d2: 0,
    a: [0, 0, 0, 0, 0],
    b: [0, 0, 0, 0, 0],
    hot: [0, 0, 0],
    g: [0, 0, 0],
    c: [0, 0, 0],
    gr: [0, 0, 0],
    woke: [0, 0, 0],
    calib: [0, 0, 0, 0, 0, 0, 0, 0],
    ds: [0, 0, 0, 0, 0, 0, 0, 0],
    dr: [0, 0, 0, 0, 0, 0, 0, 0],
    apart: 0,
  };
}

/**
 * The evidence (nats) above which an entry of a watchlist of `entries` entries with intervals is
 * planned apart: ln(entries) + APART_MARGIN, so the Chernoff bound on the chance that any one of
 * them changes that often by chance is under e^(−APART_MARGIN) (a loose bound: the chance itself
 * is far smaller). Such entries are only planned apart when the rest then look alike.
 */
export const APART_MARGIN = 1;
export function apartNatsFor(entries: number): number {
  return Math.log(Math.max(1, entries)) + APART_MARGIN;
}

/**
 * The rate n intervals over `days` show when `changes` of them ended changed: the changes they most
 * likely held (−n·ln(1 − p), p capped below 1). Null without intervals.
 */
export function intervalRate(n: number, changes: number, days: number): number | null {
  if (!(n > 0) || !(days > 0)) return null;
  const p = Math.min(changes / n, 1 - 1 / (2 * n + 2));
  return Math.min(MAX_RATE, Math.max(MIN_RATE, (-n * Math.log1p(-p)) / days));
}

/** Evidence that rates differ, in standard deviations of the spread beyond chance: weak below, strong above. */
export const EVIDENCE_Z = 4;
export const STRONG_Z = 7;
/**
 * The entries that could be planned apart are, when without them the rest of the watchlist
 * spreads less than this (standard deviations beyond chance): the rest change alike.
 */
export const ALIKE_Z = 2;

/**
 * The weight from which the registry dates are trusted as evidence that rates differ (the test for
 * `equal` then also runs around the cohorts' rates, which the first fetches' dates help set).
 */
export const DATES_TRUSTED = 0.5;

/**
 * The changes both groups of the dates' test must have seen between them before it runs. Not each:
 * where the dates predict, the group without a recent approval is the quiet one, and may see no
 * change for weeks.
 */
export const DATES_MIN_CHANGES = 10;

/** An approval this recent (days) puts an entry in the "recent" group of the dates' test. */
export const RECENT_APPROVAL_DAYS = 365;

/** Adds to r2, v and v2 an entry's n intervals with `changes` changed, each expected at `expected` changes. */
function addSpread(t: [number, number, number], changes: number, n: number, expected: number): void {
  const gq = Math.exp(-expected);
  const gv = n * (1 - gq) * gq;
  t[0] += (changes - n * (1 - gq)) ** 2;
  t[1] += gv;
  t[2] += 2 * gv * gv + gv * (1 - 6 * gq * (1 - gq));
}

/**
 * How recent the approval the entry's first fetch found was: the days back to it (decayed, as
 * `seedDays` keeps them), or NO_APPROVAL (later than any date) when there was none. Null without
 * such dates.
 */
export function approvalKey(h: ChangeHistory): number | null {
  if (!(h.seedDays !== undefined && h.seedDays > 0)) return null;
  return (h.seedEvents ?? 0) > 0 ? h.seedDays : NO_APPROVAL;
}
/** The key of an entry whose first fetch found no approval (SQL keeps the same number). */
export const NO_APPROVAL = 1e12;

/**
 * The split of the dates' split test: the median `approvalKey` (the first value at or past half
 * the entries, as SQL's percentile_disc(0.5)) of the entries in a cohort with intervals; null
 * when none.
 */
export function datesSplit(entries: readonly Pick<LearnEntry, 'history' | 'cohort'>[]): number | null {
  const keys: number[] = [];
  for (const e of entries) {
    const [n, , d] = e.history.all ?? [0, 0, 0];
    if (e.cohort === null || !(n > 0 && d > 0)) continue;
    const k = approvalKey(e.history);
    if (k !== null) keys.push(k);
  }
  if (keys.length === 0) return null;
  keys.sort((a, b) => a - b);
  return keys[Math.ceil(keys.length / 2) - 1] as number;
}

/** Adds to `t`, in its group, an entry that `changed` (at all) over intervals of `expected` changes in all. */
function addSplit(t: SplitSums, recent: boolean, changed: boolean, expected: number): void {
  const gq = Math.exp(-expected);
  const o = recent ? 0 : 4;
  t[o] = (t[o] as number) + (changed ? 1 : 0) - (1 - gq);
  t[o + 1] = (t[o + 1] as number) + (1 - gq) * gq;
  t[o + 2] = (t[o + 2] as number) + (1 - gq);
  t[o + 3] = (t[o + 3] as number) + 1;
}

/** Adds one entry's observations to the sums. */
export function addToSums(s: ModelSums, row: ModelRow): void {
  const h = row.history;
  const [n, changes, days] = h.all ?? [0, 0, 0];
  if (n > 0 && days > 0) {
    const m = Math.max(MIN_RATE, row.cohortRate);
    const length = days / n;
    const q = Math.exp(-m * length);
    const e = n * (1 - q);
    const v = n * (1 - q) * q;
    const d = days * q * m;
    const r2 = (changes - e) ** 2;
    const v2 = 2 * v * v + v * (1 - 6 * q * (1 - q));
    s.r2 += r2;
    s.v += v;
    s.v2 += v2;
    s.d2 += d * d;
    if (row.apart) s.apart++;
    else {
      s.c[0] += r2;
      s.c[1] += v;
      s.c[2] += v2;
    }
    if (row.watchlistRate !== undefined)
      addSpread(s.g, changes, n, Math.max(MIN_RATE, row.watchlistRate) * length);
    if (row.restRate !== undefined && !row.apart)
      addSpread(s.gr, changes, n, Math.max(MIN_RATE, row.restRate) * length);
    const key = row.split === undefined ? null : approvalKey(h);
    if (key !== null) {
      const recent = key < (row.split as number);
      if (row.watchlistRate !== undefined)
        addSplit(s.ds, recent, changes > 0, Math.max(MIN_RATE, row.watchlistRate) * days);
      if (row.restRate !== undefined && !row.apart)
        addSplit(s.dr, recent, changes > 0, Math.max(MIN_RATE, row.restRate) * days);
    }
  }
  if (h.seedDays !== undefined && h.seedDays > 0) {
    const g = (h.seedEvents ?? 0) > 0 && h.seedDays < RECENT_APPROVAL_DAYS ? s.a : s.b;
    g[0] += n;
    g[1] += changes;
    g[2] += days;
    g[3] += h.seedEvents ?? 0;
    g[4] += h.seedDays;
  }
  if (h.hot) {
    s.hot[0] += h.hot[0];
    s.hot[1] += h.hot[1];
    s.hot[2] += h.hot[2];
  }
  if (h.calib) for (let k = 0; k < 8; k++) s.calib[k] = (s.calib[k] as number) + (h.calib[k] as number);
  if (h.woke) {
    s.woke[0] += h.woke[0];
    s.woke[1] += h.woke[1];
    s.woke[2] += h.woke[2];
  }
}

/** Entries, and entries expected to have changed, that each group of the dates' split test needs before it runs. */
export const SPLIT_MIN_ENTRIES = 50;
export const SPLIT_MIN_EXPECTED = 10;

/**
 * The dates' split test (`ModelSums.ds`): how far, in standard deviations, the entries with a
 * recent approval have more often changed than the others, relative to what one shared rate
 * expects of each group. One-sided: dates that say the opposite are not evidence that they
 * predict. Zero until both groups have SPLIT_MIN_ENTRIES entries, SPLIT_MIN_EXPECTED of them
 * expected to have changed.
 */
export function splitZ(t: Readonly<SplitSums>): number {
  const [ra, va, ea, na, rb, vb, eb, nb] = t;
  if (na < SPLIT_MIN_ENTRIES || nb < SPLIT_MIN_ENTRIES) return 0;
  if (ea < SPLIT_MIN_EXPECTED || eb < SPLIT_MIN_EXPECTED || !(va > 0 && vb > 0)) return 0;
  return Math.max(0, (ra / va - rb / vb) / Math.sqrt(1 / va + 1 / vb));
}

/**
 * The model from the sums, for a watchlist whose mean rate (the prior of everyone) is `meanRate`.
 * Deterministic. Every part leans to round robin when its evidence is weak: the shape needs a
 * spread of counts two standard deviations beyond chance, the dates need a few hundred intervals
 * in both groups, the hot factor a few expected changes.
 */
export function learnModel(
  s: ModelSums,
  maxStalenessDays: number,
  meanRate = DEFAULT_PRIOR_RATE,
): PlannerModel {
  // Under one shared rate Σ(changed − expected)² is about Σ variance, give or take √v2. With few
  // intervals per entry the fourth moment's own part dominates: a handful of Bernoulli outcomes
  // says little about whether rates differ.
  const sd = Math.sqrt(Math.max(0, s.v2));
  const zOf = (t: readonly number[]) => {
    const tsd = Math.sqrt(Math.max(0, t[2] as number));
    return tsd > 0 ? ((t[0] as number) - (t[1] as number)) / tsd : 0;
  };
  const cohortZ = zOf([s.r2, s.v, s.v2]);
  const globalZ = zOf(s.g);
  let datedWeight = INITIAL_MODEL.datedWeight;
  let datesTested = false;
  // Each group's rate with half a change more than it saw (Jeffreys): a group of quiet firms
  // that has not changed yet still gives a finite ratio, as cautious as its few intervals make it.
  const rateOf = (g: readonly number[]) =>
    intervalRate(g[0] as number, (g[1] as number) + 0.5, g[2] as number) as number;
  if (s.a[0] >= 100 && s.b[0] >= 100 && s.a[1] + s.b[1] >= DATES_MIN_CHANGES && s.a[4] > 0 && s.b[4] > 0) {
    const observed = Math.log(rateOf(s.a) / rateOf(s.b));
    const said = Math.log(s.a[3] / s.a[4] / Math.max(1e-9, s.b[3] / s.b[4]));
    datedWeight = said > 0 ? Math.min(1, Math.max(0, observed / said)) : 0;
    datesTested = true;
  }
  // Around the cohorts' rates the test also sees how far the first fetches' approval dates
  // disagree with the intervals: evidence that rates differ only where such dates are known to
  // follow the changes. Until then the test is around the watchlist's own interval rate alone.
  const trusted = datesTested && datedWeight >= DATES_TRUSTED;
  // And wherever the entries with a recent approval change clearly more often than the others,
  // from their first intervals: no other test can see that rates differ that soon.
  const zCounts = trusted ? Math.max(cohortZ, globalZ) : globalZ;
  const zAll = Math.max(zCounts, splitZ(s.ds));
  // The same test without the entries that could be planned apart: when they alone make the
  // firms look different (the rest spread no more than chance would), they are planned apart and
  // the rest alike.
  const zRestCounts = trusted ? Math.max(zOf(s.c), zOf(s.gr)) : zOf(s.gr);
  // The split test speaks for the rest only when strong: at ALIKE_Z, a second test by chance
  // would often part with the outliers a rest that is alike.
  const zSplitRest = splitZ(s.dr);
  const zRest = Math.max(zRestCounts, zSplitRest >= EVIDENCE_Z ? zSplitRest : 0);
  const apart = s.apart > 0 && s.apartAt !== undefined && zRest < ALIKE_Z && zAll > zRest;
  const z = apart ? zRest : zAll;
  // Whether the dates' split test, not the spread of counts, is what says the rates differ.
  const datesSplit = z > EVIDENCE_Z && z > (apart ? zRestCounts : zCounts);
  const excess = s.r2 - s.v - EVIDENCE_Z * sd;
  const shape = excess <= 0 ? MAX_SHAPE : Math.min(MAX_SHAPE, Math.max(MIN_SHAPE, s.d2 / excess));
  const equal = Math.min(1, Math.max(0, (STRONG_Z - z) / (STRONG_Z - EVIDENCE_Z)));
  // Hot only when the intervals after a change ended changed clearly more often than expected.
  const [, hc, he] = s.hot;
  const hot = he >= 5 && hc - he > EVIDENCE_Z * Math.sqrt(he) ? Math.min(MAX_HOT, hc / he) : 1;
  // Wake, alike, for the intervals right after a change that ended a silence.
  const [, qc, qe] = s.woke;
  const wake = qe > 0 && qc >= 5 && qc - qe > EVIDENCE_Z * Math.sqrt(qe) ? Math.min(MAX_HOT, qc / qe) : 1;
  // Trust: the rate of the busy intervals over that of the quiet ones, as it happened against as
  // the estimates said (as the dates' weight): below 1 when the firms estimated quiet changed
  // more, relative to the others, than their estimates said.
  const [qn, qc2, qx, qd, bn, bc, bx, bd] = s.calib;
  let trust = 1;
  if (qn >= 100 && bn >= 100 && qc2 >= 5 && bc >= 5 && qx > 0 && qd > 0 && bx > 0 && bd > 0) {
    const said = Math.log(bx / bd / (qx / qd));
    const observed = Math.log((intervalRate(bn, bc, bd) as number) / (intervalRate(qn, qc2, qd) as number));
    trust = said > 0 ? Math.min(1, Math.max(0, observed / said)) : 1;
  }
  return {
    shape,
    equal,
    rate: Math.min(MAX_RATE, Math.max(MIN_RATE, meanRate)),
    datedWeight,
    hot,
    boost: hot > MIN_BOOST_HOT && equal < 1,
    // Set apart, from the intervals the estimates give (`tailDays`).
    tailDays: maxStalenessDays,
    shift: SHIFT_PRIOR,
    wake,
    trust,
    ...(apart && s.apartAt !== undefined
      ? { apartRate: s.apartAt.rate, apartNats: s.apartAt.nats, outliers: s.apart }
      : {}),
    ...(datesSplit ? { datesSplit } : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// The plan job's learning step, whole.

/** One active entry as the plan job reads it. */
export interface LearnEntry {
  history: ChangeHistory;
  /** Its cohort key (null before its first usable fetch: it joins no cohort and no test). */
  cohort: string | null;
  /** The rate it was last estimated at; null when never (it counts at the whole watchlist's prior). */
  rate: number | null;
  /** Its own weight (`weightOf`), before the model pulls it. */
  weight: number;
}

/**
 * The sums the model is learned from (`addToSums`) over every entry in a cohort, each at its
 * cohort's prior rate (`priors`): the whole watchlist's interval rate, the entries that could be
 * planned apart (far busier than it: `apartEvidence` above `apartNatsFor`), and the rate of the
 * rest. src/plan/store.ts `modelSums` computes the same in SQL.
 */
export function watchlistSums(
  entries: readonly Pick<LearnEntry, 'history' | 'cohort'>[],
  priors: ReadonlyMap<string, CohortPrior>,
): ModelSums {
  // Every interval of the entries in a cohort, for the watchlist's own rate.
  let [gn, gc, gd] = [0, 0, 0];
  for (const e of entries) {
    if (e.cohort === null) continue;
    const [n, c, d] = e.history.all ?? [0, 0, 0];
    if (!(n > 0 && d > 0)) continue;
    gn += n;
    gc += c;
    gd += d;
  }
  const sums = emptySums();
  // The entries planned apart: those whose intervals changed far more often than the whole
  // watchlist's rate says; the test for `equal` runs around the rate of the others.
  const allRate = intervalRate(gn, gc, gd);
  const withIntervals = entries.filter(
    (e) => e.cohort !== null && (e.history.all?.[0] ?? 0) > 0 && (e.history.all?.[2] ?? 0) > 0,
  ).length;
  const apartNats = apartNatsFor(withIntervals);
  const isOut = (e: Pick<LearnEntry, 'history'>) => {
    return allRate !== null && entryEvidence(e.history, allRate) > apartNats;
  };
  let [on, oc, od] = [0, 0, 0];
  for (const e of entries) {
    if (e.cohort === null || isOut(e)) continue;
    const [n, c, d] = e.history.all ?? [0, 0, 0];
    if (!(n > 0 && d > 0)) continue;
    on += n;
    oc += c;
    od += d;
  }
  const restRate = intervalRate(on, oc, od) ?? undefined;
  const watchlistRate = allRate ?? undefined;
  const split = datesSplit(entries);
  if (allRate !== null) sums.apartAt = { rate: allRate, nats: apartNats };
  const cohortRate = new Map<string, number>();

  for (const e of entries) {
    if (e.cohort === null) continue;
    let m = cohortRate.get(e.cohort);
    if (m === undefined) {
      m = priorFor(e.cohort, priors).rate;
      cohortRate.set(e.cohort, m);
    }
    addToSums(sums, {
      history: e.history,
      cohortRate: m,
      ...(watchlistRate === undefined ? {} : { watchlistRate }),
      ...(restRate === undefined ? {} : { restRate }),
      ...(isOut(e) ? { apart: true } : {}),
      ...(split === null ? {} : { split }),
    });
  }
  return sums;
}

/**
 * The spread of the firms' rates (src/plan/spread.ts `learnSpread`) from `from`, over the entries
 * in a cohort with intervals of their own, every k-th in the order given (`sampleStride`; ordered by
 * id), closed firms left out: each at its cohort's rate (`priors`) and the registry dates weighed
 * by `datedWeight`. src/plan/store.ts `learnedSpread` reads the same sample.
 */
export function watchlistSpread(
  entries: readonly Pick<LearnEntry, 'history' | 'cohort'>[],
  priors: ReadonlyMap<string, CohortPrior>,
  datedWeight: number,
  from: Spread | undefined,
): number[] {
  const eligible = entries.filter((e) => e.cohort !== null && hasIntervals(e.history));
  const k = sampleStride(eligible.length);
  const lls: Float64Array[] = [];
  for (let i = 0; i < eligible.length; i += k) {
    const e = eligible[i] as (typeof eligible)[number];
    if (isClosedStatus(statusOfCohort(e.cohort))) continue;
    lls.push(entryLogLik(e.history, priorFor(e.cohort, priors).rate, datedWeight));
  }
  return learnSpread(lls, from);
}

/** What the plan job learns from the whole watchlist for the cycles that follow. */
export interface LearnedPlan {
  priors: Map<string, CohortPrior>;
  /** The model, `tailDays` set to the longest interval planned. */
  model: PlannerModel;
  buckets: ScaleBucket[];
  scale: number;
}

/**
 * The plan job's learning step over every active entry, in memory: the cohorts' priors (the
 * registry dates weighed as the `previous` model found they predict), the model (`adjust` may
 * change it, as the backtest's ablation does), every entry's bucket, the tail bound (unless the
 * model turns it off with an infinite `tailDays`) and the scale for `perDay` refreshes a day.
 * `spread: false` leaves out the spread of the rates (for a caller that never reads it).
 * src/plan/store.ts does the same with aggregates in SQL; a test holds the two together.
 */
export function learnPlanner(
  entries: readonly LearnEntry[],
  perDay: number,
  maxStalenessDays: number,
  previous: Pick<PlannerModel, 'datedWeight' | 'spread'>,
  adjust: (learned: PlannerModel) => PlannerModel = (m) => m,
  { spread = true }: { spread?: boolean } = {},
): LearnedPlan {
  const pooled = new Map<string, CohortObservations>();
  for (const e of entries) {
    if (e.cohort === null) continue;
    let p = pooled.get(e.cohort);
    if (!p) {
      p = { cohort: e.cohort, ...noObservations() };
      pooled.set(e.cohort, p);
    }
    const h = e.history;
    p.entries++;
    p.n += h.n;
    p.changes += h.changes;
    p.days += h.days;
    p.datedDays = (p.datedDays ?? 0) + (h.datedDays ?? 0);
    p.datedEvents = (p.datedEvents ?? 0) + (h.datedEvents ?? 0);
    p.seedDays = (p.seedDays ?? 0) + (h.seedDays ?? 0);
    p.seedEvents = (p.seedEvents ?? 0) + (h.seedEvents ?? 0);
  }
  const priors = cohortPriors([...pooled.values()], previous.datedWeight);
  const everyone = priors.get('*')?.rate ?? DEFAULT_PRIOR.rate;
  const sums = watchlistSums(entries, priors);
  const learned = learnModel(sums, maxStalenessDays, everyone);
  if (spread) {
    learned.spread = watchlistSpread(entries, priors, learned.datedWeight, previous.spread);
    if (clustered(learned.spread)) learned.clustered = true;
  }
  const model = { ...adjust(learned) };

  const counts = new Map<number, number>();
  for (const e of entries) {
    const b = bucketOf(e.rate ?? everyone, e.weight, e.history, model);
    counts.set(b, (counts.get(b) ?? 0) + 1);
  }
  const buckets = [...counts].map(([b, k]) => ({ root: Math.exp(b / 16), entries: k }));
  model.tailDays = Number.isFinite(model.tailDays)
    ? tailDays(buckets, perDay, maxStalenessDays)
    : maxStalenessDays;
  return { priors, model, buckets, scale: plannedScale(buckets, perDay, model.tailDays, model) };
}
