/**
 * A cycle against a simulator that trickles half of its answers: HTTP 200 and the first bytes of
 * a billed success, then one byte every 200 ms, far past the client's timeout. Each such call is
 * presumed billed the moment it times out: booked at once, failed for the cycle with the reason,
 * and not bought again. The ledger equals what the simulator billed, call for call.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.ts';
import { createLogger } from '../../src/log/log.ts';
import { type InlineSummary, runInline } from '../../src/runtime/inline.ts';
import { parseFaultSpec } from '../../src/sim/faults.ts';
import type { RunningSimulator } from '../../src/sim/server.ts';
import { cycleOf } from '../../src/time/cycles.ts';
import { UpstreamClient } from '../../src/upstream/client.ts';
import { keywordKey } from '../../src/watch/keyword.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';
import { fastLimiter } from '../support/inline.ts';
import { startTestSim, TEST_KEY, UNTHROTTLED } from '../support/sim.ts';
import { expectLedgerMatchesBilling, figures } from './support/cycle.ts';

const ENTRIES = 10;

describe('a cycle against a simulator that trickles billed answers past the timeout', {
  timeout: 120_000,
}, () => {
  let t: TestDatabase;
  let sim: RunningSimulator;
  let cycle: string;
  let summary: InlineSummary;
  const trickled = () => sim.sim.counters.outcomes['enterprise-search']['success:trickle'] ?? 0;

  beforeAll(async () => {
    t = await freshDatabase();
    sim = await startTestSim({ seed: 11, rateLimits: UNTHROTTLED, faults: parseFaultSpec('trickle=0.5') });
    cycle = cycleOf(sim.sim.now());
    const names = sim.sim
      .world()
      .all()
      .slice(0, ENTRIES)
      .map((e) => e.ENTNAME);
    await t.sql`insert into watchlist ${t.sql(names.map((k) => ({ keyword: k, keyword_key: keywordKey(k) })))}`;
    const config = loadConfig(
      {
        DATABASE_URL: t.url,
        DAYBOOK_API_BASE_URL: sim.url,
        DAYBOOK_API_KEY: TEST_KEY,
        DAYBOOK_HTTP_TIMEOUT_MS: '1000',
        DAYBOOK_RETRY_BASE_MS: '10',
        DAYBOOK_RETRY_ATTEMPTS: '3',
        DAYBOOK_CREDIT_BUDGET: '100000',
        LOG_LEVEL: 'silent',
      },
      '/nonexistent',
    );
    summary = await runInline(
      {
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
      },
      { cycle, only: 'enterprises', concurrency: 4 },
    );
  }, 120_000);

  afterAll(async () => {
    await sim?.close();
    await t?.drop();
  });

  it('trickled some answers and answered the others', () => {
    expect(trickled()).toBeGreaterThan(0);
    expect(trickled()).toBeLessThan(ENTRIES);
    expect(summary.enterprises.succeeded).toBe(ENTRIES - trickled());
    expect(summary.enterprises.failed).toBe(trickled());
  });

  it('books every trickled answer as presumed billed: the ledger equals what the simulator billed', async () => {
    const check = await expectLedgerMatchesBilling(t.sql, cycle, sim);
    expect(check.billed.n).toBe(ENTRIES);
    const [presumed] = await t.sql<{ n: number; credits: number }[]>`
      select count(*)::int as n, coalesce(sum(credits), 0)::int as credits from credit_ledger
      where cycle = ${cycle} and status = 'booked'
        and remark like 'a success cut off by the timeout after its first % bytes; presumed billed%'`;
    expect(presumed).toEqual({ n: trickled(), credits: 3 * trickled() });
    figures('trickle', {
      entries: ENTRIES,
      trickled: trickled(),
      'billed by the simulator': `${check.billed.n} calls, ${check.billed.credits} credits`,
      booked: `${check.booked.n} calls, ${check.booked.credits} credits`,
    });
  });

  it('buys nothing twice: a trickled entry fails for the cycle, saying it was presumed billed', async () => {
    expect(sim.sim.counters.requests['enterprise-search']).toBe(ENTRIES);
    expect(Math.max(...Object.values(sim.sim.counters.billedByPid))).toBe(1);
    const failed = await t.sql<{ error_code: string; error_message: string }[]>`
      select error_code, error_message from cycle_fetches where cycle = ${cycle} and status = 'failed'`;
    expect(failed).toHaveLength(trickled());
    for (const f of failed) {
      expect(f.error_code).toBe('timeout');
      expect(f.error_message).toMatch(/^presumed billed, not usable, not bought again this cycle: /);
    }
  });
});
