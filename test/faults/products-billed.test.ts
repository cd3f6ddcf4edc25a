/**
 * Product pulls against a simulator that bills them (`costs['product-listing']`, as
 * `daybook sim --product-cost`) and answers a share of them with faults: server errors and error
 * bodies (not billed), HTML pages (not billed) and billed answers cut off in transit. After the
 * products jobs run, the ledger holds one row per product call the simulator billed: at
 * DAYBOOK_PRODUCT_CREDITS when it is set (equal to the simulator's cost, the credits match to the
 * credit), and with credits null when it is not. A priced call reserves from the cycle's budget,
 * and one the budget cannot take is not made, saying why. A call of a run cut short is booked
 * once, by the next run, from what it landed; the plan leaves room for the cycle's priced pulls.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobDeps } from '../../jobs/deps.ts';
import { processProducts } from '../../jobs/products.ts';
import { type Config, loadConfig } from '../../src/config/config.ts';
import { landExchange } from '../../src/history/ingest.ts';
import { startRun } from '../../src/landing/runs.ts';
import { createLogger } from '../../src/log/log.ts';
import { readPlanInput } from '../../src/plan/decide.ts';
import { budgetOf } from '../../src/purchase/credits.ts';
import {
  openProductCall,
  PRODUCT_DETAIL_RUN,
  productCallsOf,
  recoverDetailCalls,
} from '../../src/purchase/products.ts';
import { type InlineSummary, runInline } from '../../src/runtime/inline.ts';
import { parseFaultSpec } from '../../src/sim/faults.ts';
import type { RunningSimulator } from '../../src/sim/server.ts';
import { addDays, cycleOf, pacificDate } from '../../src/time/cycles.ts';
import { UpstreamClient } from '../../src/upstream/client.ts';
import { runDaybook } from '../support/cli.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';
import { fastLimiter } from '../support/inline.ts';
import { NO_QUEUE } from '../support/job-deps.ts';
import { startTestSim, TEST_KEY, UNTHROTTLED } from '../support/sim.ts';

/** What the simulator bills a product call. */
const COST = 2;
const FAULTS = '500=0.15,error200=0.1,html=0.05,truncated=0.2,drift=0.2';
const DATES = 10;

interface World {
  t: TestDatabase;
  sim: RunningSimulator;
  cycle: string;
  config: Config;
  deps: Omit<JobDeps, 'enqueue'>;
  close(): Promise<void>;
}

async function world(env: Record<string, string>, faults = FAULTS, seed = 8): Promise<World> {
  const t = await freshDatabase();
  const sim = await startTestSim({
    seed,
    rateLimits: UNTHROTTLED,
    faults: parseFaultSpec(faults),
    costs: { 'enterprise-search': 3, 'product-listing': COST },
  });
  const config = loadConfig(
    {
      DATABASE_URL: t.url,
      DAYBOOK_API_BASE_URL: sim.url,
      DAYBOOK_API_KEY: TEST_KEY,
      DAYBOOK_RETRY_BASE_MS: '10',
      DAYBOOK_RETRY_ATTEMPTS: '20',
      LOG_LEVEL: 'silent',
      ...env,
    },
    '/nonexistent',
  );
  const deps = {
    sql: t.sql,
    client: new UpstreamClient({
      baseUrl: sim.url,
      apiKey: TEST_KEY,
      timeoutMs: config.DAYBOOK_HTTP_TIMEOUT_MS,
      now: () => sim.sim.now(),
    }),
    limiter: fastLimiter(t.sql),
    config,
    log: createLogger({ level: 'silent' }),
    now: () => sim.sim.now(),
  };
  return {
    t,
    sim,
    cycle: cycleOf(sim.sim.now()),
    config,
    deps,
    close: async () => {
      await sim.close();
      await t.drop();
    },
  };
}

/** The products jobs of `dates` list dates before the simulator's today, run in process. */
function pullProducts(w: World, dates = DATES): Promise<InlineSummary> {
  const today = pacificDate(w.sim.sim.now());
  return runInline(w.deps, {
    cycle: w.cycle,
    only: 'products',
    concurrency: 1,
    productDates: Array.from({ length: dates }, (_, i) => ({ date: addDays(today, -(i + 1)), pull: 'd1' })),
  });
}

interface LedgerRow {
  credits: number | null;
  status: string;
  cycle: string;
  keyword: string | null;
  run_id: string | null;
  raw_response_id: string | null;
  outcome: string | null;
  http_status: number | null;
}

function productLedger(t: TestDatabase): Promise<LedgerRow[]> {
  return t.sql<LedgerRow[]>`
    select l.credits, l.status, l.cycle::text, l.keyword, l.run_id, l.raw_response_id, r.outcome, r.http_status
    from credit_ledger l left join raw_responses r on r.id = l.raw_response_id
    where l.operation = 'product-listing' order by l.id`;
}

/** Product calls the simulator billed: it billed nothing else in these tests. */
function billed(sim: RunningSimulator): { calls: number; credits: number } {
  expect(sim.sim.counters.requests['enterprise-search']).toBe(0);
  return { calls: sim.sim.counters.billedQueries, credits: sim.sim.counters.creditsBilled };
}

describe('product pulls billed by the upstream', { timeout: 180_000 }, () => {
  describe('priced: DAYBOOK_PRODUCT_CREDITS equal to what the simulator bills', () => {
    let w: World;
    let summary: InlineSummary;
    beforeAll(async () => {
      w = await world({ DAYBOOK_PRODUCT_CREDITS: String(COST) });
      summary = await pullProducts(w);
    });
    afterAll(() => w?.close());

    it('met the faults: error answers, and billed answers cut off in transit', () => {
      const outcomes = w.sim.sim.counters.outcomes['product-listing'];
      expect(outcomes['fault:500'] ?? 0).toBeGreaterThan(0);
      expect(outcomes['fault:error200'] ?? 0).toBeGreaterThan(0);
      expect(outcomes['fault:html'] ?? 0).toBeGreaterThan(0);
      expect(outcomes['success:truncated'] ?? 0).toBeGreaterThan(0);
      expect(summary.productPulls.filter((p) => p.outcome === 'succeeded').length).toBeGreaterThan(0);
    });

    it('books one row per billed call, and the credits the simulator billed', async () => {
      const rows = await productLedger(w.t);
      const sim = billed(w.sim);
      expect(sim.calls).toBeGreaterThan(DATES / 2);
      expect(rows).toHaveLength(sim.calls);
      expect(rows.reduce((s, r) => s + (r.credits ?? 0), 0)).toBe(sim.credits);
      for (const r of rows) {
        expect(r).toMatchObject({ credits: COST, status: 'booked', cycle: w.cycle });
        expect(r.run_id).not.toBeNull();
        // Linked to the answer it billed: a success, or a 200 that broke off (presumed billed).
        expect(r.raw_response_id).not.toBeNull();
        expect(r.http_status).toBe(200);
        expect(['success', 'malformed_body']).toContain(r.outcome);
      }
      expect(rows.filter((r) => r.outcome === 'malformed_body')).toHaveLength(
        w.sim.sim.counters.outcomes['product-listing']['success:truncated'] ?? 0,
      );
      // Each call once: no raw response or run booked twice.
      expect(new Set(rows.map((r) => r.raw_response_id)).size).toBe(rows.length);
      expect(new Set(rows.map((r) => r.run_id)).size).toBe(rows.length);
    });

    it('books no error answer: server errors, error bodies and HTML pages are not billed', async () => {
      const outcomes = w.sim.sim.counters.outcomes['product-listing'];
      const [r] = await w.t.sql<{ unbooked: number; booked: number }[]>`
        select count(*) filter (where l.id is null)::int as unbooked, count(l.id)::int as booked
        from raw_responses r left join credit_ledger l on l.raw_response_id = r.id
        where r.operation = 'product-listing' and r.outcome <> 'success'`;
      expect(r?.unbooked).toBe(
        (outcomes['fault:500'] ?? 0) + (outcomes['fault:error200'] ?? 0) + (outcomes['fault:html'] ?? 0),
      );
      // The failures that are booked are the billed answers cut off in transit.
      expect(r?.booked).toBe(outcomes['success:truncated'] ?? 0);
    });

    it('spends from the cycle budget what it booked, and holds nothing reserved', async () => {
      const b = await budgetOf(w.t.sql, w.cycle);
      expect(b).toMatchObject({ spent: billed(w.sim).credits, reserved: 0 });
    });

    it('productCallsOf counts the cycle’s calls, all priced', async () => {
      const sim = billed(w.sim);
      expect(await productCallsOf(w.t.sql, w.cycle)).toEqual({
        calls: sim.calls,
        priced: sim.calls,
        unpricedCalls: 0,
        unconfirmed: 0,
        credits: sim.credits,
      });
    });

    it('a product detail asked by `daybook products get --name` is booked too', async () => {
      const today = pacificDate(w.sim.sim.now());
      const name = w.sim.sim.products.list(addDays(today, -1), w.sim.sim.now())[0]?.name as string;
      const before = billed(w.sim).calls;
      const r = await runDaybook(['products', 'get', '--name', name, '--json'], {
        DATABASE_URL: w.t.url,
        DAYBOOK_API_BASE_URL: w.sim.url,
        DAYBOOK_API_KEY: TEST_KEY,
        DAYBOOK_PRODUCT_RATE: '6000',
        DAYBOOK_PRODUCT_CREDITS: String(COST),
        DAYBOOK_RETRY_BASE_MS: '10',
        DAYBOOK_RETRY_ATTEMPTS: '20',
        DAYBOOK_CLOCK: w.sim.sim.now().toISOString(),
        LOG_LEVEL: 'warn',
      });
      expect(r.code, r.stderr).toBe(0);
      const sim = billed(w.sim);
      expect(sim.calls).toBeGreaterThan(before);
      const rows = await productLedger(w.t);
      expect(rows).toHaveLength(sim.calls);
      expect(rows.filter((x) => x.keyword === name).length).toBe(sim.calls - before);
      expect(rows.reduce((s, x) => s + (x.credits ?? 0), 0)).toBe(sim.credits);
    });
  });

  describe('unpriced: DAYBOOK_PRODUCT_CREDITS unset', () => {
    let w: World;
    beforeAll(async () => {
      w = await world({});
      await pullProducts(w);
    });
    afterAll(() => w?.close());

    it('books one row per billed call, each with credits null', async () => {
      const rows = await productLedger(w.t);
      const sim = billed(w.sim);
      expect(sim.calls).toBeGreaterThan(DATES / 2);
      expect(rows).toHaveLength(sim.calls);
      for (const r of rows) {
        expect(r).toMatchObject({ credits: null, status: 'booked', cycle: w.cycle });
        expect(r.raw_response_id).not.toBeNull();
      }
      expect(await productCallsOf(w.t.sql, w.cycle)).toEqual({
        calls: sim.calls,
        priced: 0,
        unpricedCalls: sim.calls,
        unconfirmed: 0,
        credits: 0,
      });
    });

    it('reserves nothing: the cycle budget spends nothing on them', async () => {
      const b = await budgetOf(w.t.sql, w.cycle);
      expect(b === null || (b.spent === 0 && b.reserved === 0)).toBe(true);
    });
  });

  describe('calls sent and not answered', () => {
    let w: World;
    beforeAll(async () => {
      w = await world(
        { DAYBOOK_PRODUCT_CREDITS: String(COST), DAYBOOK_HTTP_TIMEOUT_MS: '1000' },
        'timeout=0.4',
        3,
      );
      await pullProducts(w, 4);
    });
    afterAll(() => w?.close());

    it('are booked unconfirmed at the configured credits, beside the billed calls, and counted as spent', async () => {
      const timeouts = w.sim.sim.counters.outcomes['product-listing']['fault:timeout'] ?? 0;
      expect(timeouts).toBeGreaterThan(0);
      const rows = await productLedger(w.t);
      const unconfirmed = rows.filter((r) => r.status === 'unconfirmed');
      expect(unconfirmed).toHaveLength(timeouts);
      for (const r of unconfirmed) {
        // Linked to the landed record of the call that got no answer.
        expect(r).toMatchObject({ credits: COST, outcome: 'timeout', http_status: null });
        expect(r.raw_response_id).not.toBeNull();
      }
      const booked = rows.filter((r) => r.status === 'booked');
      expect(booked).toHaveLength(billed(w.sim).calls);
      expect(booked.reduce((s, r) => s + (r.credits ?? 0), 0)).toBe(billed(w.sim).credits);
      expect(await budgetOf(w.t.sql, w.cycle)).toMatchObject({
        spent: billed(w.sim).credits + timeouts * COST,
        reserved: 0,
      });
      expect(await productCallsOf(w.t.sql, w.cycle)).toMatchObject({
        calls: rows.length,
        unconfirmed: timeouts,
      });
    });
  });

  describe('the budget', () => {
    let w: World;
    afterAll(() => w?.close());

    it('a priced pull the budget cannot take is not made, and fails saying why', async () => {
      // Room for two calls of 4 credits.
      w = await world({ DAYBOOK_PRODUCT_CREDITS: '4', DAYBOOK_CREDIT_BUDGET: '9' }, '', 5);
      const summary = await pullProducts(w, 3);
      expect(summary.productPulls.map((p) => p.outcome)).toEqual(['succeeded', 'succeeded', 'failed']);
      expect(summary.productPulls[2]?.detail).toMatch(/credit budget cannot take it: .*budget 9: 8 spent/);
      // The third call was never sent.
      expect(w.sim.sim.counters.requests['product-listing']).toBe(2);
      const [run] = await w.t.sql<{ outcome: string; error_code: string; error_message: string }[]>`
        select outcome, error_code, error_message from runs where kind = 'products' order by id desc limit 1`;
      expect(run).toMatchObject({ outcome: 'failed', error_code: 'budget_exhausted' });
      expect(run?.error_message).toContain('DAYBOOK_PRODUCT_CREDITS');
      // A list states no amount: the configured 4 are booked and spent for each.
      expect(await budgetOf(w.t.sql, w.cycle)).toMatchObject({ spent: 8, reserved: 0 });
      expect((await productLedger(w.t)).map((r) => r.credits)).toEqual([4, 4]);
    });

    it('the plan leaves room for the cycle’s priced product pulls not made yet', async () => {
      const reader = (env: Record<string, string>) => ({
        sql: w.t.sql,
        config: loadConfig({ DAYBOOK_CREDIT_BUDGET: '100', ...env }, '/nonexistent'),
        now: () => w.sim.sim.now(),
      });
      // A cycle with no product call yet: two pulls (the lookback) at 5 credits are kept back.
      const next = addDays(w.cycle, 1);
      const priced = await readPlanInput(reader({ DAYBOOK_PRODUCT_CREDITS: '5' }), next);
      expect(priced.creditBudget).toBe(90);
      const unpriced = await readPlanInput(reader({}), addDays(w.cycle, 2));
      expect(unpriced.creditBudget).toBe(100);
      // In the cycle above, both pulls are booked: nothing more is kept back for them.
      const spentCycle = await readPlanInput(reader({ DAYBOOK_PRODUCT_CREDITS: '5' }), w.cycle);
      expect(spentCycle.creditBudget).toBe(9 - 8);
    });
  });

  describe('a run cut short with its call under way', () => {
    let w: World;
    beforeAll(async () => {
      w = await world({ DAYBOOK_PRODUCT_CREDITS: String(COST) }, '');
    });
    afterAll(() => w?.close());

    it('is booked once by the next run: from the answer it landed, or presumed when none landed', async () => {
      const today = pacificDate(w.sim.sim.now());
      const landedDate = addDays(today, -1);
      const lostDate = addDays(today, -2);
      const jobId = (date: string) => `products-${date}-d1`;
      // A worker opened its call, landed the answer, and died before booking it.
      const first = await startRun(w.t.sql, {
        kind: 'products',
        listDate: landedDate,
        jobId: jobId(landedDate),
      });
      expect(
        await openProductCall(w.t.sql, {
          runId: first,
          cycle: w.cycle,
          price: COST,
          budget: 1000,
          keyword: landedDate,
          date: landedDate,
        }),
      ).toMatchObject({ ok: true });
      const got = await w.deps.client.listProducts(landedDate, 5);
      const landed = await landExchange(w.t.sql, got.exchange, { runId: first, cycle: w.cycle });
      // Another opened its call and died before anything landed.
      const second = await startRun(w.t.sql, {
        kind: 'products',
        listDate: lostDate,
        jobId: jobId(lostDate),
      });
      await openProductCall(w.t.sql, {
        runId: second,
        cycle: w.cycle,
        price: COST,
        budget: 1000,
        keyword: lostDate,
        date: lostDate,
      });
      expect(await budgetOf(w.t.sql, w.cycle)).toMatchObject({ reserved: 2 * COST, spent: 0 });
      expect(await productLedger(w.t)).toEqual([]);

      // The first job runs again: its start closes the run cut short, and the calls are booked.
      const deps = { ...w.deps, enqueue: NO_QUEUE };
      const data = { date: landedDate, pull: 'd1', limit: 5, cycle: w.cycle };
      await processProducts(deps, data, jobId(landedDate));
      // The other job too; then the first again: nothing is booked twice.
      await processProducts(deps, { ...data, date: lostDate }, jobId(lostDate));
      await processProducts(deps, data, jobId(landedDate));

      const rows = await productLedger(w.t);
      expect(rows).toHaveLength(5);
      expect(rows.find((r) => r.run_id === String(first))).toMatchObject({
        status: 'booked',
        credits: COST,
        raw_response_id: String(landed.id),
      });
      expect(rows.find((r) => r.run_id === String(second))).toMatchObject({
        status: 'presumed',
        credits: COST,
        raw_response_id: null,
      });
      const others = rows.filter((r) => r.run_id !== String(first) && r.run_id !== String(second));
      expect(others.map((r) => [r.status, r.credits, r.outcome])).toEqual(
        Array(3).fill(['booked', COST, 'success']),
      );
      expect(new Set(rows.map((r) => r.run_id)).size).toBe(5);
      // The simulator billed the landed call and the three runs that followed (the lost call
      // never reached it: presumed is the one row beyond what it billed).
      expect(billed(w.sim).calls).toBe(4);
      expect(await budgetOf(w.t.sql, w.cycle)).toMatchObject({ reserved: 0, spent: 5 * COST });
    });

    it('a detail call of a killed `products get` is booked by the next pull once it is an hour old', async () => {
      // `products get --name` opened its call and was killed: no job will close its run.
      const runId = await startRun(w.t.sql, { kind: PRODUCT_DETAIL_RUN, entity: 'Killed' });
      const before = await budgetOf(w.t.sql, w.cycle);
      expect(
        await openProductCall(w.t.sql, {
          runId,
          cycle: w.cycle,
          price: COST,
          budget: 1000,
          keyword: 'Killed',
          date: null,
        }),
      ).toMatchObject({ ok: true });
      const rowOf = async () => (await productLedger(w.t)).filter((r) => r.run_id === String(runId));
      // Still young: it may be a live command waiting for its answer, so it is left alone.
      expect(await recoverDetailCalls(w.t.sql)).toBe(0);
      expect(await rowOf()).toEqual([]);
      await w.t.sql`update runs set started_at = now() - interval '2 hours' where id = ${runId}`;
      const today = pacificDate(w.sim.sim.now());
      const data = { date: addDays(today, -3), pull: 'd1', limit: 5, cycle: w.cycle };
      await processProducts({ ...w.deps, enqueue: NO_QUEUE }, data, `products-${data.date}-d1`);
      expect(await rowOf()).toEqual([
        expect.objectContaining({
          status: 'presumed',
          credits: COST,
          keyword: 'Killed',
          raw_response_id: null,
        }),
      ]);
      const [run] = await w.t.sql<{ outcome: string }[]>`select outcome from runs where id = ${runId}`;
      expect(run?.outcome).toBe('abandoned');
      // Its reservation is released and its presumed credits spent, with the pull's own.
      expect(await budgetOf(w.t.sql, w.cycle)).toMatchObject({
        reserved: before?.reserved ?? 0,
        spent: (before?.spent ?? 0) + 2 * COST,
      });
      // Booked once: a second recovery finds nothing.
      expect(await recoverDetailCalls(w.t.sql)).toBe(0);
      expect(await rowOf()).toHaveLength(1);
    });
  });
});
