/**
 * Top-ups of a cycle's plan (src/plan/topup.ts): entries added after the plan are planned in the
 * same cycle, within the credits left and the rate window, under job ids of their own; nothing
 * planned, in flight or done is planned again; what does not fit is said to wait for the credit
 * budget or the rate window, never for the next cycle.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { enterpriseJobId } from '../../jobs/enterprise.ts';
import { PlanJobData, planJobId, processPlan, topUpBatch, topUpJobId } from '../../jobs/plan.ts';
import { type Config, loadConfig } from '../../src/config/config.ts';
import { createLogger } from '../../src/log/log.ts';
import { ADDED_DUE_DETAIL, addedWaitDetail, deferredEntries, latestPlan } from '../../src/plan/decide.ts';
import { newSincePlan, topUpMark, topUpOf } from '../../src/plan/topup.ts';
import { resumeCycle } from '../../src/purchase/credits.ts';
import type { Queues } from '../../src/runtime/queues.ts';
import { topUpForTick } from '../../src/runtime/scheduler.ts';
import { cycleOf, cycleStart, nextRefresh } from '../../src/time/cycles.ts';
import { addWatches, removeWatch } from '../../src/watch/store.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';

const log = createLogger({ level: 'silent' });

describe('a top-up of the cycle plan', { timeout: 60_000 }, () => {
  let db: TestDatabase;
  const now = new Date();
  const cycle = cycleOf(now);
  /** What each plan enqueued: the entries and the batch their job ids carry. */
  let enqueued: { ids: number[]; batch: string | undefined }[] = [];

  function configWith(env: Record<string, string> = {}): Config {
    return loadConfig(
      {
        DATABASE_URL: db.url,
        DAYBOOK_CREDIT_BUDGET: '3000',
        DAYBOOK_ENTERPRISE_RATE: '100',
        LOG_LEVEL: 'silent',
        ...env,
      },
      '/nonexistent/.env',
    );
  }
  const deps = (config: Config, at: Date = now) => ({
    sql: db.sql,
    config,
    log,
    now: () => at,
    enqueue: {
      async enterprises(_cycle: string, ids: readonly number[], batch?: string) {
        enqueued.push({ ids: [...ids].sort((a, b) => a - b), batch });
        return ids.length;
      },
    },
  });
  const watch = async (names: string[], priority = 0): Promise<number[]> => {
    const rows = await db.sql<{ id: string }[]>`
      insert into watchlist ${db.sql(names.map((k) => ({ keyword: k, keyword_key: k, priority })))} returning id`;
    return rows.map((r) => Number(r.id));
  };
  const statuses = async () => {
    const rows = await db.sql<{ watch_id: string; status: string }[]>`
      select watch_id, status from cycle_fetches where cycle = ${cycle} order by watch_id`;
    return Object.fromEntries(rows.map((r) => [Number(r.watch_id), r.status]));
  };
  const fetchStatuses = async (ids: number[]) => {
    const all = await statuses();
    return ids.map((id) => all[id] ?? 'none');
  };
  /** Settles a planned entry as bought, as a worker would have (3 credits). */
  const bought = async (id: number) => {
    await db.sql`update cycle_fetches set status = 'succeeded', credits_billed = 3
                 where cycle = ${cycle} and watch_id = ${id}`;
    await db.sql`update watchlist set last_refreshed_at = ${now}, refreshed_cycle = ${cycle},
                   due_at = ${new Date(now.getTime() + 5 * 86400_000)} where id = ${id}`;
    await db.sql`update cycle_budgets set spent = spent + 3 where cycle = ${cycle}`;
  };

  beforeEach(async () => {
    db = await freshDatabase();
    enqueued = [];
  });
  afterEach(async () => {
    await db.drop();
  });

  it('plans what was added after the plan, once, under ids apart from the plan and from each other', async () => {
    const config = configWith();
    // The scheduler's plan, on an empty watchlist.
    await processPlan(deps(config), { cycle }, planJobId(cycle));
    const first = await latestPlan(db.sql, cycle);
    expect(first).toMatchObject({ highWater: 0, plans: 1 });
    expect(await topUpOf({ sql: db.sql, config, now: () => now }, cycle)).toMatchObject({ kind: 'none' });

    // Two companies added: due, not planned; the status says so, and not "the next cycle".
    const [a, b] = await watch(['甲公司', '乙公司']);
    expect(await newSincePlan(db.sql, cycle, first as NonNullable<typeof first>)).toEqual({
      entries: 2,
      last: b,
    });
    const reader = { config, now: () => now };
    const waiting = await deferredEntries(db.sql, cycle, 20, reader);
    expect(waiting.byReason).toEqual({ added_after_plan: 2 });
    expect(waiting.first.map((d) => d.detail)).toEqual([ADDED_DUE_DETAIL, ADDED_DUE_DETAIL]);
    expect(waiting.first.every((d) => !d.detail?.includes('next cycle'))).toBe(true);

    const topUp = await topUpOf({ sql: db.sql, config, now: () => now }, cycle);
    expect(topUp).toMatchObject({ kind: 'due', entries: [a, b], waiting: { entries: 0 } });
    if (topUp.kind !== 'due') throw new Error('due');
    // Two askers in the same state name the same top-up: one job.
    expect(topUp.mark).toBe(topUpMark(1, [b as number, a as number]));
    expect(topUp.mark).toMatch(/^1-[0-9a-f]{10}$/);
    expect(PlanJobData.parse({ cycle, topUp: topUp.mark })).toEqual({ cycle, topUp: topUp.mark });
    const jobId = topUpJobId(cycle, topUp.mark);
    expect(jobId).toBe(`plan-${cycle}-top-${topUp.mark}`);
    expect(jobId).not.toBe(planJobId(cycle));
    expect(enterpriseJobId(cycle, a as number, topUpBatch(topUp.mark))).toBe(
      `enterprise-${cycle}-${a}-top-${topUp.mark}`,
    );

    enqueued = [];
    const report = await processPlan(deps(config), { cycle, topUp: topUp.mark }, jobId);
    expect(enqueued).toEqual([{ ids: [a, b], batch: `top-${topUp.mark}` }]);
    expect(report.counts).toMatchObject({ selected: 2, newlyPlanned: 2, enqueued: 2 });
    expect(await statuses()).toEqual({ [a as number]: 'planned', [b as number]: 'planned' });
    expect(await latestPlan(db.sql, cycle)).toMatchObject({ highWater: b, plans: 2 });
    expect((await deferredEntries(db.sql, cycle, 20, reader)).total).toBe(0);

    // Asked again: nothing due is unplanned, and a top-up run anyway enqueues nothing.
    expect(await topUpOf({ sql: db.sql, config, now: () => now }, cycle)).toMatchObject({ kind: 'none' });
    enqueued = [];
    const again = await processPlan(deps(config), { cycle, topUp: '2-0000000000' }, 'plan-again');
    expect(again.counts).toMatchObject({ selected: 2, newlyPlanned: 0, enqueued: 0 });
    expect(enqueued).toEqual([{ ids: [], batch: 'top-2-0000000000' }]);
    // The cycle's own plan, run again (a Redis that lost its jobs), enqueues what is planned under the cycle's ids.
    enqueued = [];
    await processPlan(deps(config), { cycle }, planJobId(cycle));
    expect(enqueued).toEqual([{ ids: [a, b], batch: undefined }]);
  });

  it('within the credits left: what does not fit waits for the credit budget, and is taken once credits are added', async () => {
    // Credits for two queries in the cycle.
    const config = configWith({ DAYBOOK_CREDIT_BUDGET: '6' });
    const [a, b] = await watch(['甲公司', '乙公司']);
    await processPlan(deps(config), { cycle }, planJobId(cycle));
    await bought(a as number);
    await bought(b as number);
    const [c] = await watch(['丙公司']);
    const reader = { config, now: () => now };

    const topUp = await topUpOf({ sql: db.sql, config, now: () => now }, cycle);
    expect(topUp).toMatchObject({ kind: 'none', waiting: { entries: 1, reason: 'credit_budget' } });
    const deferred = await deferredEntries(db.sql, cycle, 20, reader);
    expect(deferred.byReason).toEqual({ credit_budget: 1 });
    expect(deferred.first).toEqual([
      { watch_id: c, keyword: '丙公司', reason: 'credit_budget', detail: addedWaitDetail('credit_budget') },
    ]);
    // A top-up run anyway plans nothing, and the entry still waits for credits (not "not reached").
    await processPlan(deps(config), { cycle, topUp: '9-0000000000' }, 'plan-topup');
    expect((await statuses())[c as number]).toBeUndefined();
    const after = await deferredEntries(db.sql, cycle, 20, reader);
    expect(after.first[0]).toMatchObject({
      reason: 'credit_budget',
      detail: addedWaitDetail('credit_budget'),
    });

    // Three more credits: a top-up plans it.
    await resumeCycle(db.sql, cycle, 3);
    const more = await topUpOf({ sql: db.sql, config, now: () => now }, cycle);
    expect(more).toMatchObject({ kind: 'due', entries: [c] });
  });

  it('within the rate window: what does not fit waits for room in the rate limit', async () => {
    // One query a minute, ten minutes before the next refresh: a plan gets its hour's minimum, 60.
    const config = configWith({ DAYBOOK_ENTERPRISE_RATE: '1' });
    const late = new Date(nextRefresh(cycleStart(cycle)).getTime() - 10 * 60_000);
    const names = Array.from({ length: 60 }, (_, i) => `公司${i}`);
    await watch(names);
    await processPlan(deps(config, late), { cycle }, planJobId(cycle));
    expect(Object.keys(await statuses())).toHaveLength(60);
    const [extra] = await watch(['迟来公司']);
    const reader = { config, now: () => late };
    expect(await topUpOf({ sql: db.sql, config, now: () => late }, cycle)).toMatchObject({
      kind: 'none',
      waiting: { entries: 1, reason: 'rate_window' },
    });
    const deferred = await deferredEntries(db.sql, cycle, 20, reader);
    expect(deferred.first).toEqual([
      { watch_id: extra, keyword: '迟来公司', reason: 'rate_window', detail: addedWaitDetail('rate_window') },
    ]);
  });

  it('a new entry of a higher priority takes a planned one’s place; that one, planned again later, gets a new job id', async () => {
    const config = configWith({ DAYBOOK_CREDIT_BUDGET: '6' });
    const [a, b] = await watch(['甲公司', '乙公司']);
    await processPlan(deps(config), { cycle }, planJobId(cycle));
    expect(await statuses()).toEqual({ [a as number]: 'planned', [b as number]: 'planned' });
    const [urgent] = await watch(['急公司'], 10);

    const topUp = await topUpOf({ sql: db.sql, config, now: () => now }, cycle);
    expect(topUp).toMatchObject({ kind: 'due', entries: [urgent], waiting: { entries: 1 } });
    if (topUp.kind !== 'due') throw new Error('due');
    enqueued = [];
    await processPlan(deps(config), { cycle, topUp: topUp.mark }, topUpJobId(cycle, topUp.mark));
    expect(enqueued).toEqual([{ ids: [urgent], batch: topUpBatch(topUp.mark) }]);
    // The budget takes two: the last of the plan order is deferred (its queued job buys nothing).
    expect(await statuses()).toEqual({
      [a as number]: 'planned',
      [b as number]: 'deferred',
      [urgent as number]: 'planned',
    });

    // Credits added: the deferred entry is due again; its first job ran under the cycle's id,
    // so the top-up enqueues it under its own.
    await resumeCycle(db.sql, cycle, 3);
    const next = await topUpOf({ sql: db.sql, config, now: () => now }, cycle);
    expect(next).toMatchObject({ kind: 'due', entries: [b] });
    if (next.kind !== 'due') throw new Error('due');
    expect(next.mark).toMatch(/^2-/);
    enqueued = [];
    await processPlan(deps(config), { cycle, topUp: next.mark }, topUpJobId(cycle, next.mark));
    expect(enqueued).toEqual([{ ids: [b], batch: topUpBatch(next.mark) }]);
    expect(enterpriseJobId(cycle, b as number, topUpBatch(next.mark))).not.toBe(
      enterpriseJobId(cycle, b as number),
    );
  });

  it('the scheduler looks cheaply every tick, and previews the plan again only when new entries changed', async () => {
    const config = configWith({ DAYBOOK_CREDIT_BUDGET: '3' });
    const added: PlanJobData[] = [];
    const queues = {
      async addPlan(data: PlanJobData) {
        added.push(data);
        return data.topUp === undefined ? planJobId(data.cycle) : topUpJobId(data.cycle, data.topUp);
      },
    } as unknown as Queues;
    const memo: { seen?: string } = {};
    const look = () => topUpForTick({ sql: db.sql, config, queues, now: () => now }, now, memo);
    expect(await look()).toEqual([]); // never planned: the cycle's own plan comes first
    await processPlan(deps(config), { cycle }, planJobId(cycle));
    expect(await look()).toEqual([]);
    const [a] = await watch(['甲公司']);
    const topUp = await topUpOf({ sql: db.sql, config, now: () => now }, cycle);
    if (topUp.kind !== 'due') throw new Error('due');
    expect(await look()).toEqual([topUpJobId(cycle, topUp.mark)]);
    // Not run yet: the same entries are not previewed again.
    expect(await look()).toEqual([]);
    expect(added).toEqual([{ cycle, topUp: topUp.mark }]);
    await processPlan(deps(config), { cycle, topUp: topUp.mark }, topUpJobId(cycle, topUp.mark));
    expect(await fetchStatuses([a as number])).toEqual(['planned']);
    // The credits are all planned: a later entry waits, and no top-up is asked for.
    await watch(['乙公司']);
    expect(await look()).toEqual([]);
    expect(added).toHaveLength(1);
  });

  it('an entry watched again after the plan is added again: the tick sees it and a top-up plans it today', async () => {
    const config = configWith();
    const queues = {
      async addPlan(data: PlanJobData) {
        return data.topUp === undefined ? planJobId(data.cycle) : topUpJobId(data.cycle, data.topUp);
      },
    } as unknown as Queues;
    const look = () => topUpForTick({ sql: db.sql, config, queues, now: () => now }, now, {});
    // Watched, then removed before the cycle's plan: the plan does not take it.
    const [first] = (await addWatches(db.sql, [{ keyword: '丙公司', priority: 0 }])).ids;
    const id = first as number;
    expect(await removeWatch(db.sql, '丙公司')).toBe(1);
    await processPlan(deps(config), { cycle }, planJobId(cycle));
    const plan = await latestPlan(db.sql, cycle);
    expect(plan?.highWater).toBe(id);
    expect(await fetchStatuses([id])).toEqual(['none']);
    // Watched again: the same entry (its id below the plan's mark), added again.
    const again = await addWatches(db.sql, [{ keyword: '丙公司', priority: 0 }]);
    expect(again.watches.map((w) => [w.id, w.status])).toEqual([[id, 'reactivated']]);
    expect(await newSincePlan(db.sql, cycle, plan as NonNullable<typeof plan>)).toEqual({
      entries: 1,
      last: id,
    });
    const topUp = await topUpOf({ sql: db.sql, config, now: () => now }, cycle);
    if (topUp.kind !== 'due') throw new Error(`due, not ${topUp.kind}`);
    expect(topUp.entries).toEqual([id]);
    expect(await look()).toEqual([topUpJobId(cycle, topUp.mark)]);
    await processPlan(deps(config), { cycle, topUp: topUp.mark }, topUpJobId(cycle, topUp.mark));
    expect(await fetchStatuses([id])).toEqual(['planned']);
    // Watched once more while watched: not added again, and nothing new for the tick.
    const still = await addWatches(db.sql, [{ keyword: '丙公司', priority: 0 }]);
    expect(still.watches.map((w) => w.status)).toEqual(['existing']);
    const after = await latestPlan(db.sql, cycle);
    expect(await newSincePlan(db.sql, cycle, after as NonNullable<typeof after>)).toEqual({
      entries: 0,
      last: 0,
    });
  });

  it('counts claimed entries without a reservation as credits owed: a top-up does not plan past them', async () => {
    const config = configWith({ DAYBOOK_CREDIT_BUDGET: '6' });
    const [a, b] = await watch(['甲公司', '乙公司']);
    await processPlan(deps(config), { cycle }, planJobId(cycle));
    // Both claimed by buyers that have not reserved yet.
    await db.sql`update cycle_fetches set status = 'fetching' where cycle = ${cycle}`;
    const [c] = await watch(['丙公司']);
    expect(await topUpOf({ sql: db.sql, config, now: () => now }, cycle)).toMatchObject({
      kind: 'none',
      waiting: { entries: 1, reason: 'credit_budget' },
    });
    expect(a).toBeLessThan(c as number);
    expect(b).toBeLessThan(c as number);
  });
});
