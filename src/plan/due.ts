/**
 * When a watched enterprise is next worth a credit, given its estimate (src/plan/estimate.ts).
 *
 * The planner refreshes an entry when the expected detection lag it has accumulated is worth a
 * credit. Changes pending since the last fetch, Δ days ago, have waited λΔ²/2 change-days in
 * expectation; refreshing at a fixed interval I costs 1/I credits a day and leaves w·λ·I/2 days of
 * lag per day (w: the entry's weight). Minimising the total lag within a daily budget (a Lagrange
 * multiplier) gives I = c / √(w·λ): entries that change often are refreshed more often, but only
 * by the square root of their rate, so the slow majority is not starved. The scale c is set once a
 * cycle so that the whole watchlist's refreshes fit the cycle's capacity (`calibrateScale`);
 * intervals are kept between one day and the staleness bound. The entry's next due time is its
 * last refresh plus I, stored, so the plan reads the head of an index instead of scoring every
 * entry. A high-severity change makes the firm due every cycle for `BOOST_CYCLES` cycles: in a
 * registry, one change (a status move, an opened liquidation) is often followed by others.
 *
 * The planner's model (`PlannerModel`, learned from the whole watchlist by src/plan/learn.ts)
 * says how far each entry is planned at its own rate and weight or at the watchlist's, so it is
 * read and applied here, with the tail bound that keeps the longest intervals fair (`tailDays`).
 */

import {
  type ChangeHistory,
  DEFAULT_PRIOR_RATE,
  isWaking,
  MAX_RATE,
  MIN_RATE,
  PRIOR_SHAPE,
} from './model.ts';
import { MAX_SHIFT, SHIFT_PRIOR } from './shift-test.ts';
import { spreadOf } from './spread.ts';

/** Default bound on days between two refreshes of an entry, while the budget allows. */
export const DEFAULT_MAX_STALENESS_DAYS = 30;
/** Cycles a firm is refreshed every cycle after a high-severity change. */
export const BOOST_CYCLES = 3;

/** The days between refreshes for a rate and weight at scale `scale`, within [1, maxDays]. */
export function intervalDays(rate: number, weight: number, scale: number, maxDays: number): number {
  const max = Math.max(1, maxDays);
  const v = Math.max(MIN_RATE, rate) * Math.max(1e-6, weight);
  if (!Number.isFinite(scale)) return max;
  return Math.min(max, Math.max(1, scale / Math.sqrt(v)));
}

export interface DueInput {
  /** When the entry was last refreshed. */
  refreshedAt: Date;
  /** Its rate for the coming interval (`shortTermRate`). */
  rate: number;
  weight: number;
  /** Cycles of boost left (after a high-severity change). */
  boostLeft: number;
  scale: number;
  maxStalenessDays: number;
}

const DAY_MS = 86_400_000;

/**
 * When the entry is next due: its last refresh plus its interval (one day while boosted). Always
 * within the staleness bound of the last refresh.
 */
export function dueAfter(d: DueInput): Date {
  const days = d.boostLeft > 0 ? 1 : intervalDays(d.rate, d.weight, d.scale, d.maxStalenessDays);
  return new Date(d.refreshedAt.getTime() + Math.round(days * DAY_MS));
}

/** Boost cycles left after a refresh that saw (or not) a high-severity change. */
export function nextBoost(previous: number, sawHigh: boolean): number {
  return sawHigh ? BOOST_CYCLES : Math.max(0, previous - 1);
}

// ---------------------------------------------------------------------------------------------
// The scale.

/** How many entries share one value of √(w·λ). */
export interface ScaleBucket {
  root: number;
  entries: number;
}

/**
 * The scale c at which the watchlist's refreshes per day, Σ 1/I(c), fill `perDay` (the cycle's
 * capacity, less a margin for the entries the plan skips or that fail). When even daily refreshes
 * of everyone fit, 0 (every entry due every cycle); when not even the staleness bound fits,
 * Infinity (every entry at the bound: round robin). Deterministic bisection.
 */
export function calibrateScale(
  buckets: readonly ScaleBucket[],
  perDay: number,
  maxStalenessDays: number,
): number {
  const max = Math.max(1, maxStalenessDays);
  const load = (c: number) => {
    let s = 0;
    for (const b of buckets) s += b.entries / Math.min(max, Math.max(1, c / Math.max(1e-9, b.root)));
    return s;
  };
  const total = buckets.reduce((a, b) => a + b.entries, 0);
  if (total === 0 || total <= perDay) return 0;
  if (load(Number.MAX_VALUE) > perDay) return Number.POSITIVE_INFINITY;
  let lo = -30;
  let hi = 30;
  for (let i = 0; i < 80; i++) {
    const mid = (lo + hi) / 2;
    if (load(Math.exp(mid)) > perDay) lo = mid;
    else hi = mid;
  }
  return Math.exp(hi);
}

/** The share of a cycle's capacity the scale plans for: the rest absorbs skips, failures and boosts. */
export const SCALE_FILL = 0.9;

/**
 * The scale a plan sets (`calibrateScale` at SCALE_FILL of the capacity `perDay`, intervals at most
 * `maxDays`). While the model holds every firm alike (`equal` 1) it is set from the count of
 * entries instead of their buckets: every entry is planned at the watchlist's mean rate, so the
 * interval is entries ÷ refreshes a day whatever the day's rate and rounding, the due times keep
 * the order of the refreshes, and the order is round robin's exactly.
 */
export function plannedScale(
  buckets: readonly ScaleBucket[],
  perDay: number,
  maxDays: number,
  model: Pick<PlannerModel, 'equal' | 'rate' | 'outliers'>,
): number {
  if (model.equal < 1 || (model.outliers ?? 0) > 0)
    return calibrateScale(buckets, perDay * SCALE_FILL, maxDays);
  const entries = buckets.reduce((a, b) => a + b.entries, 0);
  if (entries === 0 || entries <= perDay * SCALE_FILL) return 0;
  const interval = Math.min(Math.max(1, maxDays), entries / (perDay * SCALE_FILL));
  return interval * Math.sqrt(Math.max(MIN_RATE, model.rate));
}

// ---------------------------------------------------------------------------------------------
// What the watchlist as a whole has taught: the planner's model.

/** The largest Gamma shape learned: firms that change alike (their prior then holds for years). */
export const MAX_SHAPE = 1000;
/** The smallest: rates spread over orders of magnitude. */
export const MIN_SHAPE = 0.1;
/** The hot factor above which changes are taken to cluster, and a high-severity change boosts. */
export const MIN_BOOST_HOT = 2;
/** The most a change may multiply a firm's rate for the interval after it. */
export const MAX_HOT = 30;
/**
 * The share of the changes the planner lets wait longer than round robin's longest wait plus one
 * day (round robin's own 95th percentile is below it): a little under 5%, so the 95th percentile
 * of the detection lag stays within a day of round robin's.
 */
export const TAIL_SHARE = 0.035;
/**
 * How much longer than round robin's interval R a change may wait before it counts as late: a
 * day, or a quarter of R when that is more (at small budgets round robin's own wait is weeks).
 */
export function tailSlack(round: number): number {
  return Math.max(1, Math.floor(round / 4));
}

/**
 * What each plan learns from the whole watchlist (`learnModel`) and the estimates use:
 * - `shape`: the Gamma shape of the firms' rates around their cohort's (empirical Bayes, from how
 *   far the firms' change counts spread beyond what one shared rate would give). Large when the
 *   evidence that rates differ is weak: every estimate then stays at its cohort's and the
 *   intervals are equal, as round robin's.
 * - `datedWeight`: how far the registry's approval dates count (0 … 1), from how well the firms
 *   with a recent approval date went on to change more than the others, against what their dates
 *   said.
 * - `hot`: how many times likelier a change is in the interval right after one that changed than
 *   the estimate says (1: changes do not cluster); the next interval's rate is multiplied by it.
 * - `tailDays`: the longest interval, while shorter than the staleness bound.
 * - `equal`: how far intervals are pulled to equal ones (0 … 1): 1 while the evidence that the
 *   firms' rates differ is weak (their change counts spread no more than chance would around the
 *   watchlist's own rate, or, once the registry dates are trusted, around their cohorts'), which is
 *   round robin exactly; 0 once it is strong. `rate` is the watchlist's mean rate they are pulled to.
 */
export interface PlannerModel {
  shape: number;
  equal: number;
  rate: number;
  datedWeight: number;
  hot: number;
  /** A high-severity change makes its firm due every cycle for BOOST_CYCLES: while changes cluster. */
  boost: boolean;
  tailDays: number;
  /** The prior probability that a firm's habits changed within its recent intervals (`estimateShift`). */
  shift: number;
  /**
   * `hot` for a firm that has just woken (`isWaking`: a change after a silence): how many times
   * likelier the interval after such a change is to end changed than the estimate says. Above 1
   * where quiet firms wake into a spell of changes; the waking entry's rate is multiplied by it
   * (or by `hot` when more), unless every entry is held alike. Absent in a model stored before it
   * existed: 1.
   */
  wake?: number;
  /**
   * The entries planned apart (`isApart`): an entry whose intervals changed so much more often than
   * the whole watchlist's rate `apartRate` that chance cannot explain it (evidence above
   * `apartNats` nats, more the larger the watchlist) is planned at its own rate, and the test for
   * `equal` runs on the rest: a handful of busy firms do not make hundreds of alike ones look
   * unequal. `outliers` counts them at the last plan. Absent: none.
   */
  apartRate?: number;
  apartNats?: number;
  outliers?: number;
  /**
   * How far the spread of the estimates is trusted (0 … 1): the intervals that began while an
   * entry was estimated quieter than the watchlist's mean against the others, the ratio of their
   * rates as it happened to the ratio the estimates said (as `datedWeight` weighs the dates). 1
   * where quiet estimates hold; less where firms estimated quiet turn out busier than said (quiet
   * firms that wake, habits that swap): every entry is then pulled toward the mean rate by 1 −
   * trust more. Absent: 1.
   */
  trust?: number;
  /**
   * The spread of the firms' rates relative to their cohorts' (src/plan/spread.ts), learned from
   * the entries with intervals at every plan: their estimates are read through it. Not part of the
   * plan basis: it moves a little at every plan. Absent: the cohorts' Gamma priors alone.
   */
  spread?: number[];
  /**
   * The spread holds the firms in separate clusters (src/plan/spread.ts `clustered`): only then
   * are the estimates read through it (`spreadInUse`). Absent: no.
   */
  clustered?: boolean;
  /**
   * The dates' split test (src/plan/learn.ts `splitZ`) is the evidence that rates differ: the
   * entries whose first fetch found a recent approval changed clearly more often than the others,
   * before their intervals could show it. Absent: another test's evidence, or none.
   */
  datesSplit?: boolean;
  /**
   * What the refreshed entries' due times were last planned under (`planBasis`): a plan plans them
   * all again once the model or the scale has moved from it (`basisMoved`). Absent: never.
   */
  basis?: PlanBasis;
}

/** The parts of the model and the scale every entry's due time depends on. */
export interface PlanBasis {
  equal: number;
  trust: number;
  datedWeight: number;
  shape: number;
  hot: number;
  wake: number;
  outliers: number;
  /** The scale, as stored (Infinity and 0 as themselves). */
  scale: number;
}

/** The basis of the due times a plan sets under `model` and `scale`. */
export function planBasis(model: PlannerModel, scale: number): PlanBasis {
  const { equal, datedWeight, shape, hot, trust = 1, wake = 1, outliers = 0 } = model;
  return { equal, trust, datedWeight, shape, hot, wake, outliers, scale };
}

/**
 * How far each part of the basis may move before the due times are planned again: a share by
 * 0.05, a factor by a tenth, the count of entries planned apart not at all.
 */
const BASIS_PARTS: readonly (readonly [keyof PlanBasis, 'share' | 'factor' | 'count'])[] = [
  ['equal', 'share'],
  ['trust', 'share'],
  ['datedWeight', 'share'],
  ['shape', 'factor'],
  ['hot', 'factor'],
  ['wake', 'factor'],
  ['scale', 'factor'],
  ['outliers', 'count'],
];

/** Whether a part moved from `a` to `b` beyond what its kind allows (a factor that is 0 or infinite moves unless equal). */
function partMoved(kind: 'share' | 'factor' | 'count', a: number, b: number): boolean {
  if (a === b) return false;
  if (kind === 'share') return Math.abs(a - b) > 0.05;
  if (kind === 'count') return true;
  return (
    !(a > 0 && b > 0 && Number.isFinite(a) && Number.isFinite(b)) || Math.abs(Math.log(a / b)) > Math.log(1.1)
  );
}

/** Whether due times planned under `before` no longer hold under `now` (always, without `before`). */
export function basisMoved(before: PlanBasis | undefined, now: PlanBasis): boolean {
  if (before === undefined) return true;
  return BASIS_PARTS.some(([k, kind]) => partMoved(kind, before[k], now[k]));
}

/**
 * The evidence, in nats, that `n` intervals over `days` days of which `changed` ended changed
 * came from a rate above `rate`: n times the Kullback–Leibler divergence of the share changed from
 * the share `rate` predicts (the Chernoff bound on the chance of so many: e^(−evidence)), 0 when no
 * more than predicted changed. The plan job's SQL computes the same (src/plan/store.ts).
 */
export function apartEvidence(n: number, changed: number, days: number, rate: number): number {
  if (!(n > 0) || !(days > 0) || !(rate > 0)) return 0;
  // As the plan job's SQL writes it (1 − exp), so the two decide alike.
  const q = Math.exp(-rate * (days / n));
  const p = 1 - q;
  const a = Math.min(1, changed / n);
  if (!(a > p) || !(p > 0)) return 0;
  const up = a * Math.log(a / p);
  const down = a >= 1 ? 0 : (1 - a) * Math.log((1 - a) / q);
  return n * (up + down);
}

/**
 * The evidence (nats) that an entry changes more often than `rate`: its intervals'
 * (`apartEvidence`), plus its registry-dated changes' as Poisson events e over their days t
 * (e·ln(e/μ) − e + μ for μ = rate·t, when e > μ): a first fetch whose approval date was
 * yesterday, and changes dated a day before each fetch, tell a busy firm long before many of its
 * intervals can. The plan job's SQL computes the same (src/plan/store.ts).
 */
export function entryEvidence(
  h: Pick<ChangeHistory, 'all' | 'datedEvents' | 'datedDays'>,
  rate: number,
): number {
  const [n, c, d] = h.all ?? [0, 0, 0];
  let ev = apartEvidence(n, c, d, rate);
  const e = h.datedEvents ?? 0;
  const mu = rate * (h.datedDays ?? 0);
  if (e > mu && mu > 0) ev += e * Math.log(e / mu) - e + mu;
  return ev;
}

/** The entry is planned apart from the rest (PlannerModel.apartRate): evidence above `apartNats`. */
export function isApart(
  h: Pick<ChangeHistory, 'all'>,
  model: Pick<PlannerModel, 'apartRate' | 'apartNats'>,
): boolean {
  if (model.apartRate === undefined || model.apartNats === undefined || h.all === undefined) return false;
  return entryEvidence(h, model.apartRate) > model.apartNats;
}

/** The planner before any of this was learned (and before this model existed). */
export const LEGACY_MODEL: PlannerModel = {
  shape: PRIOR_SHAPE,
  equal: 0,
  rate: DEFAULT_PRIOR_RATE,
  datedWeight: 1,
  hot: 1,
  boost: true,
  tailDays: Number.POSITIVE_INFINITY,
  shift: 0,
};

/** Before the first plan has learned anything: no evidence yet that the firms differ. */
export const INITIAL_MODEL: PlannerModel = {
  shape: MAX_SHAPE,
  equal: 1,
  rate: DEFAULT_PRIOR_RATE,
  datedWeight: 0.5,
  hot: 1,
  boost: false,
  tailDays: Number.POSITIVE_INFINITY,
  shift: SHIFT_PRIOR,
};

/** Reads a stored model, falling back to INITIAL_MODEL part by part. */
export function modelOf(stored: unknown): PlannerModel {
  const s = (stored && typeof stored === 'object' ? stored : {}) as Partial<
    Record<keyof PlannerModel, unknown>
  >;
  const num = (v: unknown, d: number, lo: number, hi: number) => {
    const x = v === 'Infinity' ? Number.POSITIVE_INFINITY : Number(v);
    return v !== null && v !== undefined && !Number.isNaN(x) ? Math.min(hi, Math.max(lo, x)) : d;
  };
  const spread = spreadOf(s.spread);
  return {
    shape: num(s.shape, INITIAL_MODEL.shape, MIN_SHAPE, MAX_SHAPE),
    equal: num(s.equal, INITIAL_MODEL.equal, 0, 1),
    rate: num(s.rate, INITIAL_MODEL.rate, MIN_RATE, MAX_RATE),
    datedWeight: num(s.datedWeight, INITIAL_MODEL.datedWeight, 0, 1),
    hot: num(s.hot, INITIAL_MODEL.hot, 1, MAX_HOT),
    boost: typeof s.boost === 'boolean' ? s.boost : INITIAL_MODEL.boost,
    tailDays: num(s.tailDays, INITIAL_MODEL.tailDays, 1, Number.POSITIVE_INFINITY),
    shift: num(s.shift, INITIAL_MODEL.shift, 0, MAX_SHIFT),
    wake: num(s.wake, 1, 1, MAX_HOT),
    trust: num(s.trust, 1, 0, 1),
    ...(basisOf(s.basis) ?? {}),
    ...(spread === null ? {} : { spread }),
    ...(s.clustered === true && spread !== null ? { clustered: true } : {}),
    ...(s.datesSplit === true ? { datesSplit: true } : {}),
    ...(s.apartRate === undefined || s.apartNats === undefined
      ? {}
      : {
          apartRate: num(s.apartRate, MIN_RATE, MIN_RATE, MAX_RATE),
          apartNats: num(s.apartNats, Number.POSITIVE_INFINITY, 0, Number.POSITIVE_INFINITY),
          outliers: num(s.outliers, 0, 0, Number.MAX_SAFE_INTEGER),
        }),
  };
}

/** A stored basis (`PlanBasis`), or null when it is not one. */
function basisOf(v: unknown): { basis: PlanBasis } | null {
  if (!v || typeof v !== 'object') return null;
  const o = v as Record<string, unknown>;
  const out: Record<string, number> = {};
  for (const [k] of BASIS_PARTS) {
    // JSON keeps an infinite scale (every entry at the bound) as null.
    const x =
      o[k] === 'Infinity' || (k === 'scale' && o[k] === null) ? Number.POSITIVE_INFINITY : Number(o[k]);
    if ((o[k] === null && k !== 'scale') || o[k] === undefined || Number.isNaN(x)) return null;
    out[k] = x;
  }
  return { basis: out as unknown as PlanBasis };
}

/**
 * The rate an entry is planned at for its coming interval: its estimate, pulled toward the
 * watchlist's mean as far as the model's `equal` says (geometrically: at 1 every entry is planned
 * at the mean, and the intervals are round robin's exactly), and hot after a change unless every
 * entry is held alike.
 */
export function shortTermRate(
  rate: number,
  h: Pick<ChangeHistory, 'lastChanged' | 'recent' | 'all'>,
  model: PlannerModel,
): number {
  const e = equalOf(h, model);
  const r =
    e === 0
      ? rate
      : Math.exp((1 - e) * Math.log(Math.max(MIN_RATE, rate)) + e * Math.log(Math.max(MIN_RATE, model.rate)));
  if (e >= 1 || !h.lastChanged) return r;
  return isWaking(h) ? r * Math.max(model.hot, model.wake ?? 1) : r * model.hot;
}

/**
 * How far an entry is pulled to the watchlist's mean: the model's `equal` (0 for an entry planned
 * apart), and as far again toward it as the estimates' spread is not trusted (`trust`).
 */
export function equalOf(h: Pick<ChangeHistory, 'all'>, model: PlannerModel): number {
  if (isApart(h, model)) return 0;
  const t = Math.min(1, Math.max(0, model.trust ?? 1));
  return 1 - (1 - Math.min(1, Math.max(0, model.equal))) * t;
}

/** The weight an entry is planned at: its own, pulled to 1 as far as the model's `equal` says (not at all when apart). */
export function plannedWeight(
  weight: number,
  model: PlannerModel,
  h: Pick<ChangeHistory, 'all'> = {},
): number {
  const e = equalOf(h, model);
  return e === 0 ? weight : weight ** (1 - e);
}

/**
 * The bucket of one entry's √(w·λ) as the model plans it (`shortTermRate`, `plannedWeight`): in
 * 1/16 of a natural log of it (about 6%). The plan job's SQL computes the same (src/plan/store.ts).
 */
export function bucketOf(
  rate: number,
  weight: number,
  h: Pick<ChangeHistory, 'lastChanged' | 'recent' | 'all'>,
  model: PlannerModel,
): number {
  const planned =
    plannedWeight(Math.max(1e-6, weight), model, h) * shortTermRate(Math.max(MIN_RATE, rate), h, model);
  return Math.round(8 * Math.log(Math.max(1e-9, planned)));
}

/**
 * The longest interval that keeps the tail fair: the largest whole number of days C (from round
 * robin's interval R = entries ÷ refreshes a day, plus one, to the staleness bound) such that,
 * with every interval at most C and the scale calibrated to it, the changes expected to wait more
 * than R days — a change of a firm refreshed every I days waits 0 … I − 1 days alike — are at most
 * TAIL_SHARE of all. Each bucket's √(w·λ) stands for its rate (a weight above 1 only makes the
 * estimate more careful). Deterministic.
 */
export function tailDays(buckets: readonly ScaleBucket[], perDay: number, maxStalenessDays: number): number {
  const max = Math.max(1, maxStalenessDays);
  const entries = buckets.reduce((a, b) => a + b.entries, 0);
  if (entries === 0 || perDay <= 0) return max;
  const round = Math.ceil(entries / perDay);
  const allowed = round + tailSlack(round);
  if (allowed >= max) return max;
  const total = buckets.reduce((a, b) => a + b.entries * b.root * b.root, 0);
  const late = (cap: number) => {
    const scale = calibrateScale(buckets, perDay * SCALE_FILL, cap);
    if (!Number.isFinite(scale)) return 0;
    let s = 0;
    for (const b of buckets) {
      const interval = Math.ceil(Math.min(cap, Math.max(1, scale / Math.max(1e-9, b.root))));
      if (interval > allowed) s += (b.entries * b.root * b.root * (interval - allowed)) / interval;
    }
    return s;
  };
  let lo = allowed;
  let hi = max;
  if (late(hi) <= TAIL_SHARE * total) return max;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (late(mid) <= TAIL_SHARE * total) lo = mid;
    else hi = mid;
  }
  return lo;
}
