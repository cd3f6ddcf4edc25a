/**
 * How often a watched enterprise changes, estimated from its own observations (src/plan/model.ts
 * holds the model and the observations): the posterior mode of its rate under its cohort's prior
 * (`estimateRate`, `estimateShift`, which runs the test for changed habits of
 * src/plan/shift-test.ts), the entry's weight, what the planner keeps of an entry after each
 * refresh (`afterRefresh`, with the registry dates a first fetch seeds it with), and the cohorts'
 * priors (`cohortPriors`, `priorFor`).
 */

import { cohortLevels, statusOfCohort } from '../normalize/cohort.ts';
import type { Severity } from '../terms/changes.ts';
import { cycleStart, daysBetween } from '../time/cycles.ts';
import { dueAfter, nextBoost, type PlannerModel, plannedWeight, shortTermRate } from './due.ts';
import {
  type ChangeHistory,
  CLOSED_PRIOR_RATE,
  COHORT_SHRINK_DAYS,
  DEFAULT_PRIOR,
  DEFAULT_PRIOR_RATE,
  datedExposure,
  emptyHistory,
  HALF_LIFE_DAYS,
  MAX_RATE,
  MIN_RATE,
  observe,
  PRIOR_MAX_DAYS,
  PRIOR_SHAPE,
  priorStrength,
  type RatePrior,
  SEVERITY_WEIGHT,
} from './model.ts';
import { afterShift, SHIFT_PRIOR } from './shift-test.ts';
import { hasIntervals, type Spread, spreadMean } from './spread.ts';

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
  // Through the watchlist's learned spread, once the entry has intervals of its own: its posterior
  // mean, where the firms' rates are known to sit (src/plan/spread.ts).
  const long =
    prior.spread !== undefined && hasIntervals(h)
      ? spreadMean(h, prior.rate, datedWeight, prior.spread)
      : posteriorMode(Math.max(0, prior.rate * pseudo) + events, pseudo + days, binsList(h.bins));
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

/** The entry's weight from the severity of its past changes: 1 (none, or all low) to 3 (all high). */
export function weightOf(h: ChangeHistory): number {
  // One pseudo-change of low severity keeps a single change from swinging the weight to 3.
  return (SEVERITY_WEIGHT.low + h.severitySum) / (1 + h.severityN);
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
  /** The watchlist's mean rate (PlannerModel.rate) when that estimate was made: for the trust counts. */
  mean?: number | null;
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
          state.mean ?? null,
        )
      : observe(history, days, seen.changed, seen.severity, HALF_LIFE_DAYS, before, state.mean ?? null);
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

/** What an entry is planned at until its next refresh: its estimate, its weight and its next due time. */
export interface EntryPlan {
  rate: number;
  weight: number;
  due: Date;
}

/**
 * An entry's estimate, weight and next due time under `model` and `scale`, counted from the start
 * of `from` (the cycle of its last usable refresh): what a refresh stores (src/plan/store.ts
 * noteRefreshes), and what each plan stores again for every refreshed entry once the model or the
 * scale moved (`replanned`). Before the first calibration (`scale` null) every interval is the
 * staleness bound, as round robin's. Pure: the backtest runs it too.
 */
export function entryPlan(p: {
  history: ChangeHistory;
  prior: RatePrior;
  /** Cycles of boost left (0 unless the model boosts). */
  boost: number;
  from: string;
  model: PlannerModel;
  scale: number | null;
  maxStalenessDays: number;
  /** Its rate when estimated otherwise (the backtest's `bayes`); else `estimateRate` under the prior. */
  rate?: number;
}): EntryPlan {
  const { history: h, model } = p;
  const rate = p.rate ?? estimateRate(h, p.prior, model.datedWeight, model.shift);
  const weight = weightOf(h);
  const due = dueAfter({
    refreshedAt: cycleStart(p.from),
    rate: shortTermRate(rate, h, model),
    weight: plannedWeight(weight, model, h),
    boostLeft: model.boost ? p.boost : 0,
    scale: p.scale ?? Number.POSITIVE_INFINITY,
    maxStalenessDays: Math.min(p.maxStalenessDays, model.tailDays),
  });
  return { rate, weight, due };
}

/**
 * How far a stored plan may drift before a plan stores it again: its due time by a tenth of its
 * interval, or its rate by a tenth. Smaller moves change no cycle's choice worth a row's rewrite.
 */
export const REPLAN_DRIFT = 0.1;

/**
 * The entry's plan under the model and scale of the latest plan (`entryPlan`), when it has moved
 * from the stored one (`stored`) by more than REPLAN_DRIFT; null when the stored one still holds.
 * An entry refreshed while every firm was held alike keeps round robin's due time until its next
 * refresh otherwise, however soon the watchlist shows that firms differ. Planning again brings a
 * due time forward, never back: an entry never waits longer than its last refresh planned (a
 * firm the new model deems quieter may be about to wake; its next refresh plans it in full).
 */
export function replanned(
  p: Parameters<typeof entryPlan>[0],
  stored: { rate: number | null; due: Date },
): EntryPlan | null {
  const next = entryPlan(p);
  const due = next.due.getTime() < stored.due.getTime() ? next.due : stored.due;
  const interval = Math.max(DAY_MS, next.due.getTime() - cycleStart(p.from).getTime());
  const moved = stored.due.getTime() - due.getTime() > REPLAN_DRIFT * interval;
  const rated =
    stored.rate === null ||
    Math.abs(Math.log(Math.max(MIN_RATE, next.rate) / Math.max(MIN_RATE, stored.rate))) >
      Math.log1p(REPLAN_DRIFT);
  return moved || rated ? { ...next, due } : null;
}

const DAY_MS = 86_400_000;

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
  spread?: Spread,
): RatePrior {
  // A closed firm's record no longer changes: a registry fact, not something to learn.
  const status = statusOfCohort(key);
  if (isClosedStatus(status))
    return { rate: CLOSED_PRIOR_RATE, strength: PRIOR_MAX_DAYS, cohort: status ?? '*' };
  for (const level of key === null ? ['*'] : cohortLevels(key)) {
    const p = priors.get(level);
    if (p)
      return {
        rate: p.rate,
        strength: priorStrength(p.rate, shape),
        cohort: level,
        ...(spread === undefined ? {} : { spread }),
      };
  }
  return shape === PRIOR_SHAPE && spread === undefined
    ? DEFAULT_PRIOR
    : {
        ...DEFAULT_PRIOR,
        strength: priorStrength(DEFAULT_PRIOR_RATE, shape),
        ...(spread === undefined ? {} : { spread }),
      };
}
