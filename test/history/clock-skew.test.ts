/**
 * History is ordered by the database's clock, not by the clock of the machine that made the call. A
 * worker whose clock runs 10 minutes ahead refreshes some entries of a cycle, one with a true clock
 * refreshes others that resolve to the same enterprises (a keyword and the company's former name):
 * the history is the one two true clocks write, and nothing is rejected as stale.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobDeps } from '../../jobs/deps.ts';
import { processEnterprise } from '../../jobs/enterprise.ts';
import { processPlan } from '../../jobs/plan.ts';
import { loadConfig } from '../../src/config/config.ts';
import { createLogger } from '../../src/log/log.ts';
import type { RunningSimulator } from '../../src/sim/server.ts';
import { cycleOf } from '../../src/time/cycles.ts';
import { UpstreamClient } from '../../src/upstream/client.ts';
import { keywordKey } from '../../src/watch/keyword.ts';
import { analyticsSnapshot } from '../faults/support/cycle.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';
import { fastLimiter } from '../support/inline.ts';
import { startTestSim, TEST_KEY, UNTHROTTLED } from '../support/sim.ts';

const SKEW_MS = 10 * 60_000;
const PAIRS = 8;

/** Refreshes the cycle: entries named by ENTNAME first (by `first`), then by former name (by `second`). */
async function refresh(t: TestDatabase, sim: RunningSimulator, skews: { first: number; second: number }) {
  const config = loadConfig(
    { DATABASE_URL: t.url, DAYBOOK_API_BASE_URL: sim.url, DAYBOOK_API_KEY: TEST_KEY, LOG_LEVEL: 'silent' },
    '/nonexistent',
  );
  const limiter = fastLimiter(t.sql);
  const depsAt = (skew: number): JobDeps => {
    const now = () => new Date(Date.now() + skew);
    return {
      sql: t.sql,
      client: new UpstreamClient({ baseUrl: sim.url, apiKey: TEST_KEY, now }),
      limiter,
      config,
      log: createLogger({ level: 'silent' }),
      now,
      enqueue: { enterprises: async (_c, ids) => ids.length, cycleComplete: async () => {} },
    };
  };
  const cycle = cycleOf(sim.sim.now());
  await processPlan(depsAt(0), { cycle }, `plan-${cycle}`);
  const entries = await t.sql<{ id: string; former: boolean }[]>`
    select id, keyword like '%(former)%' as former from watchlist order by id`;
  const ids = await t.sql<{ id: string; kind: string }[]>`select id, kind from skew_entries order by id`;
  for (const kind of ['current', 'former'] as const) {
    const deps = depsAt(kind === 'current' ? skews.first : skews.second);
    for (const e of ids.filter((x) => x.kind === kind)) {
      await processEnterprise(deps, { cycle, watchId: Number(e.id) }, `enterprise-${cycle}-${e.id}`);
    }
  }
  return entries.length;
}

describe('a worker with a skewed clock', { timeout: 120_000 }, () => {
  let sim: RunningSimulator;
  const dbs: TestDatabase[] = [];
  beforeAll(async () => {
    sim = await startTestSim({
      enterprises: 400,
      rateLimits: UNTHROTTLED,
    });
  });
  afterAll(async () => {
    await sim.close();
    for (const d of dbs) await d.drop();
  });

  const watch = async (t: TestDatabase) => {
    const pairs = sim.sim
      .world()
      .all()
      .filter((e) => e.HISTORYNAME !== '')
      .slice(0, PAIRS);
    expect(pairs).toHaveLength(PAIRS);
    await t.sql`create table skew_entries (id bigint primary key, kind text not null)`;
    for (const e of pairs) {
      for (const [kind, keyword] of [
        ['current', e.ENTNAME],
        ['former', e.HISTORYNAME],
      ] as const) {
        const [w] = await t.sql<{ id: string }[]>`
          insert into watchlist (keyword, keyword_key) values (${keyword}, ${keywordKey(keyword)}) returning id`;
        await t.sql`insert into skew_entries values (${w?.id ?? 0}, ${kind})`;
      }
    }
  };

  it('writes the history a true clock writes, and rejects nothing as stale', async () => {
    const skewed = await freshDatabase();
    const straight = await freshDatabase();
    dbs.push(skewed, straight);
    await watch(skewed);
    await watch(straight);
    const before = await skewed.sql<{ now: Date }[]>`select now() as now`;
    await refresh(skewed, sim, { first: SKEW_MS, second: 0 });
    const after = await skewed.sql<{ now: Date }[]>`select now() as now`;
    await refresh(straight, sim, { first: 0, second: 0 });

    // Both keywords of a pair named one company: each was applied, none rejected as stale.
    const events = await skewed.sql<{ kind: string; n: number }[]>`
      select kind, count(*)::int as n from enterprise_observations group by kind order by kind`;
    expect(events).toEqual([{ kind: 'initial', n: PAIRS }]);
    const [fetches] = await skewed.sql<{ succeeded: number; duplicate: number }[]>`
      select count(*) filter (where status = 'succeeded')::int as succeeded,
             count(*) filter (where status = 'duplicate')::int as duplicate from cycle_fetches`;
    expect(fetches).toEqual({ succeeded: PAIRS, duplicate: PAIRS });
    // The history is the same as two true clocks write, view by view.
    expect(await analyticsSnapshot(skewed.sql)).toEqual(await analyticsSnapshot(straight.sql));
    // Its times are the database's: inside the run, not ten minutes ahead.
    const [range] = await skewed.sql<{ first: Date; last: Date }[]>`
      select min(valid_from) as first, max(valid_from) as last from enterprise_versions`;
    expect(range?.first.getTime()).toBeGreaterThanOrEqual((before[0]?.now.getTime() ?? 0) - 1);
    expect(range?.last.getTime()).toBeLessThanOrEqual((after[0]?.now.getTime() ?? 0) + 1);
    const [seen] = await skewed.sql<{ late: number }[]>`
      select count(*)::int as late from enterprises where last_seen_at > ${after[0]?.now ?? new Date()}`;
    expect(seen?.late).toBe(0);
  });
});
