/** Claims on work (Postgres advisory locks on a connection of their own) between workers. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Claims, openClaims } from '../../src/db/claims.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';

describe('claims on an entry of a cycle', () => {
  let t: TestDatabase;
  let a: Claims;
  let b: Claims;
  beforeAll(async () => {
    t = await freshDatabase();
    a = openClaims(t.url);
    b = openClaims(t.url);
  });
  afterAll(async () => {
    await a.close();
    await b.close();
    await t.drop();
  });

  it('one holder at a time; released, the next one takes it', async () => {
    const first = await a.take('daybook:enterprise:2026-11-20', 7);
    expect(first).not.toBeNull();
    expect(await b.take('daybook:enterprise:2026-11-20', 7)).toBeNull();
    // Another entry, or the same entry in another cycle, is a claim of its own.
    const other = await b.take('daybook:enterprise:2026-11-20', 8);
    const nextCycle = await b.take('daybook:enterprise:2026-11-21', 7);
    expect(other).not.toBeNull();
    expect(nextCycle).not.toBeNull();
    await other?.release();
    await nextCycle?.release();
    await first?.release();
    const again = await b.take('daybook:enterprise:2026-11-20', 7);
    expect(again).not.toBeNull();
    await again?.release();
  });

  it('a holder whose connection dies lets go at once, and its release does not throw', async () => {
    const held = await a.take('daybook:enterprise:2026-11-22', 9);
    expect(held).not.toBeNull();
    expect(await b.take('daybook:enterprise:2026-11-22', 9)).toBeNull();
    const killed = await t.sql<{ ok: boolean }[]>`
      select pg_terminate_backend(pid) as ok from pg_stat_activity
      where datname = ${t.name} and application_name = 'daybook-claims'
        and pid in (select pid from pg_locks where locktype = 'advisory' and objid = 9)`;
    expect(killed.length).toBeGreaterThan(0);
    let taken = await b.take('daybook:enterprise:2026-11-22', 9);
    for (let i = 0; taken === null && i < 50; i++) {
      await new Promise((r) => setTimeout(r, 20));
      taken = await b.take('daybook:enterprise:2026-11-22', 9);
    }
    expect(taken).not.toBeNull();
    await expect(held?.release()).resolves.toBeUndefined();
    await taken?.release();
  });
});
