/**
 * The planner's rules for two kinds of watchlist (docs/planner.md): firms that wake from a quiet
 * spell are rechecked sooner (`wake`, and `trust` in the spread of the estimates), and a few
 * hyperactive firms among identical ones are planned apart while the rest stay alike (round
 * robin). In memory: src/plan/learn.ts learnPlanner and src/plan/due.ts, as the plan job and the
 * backtest run them; test/plan/learn-sql.test.ts holds the plan job's SQL to the same.
 */
import { describe, expect, it } from 'vitest';
import {
  apartEvidence,
  entryEvidence,
  INITIAL_MODEL,
  intervalDays,
  isApart,
  type PlannerModel,
  plannedWeight,
  shortTermRate,
} from '../../src/plan/due.ts';
import { afterRefresh, type EntryState, estimateRate, weightOf } from '../../src/plan/estimate.ts';
import { reasonOf } from '../../src/plan/explain.ts';
import { type LearnEntry, learnModel, learnPlanner, watchlistSums } from '../../src/plan/learn.ts';
import {
  type ChangeHistory,
  emptyHistory,
  isWaking,
  observe,
  SILENT_INTERVALS,
} from '../../src/plan/model.ts';
import { Rng } from '../../src/sim/rng.ts';
import { addDays } from '../../src/time/cycles.ts';

const START = '2026-01-05';
const COHORT = '存续|11|I|1e6';

/**
 * `n` entries refreshed every `every` days for `days` days, firm i changing at `rateOf(i, day)`
 * a day: what the watchlist's fetches left, with each entry's estimate.
 */
function watchlist(
  seed: number,
  n: number,
  every: number,
  days: number,
  rateOf: (i: number, day: number) => number,
): LearnEntry[] {
  const rng = new Rng(seed);
  return Array.from({ length: n }, (_, i) => {
    let state: EntryState = { history: emptyHistory(), boost: 0, cohort: null };
    let last: string | null = null;
    let rate: number | null = null;
    // Staggered as round robin staggers them.
    for (let day = i % every; day < days; day += every) {
      let exposure = 0;
      for (let d = day - every; d < day; d++) exposure += rateOf(i, d);
      const changed = last !== null && rng.next() < -Math.expm1(-exposure);
      state = afterRefresh(
        { ...state, rate, mean: 0.02 },
        {
          cycle: addDays(START, day),
          changed,
          severity: changed ? 'low' : null,
          cohort: COHORT,
          usable: true,
        },
        last,
      );
      rate = estimateRate(state.history);
      last = addDays(START, day);
    }
    return { history: state.history, cohort: COHORT, rate, weight: weightOf(state.history) };
  });
}

/** The interval an entry is planned at under `model` and `scale`. */
const intervalOf = (e: LearnEntry, model: PlannerModel, scale: number) =>
  intervalDays(
    shortTermRate(e.rate ?? model.rate, e.history, model),
    plannedWeight(e.weight, model, e.history),
    scale,
    model.tailDays,
  );

const why = (e: LearnEntry, model: PlannerModel, interval: number) =>
  reasonOf({
    planClass: 'due',
    priority: 0,
    rate: e.rate,
    boostLeft: 0,
    intervalDays: interval,
    history: e.history,
    model,
    ageDays: 1,
    maxStalenessDays: 30,
  });

describe('a few hyperactive firms among identical ones', () => {
  // 500 firms at 0.01 a day, five of them at 0.5; a quarter refreshed a day for 60 days.
  const busy = new Set([17, 111, 222, 333, 444]);
  const entries = watchlist(3, 500, 4, 60, (i) => (busy.has(i) ? 0.5 : 0.01));

  it('plans the few apart at their own rate and the rest alike, as round robin', () => {
    const learned = learnPlanner(entries, 125, 30, INITIAL_MODEL);
    const { model, scale } = learned;
    expect(model.outliers).toBe(5);
    expect(model.equal).toBe(1);
    for (const [i, e] of entries.entries()) expect(isApart(e.history, model), `entry ${i}`).toBe(busy.has(i));
    // Every other entry has the same interval, whatever its own estimate: round robin's order.
    const rest = entries.filter((_, i) => !busy.has(i)).map((e) => intervalOf(e, model, scale));
    expect(Math.max(...rest) - Math.min(...rest)).toBeLessThan(1e-9);
    // The busy ones are refreshed several times as often.
    for (const i of busy)
      expect(intervalOf(entries[i] as LearnEntry, model, scale)).toBeLessThan((rest[0] as number) / 3);
    // plan explain says so, for both.
    const outlier = entries[17] as LearnEntry;
    expect(why(outlier, model, intervalOf(outlier, model, scale))).toContain('planned apart at its own rate');
    expect(why(entries[0] as LearnEntry, model, rest[0] as number)).toContain(
      'without the 5 entries planned apart',
    );
  });

  it('would otherwise take the five for evidence that every firm differs', () => {
    const learned = learnPlanner(entries, 125, 30, INITIAL_MODEL);
    const sums = watchlistSums(entries, learned.priors);
    expect(learnModel(sums, 30, learned.model.rate).equal).toBe(1);
    // The same sums with nothing planned apart: the five make the whole watchlist look unequal.
    const without = learnModel({ ...sums, apart: 0 }, 30, learned.model.rate);
    expect(without.equal).toBe(0);
    expect(without.outliers).toBeUndefined();
  });

  it('does not plan apart the busiest of firms whose rates spread widely: the rest still differ', () => {
    const rng = new Rng(5);
    const rates = Array.from({ length: 500 }, () => 0.015 * Math.exp(1.5 * (rng.next() * 2 - 1) * 1.7));
    const spread = watchlist(7, 500, 4, 60, (i) => rates[i] as number);
    const { model } = learnPlanner(spread, 125, 30, INITIAL_MODEL);
    expect(model.outliers).toBeUndefined();
    expect(model.equal).toBeLessThan(1);
  });

  it('measures the evidence as the Chernoff bound on so many changed intervals', () => {
    // 3 of 3 intervals of 4 days changed where 1 − e^(−0.04) is expected: 3 × ln(1 / 0.0392).
    expect(apartEvidence(3, 3, 12, 0.01)).toBeCloseTo(3 * Math.log(1 / -Math.expm1(-0.04)), 9);
    expect(apartEvidence(10, 0, 40, 0.01)).toBe(0);
    expect(apartEvidence(10, 1, 400, 0.01)).toBe(0);
    // Changes the registry dated add Poisson evidence: two changes in 3 quiet days at 0.01 a day.
    const dated = { all: [2, 2, 8] as [number, number, number], datedEvents: 2, datedDays: 3 };
    expect(entryEvidence(dated, 0.01)).toBeCloseTo(
      apartEvidence(2, 2, 8, 0.01) + 2 * Math.log(2 / 0.03) - 2 + 0.03,
      9,
    );
    expect(entryEvidence({ ...dated, datedEvents: 0 }, 0.01)).toBe(apartEvidence(2, 2, 8, 0.01));
  });
});

describe('sleepers that wake', () => {
  it('counts an interval after a change that ended a silence, and only such', () => {
    let h: ChangeHistory = emptyHistory();
    for (let k = 0; k < SILENT_INTERVALS; k++) h = observe(h, 3, false, null, 365, 0.01);
    expect(isWaking(h)).toBe(false);
    h = observe(h, 3, true, 'low', 365, 0.01);
    expect(isWaking(h)).toBe(true);
    const after = observe(h, 2, true, 'low', 365, 0.01);
    expect(after.woke?.[0]).toBe(1);
    expect(after.woke?.[1]).toBe(1);
    expect(after.woke?.[2]).toBeCloseTo(-Math.expm1(-0.02), 5);
    // A change after a change is not a wake.
    expect(isWaking(after)).toBe(false);
  });

  // 500 firms: a fifth dormant until a day of their own, then a flurry of changes fading to 0.03
  // a day; a fifth busy (0.08 a day), the rest quiet (0.005). Half the watchlist refreshed a day
  // for 120 days.
  const wakeOf = (i: number) => 20 + ((i * 37) % 90);
  const rateOf = (i: number, day: number) =>
    i % 5 === 1
      ? 0.08
      : i % 5 !== 0
        ? 0.005
        : day < wakeOf(i)
          ? 0.0005
          : 0.03 + 0.6 * Math.exp(-(day - wakeOf(i)) / 4);
  const entries = watchlist(11, 500, 2, 120, rateOf);

  it('rechecks a firm that has just woken sooner, where woken firms go on changing', () => {
    const { model, scale } = learnPlanner(entries, 250, 30, INITIAL_MODEL);
    // Woken firms go on changing more than their estimates say, and more than after other changes.
    expect(model.wake).toBeGreaterThan(1.5);
    expect(model.wake).toBeGreaterThan(model.hot);
    // A sleeper whose last fetch saw its first change after a silence.
    let h: ChangeHistory = emptyHistory();
    for (let k = 0; k < 20; k++) h = observe(h, 2, false, null, 365, 0.005);
    h = observe(h, 2, true, 'low', 365, 0.005);
    const woken: LearnEntry = { history: h, cohort: COHORT, rate: estimateRate(h), weight: 1 };
    const plain = { ...model, wake: 1 };
    const sooner = intervalOf(woken, model, scale);
    expect(sooner).toBeLessThan(intervalOf(woken, plain, scale));
    // Against a quiet firm that has not woken, by far.
    let still: ChangeHistory = emptyHistory();
    for (let k = 0; k < 21; k++) still = observe(still, 2, false, null, 365, 0.005);
    const quiet: LearnEntry = { history: still, cohort: COHORT, rate: estimateRate(still), weight: 1 };
    expect(sooner).toBeLessThan(intervalOf(quiet, model, scale) / 2);
    expect(why(woken, model, sooner)).toContain('it has just woken');
    expect(why(woken, plain, intervalOf(woken, plain, scale))).not.toContain('woken');
  });

  it('trusts the spread of the estimates as far as quiet-estimated firms changed less than busy ones, as said', () => {
    // Quiet intervals (estimated at 0.005 over 1,000 days) and busy ones (0.05 over 1,000 days):
    // the estimates say ten times the rate.
    const sums = (quietChanged: number) => {
      const s = watchlistSums([], new Map());
      s.calib = [500, quietChanged, 5, 1000, 500, 48.8, 50, 1000];
      return s;
    };
    // As said: trusted fully. The quiet ones as busy as the busy ones: not at all. Between: the
    // ratio, on the log scale.
    expect(learnModel(sums(4.99), 30).trust).toBeCloseTo(1, 2);
    expect(learnModel(sums(48.8), 30).trust).toBe(0);
    const half = learnModel(sums(15.4), 30).trust as number;
    expect(half).toBeGreaterThan(0.4);
    expect(half).toBeLessThan(0.6);
    // Too few changes to tell: trusted.
    const few = sums(2);
    expect(learnModel(few, 30).trust).toBe(1);
  });

  it('brings a quiet firm nearer the mean where the estimates are trusted less', () => {
    const { model } = learnPlanner(entries, 250, 30, INITIAL_MODEL);
    expect(model.trust).toBeLessThan(1);
    expect(model.equal).toBe(0);
    const quiet = entries.find((e, i) => i % 5 === 0 && (e.rate ?? 1) < model.rate * 0.5) as LearnEntry;
    expect(quiet).toBeDefined();
    const full = { ...model, trust: 1 };
    expect(intervalOf(quiet, model, 1)).toBeLessThan(intervalOf(quiet, full, 1));
    expect(why(quiet, model, intervalOf(quiet, model, 1))).toContain("the estimates' spread is trusted");
  });
});
