/**
 * How often a watched enterprise changes, estimated from its own observations, and when it is
 * next worth a credit.
 *
 * An observation is one interval between two successful fetches of an entry: its length in days
 * (cycles) and whether the later answer differed from the earlier one. Intervals are irregular
 * (the planner decides them), and an interval that ended with a change says only that at least
 * one change happened in it. With changes arriving as a Poisson process of rate λ per day, an
 * interval of Δ days ends changed with probability 1 − e^(−λΔ), so the log-likelihood of the
 * observations is
 *
 *   ℓ(λ) = Σ_changed log(1 − e^(−λΔᵢ)) − Σ_unchanged λΔᵢ
 *
 * (Cho and Garcia-Molina, "Estimating frequency of change", for irregular access). It is concave;
 * its maximum is the root of a decreasing derivative, found by bisection. Interval lengths are
 * whole days, so the observations are kept as counts per length (a few dozen numbers per entry,
 * whatever its age). A cohort prior Gamma(α, β) — α pseudo-changes over β pseudo-days — adds
 * α·log λ − β·λ, which shrinks an entry with few observations toward its cohort (status,
 * enterprise type, industry, capital band) and keeps the estimate finite when every interval
 * changed.
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
 */

import { cohortLevels, statusOfCohort } from '../normalize/cohort.ts';
import type { Severity } from '../terms/changes.ts';
import { daysBetween } from '../time/cycles.ts';

/** Default bound on days between two refreshes of an entry, while the budget allows. */
export const DEFAULT_MAX_STALENESS_DAYS = 30;
/** Cycles a firm is refreshed every cycle after a high-severity change. */
export const BOOST_CYCLES = 3;
/** The weight a past change brings, by severity: the mean over an entry's changes is its weight. */
export const SEVERITY_WEIGHT: Readonly<Record<Severity, number>> = { high: 3, medium: 1.5, low: 1 };
/**
 * The shape of the cohort prior, a Gamma distribution of the rates of a cohort's firms: small,
 * because rates within a cohort spread over orders of magnitude (a handful of busy firms and many
 * quiet ones). With mean m the prior is worth SHAPE/m pseudo-days: a quiet cohort's prior holds
 * longer than a busy one's, and a firm seen still for a while is soon estimated below its
 * cohort's mean, as most of its cohort is.
 */
export const PRIOR_SHAPE = 0.25;
/** The prior rate of a firm closed for good (a correction of its record, once in decades). */
export const CLOSED_PRIOR_RATE = 1e-4;
/** Pseudo-days a prior is worth at least and at most. */
export const PRIOR_MIN_DAYS = 5;
export const PRIOR_MAX_DAYS = 365;
/**
 * The pseudo-days of observation a prior of mean `rate` is worth, for a Gamma shape `shape` of the
 * spread of rates around it (PRIOR_SHAPE by default, or the learned `PlannerModel.shape`); at most
 * a year, so a firm whose habits change is not held to its cohort's for long.
 */
export function priorStrength(rate: number, shape = PRIOR_SHAPE): number {
  return Math.min(PRIOR_MAX_DAYS, Math.max(PRIOR_MIN_DAYS, shape / Math.max(MIN_RATE, rate)));
}
/** The prior rate (changes per day) when nothing is known of any cohort yet: about one change a quarter. */
export const DEFAULT_PRIOR_RATE = 0.01;
/** Pseudo-days a cohort's own pooled rate is shrunk toward its parent cohort with. */
export const COHORT_SHRINK_DAYS = 365;
/** Rates are kept in this range (per day). */
export const MIN_RATE = 1e-5;
export const MAX_RATE = 5;
/** Observations older than this half-life (days) count half: registries and firms change their habits. */
export const HALF_LIFE_DAYS = 365;
/**
 * How many of an entry's last intervals are kept as they came (`ChangeHistory.recent`), to tell
 * whether its habits have changed: a firm that was quiet for years and is now busy (or the other
 * way round) is planned at what its last intervals show, once they contradict its long record.
 */
export const RECENT_INTERVALS = 8;
/**
 * How likely it is, before its last intervals are seen, that a firm's habits have changed within
 * them: the prior of `afterShift`'s accounts, spread evenly over where the change began. Not
 * learned: the mean of the entries' posteriors (an EM step) sinks toward zero even in a watchlist
 * where a fifth of the firms swap habits, because one interval rarely proves a change; a fixed
 * prior is what keeps a planner that has learned the wrong firms from starving the right ones. In a
 * watchlist whose habits hold it costs about one refresh in a hundred (a quiet firm's chance change
 * makes its next interval shorter).
 */
export const SHIFT_PRIOR = 0.15;
/** The largest shift prior a stored model may hold. */
export const MAX_SHIFT = 0.5;
/** Longest interval kept as its own length; longer ones count as this long (a year). */
const MAX_BIN_DAYS = 365;

/** An entry's observations: counts per interval length, kept in `watchlist.change_history`. */
export interface ChangeHistory {
  /** Interval length in days → [intervals, intervals that ended with a change] (decayed counts). */
  bins: Record<string, [number, number]>;
  /** Decayed totals: intervals, intervals that ended changed, days observed. */
  n: number;
  changes: number;
  days: number;
  /** Sum of SEVERITY_WEIGHT over the changes seen, and how many (for the weight). */
  severitySum: number;
  severityN: number;
  /** The cycle of the last refresh observed: the next interval starts there. */
  cycle?: string;
  /**
   * What the registry's own approval dates (APPRDATE) tell, as Poisson exposure (decayed with the
   * rest): at the first fetch, the days back to the last approved change and whether there was
   * one since the firm was established; at a later fetch whose answer changed with a new approval
   * date inside the interval, one change and the quiet days after it (the last change's date
   * replaces the interval's "at least one change somewhere").
   */
  datedDays?: number;
  datedEvents?: number;
  /**
   * The part of datedDays/datedEvents that the first fetch's registry dates gave (decayed alike):
   * weighed by `PlannerModel.datedWeight`, as far as such dates have predicted changes. A change
   * dated inside an interval is an observation of its own and counts fully.
   */
  seedDays?: number;
  seedEvents?: number;
  /** The last approval date seen (YYYY-MM-DD). */
  approval?: string;
  /** The last interval observed ended changed: the next one is "hot" (see PlannerModel.hot). */
  lastChanged?: boolean;
  /**
   * The hot intervals (those after a changed one), decayed: how many, how many ended changed, and
   * how many were expected to at the entry's estimate when each began. Pooled over the
   * watchlist, they say whether a change makes another one likelier soon.
   */
  hot?: [number, number, number];
  /**
   * The last RECENT_INTERVALS intervals, oldest first, as [days, 1 when it ended changed else 0]
   * (a dated change counts as a changed interval): what the entry has done lately, for the shift
   * test of `estimateRate`.
   */
  recent?: [number, number][];
  /**
   * Every interval, dated or not (decayed): how many, how many ended changed, days. The bins keep
   * only the undated ones (a dated change is exposure of its own), so the watchlist's tests
   * (`addToSums`) read these.
   */
  all?: [number, number, number];
}

export function emptyHistory(): ChangeHistory {
  return { bins: {}, n: 0, changes: 0, days: 0, severitySum: 0, severityN: 0 };
}

/** Reads a stored history, tolerating null and missing parts (a row written before the planner). */
export function historyOf(stored: unknown): ChangeHistory {
  const h = emptyHistory();
  if (!stored || typeof stored !== 'object') return h;
  const s = stored as Partial<ChangeHistory>;
  if (s.bins && typeof s.bins === 'object') h.bins = binsOf(s.bins);
  for (const key of ['n', 'changes', 'days', 'severitySum', 'severityN'] as const) {
    const v = Number(s[key]);
    if (Number.isFinite(v) && v >= 0) h[key] = v;
  }
  const recent = Array.isArray(s.recent) ? recentOf(s.recent) : [];
  if (recent.length > 0) h.recent = recent;
  if (typeof s.cycle === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(s.cycle)) h.cycle = s.cycle;
  if (typeof s.approval === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(s.approval)) h.approval = s.approval;
  if (s.lastChanged === true) h.lastChanged = true;
  for (const key of ['hot', 'all'] as const) {
    const v = s[key];
    if (!Array.isArray(v) || v.length !== 3) continue;
    const [n, c, e] = v.map(Number) as [number, number, number];
    if ([n, c, e].every((x) => Number.isFinite(x) && x >= 0)) h[key] = [n, Math.min(n, c), e];
  }
  const datedDays = Number(s.datedDays);
  const datedEvents = Number(s.datedEvents);
  if (Number.isFinite(datedDays) && datedDays > 0 && Number.isFinite(datedEvents) && datedEvents >= 0) {
    h.datedDays = datedDays;
    h.datedEvents = datedEvents;
    const seedDays = Number(s.seedDays);
    const seedEvents = Number(s.seedEvents);
    if (Number.isFinite(seedDays) && seedDays >= 0 && Number.isFinite(seedEvents) && seedEvents >= 0) {
      h.seedDays = Math.min(seedDays, datedDays);
      h.seedEvents = Math.min(seedEvents, datedEvents);
    }
  }
  return h;
}

/** Stored last intervals, the malformed ones left out. */
function recentOf(stored: readonly unknown[]): [number, number][] {
  const out: [number, number][] = [];
  for (const v of stored) {
    if (!Array.isArray(v) || v.length !== 2) continue;
    const days = Number(v[0]);
    const changed = Number(v[1]);
    if (Number.isInteger(days) && days >= 1 && days <= MAX_BIN_DAYS && (changed === 0 || changed === 1))
      out.push([days, changed]);
  }
  return out.slice(-RECENT_INTERVALS);
}

/** Stored bins, the malformed ones left out. */
function binsOf(stored: object): Record<string, [number, number]> {
  const out: Record<string, [number, number]> = {};
  for (const [k, v] of Object.entries(stored)) {
    const days = Number(k);
    if (!Number.isInteger(days) || days < 1 || !Array.isArray(v)) continue;
    const [n, c] = v.map(Number);
    if (Number.isFinite(n) && Number.isFinite(c) && (n as number) > 0)
      out[k] = [n as number, Math.min(n as number, Math.max(0, c as number))];
  }
  return out;
}

const round6 = (x: number) => Math.round(x * 1e6) / 1e6;

/** Bins with every count multiplied by `decay` (the vanishing ones dropped). */
function decayBins(b: Record<string, [number, number]>, decay: number): Record<string, [number, number]> {
  const out: Record<string, [number, number]> = {};
  for (const k in b) {
    const [n, c] = b[k] as [number, number];
    const dn = round6(n * decay);
    if (dn >= 1e-3) out[k] = [dn, round6(c * decay)];
  }
  return out;
}

/** The history with every count decayed by an interval of `whole` days. */
function decayed(h: ChangeHistory, whole: number, halfLifeDays: number): ChangeHistory {
  const decay = 0.5 ** (whole / halfLifeDays);
  const bins = decayBins(h.bins, decay);
  // Built field by field: this runs once per fetch, and in the backtest millions of times.
  const d: ChangeHistory = {
    bins,
    n: round6(h.n * decay),
    changes: round6(h.changes * decay),
    days: round6(h.days * decay),
    severitySum: round6(h.severitySum * decay),
    severityN: round6(h.severityN * decay),
  };
  if (h.recent !== undefined) d.recent = h.recent;
  if (h.cycle !== undefined) d.cycle = h.cycle;
  if (h.approval !== undefined) d.approval = h.approval;
  if (h.lastChanged) d.lastChanged = true;
  if (h.hot !== undefined)
    d.hot = [round6(h.hot[0] * decay), round6(h.hot[1] * decay), round6(h.hot[2] * decay)];
  if (h.all !== undefined)
    d.all = [round6(h.all[0] * decay), round6(h.all[1] * decay), round6(h.all[2] * decay)];
  if (h.datedDays !== undefined) {
    d.datedDays = round6(h.datedDays * decay);
    d.datedEvents = round6((h.datedEvents ?? 0) * decay);
  }
  if (h.seedDays !== undefined) {
    d.seedDays = round6(h.seedDays * decay);
    d.seedEvents = round6((h.seedEvents ?? 0) * decay);
  }
  return d;
}

/** Counts one change of `severity` (low when unknown) into the history's severity mean. */
function countSeverity(d: ChangeHistory, severity: Severity | null): void {
  d.severitySum = round6(d.severitySum + SEVERITY_WEIGHT[severity ?? 'low']);
  d.severityN = round6(d.severityN + 1);
}

/**
 * What an interval showed: whether the answer changed, or that it changed with a new approval
 * date `quietDays` before the fetch (one change at a known time and no change after it).
 */
export type Interval = boolean | { quietDays: number };

/**
 * The history after one more interval of `days` days that ended as `seen` says (with the highest
 * severity of what changed). Older observations decay by HALF_LIFE_DAYS first. Pure.
 */
export function observe(
  h: ChangeHistory,
  days: number,
  seen: Interval,
  severity: Severity | null = null,
  halfLifeDays = HALF_LIFE_DAYS,
  rateBefore: number | null = null,
): ChangeHistory {
  const dated = typeof seen === 'object' ? seen.quietDays : null;
  if (!Number.isFinite(days) || days < 1 || (dated !== null && !Number.isFinite(dated))) return h;
  const whole = Math.min(MAX_BIN_DAYS, Math.round(days));
  const d = decayed(h, whole, halfLifeDays);
  // A hot interval (after a changed one) is counted with what the estimate then expected of it.
  if (h.lastChanged && rateBefore !== null && Number.isFinite(rateBefore) && rateBefore > 0) {
    const [hn, hc, he] = d.hot ?? [0, 0, 0];
    d.hot = [
      round6(hn + 1),
      round6(hc + (seen === false ? 0 : 1)),
      round6(he - Math.expm1(-rateBefore * whole)),
    ];
  }
  const [an, ac, ad] = d.all ?? [0, 0, 0];
  d.all = [round6(an + 1), round6(ac + (seen === false ? 0 : 1)), round6(ad + whole)];
  d.lastChanged = seen !== false;
  if (!d.lastChanged) delete d.lastChanged;
  d.recent = [...(d.recent ?? []), [whole, d.lastChanged ? 1 : 0] as [number, number]].slice(
    -RECENT_INTERVALS,
  );
  if (dated !== null) {
    d.datedEvents = round6((d.datedEvents ?? 0) + 1);
    d.datedDays = round6((d.datedDays ?? 0) + Math.max(0, Math.min(dated, whole)) + 0.5);
  } else {
    const changed = seen === true;
    const [n0, c0] = d.bins[String(whole)] ?? [0, 0];
    d.bins[String(whole)] = [round6(n0 + 1), round6(c0 + (changed ? 1 : 0))];
    d.n = round6(d.n + 1);
    d.changes = round6(d.changes + (changed ? 1 : 0));
    d.days = round6(d.days + whole);
    if (!changed) return d;
  }
  countSeverity(d, severity);
  return d;
}

/** A Gamma prior on the rate: `rate` changes per day, worth `strength` pseudo-days of observation. */
export interface RatePrior {
  rate: number;
  strength: number;
  /** The cohort it came from, for `plan explain`. */
  cohort?: string;
}

export const DEFAULT_PRIOR: RatePrior = {
  rate: DEFAULT_PRIOR_RATE,
  strength: priorStrength(DEFAULT_PRIOR_RATE),
  cohort: '*',
};

/**
 * The rate (changes per day) that maximises the likelihood of the observations times the prior
 * (the posterior mode). Without a prior (strength 0) it is the maximum-likelihood estimate, which
 * is infinite when every interval changed: then MAX_RATE. Deterministic: a fixed bisection.
 */
export function estimateRate(
  h: ChangeHistory,
  prior: RatePrior = DEFAULT_PRIOR,
  datedWeight = 1,
  shiftPrior = SHIFT_PRIOR,
): number {
  return estimateShift(h, prior, datedWeight, shiftPrior).rate;
}

/**
 * `estimateRate`, and how likely the entry's habits have changed lately (0 when its recent
 * intervals were not tested): the rate is the long record's, its recent intervals' or between, as
 * `afterShift` weighs them with the prior probability `shiftPrior` of a change.
 */
export function estimateShift(
  h: ChangeHistory,
  prior: RatePrior = DEFAULT_PRIOR,
  datedWeight = 1,
  shiftPrior = SHIFT_PRIOR,
): { rate: number; shift: number } {
  // The prior and the registry's own dates are both Poisson exposure: events over days (the
  // dates weighed by how far they have predicted changes in this watchlist).
  const [events, days] = datedExposure(h, datedWeight);
  const pseudo = Math.max(0, prior.strength);
  const long = posteriorMode(Math.max(0, prior.rate * pseudo) + events, pseudo + days, binsList(h.bins));
  return h.recent === undefined ? { rate: long, shift: 0 } : afterShift(long, h.recent, prior, shiftPrior);
}

type BinList = (readonly [days: number, n: number, changed: number])[];

const binsList = (b: Record<string, [number, number]>): BinList =>
  Object.entries(b).map(([k, [n, c]]) => [Number(k), n, c] as const);

/**
 * The rate that maximises Σ_bins [c·log(1 − e^(−λd)) − (n − c)·λd] + alpha·log λ − beta·λ: the
 * interval likelihood times a Gamma prior (with Poisson exposure folded into alpha and beta).
 * Deterministic: a fixed bisection on the log scale.
 */
function posteriorMode(alpha: number, beta: number, bins: BinList): number {
  let unchangedDays = beta;
  for (const [d, n, c] of bins) unchangedDays += (n - c) * d;
  // The derivative of the log posterior; strictly decreasing in λ.
  const slope = (lambda: number) => {
    let s = alpha / lambda - unchangedDays;
    for (const [d, , c] of bins) if (c > 0) s += (c * d) / Math.expm1(lambda * d);
    return s;
  };
  if (slope(MAX_RATE) >= 0) return MAX_RATE;
  if (slope(MIN_RATE) <= 0) return MIN_RATE;
  let lo = Math.log(MIN_RATE);
  let hi = Math.log(MAX_RATE);
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (slope(Math.exp(mid)) > 0) lo = mid;
    else hi = mid;
  }
  return Math.exp((lo + hi) / 2);
}

/** The rates the shift test integrates over: a grid on the log scale from MIN_RATE to MAX_RATE. */
const GRID: readonly number[] = Array.from({ length: 49 }, (_, k) =>
  Math.exp(Math.log(MIN_RATE) + (k * (Math.log(MAX_RATE) - Math.log(MIN_RATE))) / 48),
);

const logSumExp = (xs: readonly number[]) => {
  const m = Math.max(...xs);
  return m === Number.NEGATIVE_INFINITY ? m : m + Math.log(xs.reduce((a, x) => a + Math.exp(x - m), 0));
};

/**
 * The rate to plan with, given the long record's rate `long` and the last intervals (oldest
 * first): the expected rate over several accounts of them. Either the firm's habits held (every
 * last interval at `long`), or they changed before the last k of them (k = 1 … all), and those k
 * came from a fresh draw from the cohort's prior. The changes together are believed `shiftPrior`
 * before the intervals are seen (evenly over k), then as far as each explains them better (Bayes'
 * rule, each marginal likelihood integrated over a grid of rates). A quiet firm whose interval ends
 * changed is planned at once at a higher rate, and at nearly its new rate when it does so again;
 * a firm whose habits hold keeps its rate. `shift` is the posterior probability of a change.
 */
function afterShift(
  long: number,
  recent: readonly (readonly [number, number])[],
  prior: RatePrior,
  shiftPrior: number,
): { rate: number; shift: number } {
  // Without a prior (the maximum-likelihood estimate) there is no cohort to draw a new habit from.
  if (recent.length === 0 || !(shiftPrior > 0) || !(prior.strength > 0) || !(prior.rate > 0))
    return { rate: long, shift: 0 };
  const p = Math.min(MAX_SHIFT, shiftPrior);
  const shape = prior.rate * prior.strength;
  const logPrior = GRID.map((l) => shape * Math.log(l) - prior.strength * l);
  const logZ = logSumExp(logPrior);
  const joint = [...logPrior];
  // Account 0: habits held. Account k: a change before the last k intervals.
  const weights = [Math.log(1 - p)];
  const means = [long];
  let held = 0;
  for (let k = recent.length - 1; k >= 0; k--) {
    const [days, changed] = recent[k] as readonly [number, number];
    const at = (l: number) =>
      changed === 1 ? Math.log(Math.max(1e-300, -Math.expm1(-l * days))) : -l * days;
    for (let g = 0; g < GRID.length; g++) joint[g] = (joint[g] as number) + at(GRID[g] as number);
    held += at(long);
    const top = logSumExp(joint);
    weights.push(Math.log(p / recent.length) + top - logZ - held);
    let mean = 0;
    for (let g = 0; g < GRID.length; g++) mean += (GRID[g] as number) * Math.exp((joint[g] as number) - top);
    means.push(mean);
  }
  const all = logSumExp(weights);
  let rate = 0;
  for (const [k, w] of weights.entries()) rate += Math.exp(w - all) * (means[k] as number);
  return {
    rate: Math.min(MAX_RATE, Math.max(MIN_RATE, rate)),
    shift: 1 - Math.exp((weights[0] as number) - all),
  };
}

/** The registry dates' events and days, the first fetch's part weighed by `datedWeight` (0 … 1). */
export function datedExposure(
  h: Pick<ChangeHistory, 'datedDays' | 'datedEvents' | 'seedDays' | 'seedEvents'>,
  datedWeight: number,
): [number, number] {
  const off = 1 - Math.min(1, Math.max(0, datedWeight));
  return [
    Math.max(0, (h.datedEvents ?? 0) - off * (h.seedEvents ?? 0)),
    Math.max(0, (h.datedDays ?? 0) - off * (h.seedDays ?? 0)),
  ];
}

/** The entry's weight from the severity of its past changes: 1 (none, or all low) to 3 (all high). */
export function weightOf(h: ChangeHistory): number {
  // One pseudo-change of low severity keeps a single change from swinging the weight to 3.
  return (SEVERITY_WEIGHT.low + h.severitySum) / (1 + h.severityN);
}

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

/**
 * A status after which a registry record no longer changes: cancelled (注销, 吊销，已注销),
 * revoked by the registry (撤销), moved out of the registry's area (迁出). A revoked firm not yet
 * cancelled (吊销，未注销) still changes. Such a firm gets no boost, and its observations from
 * before are forgotten: the living firm's habits say nothing of the closed one, whose cohort
 * (closed firms, which do not change) speaks for it.
 */
export function isClosedStatus(status: string | null): boolean {
  if (status === null) return false;
  const s = status.trim();
  if (/未注销/.test(s)) return false;
  return /已注销|^注销|撤销|迁出|^cancel+ed|^deregistered|^moved out/i.test(s);
}

/** What the planner keeps of an entry between two refreshes. */
export interface EntryState {
  history: ChangeHistory;
  /** Cycles of boost left. */
  boost: number;
  cohort: string | null;
  /** The entry's estimate before this refresh (changes per day), when it has one: for the hot counts. */
  rate?: number | null;
}

/** What a successful refresh saw, for the estimate. */
export interface RefreshSeen {
  cycle: string;
  /** The answer differed from the stored version. */
  changed: boolean;
  /** The highest severity of what changed. */
  severity: Severity | null;
  /** The enterprise's cohort now (cohortKey), or null when unknown. */
  cohort: string | null;
  /** False when the answer was older than what was stored: it says nothing of the interval. */
  usable: boolean;
  /** The record's last approval date (APPRDATE) and establishment date (ESDATE), YYYY-MM-DD. */
  lastApproval?: string | null;
  established?: string | null;
}

/** The YYYY-MM-DD date at the start of a registry date or time, or null. */
function dateOf(s: string | null | undefined): string | null {
  return s && /^\d{4}-\d{2}-\d{2}/.test(s) ? s.slice(0, 10) : null;
}

/** The longest stretch of registry dates a first fetch counts (older habits say little). */
export const SEED_MAX_DAYS = 3 * 365;

/**
 * What a first fetch learns from the registry's own dates: the last approved change was
 * `days` ago (a busy firm's is recent: the time back to the last event of a process of rate λ
 * is exponential, mean 1/λ), or the firm has had none since it was established.
 */
export function seedOf(
  cycle: string,
  lastApproval: string | null | undefined,
  established: string | null | undefined,
): { datedDays: number; datedEvents: number } | null {
  const appr = dateOf(lastApproval);
  if (appr === null) return null;
  const days = daysBetween(appr, cycle);
  if (!(days >= 0)) return null;
  const es = dateOf(established);
  const changed = es === null || appr > es;
  // Half a day for the day of the approval itself: a change approved yesterday is 1.5 days of
  // quiet, not 1.
  return {
    datedDays: Math.min(SEED_MAX_DAYS, days + 0.5),
    datedEvents: changed && days < SEED_MAX_DAYS ? 1 : 0,
  };
}

/**
 * An entry's state after a successful refresh in `seen.cycle`; `since` is the cycle of its
 * previous one (null for a first fetch). The interval between them is observed, the boost moves,
 * and a firm that has just closed for good forgets the habits of its living years (the interval
 * that closed it included). Pure: a worker and the backtest both run it.
 */
export function afterRefresh(state: EntryState, seen: RefreshSeen, since: string | null): EntryState {
  const cohort = seen.cohort ?? state.cohort;
  const closed = isClosedStatus(statusOfCohort(cohort));
  let history = state.history;
  let boost = state.boost;
  if (closed && !isClosedStatus(statusOfCohort(state.cohort))) {
    history = emptyHistory();
  } else if (since === null && seen.usable) {
    const seed = seedOf(seen.cycle, seen.lastApproval, seen.established);
    if (seed && history.datedDays === undefined)
      history = { ...history, ...seed, seedDays: seed.datedDays, seedEvents: seed.datedEvents };
    if (seen.changed && seen.severity === 'high') boost = nextBoost(boost, true);
  } else if (seen.usable && since !== null && daysBetween(since, seen.cycle) >= 1) {
    const days = daysBetween(since, seen.cycle);
    // A change the registry dated inside the interval (its approval date moved, on or after the
    // registry date of the interval's first refresh): its date is known.
    const approval = dateOf(seen.lastApproval);
    const dated =
      seen.changed &&
      approval !== null &&
      history.approval !== undefined &&
      approval > history.approval &&
      approval >= since &&
      approval < seen.cycle;
    const before = state.rate ?? null;
    history = dated
      ? observe(
          history,
          days,
          { quietDays: daysBetween(approval as string, seen.cycle) - 1 },
          seen.severity,
          HALF_LIFE_DAYS,
          before,
        )
      : observe(history, days, seen.changed, seen.severity, HALF_LIFE_DAYS, before);
    boost = nextBoost(boost, seen.changed && seen.severity === 'high');
  } else if (seen.usable && seen.changed && seen.severity === 'high') {
    boost = nextBoost(boost, true);
  }
  if (closed) boost = 0;
  if (seen.usable) {
    const approval = dateOf(seen.lastApproval);
    history = { ...history, cycle: seen.cycle, ...(approval === null ? {} : { approval }) };
  }
  return { history, boost, cohort };
}

// ---------------------------------------------------------------------------------------------
// Cohorts.

/** Pooled observations of the entries of one (full) cohort. */
export interface CohortObservations {
  cohort: string;
  entries: number;
  n: number;
  changes: number;
  days: number;
  /** Registry-date exposure (ChangeHistory.datedDays/datedEvents), and the first fetches' part of it. */
  datedDays?: number;
  datedEvents?: number;
  seedDays?: number;
  seedEvents?: number;
}

export interface CohortPrior {
  cohort: string;
  entries: number;
  /** Pooled rate, shrunk toward the parent level's. */
  rate: number;
  /** Days observed in it. */
  days: number;
}

/** Observations summed over entries: what a cohort level pools (the registry-date parts always present). */
export interface ObservationSums {
  entries: number;
  n: number;
  changes: number;
  days: number;
  datedDays: number;
  datedEvents: number;
  seedDays: number;
  seedEvents: number;
}

/** No observations yet. */
export const noObservations = (): ObservationSums => ({
  entries: 0,
  n: 0,
  changes: 0,
  days: 0,
  datedDays: 0,
  datedEvents: 0,
  seedDays: 0,
  seedEvents: 0,
});

/**
 * The pooled rate of a set of observations, as events over days of exposure: intervals count the
 * changes they most likely held (−n·ln(1 − p) for a share p of n intervals ending changed, which
 * counts several changes in one interval), registry dates count as they are. Null when there is
 * nothing to pool.
 */
function pooledRate(s: Omit<ObservationSums, 'entries'>, datedWeight: number): number | null {
  const [dEvents, dDays] = datedExposure(s, datedWeight);
  const exposure = s.days + dDays;
  if (exposure <= 0) return null;
  let events = dEvents;
  if (s.n > 0) {
    const p = Math.min(s.changes / s.n, 1 - 1 / (2 * s.n + 2));
    events += -s.n * Math.log1p(-p);
  }
  return Math.max(MIN_RATE, Math.min(MAX_RATE, events / exposure));
}

/**
 * The prior of every cohort level from the pooled observations of the full cohorts: each level's
 * rate is shrunk toward its parent's by COHORT_SHRINK_DAYS pseudo-days, so a cohort seen for a
 * few days says little and a well-observed one speaks for itself. Deterministic.
 */
export function cohortPriors(rows: readonly CohortObservations[], datedWeight = 1): Map<string, CohortPrior> {
  const sums = new Map<string, ObservationSums>();
  for (const r of rows) {
    for (const level of cohortLevels(r.cohort)) {
      const s = sums.get(level) ?? noObservations();
      s.entries += r.entries;
      s.n += r.n;
      s.changes += r.changes;
      s.days += r.days;
      s.datedDays += r.datedDays ?? 0;
      s.datedEvents += r.datedEvents ?? 0;
      s.seedDays += r.seedDays ?? 0;
      s.seedEvents += r.seedEvents ?? 0;
      sums.set(level, s);
    }
  }
  const out = new Map<string, CohortPrior>();
  const depthOf = new Map<string, number>();
  for (const k of sums.keys()) depthOf.set(k, k === '*' ? 0 : k.split('|').length);
  const depth = (k: string) => depthOf.get(k) as number;
  const levels = [...sums.keys()].sort((a, b) => depth(a) - depth(b) || (a < b ? -1 : a > b ? 1 : 0));
  for (const level of levels) {
    const s = sums.get(level) as ObservationSums;
    const parentKey = cohortLevels(level)[1];
    const parentRate =
      level === '*' ? DEFAULT_PRIOR_RATE : (out.get(parentKey ?? '*')?.rate ?? DEFAULT_PRIOR_RATE);
    const own = pooledRate(s, datedWeight);
    const exposure = s.days + datedExposure(s, datedWeight)[1];
    const rate =
      own === null
        ? parentRate
        : (own * exposure + parentRate * COHORT_SHRINK_DAYS) / (exposure + COHORT_SHRINK_DAYS);
    out.set(level, { cohort: level, entries: s.entries, rate, days: exposure });
  }
  return out;
}

/** The prior for an entry of cohort `key`: its most specific known level (or the default). */
export function priorFor(
  key: string | null,
  priors: ReadonlyMap<string, CohortPrior>,
  shape = PRIOR_SHAPE,
): RatePrior {
  // A closed firm's record no longer changes: a registry fact, not something to learn.
  const status = statusOfCohort(key);
  if (isClosedStatus(status))
    return { rate: CLOSED_PRIOR_RATE, strength: PRIOR_MAX_DAYS, cohort: status ?? '*' };
  for (const level of key === null ? ['*'] : cohortLevels(key)) {
    const p = priors.get(level);
    if (p) return { rate: p.rate, strength: priorStrength(p.rate, shape), cohort: level };
  }
  return shape === PRIOR_SHAPE
    ? DEFAULT_PRIOR
    : { ...DEFAULT_PRIOR, strength: priorStrength(DEFAULT_PRIOR_RATE, shape) };
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
  model: Pick<PlannerModel, 'equal' | 'rate'>,
): number {
  if (model.equal < 1) return calibrateScale(buckets, perDay * SCALE_FILL, maxDays);
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
  return {
    shape: num(s.shape, INITIAL_MODEL.shape, MIN_SHAPE, MAX_SHAPE),
    equal: num(s.equal, INITIAL_MODEL.equal, 0, 1),
    rate: num(s.rate, INITIAL_MODEL.rate, MIN_RATE, MAX_RATE),
    datedWeight: num(s.datedWeight, INITIAL_MODEL.datedWeight, 0, 1),
    hot: num(s.hot, INITIAL_MODEL.hot, 1, MAX_HOT),
    boost: typeof s.boost === 'boolean' ? s.boost : INITIAL_MODEL.boost,
    tailDays: num(s.tailDays, INITIAL_MODEL.tailDays, 1, Number.POSITIVE_INFINITY),
    shift: num(s.shift, INITIAL_MODEL.shift, 0, MAX_SHIFT),
  };
}

/**
 * The rate an entry is planned at for its coming interval: its estimate, pulled toward the
 * watchlist's mean as far as the model's `equal` says (geometrically: at 1 every entry is planned
 * at the mean, and the intervals are round robin's exactly), and hot after a change unless every
 * entry is held alike.
 */
export function shortTermRate(
  rate: number,
  h: Pick<ChangeHistory, 'lastChanged'>,
  model: PlannerModel,
): number {
  const e = Math.min(1, Math.max(0, model.equal));
  const r =
    e === 0
      ? rate
      : Math.exp((1 - e) * Math.log(Math.max(MIN_RATE, rate)) + e * Math.log(Math.max(MIN_RATE, model.rate)));
  return h.lastChanged && e < 1 ? r * model.hot : r;
}

/** The weight an entry is planned at: its own, pulled to 1 as far as the model's `equal` says. */
export function plannedWeight(weight: number, model: PlannerModel): number {
  const e = Math.min(1, Math.max(0, model.equal));
  return e === 0 ? weight : weight ** (1 - e);
}

/** One entry's part of what the model is learned from (`addToSums`). */
export interface ModelRow {
  history: ChangeHistory;
  /** The rate of its cohort's prior. */
  cohortRate: number;
  /** The whole watchlist's rate from its intervals alone (`intervalRate`): the centre of the test for `equal`. */
  watchlistRate?: number;
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
}

export function emptySums(): ModelSums {
  return { r2: 0, v: 0, v2: 0, d2: 0, a: [0, 0, 0, 0, 0], b: [0, 0, 0, 0, 0], hot: [0, 0, 0], g: [0, 0, 0] };
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
 * The weight from which the registry dates are trusted as evidence that rates differ (the test for
 * `equal` then also runs around the cohorts' rates, which the first fetches' dates help set).
 */
export const DATES_TRUSTED = 0.5;

/** An approval this recent (days) puts an entry in the "recent" group of the dates' test. */
export const RECENT_APPROVAL_DAYS = 365;

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
    s.r2 += (changes - e) ** 2;
    s.v += v;
    s.v2 += 2 * v * v + v * (1 - 6 * q * (1 - q));
    s.d2 += d * d;
    if (row.watchlistRate !== undefined) {
      const gq = Math.exp(-Math.max(MIN_RATE, row.watchlistRate) * length);
      const gv = n * (1 - gq) * gq;
      s.g[0] += (changes - n * (1 - gq)) ** 2;
      s.g[1] += gv;
      s.g[2] += 2 * gv * gv + gv * (1 - 6 * gq * (1 - gq));
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
  const gsd = Math.sqrt(Math.max(0, s.g[2]));
  const cohortZ = sd > 0 ? (s.r2 - s.v) / sd : 0;
  const globalZ = gsd > 0 ? (s.g[0] - s.g[1]) / gsd : 0;
  let datedWeight = INITIAL_MODEL.datedWeight;
  let datesTested = false;
  const rateOf = (g: readonly number[]) =>
    intervalRate(g[0] as number, g[1] as number, g[2] as number) as number;
  if (s.a[0] >= 100 && s.b[0] >= 100 && s.a[1] >= 5 && s.b[1] >= 5 && s.a[4] > 0 && s.b[4] > 0) {
    const observed = Math.log(rateOf(s.a) / rateOf(s.b));
    const said = Math.log(s.a[3] / s.a[4] / Math.max(1e-9, s.b[3] / s.b[4]));
    datedWeight = said > 0 ? Math.min(1, Math.max(0, observed / said)) : 0;
    datesTested = true;
  }
  // Around the cohorts' rates the test also sees how far the first fetches' approval dates
  // disagree with the intervals: evidence that rates differ only where such dates are known to
  // follow the changes. Until then the test is around the watchlist's own interval rate alone.
  const z = datesTested && datedWeight >= DATES_TRUSTED ? Math.max(cohortZ, globalZ) : globalZ;
  const excess = s.r2 - s.v - EVIDENCE_Z * sd;
  const shape = excess <= 0 ? MAX_SHAPE : Math.min(MAX_SHAPE, Math.max(MIN_SHAPE, s.d2 / excess));
  const equal = Math.min(1, Math.max(0, (STRONG_Z - z) / (STRONG_Z - EVIDENCE_Z)));
  // Hot only when the intervals after a change ended changed clearly more often than expected.
  const [, hc, he] = s.hot;
  const hot = he >= 5 && hc - he > EVIDENCE_Z * Math.sqrt(he) ? Math.min(MAX_HOT, hc / he) : 1;
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
  };
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

/** What the plan job learns from the whole watchlist for the cycles that follow. */
export interface LearnedPlan {
  priors: Map<string, CohortPrior>;
  /** The model, `tailDays` set to the longest interval planned. */
  model: PlannerModel;
  buckets: ScaleBucket[];
  scale: number;
}

/**
 * The bucket of one entry's √(w·λ) as the model plans it (`shortTermRate`, `plannedWeight`): in
 * 1/16 of a natural log of it (about 6%). The plan job's SQL computes the same (src/plan/store.ts).
 */
export function bucketOf(rate: number, weight: number, lastChanged: boolean, model: PlannerModel): number {
  const planned =
    plannedWeight(Math.max(1e-6, weight), model) *
    shortTermRate(Math.max(MIN_RATE, rate), { lastChanged }, model);
  return Math.round(8 * Math.log(Math.max(1e-9, planned)));
}

/**
 * The plan job's learning step over every active entry, in memory: the cohorts' priors (the
 * registry dates weighed as the `previous` model found they predict), the model (`adjust` may
 * change it, as the backtest's ablation does), every entry's bucket, the tail bound (unless the
 * model turns it off with an infinite `tailDays`) and the scale for `perDay` refreshes a day.
 * src/plan/store.ts does the same with aggregates in SQL; a test holds the two together.
 */
export function learnPlanner(
  entries: readonly LearnEntry[],
  perDay: number,
  maxStalenessDays: number,
  previous: Pick<PlannerModel, 'datedWeight'>,
  adjust: (learned: PlannerModel) => PlannerModel = (m) => m,
): LearnedPlan {
  const pooled = new Map<string, CohortObservations>();
  // Every interval of the entries in a cohort, for the watchlist's own rate.
  let [gn, gc, gd] = [0, 0, 0];
  for (const e of entries) {
    if (e.cohort === null) continue;
    const [n, c, d] = e.history.all ?? [0, 0, 0];
    gn += n;
    gc += c;
    gd += d;
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
  const sums = emptySums();
  const watchlistRate = intervalRate(gn, gc, gd) ?? undefined;
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
    });
  }
  const model = { ...adjust(learnModel(sums, maxStalenessDays, everyone)) };
  const counts = new Map<number, number>();
  for (const e of entries) {
    const b = bucketOf(e.rate ?? everyone, e.weight, e.history.lastChanged === true, model);
    counts.set(b, (counts.get(b) ?? 0) + 1);
  }
  const buckets = [...counts].map(([b, k]) => ({ root: Math.exp(b / 16), entries: k }));
  model.tailDays = Number.isFinite(model.tailDays)
    ? tailDays(buckets, perDay, maxStalenessDays)
    : maxStalenessDays;
  return { priors, model, buckets, scale: plannedScale(buckets, perDay, model.tailDays, model) };
}
