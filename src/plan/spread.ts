/**
 * The spread of the firms' rates, as the watchlist shows it (empirical Bayes): a distribution of
 * each firm's rate relative to its cohort's, on a log grid, learned from every entry's intervals
 * by a few steps of expectation–maximisation a plan (`learnSpread`). An entry's long-record rate is
 * then its posterior mean under that spread (`spreadMean`), where one Gamma prior would pull it
 * toward its cohort's mean.
 *
 * Why: rates are often not one hump around the mean. A watchlist of busy firms among many quiet
 * ones has two clusters; a Gamma prior puts a firm seen quiet for a few intervals between them,
 * where no firm is. The learned spread puts it in the cluster its intervals point to, as soon as
 * they point, and leaves it between only while they do not.
 *
 * The spread is learned from, and used for, the entries with at least one interval of their own
 * (`hasIntervals`): an entry known only from its registry dates keeps its cohort's Gamma prior,
 * which says less on less. A closed firm's prior is the registry's fact and has no spread.
 */
import { type ChangeHistory, datedExposure, MAX_RATE, MIN_RATE } from './model.ts';

/** Grid points a factor of e. */
const PER_E = 8;
/** The grid: ratios to the cohort's rate from e^−6.5 to e^6.5 (1/665 … 665), 8 points a factor of e. */
export const SPREAD_STEPS = 13 * PER_E + 1;
const LOG_LO = -6.5;
const RATIO_LOG: readonly number[] = Array.from({ length: SPREAD_STEPS }, (_, k) => LOG_LO + k / PER_E);
/** The spread before anything is learned: lognormal around the cohort's rate, this wide (natural log). */
export const SPREAD_START_SD = 1.5;
/** The share of the spread kept even over the grid, so no rate the intervals may yet show is ruled out. */
export const SPREAD_FLOOR = 0.002;
/** Expectation–maximisation steps a plan, from the last plan's spread. */
export const SPREAD_STEPS_A_PLAN = 5;
/** Entries read to learn the spread at most (every k-th by id beyond). */
export const SPREAD_SAMPLE = 20_000;

/** A spread: the share of firms at each grid point (sums to 1). */
export type Spread = readonly number[];

/** The spread before anything is learned. */
export function startSpread(): number[] {
  const w = RATIO_LOG.map((x) => Math.exp(-0.5 * (x / SPREAD_START_SD) ** 2));
  return floored(w);
}

/** Normalised, with SPREAD_FLOOR of it even over the grid. */
function floored(w: readonly number[]): number[] {
  const sum = w.reduce((a, b) => a + b, 0);
  const even = SPREAD_FLOOR / SPREAD_STEPS;
  return w.map((x) => (sum > 0 ? (1 - SPREAD_FLOOR) * (x / sum) : 1 / SPREAD_STEPS) + (sum > 0 ? even : 0));
}

/** A stored spread, or null when it is not one (wrong length, a negative or non-finite share, all zero). */
export function spreadOf(v: unknown): number[] | null {
  if (!Array.isArray(v) || v.length !== SPREAD_STEPS) return null;
  const w = v.map(Number);
  if (!w.every((x) => Number.isFinite(x) && x >= 0)) return null;
  const sum = w.reduce((a, b) => a + b, 0);
  return sum > 0 ? w.map((x) => x / sum) : null;
}

/** Whether the entry has an interval of its own (undated or dated): the spread speaks for it. */
export function hasIntervals(h: ChangeHistory): boolean {
  return (h.all?.[0] ?? h.n) > 0;
}

/** The grid's rates for a cohort of rate `cohortRate` (kept within MIN_RATE … MAX_RATE). */
function ratesAt(cohortRate: number): number[] {
  const c = Math.log(Math.max(MIN_RATE, Math.min(MAX_RATE, cohortRate)));
  return RATIO_LOG.map((x) => Math.min(MAX_RATE, Math.max(MIN_RATE, Math.exp(c + x))));
}

/**
 * The log-likelihood of an entry's observations at each of `rates`: its registry dates as Poisson
 * exposure (the first fetch's weighed by `datedWeight`), each undated interval as changed or not.
 * bench/bayes.ts reads the same on its own grid.
 */
export function gridLogLik(h: ChangeHistory, rates: readonly number[], datedWeight: number): Float64Array {
  const [events, days] = datedExposure(h, datedWeight);
  const out = new Float64Array(rates.length);
  const bins: [number, number, number][] = [];
  for (const k in h.bins) {
    const [n, c] = h.bins[k] as [number, number];
    bins.push([Number(k), n, c]);
  }
  for (let g = 0; g < rates.length; g++) {
    const r = rates[g] as number;
    let s = events * Math.log(r) - days * r;
    for (const [d, n, c] of bins) {
      s -= (n - c) * r * d;
      if (c > 0) s += c * Math.log(Math.max(1e-300, -Math.expm1(-r * d)));
    }
    out[g] = s;
  }
  return out;
}

/** `gridLogLik` on the spread's grid, for an entry of a cohort of rate `cohortRate`. */
export function entryLogLik(h: ChangeHistory, cohortRate: number, datedWeight: number): Float64Array {
  return gridLogLik(h, ratesAt(cohortRate), datedWeight);
}

/** The posterior over the grid of an entry of log-likelihood `ll` under spread `w` (into `out`). */
function posterior(ll: Float64Array, w: Spread, out: Float64Array): void {
  let top = Number.NEGATIVE_INFINITY;
  for (let g = 0; g < SPREAD_STEPS; g++) {
    const x = (ll[g] as number) + Math.log(w[g] as number);
    out[g] = x;
    if (x > top) top = x;
  }
  let z = 0;
  for (let g = 0; g < SPREAD_STEPS; g++) {
    const p = Math.exp((out[g] as number) - top);
    out[g] = p;
    z += p;
  }
  for (let g = 0; g < SPREAD_STEPS; g++) out[g] = (out[g] as number) / z;
}

/**
 * The spread after SPREAD_STEPS_A_PLAN steps of expectation–maximisation from `from` (the last
 * plan's, or the start), over the entries' log-likelihoods (`entryLogLik`). Without entries it
 * is `from`. Deterministic.
 */
export function learnSpread(lls: readonly Float64Array[], from: Spread | undefined): number[] {
  let w = [...(from ?? startSpread())];
  if (lls.length === 0) return w;
  const post = new Float64Array(SPREAD_STEPS);
  for (let step = 0; step < SPREAD_STEPS_A_PLAN; step++) {
    const acc = new Float64Array(SPREAD_STEPS);
    for (const ll of lls) {
      posterior(ll, w, post);
      for (let g = 0; g < SPREAD_STEPS; g++) acc[g] = (acc[g] as number) + (post[g] as number);
    }
    w = floored(smoothed(acc));
  }
  return w;
}

/** How far each step smooths the spread (natural log): a Gaussian of this width. */
export const SPREAD_SMOOTH = 0.3;

/** The spread convolved with a Gaussian of width SPREAD_SMOOTH (mass that would leave the grid stays at its edge). */
function smoothed(w: ArrayLike<number>): number[] {
  const sd = SPREAD_SMOOTH * PER_E;
  if (!(sd > 0)) return Array.from(w);
  const reach = Math.ceil(3 * sd);
  const kernel = Array.from({ length: 2 * reach + 1 }, (_, j) => Math.exp(-0.5 * ((j - reach) / sd) ** 2));
  const ksum = kernel.reduce((a, b) => a + b, 0);
  const out = new Array<number>(SPREAD_STEPS).fill(0);
  for (let g = 0; g < SPREAD_STEPS; g++) {
    const x = w[g] as number;
    if (x === 0) continue;
    for (let j = -reach; j <= reach; j++) {
      const t = Math.min(SPREAD_STEPS - 1, Math.max(0, g + j));
      out[t] = (out[t] as number) + (x * (kernel[j + reach] as number)) / ksum;
    }
  }
  return out;
}

/**
 * The every-k-th sample of `count` entries (in id order) a plan learns the spread from: k = 1 up to
 * SPREAD_SAMPLE entries.
 */
export function sampleStride(count: number): number {
  return Math.max(1, Math.ceil(count / SPREAD_SAMPLE));
}

/** The entry's posterior mean rate under spread `w`, relative to its cohort's `cohortRate`. */
export function spreadMean(h: ChangeHistory, cohortRate: number, datedWeight: number, w: Spread): number {
  const ll = entryLogLik(h, cohortRate, datedWeight);
  const post = new Float64Array(SPREAD_STEPS);
  posterior(ll, w, post);
  const rates = ratesAt(cohortRate);
  let mean = 0;
  for (let g = 0; g < SPREAD_STEPS; g++) mean += (post[g] as number) * (rates[g] as number);
  return Math.min(MAX_RATE, Math.max(MIN_RATE, mean));
}

/** The least share of the firms a cluster holds (`clustered`). */
export const CLUSTER_SHARE = 0.05;
/** How far apart two clusters' peaks are at least (natural log: a factor of e^1.5, about 4.5). */
export const CLUSTER_APART = 1.5;
/** How deep the valley between two clusters is: at most this share of the lower peak. */
export const CLUSTER_VALLEY = 0.25;

/**
 * Whether the spread holds the firms in separate clusters: a point of the grid with at least
 * CLUSTER_SHARE of the firms on either side, each side's peak CLUSTER_APART or more from the other,
 * and the spread there at most CLUSTER_VALLEY of the lower peak. Where the rates are one hump (as
 * wide as it may be), the cohorts' Gamma priors describe them; where they are clusters, a Gamma
 * prior puts the firms it knows little of between the clusters, where none is, and the spread is
 * read instead (`spreadInUse`).
 */
export function clustered(w: Spread): boolean {
  const left = new Float64Array(SPREAD_STEPS); // mass below g
  const peakL = new Int32Array(SPREAD_STEPS); // argmax below g
  for (let g = 1; g < SPREAD_STEPS; g++) {
    left[g] = (left[g - 1] as number) + (w[g - 1] as number);
    const p = peakL[g - 1] as number;
    peakL[g] = g === 1 || (w[g - 1] as number) > (w[p] as number) ? g - 1 : p;
  }
  let right = 0;
  let peakR = SPREAD_STEPS - 1;
  for (let g = SPREAD_STEPS - 2; g >= 1; g--) {
    right += w[g + 1] as number;
    if ((w[g + 1] as number) > (w[peakR] as number)) peakR = g + 1;
    const pl = peakL[g] as number;
    if (
      (left[g] as number) >= CLUSTER_SHARE &&
      right >= CLUSTER_SHARE &&
      (peakR - pl) / PER_E >= CLUSTER_APART &&
      (w[g] as number) <= CLUSTER_VALLEY * Math.min(w[pl] as number, w[peakR] as number)
    )
      return true;
  }
  return false;
}

/** The spread a model's estimates are read through: its learned spread when that holds clusters, else none. */
export function spreadInUse(model: { spread?: number[]; clustered?: boolean }): Spread | undefined {
  return model.clustered === true ? model.spread : undefined;
}

/** The spread's quantiles (as ratios to the cohort's rate): for `plan explain` and the docs. */
export function spreadQuantile(w: Spread, q: number): number {
  let acc = 0;
  for (let g = 0; g < SPREAD_STEPS; g++) {
    acc += w[g] as number;
    if (acc >= q) return Math.exp(RATIO_LOG[g] as number);
  }
  return Math.exp(RATIO_LOG[SPREAD_STEPS - 1] as number);
}
