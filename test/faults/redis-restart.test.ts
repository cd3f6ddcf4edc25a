/**
 * The queue's Redis stopped and started again mid-cycle. The test runs its own redis-server on a
 * free port (the shared one is left alone), two `daybook worker` processes against it, and stops
 * Redis while they work.
 *
 * What daybook promises: with a Redis that persists its data (appendonly yes, as the compose
 * file runs it), the workers reconnect by themselves and the cycle completes, nothing lost or
 * bought twice. A Redis that forgets everything on restart (appendonly no) loses the queue, not
 * the data: Postgres still knows which entries are not done (waiting, or in flight in a worker
 * that died meanwhile), and `daybook enqueue --cycle D` re-plans the cycle and finishes it,
 * buying nothing twice.
 */
import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { runDaybook } from '../support/cli.ts';
import {
  expectLedgerMatchesBilling,
  type FaultCycle,
  figures,
  ledgerOf,
  settled,
  startFaultCycle,
  statuses,
  WORKER_CONCURRENCY,
} from './support/cycle.ts';
import {
  type RedisServer,
  spawnWorker,
  startRedis,
  type WorkerProcess,
  waitFor,
} from './support/processes.ts';

const ENTRIES = 150;
/** Enterprise calls per minute: the cycle lasts long enough to be interrupted. */
const ENV = { DAYBOOK_ENTERPRISE_RATE: '900', DAYBOOK_JOB_LOCK_MS: '5000' };

describe('the queue Redis stopped and started again mid-cycle', { timeout: 180_000 }, () => {
  let cycle: FaultCycle | undefined;
  let redis: RedisServer | undefined;
  const workers: WorkerProcess[] = [];
  afterEach(async () => {
    for (const w of workers.splice(0)) await w.stop('SIGKILL');
    await cycle?.close();
    cycle = undefined;
    if (redis) {
      await redis.stop();
      rmSync(redis.dir, { recursive: true, force: true });
    }
    redis = undefined;
  });

  const succeeded = async (c: FaultCycle) => (await statuses(c.db.sql, c.cycle)).succeeded ?? 0;

  /** Starts two workers and the cycle, and stops Redis once a fifth of the entries are done. */
  const interrupt = async (c: FaultCycle, r: RedisServer) => {
    for (let i = 0; i < 2; i++) workers.push(spawnWorker(c.env()));
    await Promise.all(workers.map((w) => w.started));
    await c.enqueuePlan();
    await waitFor('a fifth of the cycle', async () => (await succeeded(c)) >= ENTRIES / 5, 60_000);
    const exit = await r.stop();
    expect(exit.code).toBe(0);
    return succeeded(c);
  };

  /** Waits until each of `ws` has logged a lost Redis connection. */
  const noticed = (ws: WorkerProcess[]) =>
    waitFor(
      'workers see Redis gone',
      async () =>
        ws.every((w) =>
          w.lines.some((l) => /ECONNREFUSED|Connection is closed|\(REDIS_URL\) is unreachable/.test(l)),
        ),
      20_000,
    );

  it('with appendonly: workers reconnect by themselves and the cycle completes, nothing lost or bought twice', async () => {
    redis = await startRedis({ appendonly: true });
    cycle = await startFaultCycle({ entries: ENTRIES, redisUrl: redis.url, env: ENV });
    const c = cycle;
    const before = await interrupt(c, redis);
    await noticed(workers);
    redis = await startRedis({ appendonly: true, port: redis.port, dir: redis.dir });
    await waitFor('the cycle', () => settled(c.db.sql, c.cycle, ENTRIES), 120_000);

    expect(await statuses(c.db.sql, c.cycle)).toEqual({ succeeded: ENTRIES });
    const billed = c.sim.sim.counters.billedQueries;
    expect(billed).toBe(ENTRIES);
    expect(Math.max(...Object.values(c.sim.sim.counters.billedByPid))).toBe(1);
    await expectLedgerMatchesBilling(c.db.sql, c.cycle, c.sim);
    // The same processes did the rest: none of them restarted.
    for (const w of workers)
      expect(w.lines.filter((l) => l.includes('"msg":"worker started"'))).toHaveLength(1);
    figures('redis restart (appendonly yes)', {
      entries: ENTRIES,
      'done before the restart': before,
      'items lost': ENTRIES - (await succeeded(c)),
      'extra billed queries': billed - ENTRIES,
    });
  });

  it('without persistence the queue is gone, and daybook enqueue --cycle finishes the cycle without buying twice', async () => {
    redis = await startRedis({ appendonly: false });
    cycle = await startFaultCycle({ entries: ENTRIES, redisUrl: redis.url, env: ENV });
    const c = cycle;
    for (let i = 0; i < 2; i++) workers.push(spawnWorker(c.env()));
    await Promise.all(workers.map((w) => w.started));
    await c.enqueuePlan();
    await waitFor('a fifth of the cycle', async () => (await succeeded(c)) >= ENTRIES / 5, 60_000);
    // Worse still: one worker dies with the Redis, so its jobs in flight are lost with the queue.
    await workers[0]?.stop('SIGKILL');
    const before = await succeeded(c);
    expect((await redis.stop()).code).toBe(0);
    await noticed(workers.slice(1));
    redis = await startRedis({ appendonly: false, port: redis.port, dir: redis.dir });

    // The restarted Redis is empty: the jobs still waiting are gone, Postgres still lists them.
    const counts = await c.queues.counts();
    expect(counts.enterprise.waiting ?? 0).toBe(0);
    const stranded = await c.db.sql<{ planned: number; fetching: number }[]>`
      select count(*) filter (where status = 'planned')::int as planned,
             count(*) filter (where status = 'fetching')::int as fetching
      from cycle_fetches where cycle = ${c.cycle}`;
    expect(stranded[0]?.planned).toBeGreaterThan(0);

    const r = await runDaybook(['enqueue', '--cycle', c.cycle], c.env());
    expect(r.code, r.stderr).toBe(0);
    await waitFor('the cycle', () => settled(c.db.sql, c.cycle, ENTRIES), 120_000);

    expect(await statuses(c.db.sql, c.cycle)).toEqual({ succeeded: ENTRIES });
    // The killed worker may have been paid for answers it never landed: at most one per call it
    // had in flight, which is at most its concurrency.
    const billed = c.sim.sim.counters.billedQueries;
    expect(billed - ENTRIES).toBeGreaterThanOrEqual(0);
    expect(billed - ENTRIES).toBeLessThanOrEqual(WORKER_CONCURRENCY);
    expect(await ledgerOf(c.db.sql, c.cycle)).toEqual({ n: ENTRIES, credits: 3 * ENTRIES });
    // The budget spent is the ledger: every booked credit, and a presumed one for each call the
    // killed worker sent but never landed (it may have been billed): every extra query is one.
    const ledger = await expectLedgerMatchesBilling(c.db.sql, c.cycle, c.sim, WORKER_CONCURRENCY);
    expect(ledger.presumed.n).toBeGreaterThanOrEqual(billed - ENTRIES);
    const [budget] = await c.db.sql<{ spent: number; reserved: number }[]>`
      select spent, reserved from cycle_budgets where cycle = ${c.cycle}`;
    expect(budget).toEqual({ spent: 3 * ENTRIES + ledger.presumed.credits, reserved: 0 });
    figures('redis restart (appendonly no, a worker killed, then daybook enqueue)', {
      entries: ENTRIES,
      'done before the restart': before,
      'stranded until re-planned': `${stranded[0]?.planned} planned, ${stranded[0]?.fetching} in flight`,
      'items lost': ENTRIES - (await succeeded(c)),
      'extra billed queries': billed - ENTRIES,
    });
  });
});
