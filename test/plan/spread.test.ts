/**
 * The learned spread of the firms' rates (src/plan/spread.ts): from the entries' own intervals it
 * finds the clusters a watchlist's rates sit in, stays narrow where the firms are alike, and an
 * entry read through it lands nearer its true rate than under one Gamma prior. An entry with no
 * interval of its own keeps the Gamma prior, and a stored spread that is not one is refused.
 */
import { describe, expect, it } from 'vitest';
import { modelOf } from '../../src/plan/due.ts';
import { estimateRate, priorFor } from '../../src/plan/estimate.ts';
import { watchlistSpread } from '../../src/plan/learn.ts';
import { type ChangeHistory, emptyHistory, observe } from '../../src/plan/model.ts';
import { SPREAD_STEPS, spreadOf, spreadQuantile, startSpread } from '../../src/plan/spread.ts';
import { Rng } from '../../src/sim/rng.ts';

const COHORT = '存续|11|I|1e6';

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
    expect(err(through)).toBeLessThan(0.8 * err(gamma));
  });

  it('stays narrow where the firms are alike', () => {
    const w = watchlist(5, 800, () => 0.05, 12);
    const spread = learned(w);
    expect(spreadQuantile(spread, 0.9) / spreadQuantile(spread, 0.1)).toBeLessThan(3);
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

  it('refuses a stored spread that is not one, and keeps one that is', () => {
    for (const bad of [
      [1, 2],
      Array(SPREAD_STEPS).fill(0),
      [-1, ...Array(SPREAD_STEPS - 1).fill(1)],
      'x',
      null,
    ])
      expect(spreadOf(bad)).toBeNull();
    expect(modelOf({ spread: [1, 2, 3] }).spread).toBeUndefined();
    const good = Array(SPREAD_STEPS).fill(2);
    expect(modelOf({ spread: good }).spread?.[0]).toBeCloseTo(1 / SPREAD_STEPS, 12);
  });
});
