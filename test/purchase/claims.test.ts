/** The claim on a cycle fetch (src/purchase/fetches.ts): the row is the lease, the fence decides. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connect.ts';
import { ensureCycleBudget } from '../../src/purchase/credits.ts';
import {
  type Claim,
  claimFetch,
  failFetch,
  presumeLapsedCall,
  reserveForCall,
  settleCall,
  startCall,
} from '../../src/purchase/fetches.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';

const CYCLE = '2026-11-20';

describe('the claim on a cycle fetch', () => {
  let t: TestDatabase;
  let watchId: number;
  beforeAll(async () => {
    t = await freshDatabase();
    await ensureCycleBudget(t.sql, CYCLE, 1000);
  });
  afterAll(() => t.drop());
  beforeEach(async () => {
    const [w] = await t.sql<{ id: string }[]>`
      insert into watchlist (keyword, keyword_key) values (${`k${Math.random()}`}, ${`k${Math.random()}`}) returning id`;
    watchId = Number(w?.id);
    await t.sql`insert into cycle_fetches (cycle, watch_id, status) values (${CYCLE}, ${watchId}, 'planned')`;
  });

  const claimed = async (holder: string, leaseMs = 60_000): Promise<Claim> => {
    const r = await claimFetch(t.sql, CYCLE, watchId, holder, leaseMs);
    if (r.kind !== 'claimed') throw new Error(`expected a claim, got ${r.kind}`);
    return r.claim;
  };

  it('of fifty claimers at once, on two pools, exactly one gets it', async () => {
    const other = openDatabase(t.url, { max: 10 });
    try {
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          claimFetch(i % 2 ? t.sql : other.sql, CYCLE, watchId, `holder-${i}`, 60_000),
        ),
      );
      expect(results.filter((r) => r.kind === 'claimed')).toHaveLength(1);
      expect(results.filter((r) => r.kind === 'held')).toHaveLength(49);
    } finally {
      await other.close();
    }
  });

  it('a failed attempt lets go at once, and the retry claims it with a new fence', async () => {
    const a = await claimed('a');
    // As the protocol has it after a failed call history landed (its steps between are not this test's).
    a.state = 'landed';
    await failFetch(t.sql, a, { step: 'retry', code: 'server_error', message: 'x', entryError: 'x' });
    const b = await claimed('b');
    expect(b.fence).toBe(a.fence + 1);
    const [row] =
      await t.sql`select status, holder from cycle_fetches where cycle = ${CYCLE} and watch_id = ${watchId}`;
    expect(row).toMatchObject({ status: 'fetching', holder: 'b' });
  });

  it('a lapsed lease is taken over, and the old holder may no longer call', async () => {
    const a = await claimed('a', 1);
    await new Promise((r) => setTimeout(r, 20));
    const b = await claimed('b');
    expect(b.fence).toBeGreaterThan(a.fence);
    expect(await startCall(t.sql, a, 60_000)).toBe(false);
    expect(await startCall(t.sql, b, 60_000)).toBe(true);
  });

  it('the plan decides: a deferred or skipped entry is not claimed, a settled one is done', async () => {
    for (const status of ['deferred', 'skipped'] as const) {
      await t.sql`update cycle_fetches set status = ${status} where cycle = ${CYCLE} and watch_id = ${watchId}`;
      expect(await claimFetch(t.sql, CYCLE, watchId, 'a', 1000)).toEqual({ kind: 'not_planned', status });
    }
    await t.sql`update cycle_fetches set status = 'succeeded' where cycle = ${CYCLE} and watch_id = ${watchId}`;
    expect(await claimFetch(t.sql, CYCLE, watchId, 'a', 1000)).toEqual({
      kind: 'settled',
      status: 'succeeded',
    });
    expect(await claimFetch(t.sql, '2026-11-21', watchId, 'a', 1000)).toEqual({
      kind: 'not_planned',
      status: null,
    });
  });

  it('a call sent and never settled is presumed billed, until its answer says what it cost', async () => {
    const [before] = await t.sql<{ spent: number; reserved: number }[]>`
      select spent, reserved from cycle_budgets where cycle = ${CYCLE}`;
    const a = await claimed('a', 1);
    expect(await reserveForCall(t.sql, a, 3)).toEqual({ ok: true });
    expect(await startCall(t.sql, a, 1)).toBe(true);
    await new Promise((r) => setTimeout(r, 20));
    // The holder "died": the next one finds the call in flight and books it as presumed.
    const b = await claimed('b');
    expect(b.lapsedCall).toMatchObject({ fence: a.fence, reserved: 3 });
    await presumeLapsedCall(t.sql, b, new Date());
    const ledger = () =>
      t.sql<{ status: string; credits: number; raw_response_id: string | null }[]>`
        select status, credits, raw_response_id from credit_ledger where watch_id = ${watchId}`;
    expect(await ledger()).toEqual([{ status: 'presumed', credits: 3, raw_response_id: null }]);
    const budget = async () =>
      (
        await t.sql<
          { spent: number; reserved: number }[]
        >`select spent, reserved from cycle_budgets where cycle = ${CYCLE}`
      )[0];
    expect(await budget()).toEqual({ spent: (before?.spent ?? 0) + 3, reserved: before?.reserved ?? 0 });
    // The first holder's answer arrives after all, billed 2: the presumed row becomes that.
    const [raw] = await t.sql<{ id: string }[]>`
      insert into raw_responses (operation, params_id, outcome, fetched_at)
      values ('enterprise-search', daybook_raw_params('{}'), 'success', now())
      returning id`;
    await t.sql.begin((tx) =>
      settleCall(tx, a, a.fence, {
        credits: 2,
        remark: null,
        pid: 'P1',
        rawResponseId: Number(raw?.id),
        billedAt: new Date(),
        runId: null,
      }),
    );
    expect(await ledger()).toEqual([{ status: 'booked', credits: 2, raw_response_id: String(raw?.id) }]);
    expect(await budget()).toEqual({ spent: (before?.spent ?? 0) + 2, reserved: before?.reserved ?? 0 });
  });

  it('the states are a closed set', async () => {
    await expect(
      t.sql`update cycle_fetches set status = 'bought' where cycle = ${CYCLE} and watch_id = ${watchId}`,
    ).rejects.toThrow(/cycle_fetches_status_check/);
  });
});
