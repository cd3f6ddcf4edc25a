/**
 * The change-rate estimator (src/plan/model.ts, estimate.ts) on synthetic observation histories
 * whose true rate is known: it converges, it is unbiased within tolerance, the prior and the
 * registry's dates weigh as they should; and the pieces around it (intervals, the scale, cohorts,
 * a refresh's effect on an entry, the model learned from the watchlist: src/plan/due.ts, learn.ts).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cohortKey, cohortLevels } from '../../src/normalize/cohort.ts';
import {
  BOOST_CYCLES,
  calibrateScale,
  dueAfter,
  INITIAL_MODEL,
  intervalDays,
  plannedScale,
  SCALE_FILL,
} from '../../src/plan/due.ts';
import {
  afterRefresh,
  cohortPriors,
  estimateRate,
  estimateShift,
  isClosedStatus,
  priorFor,
  seedOf,
  weightOf,
} from '../../src/plan/estimate.ts';
import { reasonOf } from '../../src/plan/explain.ts';
import { addToSums, DATES_TRUSTED, emptySums, learnModel } from '../../src/plan/learn.ts';
import {
  type ChangeHistory,
  emptyHistory,
  HALF_LIFE_DAYS,
  historyOf,
  MAX_RATE,
  observe,
  priorStrength,
} from '../../src/plan/model.ts';
import { Rng } from '../../src/sim/rng.ts';
import { addDays } from '../../src/time/cycles.ts';

const NO_PRIOR = { rate: 0, strength: 0 };

/**
 * `count` intervals of random lengths, each ending changed with probability 1 − e^(−λΔ). No
 * forgetting by default: the estimator itself is under test (decay has its own test).
 */
function history(
  rng: Rng,
  lambda: number,
  count: number,
  lengths: () => number,
  halfLifeDays = Number.POSITIVE_INFINITY,
): ChangeHistory {
  let h = emptyHistory();
  for (let i = 0; i < count; i++) {
    const days = lengths();
    h = observe(h, days, rng.next() < -Math.expm1(-lambda * days), null, halfLifeDays);
  }
  return h;
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

describe('the change-rate estimator', () => {
  it('converges to the true rate over irregular intervals', () => {
    const rng = new Rng(11);
    for (const lambda of [0.003, 0.03, 0.3, 1.5]) {
      // Short irregular intervals, and a mix of daily and monthly ones.
      for (const lengths of [() => rng.int(1, 10), () => (rng.next() < 0.5 ? 1 : 30)]) {
        const estimate = estimateRate(history(rng, lambda, 5000, lengths), NO_PRIOR);
        expect(Math.abs(estimate / lambda - 1), `λ ${lambda}`).toBeLessThan(
          0.05 + (lambda < 0.01 ? 0.05 : 0),
        );
      }
    }
  });

  it('its error shrinks as observations grow', () => {
    const rng = new Rng(12);
    const error = (count: number) =>
      mean(
        Array.from({ length: 50 }, () => {
          const e = estimateRate(
            history(rng, 0.05, count, () => rng.int(1, 10)),
            NO_PRIOR,
          );
          return Math.abs(e / 0.05 - 1);
        }),
      );
    const small = error(100);
    const large = error(2000);
    expect(large).toBeLessThan(small / 3);
    expect(large).toBeLessThan(0.06);
  });

  it('is unbiased within tolerance over many short histories', () => {
    const rng = new Rng(13);
    for (const lambda of [0.02, 0.2]) {
      const estimates = Array.from({ length: 200 }, () =>
        estimateRate(
          history(rng, lambda, 300, () => rng.int(1, 10)),
          NO_PRIOR,
        ),
      );
      // 300 intervals hold about 30 (λ = 0.02) to 200 changes; the MLE's small-sample bias is a
      // few percent, the standard error of a mean of 200 about 1–2%: ±8% holds with margin.
      expect(Math.abs(mean(estimates) / lambda - 1), `λ ${lambda}`).toBeLessThan(0.08);
    }
  });

  it('starts at the prior, moves part way with a few observations, and forgets it with many', () => {
    const prior = { rate: 0.01, strength: 60 };
    expect(estimateRate(emptyHistory(), prior)).toBeCloseTo(0.01, 6);
    const rng = new Rng(14);
    const few = estimateRate(
      history(rng, 0.2, 5, () => 3),
      prior,
    );
    expect(few).toBeGreaterThan(0.01);
    expect(few).toBeLessThan(0.2);
    const many = estimateRate(
      history(rng, 0.2, 5000, () => rng.int(1, 5)),
      prior,
    );
    expect(Math.abs(many / 0.2 - 1)).toBeLessThan(0.05);
  });

  it('is finite when every interval changed only with a prior', () => {
    let h = emptyHistory();
    for (let i = 0; i < 10; i++) h = observe(h, 7, true);
    expect(estimateRate(h, NO_PRIOR)).toBe(MAX_RATE);
    const withPrior = estimateRate(h, { rate: 0.01, strength: 30 });
    expect(withPrior).toBeGreaterThan(0.1);
    expect(withPrior).toBeLessThan(MAX_RATE);
  });

  it('counts changes the registry dated as Poisson exposure: a steady process is estimated at its rate', () => {
    // Changes at exponential gaps, fetched every 1–10 days; a changed interval knows the date of
    // its last change.
    const rng = new Rng(15);
    for (const lambda of [0.02, 0.3]) {
      let h = emptyHistory();
      let t = 0;
      let next = -Math.log(rng.next()) / lambda;
      for (let i = 0; i < 12_000; i++) {
        const days = rng.int(1, 10);
        let last: number | null = null;
        while (next <= t + days) {
          last = next;
          next += -Math.log(rng.next()) / lambda;
        }
        h =
          last === null
            ? observe(h, days, false, null, Number.POSITIVE_INFINITY)
            : observe(h, days, { quietDays: t + days - last - 0.5 }, null, Number.POSITIVE_INFINITY);
        t += days;
      }
      expect(Math.abs(estimateRate(h, NO_PRIOR) / lambda - 1), `λ ${lambda}`).toBeLessThan(0.06);
    }
  });

  it('follows a firm whose habits change, and keeps the rate of one whose habits hold', () => {
    const cohort = { rate: 0.02, strength: priorStrength(0.02, 0.5) };
    const rng = new Rng(21);
    // A year quiet (rate 0.002, fetched every 10 days), then busy: three 5-day intervals changed.
    let quiet = emptyHistory();
    for (let i = 0; i < 36; i++) quiet = observe(quiet, 10, rng.next() < -Math.expm1(-0.002 * 10));
    const before = estimateRate(quiet, cohort);
    let busy = quiet;
    for (let i = 0; i < 3; i++) busy = observe(busy, 5, true);
    const held = estimateRate(busy, cohort, 1, 0);
    const followed = estimateRate(busy, cohort);
    expect(before).toBeLessThan(0.006);
    expect(held).toBeLessThan(0.02);
    expect(followed).toBeGreaterThan(Math.max(0.05, 4 * held));
    // One chance change of a quiet firm raises its next interval's rate, but by far less.
    const once = estimateRate(observe(quiet, 10, true), cohort);
    expect(once).toBeGreaterThan(estimateRate(observe(quiet, 10, true), cohort, 1, 0));
    expect(once).toBeLessThan(followed / 3);
    // Busy for half a year (rate 0.3, every 2 days), then quiet for three weeks.
    let was = emptyHistory();
    for (let i = 0; i < 90; i++) was = observe(was, 2, rng.next() < -Math.expm1(-0.3 * 2));
    let calm = was;
    for (let i = 0; i < 10; i++) calm = observe(calm, 2, false);
    expect(estimateRate(calm, cohort)).toBeLessThan(estimateRate(calm, cohort, 1, 0) / 2);
    // Habits that hold: the shift test leaves the estimate within a factor of two nearly always
    // (observations aging as they do in use).
    let off = 0;
    const trials = 400;
    for (let t = 0; t < trials; t++) {
      const lambda = Math.exp(rng.next() * 5 - 7);
      const h = history(rng, lambda, 60, () => rng.int(2, 12), HALF_LIFE_DAYS);
      const ratio = estimateRate(h, cohort) / estimateRate(h, cohort, 1, 0);
      if (ratio > 2 || ratio < 0.5) off++;
    }
    expect(off / trials).toBeLessThan(0.03);
    // Stored and read back, the recent intervals give the same estimate.
    expect(estimateRate(historyOf(JSON.parse(JSON.stringify(busy))), cohort)).toBe(followed);
    // `plan explain` says why such a firm is where it is.
    const why = (h: ChangeHistory) =>
      reasonOf({
        planClass: 'due',
        priority: 0,
        rate: estimateRate(h, cohort),
        shift: estimateShift(h, cohort).shift,
        boostLeft: 0,
        intervalDays: 3,
        history: h,
        model: { ...INITIAL_MODEL, equal: 0 },
        ageDays: 1,
        maxStalenessDays: 30,
      });
    expect(why(busy)).toMatch(/a change of its habits is \d+% likely/);
    expect(why(quiet)).not.toContain('habits');
  });

  it('decays old observations and reads stored histories defensively', () => {
    let h = observe(emptyHistory(), 3, true, 'high');
    h = observe(h, 365, false);
    expect(h.bins['3']?.[0]).toBeCloseTo(0.5, 3);
    expect(h.bins['365']).toEqual([1, 0]);
    expect(observe(h, 0.4, true)).toBe(h);
    expect(historyOf(null)).toEqual(emptyHistory());
    expect(historyOf('garbage')).toEqual(emptyHistory());
    expect(historyOf({ bins: { '-2': [1, 1], x: [1, 0], '4': [2, 5] }, n: -1, changes: 'a' })).toMatchObject({
      bins: { '4': [2, 2] },
      n: 0,
      changes: 0,
    });
    expect(historyOf(JSON.parse(JSON.stringify(h)))).toEqual(h);
  });

  it('weighs a firm by the severity of its past changes, from 1 to 3', () => {
    expect(weightOf(emptyHistory())).toBe(1);
    let h = emptyHistory();
    for (let i = 0; i < 20; i++) h = observe(h, 2, true, 'high');
    expect(weightOf(h)).toBeGreaterThan(2.8);
    expect(weightOf(h)).toBeLessThanOrEqual(3);
    expect(weightOf(observe(emptyHistory(), 2, true, 'low'))).toBe(1);
  });

  it('keeps intervals within a day and the staleness bound, shorter for busier or weightier firms', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 1e-6, max: 10, noNaN: true }),
        fc.double({ min: 1e-6, max: 10, noNaN: true }),
        fc.double({ min: 1, max: 3, noNaN: true }),
        fc.oneof(
          fc.constant(0),
          fc.constant(Number.POSITIVE_INFINITY),
          fc.double({ min: 1e-4, max: 100, noNaN: true }),
        ),
        fc.integer({ min: 1, max: 60 }),
        (a, b, w, scale, max) => {
          const [slow, fast] = a < b ? [a, b] : [b, a];
          const i1 = intervalDays(slow, w, scale, max);
          const i2 = intervalDays(fast, w, scale, max);
          expect(i1).toBeGreaterThanOrEqual(1);
          expect(i1).toBeLessThanOrEqual(max);
          expect(i2).toBeLessThanOrEqual(i1);
          expect(intervalDays(fast, 3, scale, max)).toBeLessThanOrEqual(intervalDays(fast, 1, scale, max));
          const at = new Date('2026-05-01T19:00:00Z');
          const due = dueAfter({
            refreshedAt: at,
            rate: fast,
            weight: w,
            boostLeft: 0,
            scale,
            maxStalenessDays: max,
          });
          const days = (due.getTime() - at.getTime()) / 86_400_000;
          expect(days).toBeGreaterThanOrEqual(1 - 1e-6);
          expect(days).toBeLessThanOrEqual(max + 1e-6);
          const boosted = dueAfter({
            refreshedAt: at,
            rate: slow,
            weight: w,
            boostLeft: 2,
            scale,
            maxStalenessDays: max,
          });
          expect(boosted.getTime() - at.getTime()).toBe(86_400_000);
        },
      ),
      { seed: 42, numRuns: 300 },
    );
  });

  it('sets the scale so that the watchlist fills the capacity', () => {
    const rng = new Rng(16);
    const buckets = Array.from({ length: 200 }, () => ({
      root: Math.exp(rng.next() * 6 - 6),
      entries: rng.int(1, 50),
    }));
    const total = buckets.reduce((a, b) => a + b.entries, 0);
    for (const perDay of [total / 25, total / 8, total / 2]) {
      const c = calibrateScale(buckets, perDay, 30);
      const load = buckets.reduce((a, b) => a + b.entries / Math.min(30, Math.max(1, c / b.root)), 0);
      expect(Math.abs(load / perDay - 1)).toBeLessThan(0.005);
    }
    expect(calibrateScale(buckets, total, 30)).toBe(0);
    expect(calibrateScale(buckets, total / 40, 30)).toBe(Number.POSITIVE_INFINITY);
  });

  it('while the model holds every firm alike, plans the interval of round robin whatever the rates and their buckets', () => {
    const rng = new Rng(17);
    const buckets = Array.from({ length: 40 }, () => ({
      root: Math.exp(rng.next() * 4 - 5),
      entries: rng.int(1, 30),
    }));
    const total = buckets.reduce((a, b) => a + b.entries, 0);
    for (const rate of [0.003, 0.02, 0.4]) {
      const model = { ...INITIAL_MODEL, equal: 1, rate };
      for (const perDay of [total / 20, total / 4]) {
        const scale = plannedScale(buckets, perDay, 30, model);
        expect(intervalDays(rate, 1, scale, 30)).toBeCloseTo(total / (perDay * SCALE_FILL), 9);
      }
      expect(plannedScale(buckets, total / SCALE_FILL, 30, model)).toBe(0);
      const uneven = { ...model, equal: 0.5 };
      expect(plannedScale(buckets, total / 8, 30, uneven)).toBe(
        calibrateScale(buckets, (total / 8) * SCALE_FILL, 30),
      );
    }
  });

  it('finds no evidence that rates differ in one interval per entry at one shared rate', () => {
    // Bernoulli outcomes say little about a rate each: their (changed − expected)² spreads far more
    // than twice the variance squared, which once read as firms that differ.
    for (const seed of [1, 2, 3, 4, 5]) {
      const rng = new Rng(seed);
      const sums = emptySums();
      for (let i = 0; i < 1000; i++) {
        const h = observe(emptyHistory(), 2, rng.next() < -Math.expm1(-0.02 * 2));
        addToSums(sums, { history: h, cohortRate: 0.02, watchlistRate: 0.02 });
      }
      expect(sums.g[1]).toBeGreaterThan(0);
      expect(learnModel(sums, 30, 0.02).equal, `seed ${seed}`).toBe(1);
    }
  });

  it('takes a spread around cohort rates that misleading approval dates set as evidence only once the dates are trusted', () => {
    // One shared rate, 0.02, seen in three intervals each; the cohorts' rate came out at 0.008
    // because the first fetches' approval dates (which say nothing here) pulled it down.
    const rng = new Rng(9);
    const sums = emptySums();
    for (let i = 0; i < 1000; i++) {
      let h = emptyHistory();
      for (let k = 0; k < 3; k++) h = observe(h, 10, rng.next() < -Math.expm1(-0.02 * 10));
      addToSums(sums, { history: h, cohortRate: 0.008, watchlistRate: 0.02 });
    }
    expect(sums.r2 - sums.v).toBeGreaterThan(10 * Math.sqrt(sums.v2));
    // The dates untested, or tested and found to say nothing: one shared rate, round robin.
    expect(learnModel(sums, 30, 0.02).equal).toBe(1);
    const tested = (weight: number): typeof sums => ({
      ...sums,
      // Recent approvals said 4 times the rate; the intervals showed 4^weight times.
      a: [500, 500 * -Math.expm1(-0.02 * 10 * 4 ** weight), 5000, 100, 100 / (0.02 * 4)],
      b: [500, 500 * -Math.expm1(-0.02 * 10), 5000, 100, 100 / 0.02],
    });
    const untrusted = learnModel(tested(0.1), 30, 0.02);
    expect(untrusted.datedWeight).toBeLessThan(DATES_TRUSTED);
    expect(untrusted.equal).toBe(1);
    // Dates that follow the changes: their disagreement with the intervals is evidence.
    const trusted = learnModel(tested(0.9), 30, 0.02);
    expect(trusted.datedWeight).toBeGreaterThanOrEqual(DATES_TRUSTED);
    expect(trusted.equal).toBe(0);
  });

  it('builds cohorts from status, type, industry and capital, and shrinks sparse ones toward their parent', () => {
    const key = cohortKey({
      entStatus: '存续',
      entTypeCode: '1130',
      industryPhy: 'I',
      capitalAmount: '5000000',
    });
    expect(key).toBe('存续|11|I|1e6');
    expect(cohortLevels(key)).toEqual(['存续|11|I|1e6', '存续|11', '存续', '*']);
    const priors = cohortPriors([
      { cohort: '存续|11|I|1e6', entries: 1000, n: 20_000, changes: 2000, days: 100_000 },
      { cohort: '存续|11|C|1e5', entries: 2, n: 4, changes: 4, days: 8 },
    ]);
    const busy = priors.get('存续|11|I|1e6')?.rate as number;
    expect(busy).toBeGreaterThan(0.018);
    expect(busy).toBeLessThan(0.023);
    // Every interval of the sparse cohort changed, yet it stays near its parent.
    const sparse = priors.get('存续|11|C|1e5')?.rate as number;
    expect(sparse).toBeLessThan(3 * (priors.get('存续|11')?.rate as number));
    // An unknown full cohort falls back to the coarser level; a closed firm's prior is near zero.
    expect(priorFor('存续|11|Z|1e9+', priors).cohort).toBe('存续|11');
    expect(priorFor('注销|11|I|1e6', priors).rate).toBeLessThan(1e-3);
  });

  it('a refresh: the interval observed, a boost after a high-severity change, none and a fresh start once closed', () => {
    const start = { history: emptyHistory(), boost: 0, cohort: null };
    const first = afterRefresh(
      start,
      {
        cycle: '2026-05-01',
        changed: false,
        severity: null,
        cohort: '存续|11|I|1e6',
        usable: true,
        lastApproval: '2026-04-01',
        established: '2010-01-01',
      },
      null,
    );
    // The registry's last approval, a month back: one dated change and its quiet days.
    expect(first.history).toMatchObject({
      cycle: '2026-05-01',
      approval: '2026-04-01',
      datedEvents: 1,
      datedDays: 30.5,
      n: 0,
    });
    const high = afterRefresh(
      first,
      {
        cycle: '2026-05-04',
        changed: true,
        severity: 'high',
        cohort: '停业|11|I|1e6',
        usable: true,
        lastApproval: '2026-05-03',
      },
      '2026-05-01',
    );
    expect(high.boost).toBe(BOOST_CYCLES);
    expect(high.history.datedEvents).toBeCloseTo(2, 1);
    const undated = afterRefresh(
      high,
      {
        cycle: '2026-05-06',
        changed: true,
        severity: 'low',
        cohort: '停业|11|I|1e6',
        usable: true,
        lastApproval: '2026-05-03',
      },
      '2026-05-04',
    );
    expect(undated.boost).toBe(BOOST_CYCLES - 1);
    expect(undated.history.bins['2']).toEqual([1, 1]);
    const closed = afterRefresh(
      undated,
      {
        cycle: '2026-05-07',
        changed: true,
        severity: 'high',
        cohort: '注销|11|I|1e6',
        usable: true,
        lastApproval: '2026-05-06',
      },
      '2026-05-06',
    );
    expect(isClosedStatus('注销')).toBe(true);
    expect(isClosedStatus('吊销，未注销')).toBe(false);
    expect(closed.boost).toBe(0);
    expect(closed.history.n).toBe(0);
    expect(closed.history.datedEvents ?? 0).toBe(0);
    // A stale answer says nothing of the interval.
    const stale = afterRefresh(
      undated,
      { cycle: '2026-05-09', changed: false, severity: null, cohort: '停业|11|I|1e6', usable: false },
      '2026-05-06',
    );
    expect(stale.history).toEqual(undated.history);
  });

  it("reads the registry's dates at a first fetch", () => {
    expect(seedOf('2026-05-01', '2026-04-21T00:00:00.000Z', '2001-01-01')).toEqual({
      datedDays: 10.5,
      datedEvents: 1,
    });
    // Never changed since established: quiet days, no change.
    expect(seedOf('2026-05-01', '2026-03-01', '2026-03-01')).toEqual({ datedDays: 61.5, datedEvents: 0 });
    expect(seedOf('2026-05-01', null, '2026-03-01')).toBeNull();
    expect(seedOf('2026-05-01', '2026-06-01', '2026-03-01')).toBeNull();
    expect(seedOf(addDays('2026-05-01', 0), '1990-01-01', '1980-01-01')?.datedEvents).toBe(0);
  });
});
