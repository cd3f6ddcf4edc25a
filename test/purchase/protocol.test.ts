/**
 * The purchase protocol (src/purchase/protocol.ts), step by step against Postgres and an upstream
 * over HTTP: every way a claim ends (nothing to buy, held, removed, deferred, an answer to apply,
 * a failure to land), every way an applied answer ends (completed, refused, unusable), and the
 * recoveries (an answer booked by a holder that died, a call sent and never settled, a lease lost
 * before the call, a job the queue gave up on). What each writes is read back from the tables.
 * Every move a claim makes is watched, and the walks together take every move of the table of
 * src/purchase/states.ts (the plan's, read back from the rows, included).
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobDeps } from '../../jobs/deps.ts';
import { processEnterprise } from '../../jobs/enterprise.ts';
import { ingestFailure } from '../../src/history/ingest.ts';
import { ensureCycleBudget } from '../../src/purchase/credits.ts';
import {
  type Claim,
  claimFetch,
  recordPlan,
  releaseClaim,
  replanDeferred,
  startCall,
} from '../../src/purchase/fetches.ts';
import {
  abandonEntry,
  buyEntry,
  claimEntry,
  completePurchase,
  failUnusable,
  holdingLease,
  type Next,
  refuseAnswer,
  settleFailure,
  WORKER_DIED,
} from '../../src/purchase/protocol.ts';
import {
  type BuyState,
  type BuyStep,
  statusOf,
  TRANSITIONS,
  transition,
  watchMoves,
} from '../../src/purchase/states.ts';
import { ClaimHeldError, FinalForCycleError, LostClaimError } from '../../src/terms/job-errors.ts';
import { keywordKey } from '../../src/watch/keyword.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';
import { jobDepsAgainst } from '../support/job-deps.ts';
import { sampleEnterpriseRecord } from '../support/records.ts';

const CYCLE = '2026-11-20';
/** A cycle whose budget holds less than one query. */
const POOR = '2026-11-21';
/** A cycle the upstream's "out of credits" pauses. */
const BROKE = '2026-11-22';
/** A cycle only planned. */
const PLANNED = '2026-11-23';

/** A move of the table, as one string. */
const moveKey = (m: { from: BuyState; step: BuyStep; to: BuyState }) => `${m.from} -${m.step}-> ${m.to}`;

describe('the purchase protocol, transition by transition', () => {
  let t: TestDatabase;
  let server: Server;
  let url: string;
  const asked: string[] = [];
  let deps: JobDeps;
  /** The moves the claims made, and the plan's, read back from the rows. */
  const walked = new Set<string>();
  let stopWatching = () => {};
  beforeAll(async () => {
    stopWatching = watchMoves((m) => walked.add(moveKey(m)));
    t = await freshDatabase();
    await ensureCycleBudget(t.sql, CYCLE, 1000);
    await ensureCycleBudget(t.sql, POOR, 2);
    await ensureCycleBudget(t.sql, BROKE, 1000);
    server = createServer((req, res) => {
      const keyword = new URL(req.url ?? '/', 'http://x').searchParams.get('ent_name') ?? '';
      asked.push(keyword);
      res.setHeader('content-type', 'application/json');
      const failWith = (status: number, code: string) => {
        res.statusCode = status;
        res.end(JSON.stringify({ status: 'error', error: { code, message: code } }));
      };
      if (keyword.startsWith('missing')) return failWith(404, 'not_found');
      if (keyword.startsWith('busy')) return failWith(503, 'server_error');
      if (keyword.startsWith('broke')) return failWith(402, 'insufficient_credits');
      // The request arrives; the connection breaks before any answer.
      if (keyword.startsWith('mute')) return req.socket.destroy();
      const content = sampleEnterpriseRecord({ PID: `pid-${keyword}`, ENTNAME: keyword });
      res.end(
        JSON.stringify({ status: 'success', markdown: '# x', metadata: { usage: { credits: 3 }, content } }),
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const address = server.address();
    url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    deps = jobDepsAgainst(t, url, 'sk-protocol');
  });
  afterAll(async () => {
    stopWatching();
    await new Promise((r) => server.close(r));
    await t.drop();
  });

  /** A watched keyword planned in `cycle`; its id. */
  const planned = async (keyword: string, cycle = CYCLE, status = 'planned'): Promise<number> => {
    const [w] = await t.sql<{ id: string }[]>`
      insert into watchlist (keyword, keyword_key) values (${keyword}, ${keywordKey(keyword)}) returning id`;
    const id = Number(w?.id);
    await t.sql`insert into cycle_fetches (cycle, watch_id, status) values (${cycle}, ${id}, ${status})`;
    return id;
  };
  const claimOf = async (watchId: number, jobId: string, cycle = CYCLE): Promise<Claim> => {
    const got = await claimEntry(deps, cycle, watchId, jobId);
    if (!('claim' in got)) throw new Error(`expected a claim, got ${JSON.stringify(got)}`);
    return got.claim;
  };
  const fetchOf = async (watchId: number, cycle = CYCLE) => {
    const [f] = await t.sql<{ status: string; error_code: string | null; credits_reserved: number }[]>`
      select status, error_code, credits_reserved from cycle_fetches where cycle = ${cycle} and watch_id = ${watchId}`;
    return f;
  };
  const ledgerOf = (watchId: number) =>
    t.sql<{ status: string; credits: number }[]>`
      select status, credits from credit_ledger where watch_id = ${watchId} order by id`;
  const applyOf = (next: Next) => {
    if (next.step !== 'apply') throw new Error(`expected an answer to apply, got ${next.step}`);
    return next;
  };

  it('claims a planned entry; reports a missing, settled or deferred one; refuses one held by another', async () => {
    expect(await claimEntry(deps, CYCLE, 999_999, 'job-a')).toEqual({
      report: { outcome: 'skipped', detail: 'watch entry 999999 does not exist' },
    });
    const deferred = await planned('推迟公司', CYCLE, 'deferred');
    expect(await claimEntry(deps, CYCLE, deferred, 'job-a')).toMatchObject({
      report: { outcome: 'deferred' },
    });
    const done = await planned('已完成公司', CYCLE, 'succeeded');
    expect(await claimEntry(deps, CYCLE, done, 'job-a')).toMatchObject({
      report: { outcome: 'skipped', detail: `already succeeded in cycle ${CYCLE}` },
    });
    const id = await planned('被占用公司');
    await claimOf(id, 'job-a');
    expect(await claimEntry(deps, CYCLE, id, 'job-b')).toMatchObject({
      held: { holder: expect.stringMatching(/job-a$/), until: expect.any(Date) },
    });
    // The job turns it into the error the runtime yields on (no attempt used).
    await expect(processEnterprise(deps, { cycle: CYCLE, watchId: id }, 'job-b')).rejects.toBeInstanceOf(
      ClaimHeldError,
    );
    expect((await fetchOf(id))?.status).toBe('fetching');
  });

  it('sets a removed entry aside, and defers one the budget cannot pay for, calling nothing', async () => {
    const before = asked.length;
    const removed = await planned('已移除公司');
    await t.sql`update watchlist set active = false where id = ${removed}`;
    const next = await buyEntry(deps, await claimOf(removed, 'job-r'), 'job-r', () => false);
    expect(next).toMatchObject({ step: 'done', report: { outcome: 'skipped' } });
    expect(await fetchOf(removed)).toMatchObject({ status: 'skipped', error_code: 'inactive' });

    const poor = await planned('预算不足公司', POOR);
    const deferred = await buyEntry(deps, await claimOf(poor, 'job-p', POOR), 'job-p', () => false);
    expect(deferred).toMatchObject({ step: 'done', report: { outcome: 'deferred' } });
    expect(await fetchOf(poor, POOR)).toMatchObject({ status: 'deferred', error_code: 'budget_exhausted' });
    expect(asked.length).toBe(before);
  });

  it('buys, lands and books an answer, then completes it; a second claim finds it settled', async () => {
    const id = await planned('星辰信息');
    const claim = await claimOf(id, 'job-1');
    const next = applyOf(await buyEntry(deps, claim, 'job-1', () => false));
    expect(next.recovered).toBe(false);
    // Booked before anything is applied: the purchase is on record.
    expect(await ledgerOf(id)).toEqual([{ status: 'booked', credits: 3 }]);
    expect(await fetchOf(id)).toMatchObject({ status: 'fetching', credits_reserved: 0 });
    await t.sql.begin((tx) =>
      completePurchase(tx, claim, next.runId, next.bought, { pid: 'pid-星辰信息', uncid: null, counts: {} }),
    );
    expect((await fetchOf(id))?.status).toBe('succeeded');
    const [run] = await t.sql<{ outcome: string; credits: number }[]>`
      select outcome, credits from runs where id = ${next.runId}`;
    expect(run).toEqual({ outcome: 'succeeded', credits: 3 });
    expect(await claimEntry(deps, CYCLE, id, 'job-2')).toMatchObject({ report: { outcome: 'skipped' } });
  });

  it('finishes from an answer a dead holder booked, buying nothing again', async () => {
    const id = await planned('恢复公司');
    const first = await claimOf(id, 'job-dead');
    applyOf(await buyEntry(deps, first, 'job-dead', () => false));
    // The holder dies before applying it: its claim lapses.
    await releaseClaim(t.sql, first);
    const before = asked.length;
    const next = applyOf(await buyEntry(deps, await claimOf(id, 'job-next'), 'job-next', () => false));
    expect(next.recovered).toBe(true);
    expect(next.bought.credits).toBe(3);
    expect(asked.length).toBe(before);
    expect(await ledgerOf(id)).toEqual([{ status: 'booked', credits: 3 }]);
  });

  it('presumes billed a call sent and never settled, and books the answer that landed for it', async () => {
    const id = await planned('未结算公司');
    const first = await claimOf(id, 'job-sent');
    // Sent (fenced and recorded), then the process died: no answer landed.
    await t.sql`update cycle_budgets set reserved = reserved + 3 where cycle = ${CYCLE}`;
    await t.sql`update cycle_fetches set credits_reserved = 3 where cycle = ${CYCLE} and watch_id = ${id}`;
    expect(await startCall(t.sql, first, 60_000)).toBe(true);
    await releaseClaim(t.sql, first);
    const next = applyOf(await buyEntry(deps, await claimOf(id, 'job-after'), 'job-after', () => false));
    // The lapsed call is booked presumed, and the new call's answer booked.
    expect(next.recovered).toBe(false);
    expect(await ledgerOf(id)).toEqual([
      { status: 'presumed', credits: 3 },
      { status: 'booked', credits: 3 },
    ]);
  });

  it('buys nothing when the lease was lost before the call', async () => {
    const id = await planned('失去租约公司');
    const claim = await claimOf(id, 'job-lost');
    const before = asked.length;
    await expect(buyEntry(deps, claim, 'job-lost', () => true)).rejects.toBeInstanceOf(LostClaimError);
    expect(asked.length).toBe(before);
    expect(await ledgerOf(id)).toEqual([]);
  });

  it('hands a failed call back to be landed, then books nothing and fails it for the cycle', async () => {
    const id = await planned('missing公司');
    const claim = await claimOf(id, 'job-404');
    const next = await buyEntry(deps, claim, 'job-404', () => false);
    if (next.step !== 'failed') throw new Error(`expected a failed call, got ${next.step}`);
    expect(next.err.code).toBe('not_found');
    const landed = await ingestFailure(t.sql, next.err, { runId: next.runId, cycle: CYCLE });
    await expect(
      settleFailure(deps, { claim, runId: next.runId, lastAttempt: false }, next.err, landed),
    ).rejects.toMatchObject({ code: 'not_found' });
    expect(await fetchOf(id)).toMatchObject({
      status: 'failed',
      error_code: 'not_found',
      credits_reserved: 0,
    });
    expect(await ledgerOf(id)).toEqual([]);
  });

  it('refuses an answer about another company, and fails one history cannot apply, each booked and final', async () => {
    const refusedId = await planned('他人公司');
    const a = await claimOf(refusedId, 'job-ref');
    const n1 = applyOf(await buyEntry(deps, a, 'job-ref', () => false));
    await expect(
      refuseAnswer(t.sql, a, n1.runId, n1.bought, {
        message: 'expected UNCID X; the answer names 他人公司 (no UNCID)',
        found: null,
        foundName: '他人公司',
      }),
    ).rejects.toBeInstanceOf(FinalForCycleError);
    expect(await fetchOf(refusedId)).toMatchObject({ status: 'failed', error_code: 'resolution_mismatch' });
    const [flag] = await t.sql<{ resolution_mismatch: string | null }[]>`
      select resolution_mismatch from watchlist where id = ${refusedId}`;
    expect(flag?.resolution_mismatch).toBe(`(no UNCID) 他人公司 (cycle ${CYCLE})`);

    const unusableId = await planned('无法应用公司');
    const b = await claimOf(unusableId, 'job-unu');
    const n2 = applyOf(await buyEntry(deps, b, 'job-unu', () => false));
    await expect(failUnusable(t.sql, b, n2.runId, n2.bought, new Error('value too long'))).rejects.toThrow(
      /not applicable: value too long/,
    );
    expect(await fetchOf(unusableId)).toMatchObject({ status: 'failed', error_code: 'unusable_answer' });
    for (const id of [refusedId, unusableId])
      expect(await ledgerOf(id)).toEqual([{ status: 'booked', credits: 3 }]);
  });

  it('lets go of a claim whose work threw, so the retry takes it at once', async () => {
    const id = await planned('意外错误公司');
    const claim = await claimOf(id, 'job-x');
    await expect(
      holdingLease(t.sql, claim, 60_000, async () => {
        throw new Error('unexpected');
      }),
    ).rejects.toThrow('unexpected');
    expect(await claimEntry(deps, CYCLE, id, 'job-y')).toHaveProperty('claim');
  });

  it('fails an abandoned entry for the cycle, presuming billed the call its dead holder sent', async () => {
    const id = await planned('放弃公司');
    const got = await claimFetch(t.sql, CYCLE, id, 'dead-holder', 60_000);
    if (got.kind !== 'claimed') throw new Error(got.kind);
    await t.sql`update cycle_budgets set reserved = reserved + 3 where cycle = ${CYCLE}`;
    await t.sql`update cycle_fetches set credits_reserved = 3 where cycle = ${CYCLE} and watch_id = ${id}`;
    await startCall(t.sql, got.claim, 60_000);
    // Its lease is still live: another holder has it.
    expect(await abandonEntry(deps, CYCLE, id, 'job-ab', 'the worker died 3 times')).toMatchObject({
      outcome: 'held',
    });
    await releaseClaim(t.sql, got.claim);
    expect(await abandonEntry(deps, CYCLE, id, 'job-ab', 'the worker died 3 times')).toEqual({
      outcome: 'failed',
      entity: '放弃公司',
      credits: 3,
      detail: 'the worker died 3 times; its last call never settled: 3 credits presumed billed',
    });
    expect(await fetchOf(id)).toMatchObject({ status: 'failed', error_code: WORKER_DIED });
    expect(await ledgerOf(id)).toEqual([{ status: 'presumed', credits: 3 }]);
    expect(await abandonEntry(deps, CYCLE, id, 'job-ab', 'again')).toMatchObject({ outcome: 'skipped' });
  });

  /** A failed call of `claim`, landed by history: what settleFailure is handed. */
  const failedCall = async (claim: Claim, jobId: string, lastAttempt = false) => {
    const next = await buyEntry(deps, claim, jobId, () => false);
    if (next.step !== 'failed') throw new Error(`expected a failed call, got ${next.step}`);
    const landed = await ingestFailure(t.sql, next.err, { runId: next.runId, cycle: claim.cycle });
    return { attempt: { claim, runId: next.runId, lastAttempt }, err: next.err, landed };
  };

  it('leaves a transient failure to retry, and the retry claims it again', async () => {
    const id = await planned('busy公司');
    const f = await failedCall(await claimOf(id, 'job-busy'), 'job-busy');
    await expect(settleFailure(deps, f.attempt, f.err, f.landed)).rejects.toMatchObject({
      code: 'server_error',
    });
    expect((await fetchOf(id))?.status).toBe('retrying');
    expect((await claimOf(id, 'job-busy-2')).state).toBe('claimed');
  });

  it('defers the entry and pauses the cycle when the upstream says it is out of credits', async () => {
    const id = await planned('broke公司', BROKE);
    const f = await failedCall(await claimOf(id, 'job-broke', BROKE), 'job-broke');
    expect(await settleFailure(deps, f.attempt, f.err, f.landed)).toMatchObject({ outcome: 'paused' });
    expect(await fetchOf(id, BROKE)).toMatchObject({
      status: 'deferred',
      error_code: 'insufficient_credits',
    });
  });

  it('fails an entry whose calls went unanswered twice, and a third claim without calling', async () => {
    const id = await planned('mute公司');
    const first = await failedCall(await claimOf(id, 'job-m1'), 'job-m1');
    await expect(settleFailure(deps, first.attempt, first.err, first.landed)).rejects.toMatchObject({
      code: 'network_error',
    });
    expect((await fetchOf(id))?.status).toBe('retrying');
    const second = await failedCall(await claimOf(id, 'job-m2'), 'job-m2');
    await expect(settleFailure(deps, second.attempt, second.err, second.landed)).rejects.toBeInstanceOf(
      FinalForCycleError,
    );
    expect(await fetchOf(id)).toMatchObject({ status: 'failed', error_code: 'unanswered' });
    // A holder that booked the second call and died before failing the entry left it to retry.
    await t.sql`update cycle_fetches set status = 'retrying' where cycle = ${CYCLE} and watch_id = ${id}`;
    const before = asked.length;
    await expect(buyEntry(deps, await claimOf(id, 'job-m3'), 'job-m3', () => false)).rejects.toBeInstanceOf(
      FinalForCycleError,
    );
    expect(asked.length).toBe(before);
    expect(await fetchOf(id)).toMatchObject({ status: 'failed', error_code: 'unanswered' });
  });

  it('completes a second entry of the same company in the cycle as a duplicate', async () => {
    const statuses: string[] = [];
    for (const keyword of ['孪生甲', '孪生乙']) {
      const id = await planned(keyword);
      const claim = await claimOf(id, `job-${keyword}`);
      const next = applyOf(await buyEntry(deps, claim, `job-${keyword}`, () => false));
      await t.sql.begin((tx) =>
        completePurchase(tx, claim, next.runId, next.bought, { pid: 'pid-孪生', uncid: null, counts: {} }),
      );
      statuses.push((await fetchOf(id))?.status ?? '');
    }
    expect(statuses).toEqual(['succeeded', 'duplicate']);
  });

  it('lets go of a claim at whichever step its work threw', async () => {
    const gone = new Error('the database went away');
    const broken = (() => {
      throw gone;
    }) as unknown as typeof t.sql;
    /** What settleFailure is handed for a failed call of `claim`. */
    const args = async (claim: Claim, jobId: string) => {
      const f = await failedCall(claim, jobId);
      return [f.attempt, f.err, f.landed] as const;
    };
    const walks: [string, (claim: Claim, jobId: string) => Promise<unknown>][] = [
      // Reserved: its lease was lost before the call.
      ['租约丢失', (claim, jobId) => buyEntry(deps, claim, jobId, () => true)],
      // Calling: history could not land the failed answer.
      [
        'missing落地',
        async (claim, jobId) => {
          await buyEntry(deps, claim, jobId, () => false);
          throw gone;
        },
      ],
      // Landed: the database went away while the failure was settled.
      [
        'missing结算',
        async (claim, jobId) => settleFailure({ ...deps, sql: broken }, ...(await args(claim, jobId))),
      ],
      // Applied: history applied it, and the database went away before it completed.
      [
        '应用中断',
        async (claim, jobId) => {
          const next = applyOf(await buyEntry(deps, claim, jobId, () => false));
          await completePurchase(broken, claim, next.runId, next.bought, {
            pid: null,
            uncid: null,
            counts: {},
          });
        },
      ],
    ];
    for (const [keyword, work] of walks) {
      const id = await planned(keyword);
      const claim = await claimOf(id, `job-${keyword}`);
      await expect(holdingLease(t.sql, claim, 60_000, () => work(claim, `job-${keyword}`))).rejects.toThrow();
      expect(claim.state, keyword).toBe('lapsed');
      expect(await claimEntry(deps, CYCLE, id, 'job-next'), keyword).toHaveProperty('claim');
    }
  });

  it("writes the plan's decisions as the table moves them", async () => {
    const ids: number[] = [];
    for (const keyword of ['计划甲', '计划乙', '计划丙', '计划丁']) {
      const [w] = await t.sql<{ id: string }[]>`
        insert into watchlist (keyword, keyword_key) values (${keyword}, ${keywordKey(keyword)}) returning id`;
      ids.push(Number(w?.id));
    }
    const [a = 0, b = 0, c = 0, d = 0] = ids;
    const state = new Map<number, BuyState>(ids.map((id) => [id, 'unplanned']));
    /** Checks each entry's row after a step of the plan, and counts the moves its rows made. */
    const expectMoves = async (moves: [number, BuyStep][]) => {
      for (const [id, step] of moves) {
        const from = state.get(id) ?? 'unplanned';
        const to = TRANSITIONS.find((m) => m.from === from && m.step === step)?.to;
        if (!to) throw new Error(`no move ${step} from ${from}`);
        expect((await fetchOf(id, PLANNED))?.status, `${from} -${step}->`).toBe(statusOf(to));
        walked.add(moveKey({ from, step, to }));
        state.set(id, to);
      }
    };
    const plan = (selected: number[], skipped: number[]) =>
      t.sql.begin((tx) =>
        recordPlan(tx, {
          cycle: PLANNED,
          selected: selected.map((id) => ({ id })),
          skipped: skipped.map((id) => ({ entry: { id }, reason: 'inactive' })),
          deferReason: 'budget',
        }),
      );
    await plan([a, b, c], [d]);
    await expectMoves([
      [a, 'plan'],
      [b, 'plan'],
      [c, 'plan'],
      [d, 'skip'],
    ]);
    await plan([d], [b]);
    await expectMoves([
      [a, 'defer'],
      [c, 'defer'],
      [b, 'skip'],
      [d, 'plan'],
    ]);
    await plan([a], [c]);
    await expectMoves([
      [a, 'plan'],
      [c, 'skip'],
      [d, 'defer'],
    ]);
    expect(await t.sql.begin((tx) => replanDeferred(tx, PLANNED))).toEqual([d]);
    await expectMoves([[d, 'resume']]);
    expect(statusOf(transition('deferred', 'resume'))).toBe('planned');
  });

  it('has walked every move of the table', () => {
    const missing = TRANSITIONS.map(moveKey).filter((m) => !walked.has(m));
    expect(missing).toEqual([]);
    // And no claim made a move the table does not have (it would have thrown on the way).
    expect([...walked].filter((m) => !TRANSITIONS.map(moveKey).includes(m))).toEqual([]);
  });
});
