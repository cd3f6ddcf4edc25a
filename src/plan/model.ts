/**
 * The model of change the planner's estimates rest on, and an entry's observations under it.
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
 * This file holds the model's constants, an entry's observations (`ChangeHistory`: read from its
 * stored form by `historyOf`, one more interval added by `observe`), the prior's type and
 * strength, and the exposure the registry's own dates bring. The estimate itself is
 * src/plan/estimate.ts, the test for changed habits src/plan/shift-test.ts, the due time
 * src/plan/due.ts, and what the watchlist as a whole teaches src/plan/learn.ts.
 */

import type { Severity } from '../terms/changes.ts';

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
   * The intervals that began right after a wake (`isWaking`: the last interval ended changed after
   * a silence of SILENT_INTERVALS unchanged ones), decayed like `hot`: how many, how many ended
   * changed, and how many were expected to at the entry's estimate when each began. Pooled over
   * the watchlist, they say whether a firm that leaves its quiet goes on changing more than its
   * estimate says (PlannerModel.wake).
   */
  woke?: [number, number, number];
  /**
   * Whether the estimates predict (PlannerModel.trust): the intervals that began while the entry's
   * estimate (resting on TRUST_MIN_INTERVALS intervals or more) was below the watchlist's mean rate
   * (quiet) and the others (busy), decayed: for each
   * group, how many, how many ended changed, the changes its estimates expected (Σ λ·days) and the
   * days, as [quiet …4, busy …4].
   */
  calib?: [number, number, number, number, number, number, number, number];
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
  for (const key of ['hot', 'woke', 'all'] as const) {
    const v = s[key];
    if (!Array.isArray(v) || v.length !== 3) continue;
    const [n, c, e] = v.map(Number) as [number, number, number];
    if ([n, c, e].every((x) => Number.isFinite(x) && x >= 0)) h[key] = [n, Math.min(n, c), e];
  }
  if (Array.isArray(s.calib) && s.calib.length === 8) {
    const c = s.calib.map(Number);
    if (c.every((x) => Number.isFinite(x) && x >= 0)) h.calib = c as typeof h.calib;
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
  if (h.calib !== undefined) d.calib = h.calib.map((x) => round6(x * decay)) as typeof h.calib;
  if (h.woke !== undefined)
    d.woke = [round6(h.woke[0] * decay), round6(h.woke[1] * decay), round6(h.woke[2] * decay)];
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
  meanBefore: number | null = null,
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
  // Every interval of an entry estimated from a few of its own, quiet or busy by the estimate
  // against the watchlist's mean when it began.
  if (
    (h.all?.[0] ?? 0) >= TRUST_MIN_INTERVALS &&
    rateBefore !== null &&
    meanBefore !== null &&
    Number.isFinite(rateBefore) &&
    Number.isFinite(meanBefore) &&
    rateBefore > 0 &&
    meanBefore > 0
  ) {
    const c = [...(d.calib ?? [0, 0, 0, 0, 0, 0, 0, 0])] as NonNullable<ChangeHistory['calib']>;
    const k = rateBefore < meanBefore ? 0 : 4;
    const add = [1, seen === false ? 0 : 1, rateBefore * whole, whole];
    for (let j = 0; j < 4; j++) c[k + j] = round6((c[k + j] as number) + (add[j] as number));
    d.calib = c;
  }
  // So is an interval right after a wake, apart.
  if (isWaking(h) && rateBefore !== null && Number.isFinite(rateBefore) && rateBefore > 0) {
    const [qn, qc, qe] = d.woke ?? [0, 0, 0];
    d.woke = [
      round6(qn + 1),
      round6(qc + (seen === false ? 0 : 1)),
      round6(qe - Math.expm1(-rateBefore * whole)),
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

/**
 * The intervals an entry needs behind its estimate before its next ones count in the test of
 * whether the estimates predict (ChangeHistory.calib): a first estimate is mostly its cohort's.
 */
export const TRUST_MIN_INTERVALS = 3;

/** Intervals in a row that ended unchanged before a changed one for an entry to count as waking (`isWaking`). */
export const SILENT_INTERVALS = 3;

/**
 * The entry's last interval ended changed after SILENT_INTERVALS that ended unchanged: it has
 * just left a quiet spell, and its next interval is one after a wake (ChangeHistory.woke,
 * PlannerModel.wake).
 */
export function isWaking(h: Pick<ChangeHistory, 'recent'>): boolean {
  const r = h.recent;
  if (r === undefined || r.length < SILENT_INTERVALS + 1) return false;
  if ((r[r.length - 1] as [number, number])[1] !== 1) return false;
  for (let k = r.length - 1 - SILENT_INTERVALS; k < r.length - 1; k++)
    if ((r[k] as [number, number])[1] !== 0) return false;
  return true;
}

/** A Gamma prior on the rate: `rate` changes per day, worth `strength` pseudo-days of observation. */
export interface RatePrior {
  rate: number;
  strength: number;
  /** The cohort it came from, for `plan explain`. */
  cohort?: string;
  /**
   * The learned spread of rates relative to `rate` (src/plan/spread.ts, PlannerModel.spread): an
   * entry with intervals of its own is estimated through it. Absent: the Gamma prior alone.
   */
  spread?: readonly number[];
}

export const DEFAULT_PRIOR: RatePrior = {
  rate: DEFAULT_PRIOR_RATE,
  strength: priorStrength(DEFAULT_PRIOR_RATE),
  cohort: '*',
};

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
