import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../src/db/connect.ts';
import { DatabaseRateLimiter, minGapMs, perMinute, type RateRule } from '../../src/purchase/limiter.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';

/** Tries `limiters` in turn for `ms`, as fast as they answer; returns the admission times (this clock). */
async function hammer(
  limiters: DatabaseRateLimiter[],
  ms: number,
  parallel = 1,
  onAdmitted: () => Promise<void> = async () => {},
): Promise<number[]> {
  const admitted: number[] = [];
  const started = Date.now();
  await Promise.all(
    Array.from({ length: parallel }, async (_, k) => {
      while (Date.now() - started < ms) {
        const l = limiters[k % limiters.length] as DatabaseRateLimiter;
        if ((await l.tryAcquire('enterprise-search')) === 0) {
          admitted.push(Date.now());
          await onAdmitted();
        }
        await new Promise((r) => setTimeout(r, 3));
      }
    }),
  );
  return admitted.sort((a, b) => a - b);
}

/** The most admissions in any window of `windowMs` (by this machine's clock, a little looser). */
function busiestWindow(admitted: number[], windowMs: number): number {
  let most = 0;
  for (const t of admitted) most = Math.max(most, admitted.filter((u) => u >= t && u < t + windowMs).length);
  return most;
}

describe('the shared rate limiter in Postgres', () => {
  let t: TestDatabase;
  let other: Database;
  const rule: RateRule = { limit: 5, windowMs: 1000, marginMs: 100 };
  const rules = { 'enterprise-search': rule, 'product-listing': rule };
  beforeAll(async () => {
    t = await freshDatabase();
    // A second pool stands for a second process on the same database.
    other = openDatabase(t.url, { max: 4 });
  });
  afterAll(async () => {
    await other.close();
    await t.drop();
  });

  it('admits the limit in a window, and no more, across processes', async () => {
    await t.sql`delete from rate_limits`;
    // The start times as the limiter recorded them, by the database's clock: this process's
    // clock would bunch them however late it was scheduled after each answer on a busy machine.
    const recorded = new Set<number>();
    const record = async () => {
      const [row] = await t.sql<{ calls: number[] }[]>`
        select array(select (extract(epoch from c) * 1000)::float8 from unnest(calls) c) as calls
        from rate_limits where operation = 'enterprise-search'`;
      for (const c of row?.calls ?? []) recorded.add(c);
    };
    const admitted = await hammer(
      [new DatabaseRateLimiter(t.sql, rules), new DatabaseRateLimiter(other.sql, rules)],
      2300,
      2,
      record,
    );
    const starts = [...recorded].sort((a, b) => a - b);
    expect(starts.length).toBe(admitted.length);
    // The window is 1.1 s: no window of it holds more than the limit.
    expect(busiestWindow(starts, 1099)).toBeLessThanOrEqual(rule.limit);
    // It admits, too: the first window fills, and the next ones do.
    expect(admitted.length).toBeGreaterThanOrEqual(2 * rule.limit);
    expect(busiestWindow(starts, 1100)).toBeGreaterThanOrEqual(rule.limit);
  });

  it('spreads starts at least the minimum gap apart', async () => {
    await t.sql`delete from rate_limits`;
    const l = new DatabaseRateLimiter(t.sql, rules);
    await hammer([l], 700);
    // The start times as the limiter recorded them, by the database's clock (this process's
    // clock would add however late it was scheduled after each answer on a loaded machine).
    const [row] = await t.sql<{ calls: number[] }[]>`
      select array(select (extract(epoch from c) * 1000)::float8 from unnest(calls) c order by c) as calls
      from rate_limits where operation = 'enterprise-search'`;
    const admitted = row?.calls ?? [];
    expect(admitted.length).toBeGreaterThanOrEqual(3);
    for (let i = 1; i < admitted.length; i++) {
      expect((admitted[i] as number) - (admitted[i - 1] as number)).toBeGreaterThanOrEqual(minGapMs(rule));
    }
  });

  it('twenty callers at once never take more than the limit', async () => {
    await t.sql`delete from rate_limits`;
    // A gap of 125 ms: the limit (20 in 5 s) binds before the gap does (40 gaps in the window).
    const wide: RateRule = { limit: 20, windowMs: 5000, marginMs: 0 };
    const l = new DatabaseRateLimiter(t.sql, { 'enterprise-search': wide, 'product-listing': wide });
    const m = new DatabaseRateLimiter(other.sql, { 'enterprise-search': wide, 'product-listing': wide });
    const burst = () =>
      Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? l : m).tryAcquire('enterprise-search')));
    const inWindow = async () => {
      const [row] = await t.sql<{ n: number }[]>`
        select cardinality(calls)::int as n from rate_limits where operation = 'enterprise-search'`;
      return row?.n ?? 0;
    };
    // Rounds of twenty callers at once, a gap apart, until the limit is taken. How many one round
    // admits depends on how a loaded machine spreads its twenty calls over gaps; what must hold
    // whatever the machine is in the stored calls: never more than the limit, never closer than
    // the gap.
    let admitted = 0;
    const started = Date.now();
    while (admitted < wide.limit && Date.now() - started < 60_000) {
      const waits = await burst();
      admitted += waits.filter((w) => w === 0).length;
      expect(await inWindow()).toBeLessThanOrEqual(wide.limit);
      await new Promise((r) => setTimeout(r, minGapMs(wide) + 5));
    }
    expect(admitted).toBeGreaterThanOrEqual(wide.limit);
    const elapsed = Date.now() - started;
    // Taken well within one window (the usual case): exactly the limit, and the next twenty
    // callers at once are all refused.
    if (elapsed < wide.windowMs - 1000) {
      expect(admitted).toBe(wide.limit);
      const more = await burst();
      expect(more.filter((w) => w === 0)).toHaveLength(0);
    }
    expect(await inWindow()).toBeLessThanOrEqual(wide.limit);
    const [row] = await t.sql<{ gap: number }[]>`
      select (select min(extract(epoch from d) * 1000) from (
                select c - lag(c) over (order by c) as d from unnest(calls) c) x)::float8 as gap
      from rate_limits where operation = 'enterprise-search'`;
    // No two admitted calls closer than the gap, whichever process admitted them.
    expect(row?.gap).toBeGreaterThanOrEqual(minGapMs(wide) - 1);
  });

  it('a block stops every process for that operation only, and counts the refusals in a row', async () => {
    await t.sql`delete from rate_limits`;
    const free = { 'enterprise-search': perMinute(1000), 'product-listing': perMinute(1000) };
    const a = new DatabaseRateLimiter(t.sql, free);
    const b = new DatabaseRateLimiter(other.sql, free);
    // The longer block stands: what is left of it is 2 s less the time these calls took (on a
    // busy machine, any part of a second), never the 100 ms of the shorter one.
    const started = Date.now();
    expect(await a.block('product-listing', 2000)).toBe(1);
    expect(await b.block('product-listing', 100)).toBe(2);
    const wait = await b.tryAcquire('product-listing');
    const elapsed = Date.now() - started;
    expect(wait).toBeGreaterThan(100);
    expect(wait).toBeGreaterThanOrEqual(2000 - elapsed - 2);
    expect(wait).toBeLessThanOrEqual(2000);
    expect(await b.tryAcquire('enterprise-search')).toBe(0);
    await new Promise((r) => setTimeout(r, wait + 20));
    expect(await a.tryAcquire('product-listing')).toBe(0);
    // An answer ends the run of refusals, for everyone.
    await a.answered('product-listing');
    expect(await b.block('product-listing', 10)).toBe(1);
  });
});
