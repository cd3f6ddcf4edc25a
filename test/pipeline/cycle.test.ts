import { afterEach, describe, expect, it } from 'vitest';
import { budgetOf } from '../../src/purchase/credits.ts';
import { cycleOf } from '../../src/time/cycles.ts';
import { startPipeline, type TestPipeline, until } from '../support/pipeline.ts';
import { cycleSettled } from '../support/settled.ts';
import { startTestSim, TEST_KEY, UNTHROTTLED } from '../support/sim.ts';

/** The cycle's plan has run and every row it wrote is settled (one snapshot: test/support/settled.ts). */
const settled = (p: TestPipeline, cycle: string) => cycleSettled(p.db.sql, cycle);

/**
 * How long a cycle may take before the test calls it hung: seconds on an idle machine, a minute
 * or more on a busy one. Every wait is for a state; this only bounds it.
 */
const HANG_MS = 300_000;

describe('a cycle through the queue', { timeout: 2 * HANG_MS }, () => {
  let p: TestPipeline | undefined;
  afterEach(async () => {
    await p?.close();
    p = undefined;
  });

  it('refreshes 200 watch entries once each with two workers; the ledger equals what the simulator billed', async () => {
    p = await startPipeline();
    await p.watch(200);
    const cycle = cycleOf(p.sim.sim.now());
    const w1 = p.startWorkers(4);
    const w2 = p.startWorkers(4);
    await p.queues.addPlan({ cycle });
    await p.queues.addPlan({ cycle }); // a second scheduler, a manual re-run: one plan
    await until([w1, w2], () => settled(p as TestPipeline, cycle), HANG_MS);
    const rows = await p.db.sql<{ status: string; n: number }[]>`
      select status, count(*)::int as n from cycle_fetches where cycle = ${cycle} group by status`;
    const byStatus = Object.fromEntries(rows.map((r) => [r.status, r.n]));
    expect((byStatus.succeeded ?? 0) + (byStatus.duplicate ?? 0)).toBe(200);
    const state = p.sim.sim.counters;
    const [ledger] = await p.db.sql<{ n: number; credits: number }[]>`
      select count(*)::int as n, coalesce(sum(credits), 0)::int as credits from credit_ledger where cycle = ${cycle}`;
    expect(ledger?.n).toBe(state.billedQueries);
    expect(ledger?.credits).toBe(state.creditsBilled);
    expect(Math.max(...Object.values(state.billedByPid))).toBe(1);
    expect(state.rateLimited['enterprise-search']).toBe(0);
    const plans = await p.db.sql`select 1 from runs where kind = 'plan' and cycle = ${cycle}`;
    expect(plans).toHaveLength(1);
    const budget = await budgetOf(p.db.sql, cycle);
    expect(budget).toMatchObject({ spent: state.creditsBilled, reserved: 0 });
    // Logs carry one line per job, and never the key. A job logs once it has finished, after the
    // cycle's last entry is settled (it may be writing the cycle's digest): wait for the lines.
    const logs = p.logs;
    const lines = () => logs.filter((l) => l.includes('"kind":"enterprise"'));
    await until([w1, w2], async () => lines().length >= 200, HANG_MS);
    const jobLines = lines();
    expect(jobLines.length).toBeGreaterThanOrEqual(200);
    expect(p.logs.join('')).not.toContain(TEST_KEY);
  });

  it('backs the whole queue off when the simulator allows less than the limiter, and still completes', async () => {
    const sim = await startTestSim({
      enterprises: 200,
      rateLimits: { 'enterprise-search': 10, 'product-listing': 100 },
      rateWindowMs: 2000,
    });
    // The simulator's window is kept full (as another client of the same account would) until it
    // has refused the workers once: on a busy machine, the workers alone may never call faster
    // than the simulator allows, and the test would not see a back-off at all.
    const full = setInterval(() => {
      for (let i = 0; i < 10; i++)
        try {
          sim.sim.admit('enterprise-search', `Bearer ${TEST_KEY}`);
        } catch {
          break;
        }
    }, 20);
    try {
      p = await startPipeline({}, sim);
      await p.watch(40);
      const cycle = cycleOf(sim.sim.now());
      const w = p.startWorkers(4);
      let refused = 0;
      w.events.on('job', (e) => {
        if (e.kind === 'enterprise' && e.outcome === 'rate_limited' && ++refused === 1) clearInterval(full);
      });
      await p.queues.addPlan({ cycle });
      await until([w], () => settled(p as TestPipeline, cycle), HANG_MS);
      const [ok] = await p.db.sql<{ n: number }[]>`
        select count(*)::int as n from cycle_fetches where cycle = ${cycle} and status = 'succeeded'`;
      expect(ok?.n).toBe(40);
      expect(refused).toBeGreaterThan(0);
      expect(sim.sim.counters.rateLimited['enterprise-search']).toBeGreaterThan(0);
      expect(Math.max(...Object.values(sim.sim.counters.billedByPid))).toBe(1);
      // Rate-limit answers did not use up attempts: nothing failed.
      const failed = await p.db.sql`select 1 from cycle_fetches where cycle = ${cycle} and status = 'failed'`;
      expect(failed).toHaveLength(0);
    } finally {
      clearInterval(full);
      await p?.close();
      p = undefined;
      await sim.close();
    }
  });

  it('pauses when credits run out mid-cycle, reports it, and finishes the rest after resume', async () => {
    const sim = await startTestSim({
      enterprises: 200,
      keys: new Map([[TEST_KEY, 30]]),
      rateLimits: UNTHROTTLED,
    });
    try {
      p = await startPipeline({}, sim);
      await p.watch(20);
      const cycle = cycleOf(sim.sim.now());
      const w = p.startWorkers(2);
      await p.queues.addPlan({ cycle });
      await until([w], () => settled(p as TestPipeline, cycle), HANG_MS);
      const budget = await budgetOf(p.db.sql, cycle);
      expect(budget?.pausedAt).not.toBeNull();
      expect(budget?.pausedReason).toMatch(/insufficient_credits/);
      const [ok] = await p.db.sql<{ n: number }[]>`
        select count(*)::int as n from cycle_fetches where cycle = ${cycle} and status = 'succeeded'`;
      expect(ok?.n).toBe(10);
      const [deferred] = await p.db.sql<{ n: number }[]>`
        select count(*)::int as n from cycle_fetches where cycle = ${cycle} and status = 'deferred'`;
      expect(deferred?.n).toBe(10);

      // The operator buys credits and resumes: the rest finishes, nothing bought twice.
      sim.sim.setCredits(TEST_KEY, 1000);
      const { resumeCycle } = await import('../../src/purchase/credits.ts');
      await resumeCycle(p.db.sql, cycle);
      const ids = await p.db.sql<{ watch_id: string }[]>`
        update cycle_fetches set status = 'planned' where cycle = ${cycle} and status = 'deferred' returning watch_id`;
      await p.queues.enterprises(
        cycle,
        ids.map((r) => Number(r.watch_id)),
        1,
      );
      await until([w], () => settled(p as TestPipeline, cycle), HANG_MS);
      const [all] = await p.db.sql<{ n: number }[]>`
        select count(*)::int as n from cycle_fetches where cycle = ${cycle} and status = 'succeeded'`;
      expect(all?.n).toBe(20);
      expect(Math.max(...Object.values(sim.sim.counters.billedByPid))).toBe(1);
    } finally {
      await p?.close();
      p = undefined;
      await sim.close();
    }
  });

  it('a worker stopped mid-cycle and started again completes the cycle without double billing', async () => {
    p = await startPipeline({ DAYBOOK_ENTERPRISE_RATE: '600' });
    await p.watch(60);
    const cycle = cycleOf(p.sim.sim.now());
    const first = p.startWorkers(4);
    await p.queues.addPlan({ cycle });
    await until(
      [first],
      async () => {
        const [r] = await (p as TestPipeline).db.sql<{ n: number }[]>`
        select count(*)::int as n from cycle_fetches where cycle = ${cycle} and status = 'succeeded'`;
        return (r?.n ?? 0) >= 10;
      },
      HANG_MS,
    );
    await first.close();
    const second = p.startWorkers(4);
    await until([second], () => settled(p as TestPipeline, cycle), HANG_MS);
    const [ok] = await p.db.sql<{ n: number }[]>`
      select count(*)::int as n from cycle_fetches where cycle = ${cycle} and status = 'succeeded'`;
    expect(ok?.n).toBe(60);
    expect(p.sim.sim.counters.billedQueries).toBe(60);
  });
});
