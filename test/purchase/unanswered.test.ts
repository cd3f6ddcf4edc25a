/**
 * The bookkeeping of a call sent and never answered (src/purchase/fetches.ts `settleUnanswered`):
 * an `unconfirmed` ledger row at the configured cost, counted as spent, its reservation released,
 * and the entry's count of such calls read from the ledger, whatever process made them. An answer
 * of the same call that lands after all does not confirm it (unlike a `presumed` row). An entry
 * that already has two such calls in the cycle is failed without a third call, as a holder that
 * died between booking the second and failing the entry leaves it.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { processEnterprise } from '../../jobs/enterprise.ts';
import { openDatabase } from '../../src/db/connect.ts';
import { budgetOf, ensureCycleBudget } from '../../src/purchase/credits.ts';
import {
  type Claim,
  claimFetch,
  reserveForCall,
  settleCall,
  settleUnanswered,
  startCall,
  unansweredCalls,
} from '../../src/purchase/fetches.ts';
import { UNANSWERED } from '../../src/purchase/protocol.ts';
import { FinalForCycleError } from '../../src/terms/job-errors.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';
import { jobDepsAgainst } from '../support/job-deps.ts';
import { listenLocal } from '../support/net.ts';

const CYCLE = '2026-11-20';

describe('a call sent and never answered, in the ledger', () => {
  let t: TestDatabase;
  let watchId: number;
  let server: Server;
  let url: string;
  let requests = 0;
  beforeAll(async () => {
    t = await freshDatabase();
    await ensureCycleBudget(t.sql, CYCLE, 1000);
    server = createServer((_req, res) => {
      requests++;
      res.statusCode = 404;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ status: 'error', error: { code: 'not_found', message: 'none' } }));
    });
    url = await listenLocal(server);
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await t.drop();
  });
  beforeEach(async () => {
    const [w] = await t.sql<{ id: string }[]>`
      insert into watchlist (keyword, keyword_key) values (${`k${Math.random()}`}, ${`k${Math.random()}`}) returning id`;
    watchId = Number(w?.id);
    await t.sql`insert into cycle_fetches (cycle, watch_id, status) values (${CYCLE}, ${watchId}, 'planned')`;
  });

  /** A claim whose call was sent: its credits reserved, its fence recorded as the call's. */
  const sentCall = async (sql = t.sql, holder = 'h1'): Promise<Claim> => {
    const r = await claimFetch(sql, CYCLE, watchId, holder, 60_000);
    if (r.kind !== 'claimed') throw new Error(`expected a claim, got ${r.kind}`);
    expect(await reserveForCall(sql, r.claim, 3)).toEqual({ ok: true });
    expect(await startCall(sql, r.claim, 60_000)).toBe(true);
    return r.claim;
  };
  const unanswered = {
    credits: 3,
    remark: 'no answer',
    rawResponseId: null,
    billedAt: new Date(),
    runId: null,
  };

  it('books it unconfirmed, counted as spent, its reservation released, and counts it', async () => {
    const before = await budgetOf(t.sql, CYCLE);
    const claim = await sentCall();
    expect((await budgetOf(t.sql, CYCLE))?.reserved).toBe((before?.reserved ?? 0) + 3);
    expect(await settleUnanswered(t.sql, claim, claim.fence, unanswered)).toBe(1);
    const after = await budgetOf(t.sql, CYCLE);
    expect(after).toMatchObject({ spent: (before?.spent ?? 0) + 3, reserved: before?.reserved });
    const rows = await t.sql`
      select status, credits, call_fence::int as fence, remark from credit_ledger where watch_id = ${watchId}`;
    expect(rows).toEqual([{ status: 'unconfirmed', credits: 3, fence: claim.fence, remark: 'no answer' }]);
    const [f] = await t.sql`
      select call_fence, credits_reserved from cycle_fetches where cycle = ${CYCLE} and watch_id = ${watchId}`;
    expect(f).toEqual({ call_fence: null, credits_reserved: 0 });
    // Settled twice (a retry of the bookkeeping): nothing more is booked or spent.
    expect(await settleUnanswered(t.sql, claim, claim.fence, unanswered)).toBe(1);
    expect((await budgetOf(t.sql, CYCLE))?.spent).toBe(after?.spent);
  });

  it('counts the calls of every process in the ledger, and an answer of the same call does not confirm it', async () => {
    const other = openDatabase(t.url, { max: 2 }).sql;
    const closeOther = () => other.end();
    try {
      const first = await sentCall(t.sql, 'worker-a');
      expect(await settleUnanswered(t.sql, first, first.fence, unanswered)).toBe(1);
      await t.sql`update cycle_fetches set status = 'retrying', holder = null where watch_id = ${watchId}`;
      const second = await sentCall(other, 'worker-b');
      expect(await unansweredCalls(other, second)).toBe(1);
      // The first call's answer lands after all: it is not booked over the unconfirmed row.
      const spent = (await budgetOf(t.sql, CYCLE))?.spent;
      await t.sql.begin((tx) =>
        settleCall(tx, first, first.fence, {
          credits: 3,
          remark: 'q',
          pid: 'p1',
          rawResponseId: 0,
          billedAt: new Date(),
          runId: null,
        }),
      );
      const rows = await t.sql`select status from credit_ledger where watch_id = ${watchId} order by id`;
      expect(rows).toEqual([{ status: 'unconfirmed' }]);
      expect((await budgetOf(t.sql, CYCLE))?.spent).toBe(spent);
      expect(await settleUnanswered(other, second, second.fence, unanswered)).toBe(2);
    } finally {
      await closeOther();
    }
  });

  it('fails an entry with two unanswered calls in the cycle without a third call', async () => {
    for (const holder of ['a', 'b']) {
      const claim = await sentCall(t.sql, holder);
      await settleUnanswered(t.sql, claim, claim.fence, unanswered);
      // The holder died before failing the entry: its claim is let go, the entry claimable.
      await t.sql`update cycle_fetches set status = 'retrying', holder = null where watch_id = ${watchId}`;
    }
    const asked = requests;
    const run = processEnterprise(jobDepsAgainst(t, url, 'sk-x'), { cycle: CYCLE, watchId }, 'enterprise-x');
    await expect(run).rejects.toBeInstanceOf(FinalForCycleError);
    await expect(run).rejects.toThrow(/^no answer twice; may have been billed; waits for the next cycle/);
    expect(requests).toBe(asked);
    const [f] = await t.sql`
      select status, error_code from cycle_fetches where cycle = ${CYCLE} and watch_id = ${watchId}`;
    expect(f).toEqual({ status: 'failed', error_code: UNANSWERED });
  });
});
