/**
 * The learned spread of the firms' rates (src/plan/spread.ts): from the entries' own intervals it
 * finds the clusters a watchlist's rates sit in, stays narrow where the firms are alike, and an
 * entry read through it lands nearer its true rate than under one Gamma prior. The plan reads the
 * estimates through it only where it holds clusters (one wide hump, a few outliers or firms alike
 * keep the Gamma priors), and `plan explain` says when. An entry with no interval of its own keeps
 * the Gamma prior, and a stored spread that is not one is refused.
 */
import { describe, expect, it } from 'vitest';
import { INITIAL_MODEL, modelOf, type PlannerModel } from '../../src/plan/due.ts';
import { estimateRate, priorFor } from '../../src/plan/estimate.ts';
import { reasonOf } from '../../src/plan/explain.ts';
import { type LearnEntry, learnPlanner, watchlistSpread } from '../../src/plan/learn.ts';
import { type ChangeHistory, emptyHistory, observe } from '../../src/plan/model.ts';
import {
  clustered,
  SPREAD_STEPS,
  spreadInUse,
  spreadOf,
  spreadQuantile,
  startSpread,
} from '../../src/plan/spread.ts';
import { Rng } from '../../src/sim/rng.ts';

const COHORT = '存续|11|I|1e6';

/** A standard normal draw (Box–Muller). */
const normal = (rng: Rng) => Math.sqrt(-2 * Math.log(1 - rng.next())) * Math.cos(2 * Math.PI * rng.next());

/** A firm of rate `lambda` fetched every 4 to 10 days, `intervals` times (no registry dates). */
function history(rng: Rng, lambda: number, intervals: number): ChangeHistory {
  let h = emptyHistory();
  for (let k = 0; k < intervals; k++) {
    const days = rng.int(4, 10);
    h = observe(h, days, rng.next() < -Math.expm1(-lambda * days));
  }
  return h;
}

/** A watchlist of `n` firms whose rates `rateOf` draws, and the cohort prior of their mean. */
function watchlist(seed: number, n: number, rateOf: (rng: Rng) => number, intervals = 8) {
  const rng = new Rng(seed);
  const rates = Array.from({ length: n }, () => rateOf(rng));
  const entries = rates.map((r) => ({ history: history(rng, r, intervals), cohort: COHORT }));
  const mean = rates.reduce((a, b) => a + b, 0) / n;
  const priors = new Map([[COHORT, { cohort: COHORT, entries: n, rate: mean, days: 1000 }]]);
  return { rates, entries, priors, mean };
}

/** The spread after `plans` plans of a few steps each, warm-started (as the plan job learns it). */
function learned(w: ReturnType<typeof watchlist>, plans = 30): number[] {
  let spread: number[] | undefined;
  for (let p = 0; p < plans; p++) spread = watchlistSpread(w.entries, w.priors, 1, spread);
  return spread as number[];
}

/** The share of the spread between rates `lo` and `hi` (per day) for a cohort of rate `mean`. */
function mass(spread: readonly number[], mean: number, lo: number, hi: number): number {
  let m = 0;
  for (let k = 0; k < 400; k++) {
    const r = spreadQuantile(spread, (k + 0.5) / 400) * mean;
    if (r >= lo && r <= hi) m++;
  }
  return m / 400;
}

describe('the learned spread of rates', () => {
  const twoKinds = () => watchlist(3, 800, (rng) => (rng.next() < 0.3 ? 0.2 : 0.004));

  it('finds busy and quiet firms as two clusters, with next to nothing between them', () => {
    const w = twoKinds();
    const spread = learned(w);
    expect(spread).toHaveLength(SPREAD_STEPS);
    expect(spread.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 9);
    // The busy ones near 0.2 a day, the quiet ones at a few thousandths or less, little between.
    expect(mass(spread, w.mean, 0.07, 0.6)).toBeGreaterThan(0.22);
    expect(mass(spread, w.mean, 0, 0.012)).toBeGreaterThan(0.55);
    expect(mass(spread, w.mean, 0.02, 0.05)).toBeLessThan(0.08);
  });

  it('reads each firm nearer its true rate than one Gamma prior does', () => {
    const w = twoKinds();
    const spread = learned(w);
    const gamma = priorFor(COHORT, w.priors);
    const through = priorFor(COHORT, w.priors, undefined, spread);
    const err = (p: typeof gamma) =>
      w.entries.reduce(
        (a, e, i) => a + Math.abs(Math.log(estimateRate(e.history, p, 1, 0) / (w.rates[i] as number))),
        0,
      ) / w.entries.length;
    expect(err(through)).toBeLessThan(0.9 * err(gamma));
  });

  it('stays narrow where the firms are alike', () => {
    const w = watchlist(5, 800, () => 0.05, 12);
    const spread = learned(w);
    expect(spreadQuantile(spread, 0.9) / spreadQuantile(spread, 0.1)).toBeLessThan(5);
    // And starts wide: a lognormal of sd 1.5 around the cohort's rate.
    const start = startSpread();
    expect(spreadQuantile(start, 0.9) / spreadQuantile(start, 0.1)).toBeGreaterThan(30);
  });

  it('leaves an entry with no interval of its own to the Gamma prior', () => {
    const w = twoKinds();
    const spread = learned(w, 5);
    const seeded: ChangeHistory = {
      ...emptyHistory(),
      datedDays: 30,
      datedEvents: 1,
      seedDays: 30,
      seedEvents: 1,
    };
    expect(estimateRate(seeded, priorFor(COHORT, w.priors, undefined, spread))).toBe(
      estimateRate(seeded, priorFor(COHORT, w.priors)),
    );
    // A closed firm keeps the registry's prior, spread or not.
    const closed = priorFor('注销|11|I|1e6', w.priors, undefined, spread);
    expect(closed.spread).toBeUndefined();
    // And the spread learns from the entries with intervals only: adding never-fetched ones changes nothing.
    const more = { ...w, entries: [...w.entries, { history: seeded, cohort: COHORT }] };
    expect(learned(more, 2)).toEqual(learned(w, 2));
  });

  it('calls busy and quiet firms clusters, and neither one wide hump, nor a few outliers, nor firms alike', () => {
    expect(clustered(learned(twoKinds()))).toBe(true);
    // Lognormal rates, σ 1.2 (a factor of 3.3): wide, but one hump.
    const hump = watchlist(7, 800, (rng) => 0.01 * Math.exp(1.2 * normal(rng)));
    expect(clustered(learned(hump))).toBe(false);
    // Two in a hundred hyperactive firms among identical ones: too few to be a cluster (they are planned apart).
    const outliers = watchlist(9, 800, (rng) => (rng.next() < 0.02 ? 0.5 : 0.01));
    expect(clustered(learned(outliers))).toBe(false);
    expect(clustered(learned(watchlist(5, 800, () => 0.05, 12)))).toBe(false);
    // The start is one hump.
    expect(clustered(startSpread())).toBe(false);
  });

  it('is what the plan reads the estimates through only where it holds clusters, and plan explain says so', () => {
    const plan = (w: ReturnType<typeof watchlist>) => {
      const entries: LearnEntry[] = w.entries.map((e) => ({ ...e, rate: null, weight: 1 }));
      let model: PlannerModel = INITIAL_MODEL;
      for (let p = 0; p < 30; p++) model = learnPlanner(entries, 100, 30, model).model;
      return model;
    };
    const two = plan(twoKinds());
    expect(two.clustered).toBe(true);
    expect(spreadInUse(two)).toBe(two.spread);
    const hump = plan(watchlist(7, 800, (rng) => 0.01 * Math.exp(1.2 * normal(rng))));
    expect(hump.spread).toHaveLength(SPREAD_STEPS);
    expect(hump.clustered).toBeUndefined();
    expect(spreadInUse(hump)).toBeUndefined();
    const reason = (clusters: boolean) =>
      reasonOf({
        planClass: 'due',
        priority: 0,
        rate: 0.004,
        clustered: clusters,
        boostLeft: 0,
        intervalDays: 20,
        history: twoKinds().entries[0]?.history as ChangeHistory,
        model: { ...two, equal: 0 },
        ageDays: 1,
        maxStalenessDays: 30,
      });
    expect(reason(true)).toMatch(/separate clusters/);
    expect(reason(false)).not.toMatch(/clusters/);
  });

  it('refuses a stored spread that is not one, and keeps one that is', () => {
    for (const bad of [
      [1, 2],
      Array(SPREAD_STEPS).fill(0),
      [-1, ...Array(SPREAD_STEPS - 1).fill(1)],
      'x',
      null,
    ])
      expect(spreadOf(bad)).toBeNull();
    expect(modelOf({ spread: [1, 2, 3], clustered: true }).spread).toBeUndefined();
    // Clusters without a spread to read are none.
    expect(modelOf({ spread: [1, 2, 3], clustered: true }).clustered).toBeUndefined();
    const good = Array(SPREAD_STEPS).fill(2);
    expect(modelOf({ spread: good, clustered: true }).spread?.[0]).toBeCloseTo(1 / SPREAD_STEPS, 12);
    expect(modelOf({ spread: good, clustered: true }).clustered).toBe(true);
  });
});
