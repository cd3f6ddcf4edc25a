/**
 * The change log against the simulator's own truth: for every enterprise the daily refresh
 * changed, analytics.enterprise_changes names exactly the fields whose values differ between the
 * world before and after that refresh, and nothing for enterprises it left alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../src/sim/server.ts';
import type { SimEnterprise } from '../../src/sim/types.ts';
import { keywordKey } from '../../src/watch/keyword.ts';
import { type CliSim, cliAgainstSim } from '../support/cli-sim.ts';
import type { TestDatabase } from '../support/db.ts';
import { runCyclesInline } from '../support/inline.ts';
import { UNTHROTTLED } from '../support/sim.ts';

const BEFORE = '2026-11-11';
const AFTER = '2026-11-12';

/** Order-insensitive comparable form of a field value (the change log ignores child order). */
function comparable(v: unknown): string {
  if (Array.isArray(v)) return JSON.stringify(v.map((x) => JSON.stringify(x)).sort());
  return JSON.stringify(v ?? null);
}

/** The top-level fields whose values differ between two states of one enterprise. */
function differingFields(a: SimEnterprise, b: SimEnterprise): string[] {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  const ra = a as unknown as Record<string, unknown>;
  const rb = b as unknown as Record<string, unknown>;
  return [...keys].filter((k) => comparable(ra[k]) !== comparable(rb[k])).sort();
}

describe("the change log after the simulator's daily refresh", { timeout: 120_000 }, () => {
  let t: TestDatabase;
  let sim: RunningSimulator;
  let dbSim: CliSim;
  let changed: { pid: string; fields: string[] }[] = [];
  let unchanged: string[] = [];

  beforeAll(async () => {
    dbSim = await cliAgainstSim({ enterprises: 600, rateLimits: UNTHROTTLED });
    ({ t, sim } = dbSim);
    const world = sim.sim.world();
    world.at(BEFORE);
    const before = new Map(world.all().map((e) => [e.PID, e]));
    world.at(AFTER);
    const after = world.all();
    changed = after
      .map((e) => ({ pid: e.PID, fields: differingFields(before.get(e.PID) as SimEnterprise, e) }))
      .filter((c) => c.fields.length > 0);
    unchanged = after
      .filter((e) => !changed.some((c) => c.pid === e.PID))
      .slice(0, 20)
      .map((e) => e.PID);
    world.at(BEFORE);
    // Watch by PID-unique current names: the exact name resolves to that very enterprise.
    const watched = [...changed.map((c) => c.pid), ...unchanged].map(
      (pid) => before.get(pid) as SimEnterprise,
    );
    await t.sql`insert into watchlist ${t.sql(watched.map((e) => ({ keyword: e.ENTNAME, keyword_key: keywordKey(e.ENTNAME) })))}`;

    await runCyclesInline(t, sim, [BEFORE, AFTER]);
  });
  afterAll(async () => {
    await dbSim?.close();
  });

  it('the refresh changed some enterprises to compare against', () => {
    expect(changed.length).toBeGreaterThan(3);
  });

  it('lists, for every changed enterprise, exactly the fields the refresh changed', async () => {
    const rows = await t.sql<{ pid: string; field: string }[]>`
      select distinct pid, field from analytics.enterprise_changes where cycle = ${AFTER}`;
    const byPid = new Map<string, string[]>();
    for (const r of rows) byPid.set(r.pid, [...(byPid.get(r.pid) ?? []), r.field]);
    for (const c of changed) expect([...(byPid.get(c.pid) ?? [])].sort(), c.pid).toEqual(c.fields);
    for (const pid of unchanged) expect(byPid.get(pid), pid).toBeUndefined();
  });

  it('shows a user the change rows of one changed enterprise', async () => {
    const pick = changed.find((c) => c.fields.length >= 2) ?? changed[0];
    const rows = await t.sql<Record<string, string | null>[]>`
      select current_name, cycle::text, category, field, kind, before, after, severity, from_version, to_version
      from analytics.enterprise_changes where pid = ${pick?.pid ?? ''} order by category, field, kind`;
    expect(rows.length).toBeGreaterThanOrEqual(pick?.fields.length ?? 1);
    for (const r of rows) {
      expect(r.cycle).toBe(AFTER);
      expect(['low', 'medium', 'high']).toContain(r.severity);
      expect(r.before !== null || r.after !== null).toBe(true);
    }
    console.log(`analytics.enterprise_changes for ${pick?.pid}:\n${JSON.stringify(rows, null, 1)}`);
  });
});
