/**
 * The view analytics.enterprise_history carries a whole history. Its current row of every
 * enterprise equals analytics.enterprise_current, column by column, children included.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDatabase } from '../support/db.ts';
import { type History, historyOf } from '../support/inline.ts';

const CYCLES = ['2026-11-10', '2026-11-11', '2026-11-12'];

describe('analytics.enterprise_history', { timeout: 120_000 }, () => {
  let h: History;
  let t: TestDatabase;
  beforeAll(async () => {
    h = await historyOf(CYCLES, 20);
    t = h.t;
  });
  afterAll(() => h.close());

  it('has several versions of some enterprises to compare', async () => {
    const [r] = await t.sql<{ n: number }[]>`
      select count(*)::int as n from analytics.enterprise_history where version > 1`;
    expect(r?.n).toBeGreaterThan(0);
  });

  it('its current row of every enterprise equals enterprise_current, column by column', async () => {
    const current = await t.sql.unsafe('select * from analytics.enterprise_current order by pid');
    const history = await t.sql.unsafe(
      'select * from analytics.enterprise_history where is_current order by pid',
    );
    expect(history.length).toBe(current.length);
    // Columns enterprise_current names differently, or only it has (the enterprise, not the version).
    const renamed: Record<string, string> = { version_valid_from: 'valid_from', version_cycle: 'cycle' };
    const onlyCurrent = new Set(['presence', 'first_seen_at', 'last_seen_at']);
    const columns = Object.keys(current[0] ?? {}).filter((c) => !onlyCurrent.has(c));
    expect(columns.length).toBeGreaterThan(35);
    for (const [i, cur] of current.entries()) {
      const his = history[i] as Record<string, unknown>;
      for (const c of columns) expect(his[renamed[c] ?? c], `${cur.pid}.${c}`).toEqual(cur[c]);
    }
  });

  it('every version carries its children as JSON and its content hash', async () => {
    const rows = await t.sql<{ persons: unknown; content_hash: string; persons_count: number }[]>`
      select persons, content_hash, persons_count from analytics.enterprise_history`;
    for (const r of rows) {
      expect(Array.isArray(r.persons)).toBe(true);
      expect((r.persons as unknown[]).length).toBe(r.persons_count);
      expect(r.content_hash).toMatch(/^[0-9a-f]{16,}$/);
    }
  });
});
