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
/** The pseudo-days of observation a prior of mean `rate` is worth. */
export function priorStrength(rate: number): number {
  return Math.min(PRIOR_MAX_DAYS, Math.max(PRIOR_MIN_DAYS, PRIOR_SHAPE / Math.max(MIN_RATE, rate)));
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
  /** The last approval date seen (YYYY-MM-DD). */
  approval?: string;
}

export function emptyHistory(): ChangeHistory {
  return { bins: {}, n: 0, changes: 0, days: 0, severitySum: 0, severityN: 0 };
}

/** Reads a stored history, tolerating null and missing parts (a row written before the planner). */
export function historyOf(stored: unknown): ChangeHistory {
  const h = emptyHistory();
  if (!stored || typeof stored !== 'object') return h;
  const s = stored as Partial<ChangeHistory>;
  if (s.bins && typeof s.bins === 'object') {
    for (const [k, v] of Object.entries(s.bins)) {
      const days = Number(k);
      if (!Number.isInteger(days) || days < 1 || !Array.isArray(v)) continue;
      const [n, c] = v.map(Number);
      if (Number.isFinite(n) && Number.isFinite(c) && (n as number) > 0)
        h.bins[k] = [n as number, Math.min(n as number, Math.max(0, c as number))];
    }
  }
  for (const key of ['n', 'changes', 'days', 'severitySum', 'severityN'] as const) {
    const v = Number(s[key]);
    if (Number.isFinite(v) && v >= 0) h[key] = v;
  }
  if (typeof s.cycle === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(s.cycle)) h.cycle = s.cycle;
  if (typeof s.approval === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(s.approval)) h.approval = s.approval;
  const datedDays = Number(s.datedDays);
  const datedEvents = Number(s.datedEvents);
  if (Number.isFinite(datedDays) && datedDays > 0 && Number.isFinite(datedEvents) && datedEvents >= 0) {
    h.datedDays = datedDays;
    h.datedEvents = datedEvents;
  }
  return h;
}

const round6 = (x: number) => Math.round(x * 1e6) / 1e6;

/** The history with every count decayed by an interval of `whole` days. */
function decayed(h: ChangeHistory, whole: number, halfLifeDays: number): ChangeHistory {
  const decay = 0.5 ** (whole / halfLifeDays);
  const bins: ChangeHistory['bins'] = {};
  for (const [k, [n, c]] of Object.entries(h.bins)) {
    const dn = round6(n * decay);
    if (dn >= 1e-3) bins[k] = [dn, round6(c * decay)];
  }
  return {
    ...(h.cycle === undefined ? {} : { cycle: h.cycle }),
    ...(h.approval === undefined ? {} : { approval: h.approval }),
    ...(h.datedDays === undefined
      ? {}
      : { datedDays: round6(h.datedDays * decay), datedEvents: round6((h.datedEvents ?? 0) * decay) }),
    bins,
    n: round6(h.n * decay),
    changes: round6(h.changes * decay),
    days: round6(h.days * decay),
    severitySum: round6(h.severitySum * decay),
    severityN: round6(h.severityN * decay),
  };
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
): ChangeHistory {
  const dated = typeof seen === 'object' ? seen.quietDays : null;
  if (!Number.isFinite(days) || days < 1 || (dated !== null && !Number.isFinite(dated))) return h;
  const whole = Math.min(MAX_BIN_DAYS, Math.round(days));
  const d = decayed(h, whole, halfLifeDays);
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
export function estimateRate(h: ChangeHistory, prior: RatePrior = DEFAULT_PRIOR): number {
  // The prior and the registry's own dates are both Poisson exposure: events over days.
  const alpha = Math.max(0, prior.rate * prior.strength) + (h.datedEvents ?? 0);
  const beta = Math.max(0, prior.strength) + (h.datedDays ?? 0);
  const bins = Object.entries(h.bins).map(([k, [n, c]]) => [Number(k), n, c] as const);
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
    if (seed && history.datedDays === undefined) history = { ...history, ...seed };
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
    history = dated
      ? observe(history, days, { quietDays: daysBetween(approval as string, seen.cycle) - 1 }, seen.severity)
      : observe(history, days, seen.changed, seen.severity);
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

/** The status part of a cohort key. */
export function statusOfCohort(key: string | null): string | null {
  if (key === null) return null;
  const s = key.split('|')[0];
  return s === undefined || s === '?' ? null : s;
}

// ---------------------------------------------------------------------------------------------
// Cohorts.

/** What a cohort is read from: the current version of the enterprise. */
export interface CohortFacts {
  entStatus: string | null;
  entTypeCode: string | null;
  industryPhy: string | null;
  /** Registered capital in whole currency units, a decimal string. */
  capitalAmount: string | null;
}

/** Capital bands, by powers of ten of the registered capital (currency units). */
export function capitalBand(amount: string | null): string {
  const v = amount === null ? Number.NaN : Number(amount);
  if (!Number.isFinite(v) || v <= 0) return '?';
  const e = Math.floor(Math.log10(v));
  if (e < 5) return '<1e5';
  if (e >= 9) return '1e9+';
  return `1e${e}`;
}

/** The cohort key `status|type|industry|capital`: the enterprise type by its first two digits. */
export function cohortKey(f: CohortFacts): string {
  const clean = (s: string | null) => (s ?? '').replace(/[|\s]/g, '') || '?';
  return [
    clean(f.entStatus),
    clean(f.entTypeCode?.slice(0, 2) ?? null),
    clean(f.industryPhy),
    capitalBand(f.capitalAmount),
  ].join('|');
}

/** The levels of a cohort key, most specific first: a|b|c|d, a|b, a, and '*' (everyone). */
export function cohortLevels(key: string): string[] {
  const parts = key.split('|');
  const levels = [key];
  if (parts.length >= 2) levels.push(parts.slice(0, 2).join('|'));
  if (parts.length >= 1 && parts[0] !== key) levels.push(parts[0] as string);
  levels.push('*');
  return [...new Set(levels)];
}

/** Pooled observations of the entries of one (full) cohort. */
export interface CohortObservations {
  cohort: string;
  entries: number;
  n: number;
  changes: number;
  days: number;
  /** Registry-date exposure of their first fetches (ChangeHistory.datedDays/datedEvents). */
  datedDays?: number;
  datedEvents?: number;
}

export interface CohortPrior {
  cohort: string;
  entries: number;
  /** Pooled rate, shrunk toward the parent level's. */
  rate: number;
  /** Days observed in it. */
  days: number;
}

/**
 * The pooled rate of a set of observations, as events over days of exposure: intervals count the
 * changes they most likely held (−n·ln(1 − p) for a share p of n intervals ending changed, which
 * counts several changes in one interval), registry dates count as they are. Null when there is
 * nothing to pool.
 */
function pooledRate(s: {
  n: number;
  changes: number;
  days: number;
  datedDays: number;
  datedEvents: number;
}): number | null {
  const exposure = s.days + s.datedDays;
  if (exposure <= 0) return null;
  let events = s.datedEvents;
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
export function cohortPriors(rows: readonly CohortObservations[]): Map<string, CohortPrior> {
  type Sum = {
    entries: number;
    n: number;
    changes: number;
    days: number;
    datedDays: number;
    datedEvents: number;
  };
  const sums = new Map<string, Sum>();
  for (const r of rows) {
    for (const level of cohortLevels(r.cohort)) {
      const s = sums.get(level) ?? { entries: 0, n: 0, changes: 0, days: 0, datedDays: 0, datedEvents: 0 };
      s.entries += r.entries;
      s.n += r.n;
      s.changes += r.changes;
      s.days += r.days;
      s.datedDays += r.datedDays ?? 0;
      s.datedEvents += r.datedEvents ?? 0;
      sums.set(level, s);
    }
  }
  const out = new Map<string, CohortPrior>();
  const depth = (k: string) => (k === '*' ? 0 : k.split('|').length);
  const levels = [...sums.keys()].sort((a, b) => depth(a) - depth(b) || (a < b ? -1 : a > b ? 1 : 0));
  for (const level of levels) {
    const s = sums.get(level) as Sum;
    const parentKey = cohortLevels(level)[1];
    const parentRate =
      level === '*' ? DEFAULT_PRIOR_RATE : (out.get(parentKey ?? '*')?.rate ?? DEFAULT_PRIOR_RATE);
    const own = pooledRate(s);
    const exposure = s.days + s.datedDays;
    const rate =
      own === null
        ? parentRate
        : (own * exposure + parentRate * COHORT_SHRINK_DAYS) / (exposure + COHORT_SHRINK_DAYS);
    out.set(level, { cohort: level, entries: s.entries, rate, days: exposure });
  }
  return out;
}

/** The prior for an entry of cohort `key`: its most specific known level (or the default). */
export function priorFor(key: string | null, priors: ReadonlyMap<string, CohortPrior>): RatePrior {
  // A closed firm's record no longer changes: a registry fact, not something to learn.
  const status = statusOfCohort(key);
  if (isClosedStatus(status))
    return { rate: CLOSED_PRIOR_RATE, strength: PRIOR_MAX_DAYS, cohort: status ?? '*' };
  for (const level of key === null ? ['*'] : cohortLevels(key)) {
    const p = priors.get(level);
    if (p) return { rate: p.rate, strength: priorStrength(p.rate), cohort: level };
  }
  return DEFAULT_PRIOR;
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
