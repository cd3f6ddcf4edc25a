/** Runs whole cycles in-process (the inline runner) against a test database and simulator. */
import { LocalRateLimiter, perMinute } from '../../src/budget/limiter.ts';
import { loadConfig } from '../../src/config/config.ts';
import { runInline } from '../../src/runtime/inline.ts';
import { createLogger } from '../../src/runtime/log.ts';
import type { RunningSimulator } from '../../src/sim/server.ts';
import { cycleStart } from '../../src/time/cycles.ts';
import { UpstreamClient } from '../../src/upstream/client.ts';
import type { TestDatabase } from './db.ts';
import { TEST_KEY } from './sim.ts';

/**
 * For each cycle: the simulator's clock is set an hour after that cycle's 03:00 Beijing refresh,
 * then the cycle runs; `productDates` says which lists each cycle pulls.
 */
export async function runCyclesInline(
  t: TestDatabase,
  sim: RunningSimulator,
  cycles: readonly string[],
  productDates: (now: Date) => { date: string; pull: string }[] = () => [],
): Promise<void> {
  const config = loadConfig(
    { DATABASE_URL: t.url, DAYBOOK_API_BASE_URL: sim.url, DAYBOOK_API_KEY: TEST_KEY, LOG_LEVEL: 'silent' },
    '/nonexistent',
  );
  const client = new UpstreamClient({ baseUrl: sim.url, apiKey: TEST_KEY, now: () => sim.sim.now() });
  const limiter = new LocalRateLimiter({
    'enterprise-search': perMinute(6000, 0),
    'product-listing': perMinute(6000, 0),
  });
  const log = createLogger({ level: 'silent' });
  for (const cycle of cycles) {
    sim.sim.setClock(new Date(cycleStart(cycle).getTime() + 3600_000));
    await runInline(
      { sql: t.sql, client, limiter, config, log, now: () => sim.sim.now() },
      { cycle, concurrency: 4, productDates: productDates(sim.sim.now()) },
    );
  }
}
