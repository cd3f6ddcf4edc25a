/**
 * The dates' split test (src/plan/learn.ts `splitZ`, `ModelSums.ds`): the entries whose first fetch
 * found an approval more recent than the watchlist's median against the others. It is what lets a
 * small budget see that firms differ from their first intervals, so it must never see it where
 * they do not: with one shared rate, whatever the approval dates and however few the intervals,
 * it stays below EVIDENCE_Z; dates that say the opposite are not taken as dates that predict.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { INITIAL_MODEL, modelOf } from '../../src/plan/due.ts';
import type { CohortPrior } from '../../src/plan/estimate.ts';
import { reasonOf } from '../../src/plan/explain.ts';
import {
  datesSplit,
  EVIDENCE_Z,
  emptySums,
  type LearnEntry,
  learnPlanner,
  type ModelSums,
  STRONG_Z,
  splitZ,
  watchlistSums,
} from '../../src/plan/learn.ts';
import type { ChangeHistory } from '../../src/plan/model.ts';
import { Rng } from '../../src/sim/rng.ts';

const COHORT = '存续|11|I|1e6';

/**
 * An entry with `intervals` intervals of `length` days at `rate` a day, its first fetch having found
 * an approval `back` days before (none when null).
 */
function entry(rng: Rng, rate: number, intervals: number, length: number, back: number | null): LearnEntry {
  let changes = 0;
  for (let k = 0; k < intervals; k++) if (rng.next() < -Math.expm1(-rate * length)) changes++;
  const days = intervals * length;
  const history: ChangeHistory = {
    bins: intervals > 0 ? { [length]: [intervals, changes] } : {},
    n: intervals,
    changes,
    days,
    severitySum: changes,
    severityN: changes,
    all: [intervals, changes, days],
    datedDays: back ?? 3000,
    datedEvents: back === null ? 0 : 1,
    seedDays: back ?? 3000,
    seedEvents: back === null ? 0 : 1,
  };
  return { history, cohort: COHORT, rate: null, weight: 1 };
}

/** The sums of a watchlist whose cohort prior is the watchlist's own rate. */
function sumsOf(entries: readonly LearnEntry[]): ModelSums {
  const rate = 0.01;
  const priors = new Map<string, CohortPrior>([
    [COHORT, { cohort: COHORT, rate, entries: entries.length, days: 1 }],
  ]);
  return watchlistSums(entries, priors);
}

describe("the dates' split test", () => {
  it('stays below EVIDENCE_Z where every firm changes at one rate, whatever the dates and the intervals', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.double({ min: 0.0005, max: 1, noNaN: true }),
        fc.integer({ min: 100, max: 2000 }),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 12 }),
        (seed, rate, n, length, intervals) => {
          const rng = new Rng(seed);
          const entries = Array.from({ length: n }, () =>
            entry(rng, rate, intervals, length, rng.next() < 0.2 ? null : rng.int(1, 3000)),
          );
          expect(splitZ(sumsOf(entries).ds)).toBeLessThan(EVIDENCE_Z);
        },
      ),
      { numRuns: 200, seed: 40 },
    );
  });

  it('finds busy firms with recent approvals from one interval each, and not when the dates point the other way', () => {
    const rng = new Rng(5);
    const busy = (i: number) => i % 3 === 0;
    const predicting = Array.from({ length: 600 }, (_, i) =>
      entry(rng, busy(i) ? 0.2 : 0.004, 1, 20, busy(i) ? rng.int(1, 10) : rng.int(100, 2000)),
    );
    expect(splitZ(sumsOf(predicting).ds)).toBeGreaterThan(STRONG_Z);
    const misleading = Array.from({ length: 600 }, (_, i) =>
      entry(rng, busy(i) ? 0.2 : 0.004, 1, 20, busy(i) ? rng.int(100, 2000) : rng.int(1, 10)),
    );
    expect(splitZ(sumsOf(misleading).ds)).toBe(0);
  });

  it('is what plan explain names, when it alone shows that the firms differ', () => {
    const rng = new Rng(7);
    const busy = (i: number) => i % 3 === 0;
    const entries = Array.from({ length: 600 }, (_, i) =>
      entry(rng, busy(i) ? 0.2 : 0.004, 1, 20, busy(i) ? rng.int(1, 10) : rng.int(60, 360)),
    );
    const { model } = learnPlanner(entries, 30, 30, INITIAL_MODEL);
    expect(model.equal).toBe(0);
    expect(model.datesSplit).toBe(true);
    expect(modelOf(JSON.parse(JSON.stringify(model))).datesSplit).toBe(true);
    const reason = reasonOf({
      planClass: 'due',
      priority: 0,
      rate: 0.2,
      boostLeft: 0,
      intervalDays: 5,
      history: entries[0]?.history as ChangeHistory,
      model,
      ageDays: 1,
      maxStalenessDays: 30,
    });
    expect(reason).toMatch(
      /first fetch found a recent approval in the registry have changed clearly more often/,
    );
    // Where the dates point the other way, nothing is said of them, and the firms are held alike.
    const misleading = Array.from({ length: 600 }, (_, i) =>
      entry(rng, busy(i) ? 0.2 : 0.004, 1, 20, busy(i) ? rng.int(60, 360) : rng.int(1, 10)),
    );
    const held = learnPlanner(misleading, 30, 30, INITIAL_MODEL).model;
    expect(held.datesSplit).toBeUndefined();
    expect(held.equal).toBe(1);
  });

  it('is not tipped by a handful of hyperactive firms with recent approvals among identical ones', () => {
    // 1% of the firms change most days and were approved days ago, fetched every second day; the
    // rest change at 0.01 a day, approved at any time. Each entry counts once, changed or not.
    const rng = new Rng(8);
    const entries = Array.from({ length: 1000 }, (_, i) =>
      i % 100 === 7 ? entry(rng, 0.6, 30, 2, rng.int(1, 3)) : entry(rng, 0.01, 30, 2, rng.int(1, 400)),
    );
    expect(splitZ(sumsOf(entries).ds)).toBeLessThan(EVIDENCE_Z);
  });

  it('waits for both groups: too few intervals, or too few changes expected, say nothing', () => {
    const rng = new Rng(6);
    const few = Array.from({ length: 80 }, (_, i) => entry(rng, i % 2 ? 0.5 : 0.001, 1, 20, i % 2 ? 1 : 900));
    expect(splitZ(sumsOf(few).ds)).toBe(0);
    expect(splitZ(emptySums().ds)).toBe(0);
    // No entry with intervals: no split at all.
    expect(datesSplit([entry(rng, 0.1, 0, 20, 5)])).toBeNull();
  });
});
