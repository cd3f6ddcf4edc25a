import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantAnalyticsRole } from '../../src/db/roles.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';
import { adminUrl } from '../support/pg-url.ts';

describe('the read-only analytics role', () => {
  let t: TestDatabase;
  let reader: postgres.Sql;
  const role = `daybook_reader_${randomBytes(3).toString('hex')}`;

  beforeAll(async () => {
    t = await freshDatabase();
    await t.sql`insert into watchlist (keyword, keyword_key) values ('甲公司', '甲公司')`;
    await grantAnalyticsRole(t.sql, role, null);
    await grantAnalyticsRole(t.sql, role, null); // twice is fine
    const u = new URL(t.url);
    u.username = role;
    reader = postgres(u.toString(), { max: 1, onnotice: () => {} });
  });
  afterAll(async () => {
    await reader.end();
    await t.drop();
    const admin = postgres(adminUrl(), { max: 1, onnotice: () => {} });
    await admin.unsafe(`drop role if exists ${role}`);
    await admin.end();
  });

  it('reads every analytics view', async () => {
    for (const v of [
      'enterprise_current',
      'enterprise_history',
      'enterprise_changes',
      'enterprise_events',
      'product_current',
      'product_trending',
      'credit_usage',
      'runs',
    ]) {
      await expect(reader.unsafe(`select * from analytics.${v} limit 1`)).resolves.toBeDefined();
    }
  });

  it('cannot read the raw landing or any internal table', async () => {
    for (const table of ['raw_responses', 'watchlist', 'enterprise_versions', 'credit_ledger']) {
      await expect(reader.unsafe(`select * from ${table} limit 1`)).rejects.toThrow(/permission denied/);
    }
  });

  it('cannot write anything', async () => {
    await expect(reader`insert into watchlist (keyword, keyword_key) values ('x', 'x')`).rejects.toThrow(
      /permission denied/,
    );
    await expect(reader`delete from watchlist`).rejects.toThrow(/permission denied/);
    await expect(reader.unsafe('create table analytics.mine (x int)')).rejects.toThrow(/permission denied/);
    await expect(reader.unsafe('create table public.mine (x int)')).rejects.toThrow(/permission denied/);
    await expect(reader.unsafe('delete from analytics.runs')).rejects.toThrow(
      /permission denied|cannot delete/,
    );
    const [n] = await t.sql<{ n: number }[]>`select count(*)::int as n from watchlist`;
    expect(n?.n).toBe(1);
  });
});
