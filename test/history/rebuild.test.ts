import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scheduledPulls } from '../../jobs/products.ts';
import { migrateDatabase } from '../../src/db/migrate.ts';
import { rebuild } from '../../src/history/rebuild.ts';
import type { RunningSimulator } from '../../src/sim/server.ts';
import { pacificDate } from '../../src/time/cycles.ts';
import { keywordKey } from '../../src/watch/keyword.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';
import { runCyclesInline } from '../support/inline.ts';
import { startTestSim } from '../support/sim.ts';

const VIEWS = [
  'enterprise_current order by pid',
  'enterprise_history order by pid, version',
  // change_id is a surrogate: live ingestion numbers changes in commit order, replay in fetch order.
  'enterprise_changes order by pid, detected_at, category, field, kind, before, after',
  'product_current order by product_id',
  'product_trending order by list_date, raw_response_id, position',
];

describe('rebuild from the raw landing', { timeout: 120_000 }, () => {
  let t: TestDatabase;
  let sim: RunningSimulator;
  beforeAll(async () => {
    t = await freshDatabase();
    sim = await startTestSim({
      enterprises: 400,
      rateLimits: { 'enterprise-search': 6000, 'product-listing': 6000 },
    });
    const world = sim.sim.world();
    world.at('2026-11-10');
    const changing = new Set(
      ['2026-11-11', '2026-11-12'].flatMap((c) => world.changesIn(c).map((x) => x.pid)),
    );
    const picks = world.all().filter((e, i) => changing.has(e.PID) || i < 30);
    await t.sql`insert into watchlist ${t.sql(picks.map((e) => ({ keyword: e.ENTNAME, keyword_key: keywordKey(e.ENTNAME) })))}`;
    await runCyclesInline(t, sim, ['2026-11-10', '2026-11-11', '2026-11-12'], (now) =>
      scheduledPulls(pacificDate(now), 2),
    );
  });
  afterAll(async () => {
    await sim.close();
    await t.drop();
  });

  const snapshot = async () => {
    const out: Record<string, unknown[]> = {};
    for (const v of VIEWS) {
      const rows = [...(await t.sql.unsafe(`select * from analytics.${v}`))];
      out[v] = rows.map(({ change_id: _surrogate, ...rest }) => rest);
    }
    return out;
  };

  it('a history with changes exists to rebuild', async () => {
    const [c] = await t.sql<{ n: number }[]>`select count(*)::int as n from enterprise_changes`;
    expect(c?.n).toBeGreaterThan(0);
    const [p] = await t.sql<{ n: number }[]>`select count(*)::int as n from trending_snapshots`;
    expect(p?.n).toBeGreaterThan(0);
  });

  it('equals the state before, view by view and row by row', async () => {
    const before = await snapshot();
    const summary = await rebuild(t.sql, { batchSize: 50 });
    expect(summary.enterprises).toBeGreaterThan(0);
    const after = await snapshot();
    for (const v of VIEWS) {
      expect(after[v]?.length, v).toBe(before[v]?.length);
      expect(after[v], v).toEqual(before[v]);
    }
  });

  it('migrations applied twice change nothing', async () => {
    expect(await migrateDatabase(t.url)).toBe(0);
    expect(await migrateDatabase(t.url)).toBe(0);
  });
});
