/** Runs whole cycles in-process (the inline runner) against a test database and simulator. */

import { loadConfig } from '../../src/config/config.ts';
import type { Sql } from '../../src/db/connect.ts';
import { createLogger } from '../../src/log/log.ts';
import { DatabaseRateLimiter, perMinute } from '../../src/purchase/limiter.ts';
import { runInline } from '../../src/runtime/inline.ts';
import type { RunningSimulator } from '../../src/sim/server.ts';
import { cycleStart } from '../../src/time/cycles.ts';
import { UpstreamClient } from '../../src/upstream/client.ts';
import { keywordKey } from '../../src/watch/keyword.ts';
import { cliAgainstSim } from './cli-sim.ts';
import type { TestDatabase } from './db.ts';
import { TEST_KEY, UNTHROTTLED } from './sim.ts';

/** The shared limiter with a rule loose enough that a test never waits on it. */
export function fastLimiter(sql: Sql): DatabaseRateLimiter {
  return new DatabaseRateLimiter(sql, {
    'enterprise-search': perMinute(6000, 0),
    'product-listing': perMinute(6000, 0),
  });
}

/**
 * For each cycle: the simulator's clock is set an hour after that cycle's 03:00 Beijing refresh,
 * then the cycle runs; `productDates` says which lists each cycle pulls.
 */
export async function runCyclesInline(
  t: TestDatabase,
  sim: RunningSimulator,
  cycles: readonly string[],
  productDates: (now: Date) => { date: string; pull: string }[] = () => [],
  env: Record<string, string> = {},
): Promise<void> {
  const config = loadConfig(
    {
      DATABASE_URL: t.url,
      DAYBOOK_API_BASE_URL: sim.url,
      DAYBOOK_API_KEY: TEST_KEY,
      LOG_LEVEL: 'silent',
      ...env,
    },
    '/nonexistent',
  );
  const client = new UpstreamClient({ baseUrl: sim.url, apiKey: TEST_KEY, now: () => sim.sim.now() });
  const limiter = fastLimiter(t.sql);
  const log = createLogger({ level: 'silent' });
  for (const cycle of cycles) {
    sim.sim.setClock(new Date(cycleStart(cycle).getTime() + 3600_000));
    await runInline(
      { sql: t.sql, client, limiter, config, log, now: () => sim.sim.now() },
      { cycle, concurrency: 4, productDates: productDates(sim.sim.now()) },
    );
  }
}

/**
 * Watches the enterprises of the simulator's world that change in the cycles after the first of
 * `cycles`, and the first `others` of the world besides: a history with changes to look at.
 */
export async function watchChanging(
  t: TestDatabase,
  sim: RunningSimulator,
  cycles: readonly string[],
  others = 0,
): Promise<void> {
  const world = sim.sim.world();
  world.at(cycles[0] as string);
  const changing = new Set(cycles.slice(1).flatMap((c) => world.changesIn(c).map((x) => x.pid)));
  const picks = world.all().filter((e, i) => changing.has(e.PID) || i < others);
  await t.sql`insert into watchlist ${t.sql(picks.map((e) => ({ keyword: e.ENTNAME, keyword_key: keywordKey(e.ENTNAME) })))}`;
}

/** A test database with a history: the changing enterprises (and `others`) watched, `cycles` run. */
export interface History {
  t: TestDatabase;
  sim: RunningSimulator;
  close(): Promise<void>;
}

export async function historyOf(
  cycles: readonly string[],
  others: number,
  enterprises = 400,
): Promise<History> {
  const c = await cliAgainstSim({ enterprises, rateLimits: UNTHROTTLED });
  await watchChanging(c.t, c.sim, cycles, others);
  await runCyclesInline(c.t, c.sim, cycles);
  return c;
}
