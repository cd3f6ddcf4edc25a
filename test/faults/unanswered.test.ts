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
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobDeps } from '../../jobs/deps.ts';
import { loadConfig } from '../../src/config/config.ts';
import { createLogger } from '../../src/log/log.ts';
import { runInline } from '../../src/runtime/inline.ts';
import { parseFaultSpec } from '../../src/sim/faults.ts';
import type { RunningSimulator } from '../../src/sim/server.ts';
import { addDays, cycleOf, cycleStart } from '../../src/time/cycles.ts';
import { UpstreamClient } from '../../src/upstream/client.ts';
import { keywordKey } from '../../src/watch/keyword.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';
import { fastLimiter } from '../support/inline.ts';
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
