/**
 * The planner's guarantees as properties (fast-check): priority ranks first, the order within a
 * priority holds, the plan is deterministic and conserves every candidate; and, over many cycles
 * with the real estimator, no entry goes unrefreshed past the staleness bound while the budget
 * allows it, new entries are fetched promptly, and a high-severity change makes its firm due in
 * the next cycles; and, with the model the plan job learns from the whole watchlist, the intervals
 * of a watchlist whose firms all change at the same rate converge to round robin's.
 *
 * The properties are CPU-bound: each is sized by its work (a fixed seed, numRuns and sizes), never
 * by a time. They take seconds on an idle machine and several times that on a busy one, so their
 * timeout (PROPERTIES) is only a hang guard, far beyond what any load makes of them.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BOOST_CYCLES,
  calibrateScale,
  dueAfter,
  INITIAL_MODEL,
  type PlannerModel,
  plannedWeight,
  shortTermRate,
} from '../../src/plan/due.ts';
import { afterRefresh, type EntryState, estimateRate, priorFor, weightOf } from '../../src/plan/estimate.ts';
import { learnPlanner } from '../../src/plan/learn.ts';
import { emptyHistory } from '../../src/plan/model.ts';
import { type PlanInput, planCycle, planOrder, type WatchCandidate } from '../../src/plan/planner.ts';
import { Rng } from '../../src/sim/rng.ts';
import { addDays, cycleStart, daysBetween } from '../../src/time/cycles.ts';

const CYCLE = '2026-06-15';
const BASE = cycleStart(CYCLE).getTime();
const DAY = 86_400_000;

/** An arbitrary watch entry: priorities from a small set, refreshed or not, due or not, PIDs sometimes shared. */
const candidate = fc
  .record({
    priority: fc.integer({ min: -2, max: 2 }),
    refreshedDaysAgo: fc.option(fc.integer({ min: 1, max: 60 }), { nil: null }),
    dueInDays: fc.double({ min: -20, max: 30, noNaN: true }),
    pid: fc.option(fc.integer({ min: 1, max: 40 }), { nil: null }),
    notFound: fc.boolean(),
  })
  .map((r) => r);

type RawCandidate = typeof candidate extends fc.Arbitrary<infer T> ? T : never;

function candidates(raw: RawCandidate[]): WatchCandidate[] {
  return raw.map((r, i) => {
    const refreshed = r.refreshedDaysAgo === null ? null : addDays(CYCLE, -r.refreshedDaysAgo);
    return {
      id: i + 1,
      keyword: `企业${i + 1}`,
      priority: r.priority,
      pid: r.pid === null ? null : `P${r.pid}`,
      lastRefreshedAt: refreshed === null ? null : new Date(cycleStart(refreshed).getTime() + 600_000),
      refreshedCycle: refreshed,
      lastOutcome: refreshed === null ? null : r.notFound ? 'not_found' : 'success',
      lastCycle: refreshed,
      addedAt: new Date(BASE - 90 * DAY),
      dueAt: refreshed === null ? null : new Date(BASE + r.dueInDays * DAY),
    };
  });
}

function input(c: WatchCandidate[], capacity: number, maxStalenessDays = 30): PlanInput {
  return {
    cycle: CYCLE,
    candidates: c,
    doneWatchIds: new Set(),
    donePids: new Set(),
    creditsPerQuery: 3,
    creditBudget: capacity * 3,
    rateLimitPerMinute: 1_000_000,
    windowMinutes: 60,
    maxStalenessDays,
  };
}

/** The tests' options: no deadline to speak of, the work being fixed (vitest's default is 30 s). */
const PROPERTIES = { timeout: 10 * 60_000 };

const ids = (xs: readonly { id: number }[]) => xs.map((x) => x.id);

describe('the planner, as properties', PROPERTIES, () => {
  it('ranks by priority first, then within a priority by its order; conserves every candidate', () => {
    fc.assert(
      fc.property(
        fc.array(candidate, { maxLength: 120 }),
        fc.integer({ min: 0, max: 80 }),
        (raw, capacity) => {
          const c = candidates(raw);
          const plan = planCycle(input(c, capacity));
          expect(plan.selected.length).toBeLessThanOrEqual(capacity);
          const seen = [
            ...ids(plan.selected),
            ...plan.deferred.map((d) => d.entry.id),
            ...plan.skipped.map((s) => s.entry.id),
          ];
          expect(seen.sort((a, b) => a - b)).toEqual(ids(c));
          const rank = new Map(
            Array.from(planOrder(c, CYCLE, 30), (i, k) => [(c[i] as WatchCandidate).id, k]),
          );
          for (const s of plan.selected)
            for (const d of plan.deferred) {
              expect(s.priority).toBeGreaterThanOrEqual(d.entry.priority);
              if (s.priority === d.entry.priority)
                expect(rank.get(s.id)).toBeLessThan(rank.get(d.entry.id) as number);
            }
        },
      ),
      { seed: 42, numRuns: 300 },
    );
  });

  it('within a priority: never fetched, then owed by the staleness bound, then by due time', () => {
    fc.assert(
      fc.property(fc.array(candidate, { minLength: 1, maxLength: 80 }), (raw) => {
        const c = candidates(raw.map((r) => ({ ...r, priority: 0 })));
        const order = Array.from(planOrder(c, CYCLE, 30), (i) => c[i] as WatchCandidate);
        const cls = (e: WatchCandidate) =>
          e.dueAt === null ? 0 : daysBetween(e.refreshedCycle as string, CYCLE) >= 30 ? 1 : 2;
        for (let k = 1; k < order.length; k++) {
          const a = order[k - 1] as WatchCandidate;
          const b = order[k] as WatchCandidate;
          expect(cls(a)).toBeLessThanOrEqual(cls(b));
          if (cls(a) === 2 && cls(b) === 2)
            expect((a.dueAt as Date).getTime()).toBeLessThanOrEqual((b.dueAt as Date).getTime());
        }
      }),
      { seed: 43, numRuns: 300 },
    );
  });

  it('is deterministic: the same candidates in any order give the same plan', () => {
    fc.assert(
      fc.property(
        fc.array(candidate, { maxLength: 100 }),
        fc.integer({ min: 0, max: 60 }),
        fc.integer(),
        (raw, capacity, seed) => {
          const c = candidates(raw);
          const rng = new Rng(seed);
          const shuffled = [...c];
          for (let i = shuffled.length - 1; i > 0; i--) {
            const j = rng.int(0, i);
            [shuffled[i], shuffled[j]] = [shuffled[j] as WatchCandidate, shuffled[i] as WatchCandidate];
          }
          const a = planCycle(input(c, capacity));
          const b = planCycle(input(shuffled, capacity));
          expect(ids(b.selected)).toEqual(ids(a.selected));
          expect(b.deferred.map((d) => d.entry.id)).toEqual(a.deferred.map((d) => d.entry.id));
          expect(b.skipped.map((s) => [s.entry.id, s.reason])).toEqual(
            a.skipped.map((s) => [s.entry.id, s.reason]),
          );
        },
      ),
      { seed: 44, numRuns: 200 },
    );
  });
});

interface SimEntry {
  id: number;
  lambda: number;
  state: EntryState;
  refreshed: string | null;
  dueAt: Date | null;
  pendingHigh: boolean;
  changed: boolean;
}

/**
 * Runs `days` daily cycles of the planner and the estimator over entries with the given true
 * rates: each cycle plans with `capacity`, refreshes the selected, and feeds what they saw back.
 * `scaleOf` sets the scale (even a badly wrong one). Returns, per cycle, the ids refreshed.
 */
function simulate(opts: {
  lambdas: number[];
  capacity: number;
  days: number;
  maxStalenessDays: number;
  scaleOf: (entries: SimEntry[], capacity: number) => number;
  seed: number;
  highShare?: number;
  addAt?: { day: number; lambdas: number[] };
}): {
  refreshed: Map<number, string>[];
  entries: SimEntry[];
  boostedNext: [number, string][];
  /** Per cycle, the entries due by its start (never fetched, owed, or due time passed). */
  dueCount: number[];
} {
  const rng = new Rng(opts.seed);
  const start = '2026-03-01';
  const make = (lambda: number, id: number): SimEntry => ({
    id,
    lambda,
    state: { history: emptyHistory(), boost: 0, cohort: null },
    refreshed: null,
    dueAt: null,
    pendingHigh: false,
    changed: false,
  });
  const entries = opts.lambdas.map((l, i) => make(l, i + 1));
  const out: Map<number, string>[] = [];
  const boostedNext: [number, string][] = [];
  const dueCount: number[] = [];
  for (let d = 0; d < opts.days; d++) {
    const cycle = addDays(start, d);
    if (opts.addAt && d === opts.addAt.day)
      entries.push(...opts.addAt.lambdas.map((l, k) => make(l, entries.length + k + 1)));
    // The registry changes before the cycle's fetches.
    for (const e of entries)
      if (rng.next() < -Math.expm1(-e.lambda)) {
        e.changed = true;
        if (rng.next() < (opts.highShare ?? 0.1)) e.pendingHigh = true;
      }
    const c: WatchCandidate[] = entries.map((e) => ({
      id: e.id,
      keyword: `e${e.id}`,
      priority: 0,
      pid: null,
      lastRefreshedAt: e.refreshed === null ? null : cycleStart(e.refreshed),
      refreshedCycle: e.refreshed,
      lastOutcome: e.refreshed === null ? null : 'success',
      lastCycle: e.refreshed,
      addedAt: cycleStart(start),
      dueAt: e.dueAt,
    }));
    const plan = planCycle({ ...input(c, opts.capacity, opts.maxStalenessDays), cycle });
    const startMs = cycleStart(cycle).getTime();
    dueCount.push(
      c.filter(
        (x) =>
          x.dueAt === null ||
          x.dueAt.getTime() <= startMs ||
          daysBetween(x.refreshedCycle as string, cycle) >= opts.maxStalenessDays,
      ).length,
    );
    const scale = opts.scaleOf(entries, opts.capacity);
    const done = new Map<number, string>();
    for (const s of plan.selected) {
      const e = entries[s.id - 1] as SimEntry;
      const severity = e.changed ? (e.pendingHigh ? 'high' : 'low') : null;
      e.state = afterRefresh(
        e.state,
        { cycle, changed: e.changed, severity, cohort: '存续|11|I|1e6', usable: true },
        e.refreshed,
      );
      if (severity === 'high') boostedNext.push([e.id, addDays(cycle, 1)]);
      e.changed = false;
      e.pendingHigh = false;
      e.refreshed = cycle;
      const rate = estimateRate(e.state.history);
      e.dueAt = dueAfter({
        refreshedAt: cycleStart(cycle),
        rate,
        weight: weightOf(e.state.history),
        boostLeft: e.state.boost,
        scale,
        maxStalenessDays: opts.maxStalenessDays,
      });
      done.set(e.id, cycle);
    }
    out.push(done);
  }
  return { refreshed: out, entries, boostedNext, dueCount };
}

/** A heavy-tailed rate per entry. */
const lambdas = fc.array(
  fc.double({ min: -8, max: 0, noNaN: true }).map((x) => Math.exp(x)),
  { minLength: 10, maxLength: 200 },
);
const calibrated = (entries: SimEntry[], capacity: number) =>
  calibrateScale(
    entries.map((e) => ({
      root: Math.sqrt(Math.max(1e-5, estimateRate(e.state.history)) * weightOf(e.state.history)),
      entries: 1,
    })),
    capacity * 0.9,
    30,
  );

describe('the planner over many cycles, as properties', PROPERTIES, () => {
  it('never leaves an entry unrefreshed past the staleness bound while the budget covers it, whatever the scale', () => {
    fc.assert(
      fc.property(
        lambdas,
        fc.constantFrom(7, 30),
        fc.integer({ min: 0, max: 3 }),
        fc.oneof(
          fc.constant(0),
          fc.constant(Number.POSITIVE_INFINITY),
          fc.double({ min: 1e-4, max: 10, noNaN: true }),
          fc.constant(Number.NaN),
        ),
        fc.integer(),
        (ls, bound, extra, fixedScale, seed) => {
          const capacity = Math.ceil(ls.length / bound) + extra;
          const days = 60 + bound;
          const { refreshed } = simulate({
            lambdas: ls,
            capacity,
            days,
            maxStalenessDays: bound,
            // NaN stands for the calibrated scale.
            scaleOf: Number.isNaN(fixedScale) ? calibrated : () => fixedScale,
            seed,
          });
          const firstAll = Math.ceil(ls.length / capacity);
          const last = new Map<number, number>();
          for (let d = 0; d < days; d++) {
            for (const id of (refreshed[d] as Map<number, string>).keys()) last.set(id, d);
            // Every entry had its first fetch within ceil(N / capacity) cycles.
            if (d === firstAll - 1) expect(last.size).toBe(ls.length);
            if (d >= firstAll) for (const [, l] of last) expect(d - l).toBeLessThanOrEqual(bound);
          }
        },
      ),
      { seed: 45, numRuns: 40 },
    );
  });

  it('fetches entries added later promptly, before any due entry', () => {
    fc.assert(
      fc.property(
        lambdas,
        fc.array(fc.double({ min: 1e-4, max: 1, noNaN: true }), { minLength: 1, maxLength: 60 }),
        fc.integer(),
        (ls, added, seed) => {
          const capacity = Math.ceil(ls.length / 10) + 1;
          const { refreshed } = simulate({
            lambdas: ls,
            capacity,
            days: 40,
            maxStalenessDays: 30,
            scaleOf: calibrated,
            seed,
            addAt: { day: 20, lambdas: added },
          });
          const newIds = new Set(added.map((_, k) => ls.length + k + 1));
          const within = Math.ceil(added.length / capacity);
          const fetched = new Set<number>();
          for (let d = 20; d < 20 + within; d++) {
            const today = [...(refreshed[d] as Map<number, string>).keys()];
            const fresh = today.filter((id) => newIds.has(id));
            // While new entries wait, the cycle takes nothing else.
            if (fetched.size + fresh.length < newIds.size) expect(fresh.length).toBe(today.length);
            for (const id of fresh) fetched.add(id);
          }
          expect(fetched.size).toBe(newIds.size);
        },
      ),
      { seed: 46, numRuns: 40 },
    );
  });

  it('refreshes a firm every cycle for a few cycles after a high-severity change, when the budget covers what is due', () => {
    let checked = 0;
    fc.assert(
      fc.property(lambdas, fc.integer(), (ls, seed) => {
        // A fifth of the watchlist a day, and long intervals: most entries wait weeks, so only
        // the boost makes a firm come back the next cycle.
        const capacity = Math.ceil(ls.length / 5);
        const { refreshed, boostedNext, dueCount } = simulate({
          lambdas: ls,
          capacity,
          days: 30,
          maxStalenessDays: 30,
          scaleOf: () => 50,
          seed,
          highShare: 0.5,
        });
        const start = '2026-03-01';
        const total = refreshed.reduce((a, m) => a + m.size, 0);
        expect(total).toBeLessThan(ls.length * 30);
        for (const [id, next] of boostedNext) {
          for (let k = 0; k < BOOST_CYCLES; k++) {
            const d = daysBetween(start, addDays(next, k));
            if (d >= 30) break;
            if ((dueCount[d] as number) > capacity) break;
            checked++;
            expect((refreshed[d] as Map<number, string>).has(id), `entry ${id} on ${addDays(next, k)}`).toBe(
              true,
            );
          }
        }
      }),
      { seed: 47, numRuns: 30 },
    );
    expect(checked).toBeGreaterThan(100);
  });
});

describe('the planner with the model it learns, as properties', PROPERTIES, () => {
  it("on a world where every firm changes at the same rate, its refresh intervals converge to round robin's", () => {
    const COHORT = '存续|11|I|1e6';
    fc.assert(
      fc.property(
        fc.integer({ min: 30, max: 150 }),
        fc.double({ min: 0.002, max: 0.3, noNaN: true }),
        fc.integer({ min: 2, max: 12 }),
        fc.integer(),
        (n, lambda, rounds, seed) => {
          const rng = new Rng(seed);
          const capacity = Math.ceil(n / rounds);
          const start = '2026-03-01';
          const days = 150;
          const state: EntryState[] = Array.from({ length: n }, () => ({
            history: emptyHistory(),
            boost: 0,
            cohort: null,
          }));
          const rate = new Float64Array(n);
          const refreshed: (string | null)[] = new Array(n).fill(null);
          const dueAt: (Date | null)[] = new Array(n).fill(null);
          const changed = new Uint8Array(n);
          const days_: number[][] = Array.from({ length: n }, () => []);
          let model: PlannerModel = INITIAL_MODEL;
          for (let d = 0; d < days; d++) {
            const cycle = addDays(start, d);
            for (let i = 0; i < n; i++) if (rng.next() < -Math.expm1(-lambda)) changed[i] = 1;
            // What the plan job does before each cycle: cohort priors, the model and the scale.
            const learned = learnPlanner(
              state.map((s, i) => ({
                history: s.history,
                cohort: s.cohort,
                rate: refreshed[i] === null ? null : (rate[i] as number),
                weight: weightOf(s.history),
              })),
              capacity,
              30,
              model,
            );
            model = learned.model;
            const c: WatchCandidate[] = Array.from({ length: n }, (_, i) => ({
              id: i + 1,
              keyword: `e${i + 1}`,
              priority: 0,
              pid: null,
              lastRefreshedAt: refreshed[i] === null ? null : cycleStart(refreshed[i] as string),
              refreshedCycle: refreshed[i] as string | null,
              lastOutcome: refreshed[i] === null ? null : 'success',
              lastCycle: refreshed[i] as string | null,
              addedAt: cycleStart(start),
              dueAt: dueAt[i] as Date | null,
            }));
            const plan = planCycle({ ...input(c, capacity, 30), cycle });
            // What a worker does with each fetch: the estimate and the due time, from what the plan learned.
            for (const e of plan.selected) {
              const i = e.id - 1;
              const saw = changed[i] === 1;
              const next = afterRefresh(
                { ...(state[i] as EntryState), rate: refreshed[i] === null ? null : rate[i] },
                {
                  cycle,
                  changed: saw,
                  severity: saw ? (rng.next() < 0.1 ? 'high' : 'low') : null,
                  cohort: COHORT,
                  usable: true,
                },
                refreshed[i] as string | null,
              );
              state[i] = next;
              changed[i] = 0;
              refreshed[i] = cycle;
              (days_[i] as number[]).push(d);
              rate[i] = estimateRate(
                next.history,
                priorFor(COHORT, learned.priors, model.shape),
                model.datedWeight,
                model.shift,
              );
              dueAt[i] = dueAfter({
                refreshedAt: cycleStart(cycle),
                rate: shortTermRate(rate[i] as number, next.history, model),
                weight: plannedWeight(weightOf(next.history), model, next.history),
                boostLeft: model.boost ? next.boost : 0,
                scale: learned.scale,
                maxStalenessDays: model.tailDays,
              });
            }
          }
          // Round robin refreshes every entry every n / capacity days (the floor or the ceiling of it).
          const lo = Math.floor(n / capacity);
          const hi = Math.ceil(n / capacity);
          for (const ds of days_) {
            const late = ds.filter((d) => d >= days - 40);
            for (let k = 1; k < late.length; k++) {
              const gap = (late[k] as number) - (late[k - 1] as number);
              expect(gap).toBeGreaterThanOrEqual(lo);
              expect(gap).toBeLessThanOrEqual(hi);
            }
          }
        },
      ),
      { seed: 48, numRuns: 25 },
    );
  });
});
