/**
 * An entry's due time is set when it is refreshed, under the model of that day. Once the model or
 * the scale moves (the watchlist shows that firms differ, the dates prove to predict), the plan job
 * plans every refreshed entry again (src/plan/store.ts `refreshPlannerState` with `replan`,
 * `replanEntries`; src/plan/estimate.ts `replanned`): a busy firm refreshed while everyone looked
 * alike is not left at round robin's due time. These tests hold that on a real database: what
 * moves, what is written, and what is left alone (an entry whose last attempt failed, one a worker
 * holds, a basis that did not move).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basisMoved, INITIAL_MODEL, type PlannerModel, planBasis } from '../../src/plan/due.ts';
import {
  afterRefresh,
  type EntryState,
  entryPlan,
  priorFor,
  REPLAN_DRIFT,
  replanned,
} from '../../src/plan/estimate.ts';
import { emptyHistory } from '../../src/plan/model.ts';
import { spreadInUse } from '../../src/plan/spread.ts';
import { plannerState, refreshPlannerState } from '../../src/plan/store.ts';
import { Rng } from '../../src/sim/rng.ts';
import { addDays, cycleStart } from '../../src/time/cycles.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';

const START = '2026-01-05';
const CYCLE = '2026-03-02';
const COHORT = '存续|11|I|1e6';

/**
 * `n` entries refreshed every 10 days for 50 days: one in ten at 0.4 changes a day, the rest at
 * 0.004. Their due times are what a model holding every firm alike set: round robin's.
 */
function entries(n: number) {
  const rng = new Rng(5);
  return Array.from({ length: n }, (_, i) => {
    const busy = i % 10 === 0;
    const lambda = busy ? 0.4 : 0.004;
    let state: EntryState = { history: emptyHistory(), boost: 0, cohort: null };
    let last: string | null = null;
    for (let day = 0; day <= 50; day += 10) {
      const cycle = addDays(START, day);
      const changed = last !== null && rng.next() < -Math.expm1(-lambda * 10);
      state = afterRefresh(
        { ...state, rate: null, mean: 0.04 },
        {
          cycle,
          changed,
          severity: changed ? 'low' : null,
          cohort: COHORT,
          usable: true,
          lastApproval: busy ? addDays(cycle, -2) : '2019-05-06',
          established: '2001-03-04',
        },
        last,
      );
      last = cycle;
    }
    return { busy, history: state.history, refreshed: last as string };
  });
}

describe('plans made under an old model are made again', () => {
  it('a basis moves with the share pulled to equal, the dates, the scale and the outliers, not with noise', () => {
    const model: PlannerModel = { ...INITIAL_MODEL, equal: 0.4, trust: 0.9, datedWeight: 0.7 };
    const basis = planBasis(model, 2);
    expect(basisMoved(undefined, basis)).toBe(true);
    expect(basisMoved(basis, planBasis(model, 2))).toBe(false);
    expect(basisMoved(basis, planBasis({ ...model, equal: 0.43 }, 2.1))).toBe(false);
    expect(basisMoved(basis, planBasis({ ...model, equal: 0.35 }, 2))).toBe(true);
    expect(basisMoved(basis, planBasis({ ...model, datedWeight: 0.8 }, 2))).toBe(true);
    expect(basisMoved(basis, planBasis(model, 2.3))).toBe(true);
    expect(basisMoved(basis, planBasis(model, Number.POSITIVE_INFINITY))).toBe(true);
    expect(basisMoved(basis, planBasis({ ...model, outliers: 3 }, 2))).toBe(true);
    expect(basisMoved(planBasis(model, 0), planBasis(model, 0))).toBe(false);
  });

  it('an entry is planned again only when its due time came forward or its rate moved by more than a tenth', () => {
    const [busy] = entries(1);
    if (!busy) throw new Error('no entry');
    const alike: PlannerModel = { ...INITIAL_MODEL, equal: 1, datedWeight: 1, shape: 1000 };
    const differ: PlannerModel = { ...alike, equal: 0, shape: 0.5 };
    const prior = priorFor(
      COHORT,
      new Map([[COHORT, { cohort: COHORT, entries: 1, rate: 0.04, days: 900 }]]),
      0.5,
    );
    const input = {
      history: busy.history,
      prior,
      boost: 0,
      from: busy.refreshed,
      scale: 1.2,
      maxStalenessDays: 30,
    };
    const before = entryPlan({ ...input, model: alike });
    expect(replanned({ ...input, model: alike }, before)).toBeNull();
    const after = replanned({ ...input, model: differ }, before);
    expect(after).not.toBeNull();
    // A busy firm planned at its own rate is due sooner than at the watchlist's.
    expect((after?.due.getTime() ?? 0) < before.due.getTime()).toBe(true);
    // Never back: a due time the new model would set later stays where the refresh put it.
    const early = new Date(cycleStart(busy.refreshed).getTime() + 86_400_000);
    const kept = replanned({ ...input, model: alike }, { rate: before.rate, due: early });
    expect(kept).toBeNull();
    const rerated = replanned({ ...input, model: alike }, { rate: before.rate * 3, due: early });
    expect(rerated?.due.getTime()).toBe(early.getTime());
    // A drift inside a tenth of the interval is not worth a write.
    const interval = before.due.getTime() - cycleStart(busy.refreshed).getTime();
    const near = new Date(before.due.getTime() + 0.5 * REPLAN_DRIFT * interval);
    expect(replanned({ ...input, model: alike }, { rate: before.rate, due: near })).toBeNull();
  });
});

describe('the plan job plans refreshed entries again when its basis moved', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await freshDatabase();
  });
  afterAll(async () => {
    await t?.drop();
  });

  it('moves the busy firms sooner, leaves failed and held entries, stores the basis, and does nothing more while it holds', async () => {
    const list = entries(300);
    // Every due time as round robin's: 30 days after the last refresh.
    const roundRobin = cycleStart(addDays(list[0]?.refreshed as string, 30));
    await t.sql`insert into watchlist ${t.sql(
      list.map((e, i) => ({
        keyword: `企业${i}`,
        keyword_key: `企业${i}`,
        change_history: e.history as never,
        change_cohort: COHORT,
        change_rate: 0.04,
        change_weight: 1,
        refreshed_cycle: e.refreshed,
        last_refreshed_at: cycleStart(e.refreshed),
        last_outcome: i === 10 ? 'upstream_error' : 'success',
        due_at: i === 10 ? cycleStart(addDays(CYCLE, 5)) : roundRobin,
      })),
    )}`;
    // The last plan held everyone alike and planned every due time under that.
    const alike: PlannerModel = { ...INITIAL_MODEL, equal: 1, basis: planBasis(INITIAL_MODEL, 4) };
    await t.sql`insert into planner_state (singleton, scale, cycle, capacity, entries, model)
                values (true, 4, ${addDays(CYCLE, -1)}, 30, 300, ${t.sql.json(alike as never)})`;
    const ids = await t.sql<{ id: number }[]>`select id from watchlist order by id`;
    const idOf = (i: number) => Number(ids[i]?.id);

    // A worker holds entry 20 (busy) while the plan runs.
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => {
      locked = r;
    });
    const worker = t.sql.begin(async (tx) => {
      await tx`select id from watchlist where id = ${idOf(20)} for update`;
      locked();
      await held;
    });
    await isLocked;
    const stored = await refreshPlannerState(t.sql, CYCLE, { perDay: 30 }, 30, { replan: true });
    release();
    await worker;

    // The watchlist shows its firms differ (the busy tenth planned apart, or all at their own
    // rates): the model moved from everyone alike.
    expect((stored.model.outliers ?? 0) > 0 || stored.model.equal < 1).toBe(true);
    expect(stored.replanned?.read).toBe(298);
    const rows = await t.sql<{ id: number; due_at: Date; change_rate: number }[]>`
      select id, due_at, change_rate from watchlist order by id`;
    const due = (i: number) => rows[i]?.due_at.getTime() as number;
    // The busy firms are due sooner than every quiet one, and sooner than round robin's.
    const busy = list.flatMap((e, i) => (e.busy && i !== 20 ? [i] : []));
    const quiet = list.flatMap((e, i) => (!e.busy && i !== 10 ? [i] : []));
    const latestBusy = Math.max(...busy.map(due));
    expect(latestBusy).toBeLessThan(roundRobin.getTime());
    expect(latestBusy).toBeLessThan(Math.min(...quiet.map(due)));
    expect(stored.replanned?.written).toBeGreaterThanOrEqual(busy.length);
    // Each as the refresh itself would have planned it under the new model (`entryPlan`).
    const model = (await plannerState(t.sql)).model;
    const priors = new Map(
      (
        await t.sql<{ cohort: string; entries: number; rate: number; days: number }[]>`
        select cohort, entries, rate, days from change_cohorts`
      ).map((c) => [c.cohort, c]),
    );
    for (const i of [0, 30, 1, 2]) {
      const e = list[i];
      if (!e) throw new Error('no entry');
      const plan = entryPlan({
        history: e.history,
        prior: priorFor(COHORT, priors, model.shape, spreadInUse(model)),
        boost: 0,
        from: e.refreshed,
        model,
        scale: stored.scale,
        maxStalenessDays: 30,
      });
      if (rows[i]?.due_at.getTime() !== roundRobin.getTime() || e.busy)
        expect(Math.abs(due(i) - plan.due.getTime())).toBeLessThanOrEqual(1000);
    }
    // The failed entry keeps its rest; the held one is left to its refresh.
    expect(due(10)).toBe(cycleStart(addDays(CYCLE, 5)).getTime());
    expect(due(20)).toBe(roundRobin.getTime());
    // The basis is stored with the model. The next plan's scale counts the rates just planned
    // again, so it may move once more; after that, with nothing moved, a plan plans nothing again.
    expect(model.basis).toEqual(planBasis(stored.model, stored.scale));
    await refreshPlannerState(t.sql, CYCLE, { perDay: 30 }, 30, { replan: true });
    const settled = (await plannerState(t.sql)).model.basis;
    const again = await refreshPlannerState(t.sql, CYCLE, { perDay: 30 }, 30, { replan: true });
    expect(basisMoved(settled, planBasis(again.model, again.scale))).toBe(false);
    expect(again.replanned).toBeNull();
    // A top-up (replan off) never plans again, however far the basis moved.
    await t.sql`update planner_state set model = model - 'basis'`;
    const topUp = await refreshPlannerState(t.sql, CYCLE, { perDay: 30 }, 30);
    expect(topUp.replanned).toBeNull();
    expect((await plannerState(t.sql)).model.basis).toBeUndefined();
  });
});
