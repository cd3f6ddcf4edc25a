/**
 * Calls that get no answer. An upstream that takes the request, bills it, and answers only after
 * daybook's timeout (the simulator's `late` fault): daybook cannot tell such a call from one the
 * upstream never billed, so it books it as *unconfirmed* credits, counted as spent, and tries the
 * entry once more at most in the cycle; after a second call without an answer the entry fails for
 * the cycle. Over several cycles and keywords: at most two calls per entry per cycle (counted by
 * the simulator), and the ledger's confirmed and unconfirmed credits cover every credit the
 * simulator billed. A later answer does not confirm an unconfirmed call. A request that was never
 * sent (connection refused, a name that does not resolve, a TLS handshake that fails) is not booked.
 */
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobDeps } from '../../jobs/deps.ts';
import { loadConfig } from '../../src/config/config.ts';
import { pageContext } from '../../src/console/layout.ts';
import { overviewPage } from '../../src/console/pages.ts';
import { readOverview } from '../../src/console/queries.ts';
import { createLogger } from '../../src/log/log.ts';
import { runInline } from '../../src/runtime/inline.ts';
import { registerOperatorGauges } from '../../src/runtime/ops-metrics.ts';
import { parseFaultSpec } from '../../src/sim/faults.ts';
import type { RunningSimulator } from '../../src/sim/server.ts';
import { addDays, cycleOf, cycleStart, pacificDate } from '../../src/time/cycles.ts';
import { UpstreamClient } from '../../src/upstream/client.ts';
import { keywordKey } from '../../src/watch/keyword.ts';
import { runDaybook } from '../support/cli.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';
import { fastLimiter } from '../support/inline.ts';
import { ownQueues } from '../support/queues.ts';
import { startTestSim, TEST_KEY, UNTHROTTLED } from '../support/sim.ts';
import { figures } from './support/cycle.ts';

/** daybook's request timeout here, and how long the simulator holds a late answer: far past it. */
const TIMEOUT_MS = 1000;
const LATE_MS = 60_000;
const CREDITS = 3;

/** Deps of an inline run against `sim`, with more retries than the rule allows unanswered calls. */
function depsFor(t: TestDatabase, sim: RunningSimulator): Omit<JobDeps, 'enqueue'> {
  const config = loadConfig(
    {
      DATABASE_URL: t.url,
      DAYBOOK_API_BASE_URL: sim.url,
      DAYBOOK_API_KEY: TEST_KEY,
      DAYBOOK_HTTP_TIMEOUT_MS: String(TIMEOUT_MS),
      DAYBOOK_RETRY_BASE_MS: '10',
      DAYBOOK_RETRY_ATTEMPTS: '5',
      DAYBOOK_CREDIT_BUDGET: '100000',
      LOG_LEVEL: 'silent',
    },
    '/nonexistent',
  );
  return {
    sql: t.sql,
    client: new UpstreamClient({
      baseUrl: sim.url,
      apiKey: TEST_KEY,
      timeoutMs: TIMEOUT_MS,
      now: () => sim.sim.now(),
    }),
    limiter: fastLimiter(t.sql),
    config,
    log: createLogger({ level: 'silent' }),
    now: () => sim.sim.now(),
  };
}

/** The simulator's billed calls per PID, from its state, since `before`. */
function billedSince(sim: RunningSimulator, before: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [pid, n] of Object.entries(sim.sim.counters.billedByPid)) {
    const d = n - (before[pid] ?? 0);
    if (d > 0) out[pid] = d;
  }
  return out;
}

async function watch(t: TestDatabase, sim: RunningSimulator, from: number, n: number): Promise<string[]> {
  const names = sim.sim
    .world()
    .all()
    .slice(from, from + n)
    .map((e) => e.ENTNAME);
  await t.sql`insert into watchlist ${t.sql(names.map((k) => ({ keyword: k, keyword_key: keywordKey(k) })))}`;
  return names;
}

interface LedgerRow {
  keyword: string;
  status: string;
  credits: number;
  remark: string;
}

describe('an upstream that bills every call and answers after the timeout, cycle after cycle', {
  timeout: 300_000,
}, () => {
  const KEYWORDS = 4;
  const CYCLES = 3;
  let t: TestDatabase;
  let sim: RunningSimulator;
  const cycles: string[] = [];
  /** Per cycle: the simulator's billed calls per PID in that cycle. */
  const billedPerCycle: Record<string, number>[] = [];
  const creditsPerCycle: number[] = [];

  beforeAll(async () => {
    t = await freshDatabase();
    sim = await startTestSim({
      seed: 5,
      rateLimits: UNTHROTTLED,
      faults: parseFaultSpec(`late=1@${LATE_MS}`),
    });
    await watch(t, sim, 0, KEYWORDS);
    const deps = depsFor(t, sim);
    const first = cycleOf(sim.sim.now());
    for (let i = 0; i < CYCLES; i++) {
      const cycle = addDays(first, i);
      cycles.push(cycle);
      sim.sim.setClock(new Date(cycleStart(cycle).getTime() + 3600_000));
      const before = { ...sim.sim.counters.billedByPid };
      const credits = sim.sim.counters.creditsBilled;
      await runInline(deps, { cycle, only: 'enterprises', concurrency: KEYWORDS });
      billedPerCycle.push(billedSince(sim, before));
      creditsPerCycle.push(sim.sim.counters.creditsBilled - credits);
    }
  }, 300_000);

  afterAll(async () => {
    await sim?.close();
    await t?.drop();
  });

  it('calls each entry at most twice a cycle, though more attempts are allowed, and the simulator billed each call', () => {
    expect(sim.sim.counters.outcomes['enterprise-search']['success:late']).toBe(
      sim.sim.counters.requests['enterprise-search'],
    );
    for (const [i, billed] of billedPerCycle.entries()) {
      // Every entry was bought in every cycle (it failed, so the next plan takes it again).
      expect(Object.keys(billed), cycles[i]).toHaveLength(KEYWORDS);
      expect(Math.max(...Object.values(billed)), cycles[i]).toBeLessThanOrEqual(2);
    }
  });

  it('books every call as unconfirmed: confirmed + unconfirmed credits cover what the simulator billed, cycle by cycle', async () => {
    for (const [i, cycle] of cycles.entries()) {
      const rows = await t.sql<{ status: string; n: number; credits: number }[]>`
        select status, count(*)::int as n, coalesce(sum(credits), 0)::int as credits from credit_ledger
        where cycle = ${cycle} group by status`;
      const of = (s: string) => rows.find((r) => r.status === s)?.credits ?? 0;
      expect(of('booked') + of('unconfirmed') + of('presumed'), cycle).toBeGreaterThanOrEqual(
        creditsPerCycle[i] as number,
      );
      // Nothing was answered: every credit is unconfirmed, one row per call the simulator billed.
      expect(rows).toEqual([
        { status: 'unconfirmed', n: (creditsPerCycle[i] as number) / CREDITS, credits: creditsPerCycle[i] },
      ]);
      // The budget counts them as spent: the budget is the ledger.
      const [budget] = await t.sql<{ spent: number; reserved: number }[]>`
        select spent, reserved from cycle_budgets where cycle = ${cycle}`;
      expect(budget, cycle).toEqual({ spent: creditsPerCycle[i], reserved: 0 });
    }
    const ledger = await t.sql<LedgerRow[]>`
      select keyword, status, credits, remark from credit_ledger order by id`;
    for (const l of ledger) {
      expect(l.credits).toBe(CREDITS);
      expect(l.remark).toMatch(/no answer within 1000 ms; the request was sent: may have been billed/);
    }
  });

  it('fails each entry for the cycle after its second unanswered call, saying why', async () => {
    const rows = await t.sql<{ cycle: string; status: string; error_code: string; error_message: string }[]>`
      select cycle::text as cycle, status, error_code, error_message from cycle_fetches order by cycle, watch_id`;
    expect(rows).toHaveLength(KEYWORDS * CYCLES);
    for (const r of rows) {
      expect(r).toMatchObject({ status: 'failed', error_code: 'unanswered' });
      expect(r.error_message).toMatch(/^no answer twice; may have been billed; waits for the next cycle: /);
    }
    const [budget] = await t.sql<{ spent: number; reserved: number }[]>`
      select sum(spent)::int as spent, sum(reserved)::int as reserved from cycle_budgets`;
    expect(budget).toEqual({ spent: 2 * CREDITS * KEYWORDS * CYCLES, reserved: 0 });
    figures('unanswered', {
      keywords: KEYWORDS,
      cycles: CYCLES,
      'calls billed by the simulator': sim.sim.counters.billedQueries,
      'credits billed': sim.sim.counters.creditsBilled,
      'booked unconfirmed': budget?.spent ?? 0,
    });
  });
});

describe('an upstream that answers some calls after the timeout: a later answer does not confirm an unanswered call', {
  timeout: 300_000,
}, () => {
  const KEYWORDS = 10;
  let t: TestDatabase;
  let sim: RunningSimulator;
  let cycle: string;

  beforeAll(async () => {
    t = await freshDatabase();
    sim = await startTestSim({
      seed: 5,
      rateLimits: UNTHROTTLED,
      faults: parseFaultSpec(`late=0.5@${LATE_MS}`),
    });
    await watch(t, sim, 20, KEYWORDS);
    cycle = cycleOf(sim.sim.now());
    await runInline(depsFor(t, sim), { cycle, only: 'enterprises', concurrency: KEYWORDS });
  }, 300_000);

  afterAll(async () => {
    await sim?.close();
    await t?.drop();
  });

  /** Each entry: its fetch status and code, and its ledger rows in the order they were written. */
  const entries = async () =>
    t.sql<{ keyword: string; status: string; error_code: string | null; ledger: string[] }[]>`
      select w.keyword, f.status, f.error_code,
             coalesce((select array_agg(l.status order by l.id) from credit_ledger l
                       where l.cycle = f.cycle and l.watch_id = f.watch_id), '{}') as ledger
      from cycle_fetches f join watchlist w on w.id = f.watch_id
      where f.cycle = ${cycle} order by w.keyword`;

  it('calls no entry more than twice, and books each call as what is known of it', async () => {
    const late = sim.sim.counters.outcomes['enterprise-search']['success:late'] ?? 0;
    expect(late).toBeGreaterThan(0);
    expect(Math.max(...Object.values(sim.sim.counters.billedByPid))).toBeLessThanOrEqual(2);
    const rows = await entries();
    expect(rows).toHaveLength(KEYWORDS);
    for (const r of rows) {
      // Answered at once: one booked call. Late, then answered: the unconfirmed row stays beside
      // the booked one. Late twice: two unconfirmed rows, and the entry waits for the next cycle.
      if (r.status === 'succeeded') expect([['booked'], ['unconfirmed', 'booked']]).toContainEqual(r.ledger);
      else {
        expect(r).toMatchObject({ status: 'failed', error_code: 'unanswered' });
        expect(r.ledger).toEqual(['unconfirmed', 'unconfirmed']);
      }
    }
    const lateThenAnswered = rows.filter((r) => r.ledger.join() === 'unconfirmed,booked');
    expect(lateThenAnswered.length, 'an entry whose second call was answered').toBeGreaterThan(0);
    const [ledger] = await t.sql<{ booked: number; unconfirmed: number; n: number }[]>`
      select coalesce(sum(credits) filter (where status = 'booked'), 0)::int as booked,
             coalesce(sum(credits) filter (where status = 'unconfirmed'), 0)::int as unconfirmed,
             (count(*) filter (where status = 'unconfirmed'))::int as n
      from credit_ledger where cycle = ${cycle}`;
    const billed = sim.sim.counters.creditsBilled;
    // Every late call is an unconfirmed row; every answered one is booked, at what it stated.
    expect(ledger?.n).toBe(late);
    expect(ledger?.booked).toBe(billed - CREDITS * late);
    expect((ledger?.booked ?? 0) + (ledger?.unconfirmed ?? 0)).toBeGreaterThanOrEqual(billed);
    figures('unanswered, some answered later', {
      keywords: KEYWORDS,
      'late calls': late,
      'entries late then answered': lateThenAnswered.length,
      'credits billed': billed,
      confirmed: ledger?.booked ?? 0,
      unconfirmed: ledger?.unconfirmed ?? 0,
    });
  });

  it('daybook status, the console and /metrics show confirmed and unconfirmed credits apart', async () => {
    const [l] = await t.sql<{ confirmed: number; unconfirmed: number; calls: number }[]>`
      select coalesce(sum(credits) filter (where status = 'booked'), 0)::int as confirmed,
             coalesce(sum(credits) filter (where status in ('unconfirmed', 'presumed')), 0)::int as unconfirmed,
             (count(*) filter (where status in ('unconfirmed', 'presumed')))::int as calls
      from credit_ledger where cycle = ${cycle}`;
    const want = { confirmed: l?.confirmed ?? -1, unconfirmed: l?.unconfirmed ?? -1 };
    expect(want.unconfirmed).toBeGreaterThan(0);
    const env = { DATABASE_URL: t.url, LOG_LEVEL: 'silent' };
    const json = await runDaybook(['status', '--cycle', cycle, '--json', '--no-queues'], env);
    expect(json.code, json.stderr).toBe(0);
    const credits = (JSON.parse(json.stdout) as { credits: Record<string, number> }).credits;
    expect(credits).toMatchObject({
      ...want,
      spent: want.confirmed + want.unconfirmed,
      unconfirmedCalls: l?.calls,
      unpricedCalls: 0,
      presumed: 0,
    });
    const text = await runDaybook(['status', '--cycle', cycle, '--no-queues'], env);
    expect(text.stdout).toContain(
      `(${want.confirmed} confirmed, ${want.unconfirmed} unconfirmed: calls sent and never answered`,
    );
    const zh = await runDaybook(['status', '--cycle', cycle, '--no-queues', '--lang', 'zh'], env);
    expect(zh.stdout).toContain(`（其中已确认 ${want.confirmed} 积分，未确认 ${want.unconfirmed} 积分：`);

    const overview = await t.sql.begin((tx) => readOverview(tx));
    expect(overview.ledger).toEqual({ ...want, unconfirmed_calls: l?.calls, unpriced_calls: 0 });
    const page = String(overviewPage(pageContext('en', '/ui/'), overview));
    expect(page).toContain(`<dt>Confirmed</dt><dd>${want.confirmed} credits</dd>`);
    expect(page).toContain(`<dt>Unconfirmed</dt><dd>${want.unconfirmed} credits</dd>`);
    const pageZh = String(overviewPage(pageContext('zh', '/ui/'), overview));
    expect(pageZh).toContain(`<dt>未确认</dt><dd>${want.unconfirmed} 积分</dd>`);

    const q = ownQueues('dbun');
    try {
      const registry = new Registry();
      registerOperatorGauges(registry, t.sql, q.queues);
      const sample = async (name: string) =>
        Number(/^daybook_\S+ (\S+)$/m.exec(await registry.getSingleMetricAsString(name))?.[1]);
      expect(await sample('daybook_cycle_credits_confirmed')).toBe(want.confirmed);
      expect(await sample('daybook_cycle_credits_unconfirmed')).toBe(want.unconfirmed);
      expect(await sample('daybook_cycle_calls_unconfirmed')).toBe(l?.calls);
      expect(await sample('daybook_cycle_product_calls_unpriced')).toBe(0);
    } finally {
      await q.remove();
    }
  });
  it('counts product calls booked without an amount, and no sum breaks on them', async () => {
    const date = addDays(pacificDate(sim.sim.now()), -1);
    await runInline(depsFor(t, sim), {
      cycle,
      only: 'products',
      productDates: [{ date, pull: 'd1' }],
      concurrency: 1,
    });
    const [u] = await t.sql<{ n: number }[]>`
      select count(*)::int as n from credit_ledger
      where cycle = ${cycle} and operation = 'product-listing' and credits is null`;
    const unpriced = u?.n ?? 0;
    expect(unpriced).toBeGreaterThan(0);
    const env = { DATABASE_URL: t.url, LOG_LEVEL: 'silent' };
    const json = await runDaybook(['status', '--cycle', cycle, '--json', '--no-queues'], env);
    const credits = (JSON.parse(json.stdout) as { credits: Record<string, number> }).credits;
    expect(credits.unpricedCalls).toBe(unpriced);
    expect(credits).toMatchObject({ spent: expect.any(Number), confirmed: expect.any(Number) });
    expect(Number(credits.confirmed) + Number(credits.unconfirmed)).toBe(credits.spent);
    const text = await runDaybook(['status', '--cycle', cycle, '--no-queues'], env);
    expect(text.stdout).toContain(
      `\n  Unpriced product calls: ${unpriced} (no documented amount, not in the sums)\n`,
    );
    const overview = await t.sql.begin((tx) => readOverview(tx));
    expect(overview.ledger?.unpriced_calls).toBe(unpriced);
    expect(String(overviewPage(pageContext('en', '/ui/'), overview))).toContain(
      `<dt>Unpriced product calls</dt><dd>${unpriced} calls</dd>`,
    );
    const [usage] = await t.sql<{ credits: number; unpriced_queries: number }[]>`
      select credits, unpriced_queries from analytics.credit_usage
      where cycle = ${cycle} and operation = 'product-listing'`;
    expect(usage).toEqual({ credits: 0, unpriced_queries: unpriced });
  });
});
