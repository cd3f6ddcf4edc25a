/**
 * A job whose worker dies every time it runs it (an OOM loop, an answer that kills the process)
 * stalls again and again; past DAYBOOK_JOB_MAX_STALLS BullMQ fails it for good. Its entry then
 * fails for the cycle with the reason, every call its dead workers sent is in the ledger as
 * presumed billed (the upstream billed each one here), it is not bought again, and the cycle
 * completes. The upstream is the simulator behind a proxy that passes every call on and holds
 * the answers to one keyword back: the call is billed, and the worker that made it is killed
 * while it waits.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Worker } from 'bullmq';
import { afterAll, describe, expect, it } from 'vitest';
import { redisConnection } from '../../src/runtime/queues.ts';
import { queuePrefix } from '../../src/runtime/redis.ts';
import { STALLED_TOO_OFTEN } from '../../src/runtime/worker.ts';
import {
  expectLedgerMatchesBilling,
  type FaultCycle,
  figures,
  startFaultCycle,
  statuses,
} from './support/cycle.ts';
import { spawnWorker, type WorkerProcess, waitFor } from './support/processes.ts';

const ENTRIES = 4;
const CREDITS = 3;
/** Short locks, so a dead worker's job is found stalled within seconds. */
const ENV = {
  DAYBOOK_JOB_LOCK_MS: '2000',
  DAYBOOK_JOB_MAX_STALLS: '1',
  // The held call must outlast the kill, not time out first.
  DAYBOOK_HTTP_TIMEOUT_MS: '120000',
};
/** Every wait is generous: the deadlines are for a machine under load, not figures. */
const PATIENCE_MS = 60_000;

/** A proxy to the simulator that passes every call on, and holds the answer to `keyword` back. */
interface HoldingProxy {
  url: string;
  /** Calls for the held keyword that reached the simulator (billed there) and were held. */
  held: number;
  close(): Promise<void>;
}

async function holdingProxy(target: string, keyword: string): Promise<HoldingProxy> {
  const holding: ServerResponse[] = [];
  const proxy = { held: 0 };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', target);
    const headers: Record<string, string> = {};
    if (req.headers.authorization) headers.authorization = req.headers.authorization;
    fetch(url, { headers })
      .then(async (answer) => {
        const body = await answer.text();
        if (url.searchParams.get('ent_name') === keyword) {
          // Billed by the simulator; the worker waits for an answer that never comes.
          holding.push(res);
          proxy.held++;
          return;
        }
        res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' });
        res.end(body);
      })
      .catch((err: Error) => {
        res.writeHead(502);
        res.end(err.message);
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(proxy, {
    url: `http://127.0.0.1:${port}`,
    async close() {
      for (const res of holding) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}

/** The poisoned entry's fetch row, its ledger rows, and the cycle's events about it. */
async function entryState(c: FaultCycle, watchId: number) {
  const [fetch] = await c.db.sql<
    { status: string; error_code: string | null; error_message: string | null }[]
  >`
    select status, error_code, error_message from cycle_fetches where cycle = ${c.cycle} and watch_id = ${watchId}`;
  const ledger = await c.db.sql<{ status: string; credits: number }[]>`
    select status, credits from credit_ledger where cycle = ${c.cycle} and watch_id = ${watchId} order by id`;
  const failedEvents = await c.db.sql<{ data: { reason: string; message: string; watch_id: number } }[]>`
    select data from analytics.events where type = 'entry.failed' and cycle = ${c.cycle}`;
  const completed = await c.db
    .sql`select 1 from analytics.events where type = 'cycle.completed' and cycle = ${c.cycle}`;
  const [watch] = await c.db.sql<{ last_error: string | null }[]>`
    select last_error from watchlist where id = ${watchId}`;
  return { fetch, ledger, failedEvents, completed: completed.length > 0, watch };
}

/** The keyword of the second watch entry: the one whose answers are held back. */
async function poisonOf(c: FaultCycle): Promise<{ watchId: number; keyword: string }> {
  const watchId = c.watchIds[1] as number;
  const [row] = await c.db.sql<{ keyword: string }[]>`select keyword from watchlist where id = ${watchId}`;
  return { watchId, keyword: row?.keyword ?? '' };
}

/** True once every entry but `watchId` succeeded in the cycle. */
async function othersDone(c: FaultCycle, watchId: number): Promise<boolean> {
  const [r] = await c.db.sql<{ n: number }[]>`
    select count(*)::int as n from cycle_fetches
    where cycle = ${c.cycle} and watch_id <> ${watchId} and status = 'succeeded'`;
  return r?.n === ENTRIES - 1;
}

describe('a job whose worker dies every time it runs it', { timeout: 120_000 }, () => {
  const cycles: FaultCycle[] = [];
  const proxies: HoldingProxy[] = [];
  const workers: WorkerProcess[] = [];
  afterAll(async () => {
    for (const w of workers) await w.stop('SIGKILL');
    for (const p of proxies) await p.close();
    for (const c of cycles) await c.close();
  });

  it('fails its entry for the cycle with the reason, its presumed calls in the ledger as billed, never bought again, and the cycle completes', async () => {
    const c = await startFaultCycle({ entries: ENTRIES, env: ENV });
    cycles.push(c);
    const poison = await poisonOf(c);
    const proxy = await holdingProxy(c.sim.url, poison.keyword);
    proxies.push(proxy);
    const env = c.env({ DAYBOOK_API_BASE_URL: proxy.url });

    let w = spawnWorker(env);
    workers.push(w);
    await w.started;
    await c.enqueuePlan();
    // DAYBOOK_JOB_MAX_STALLS 1: the job stalls twice (a worker killed with its call in flight,
    // twice) and BullMQ fails it when a worker next takes it up.
    for (let kill = 1; kill <= 2; kill++) {
      await waitFor(
        `held call ${kill}`,
        async () => proxy.held === kill && (await othersDone(c, poison.watchId)),
        PATIENCE_MS,
      );
      expect((await w.stop('SIGKILL')).signal).toBe('SIGKILL');
      w = spawnWorker(env);
      workers.push(w);
      await w.started;
    }
    await waitFor(
      'the entry to fail and the cycle to complete',
      async () => {
        const s = await entryState(c, poison.watchId);
        return s.fetch?.status === 'failed' && s.completed;
      },
      PATIENCE_MS,
    );

    const s = await entryState(c, poison.watchId);
    expect(s.fetch).toMatchObject({ status: 'failed', error_code: 'worker_died' });
    expect(s.fetch?.error_message).toMatch(
      /^its worker died 2 times while buying it \(BullMQ failed the job: job stalled more than allowable limit, DAYBOOK_JOB_MAX_STALLS 1\)/,
    );
    expect(s.watch?.last_error).toMatch(/its worker died 2 times while buying it/);
    expect(s.failedEvents.map((e) => ({ watch: e.data.watch_id, reason: e.data.reason }))).toEqual([
      { watch: poison.watchId, reason: 'worker_died' },
    ]);
    expect(await statuses(c.db.sql, c.cycle)).toEqual({ succeeded: ENTRIES - 1, failed: 1 });

    // Each call a killed worker sent is presumed billed, at the reserved credits: the first by the
    // job's rerun, the second when the entry failed. The simulator billed both: no more, no less.
    expect(s.ledger).toEqual([
      { status: 'presumed', credits: CREDITS },
      { status: 'presumed', credits: CREDITS },
    ]);
    const ledger = await expectLedgerMatchesBilling(c.db.sql, c.cycle, c.sim, 2);
    expect(ledger.presumed).toEqual({ n: 2, credits: 2 * CREDITS });
    expect(ledger.booked).toEqual({ n: ENTRIES - 1, credits: (ENTRIES - 1) * CREDITS });
    expect({
      n: ledger.booked.n + ledger.presumed.n,
      credits: ledger.booked.credits + ledger.presumed.credits,
    }).toEqual(ledger.billed);

    // Never bought again in the cycle: a job of a new round (as `daybook resume` adds) finds it failed.
    await c.queues.enterprises(c.cycle, [poison.watchId], 1);
    await waitFor(
      'the new round to finish',
      async () => (await c.queues.enterprise.getCompletedCount()) >= ENTRIES,
      PATIENCE_MS,
    );
    expect(proxy.held).toBe(2);
    expect(c.sim.sim.counters.billedQueries).toBe(ledger.billed.n);

    // The log says why, and which entry.
    const line = w.lines.find((l) => l.includes('its worker died too many times'));
    expect(line, w.lines.slice(-10).join('\n')).toBeDefined();
    expect(JSON.parse(line ?? '{}')).toMatchObject({
      kind: 'enterprise',
      outcome: 'failed',
      cycle: c.cycle,
      entity: poison.keyword,
      credits: CREDITS,
      error: 'worker_died',
    });
    figures('worker stalls', {
      stalls: 2,
      'presumed credits': ledger.presumed.credits,
      'billed credits': ledger.billed.credits,
    });
  });

  it('is settled by a later worker when the worker that failed it settled nothing', async () => {
    const c = await startFaultCycle({ entries: ENTRIES, env: ENV });
    cycles.push(c);
    const poison = await poisonOf(c);
    const proxy = await holdingProxy(c.sim.url, poison.keyword);
    proxies.push(proxy);
    const env = c.env({ DAYBOOK_API_BASE_URL: proxy.url });

    const w = spawnWorker(env);
    workers.push(w);
    await w.started;
    await c.enqueuePlan();
    await waitFor(
      'the held call',
      async () => proxy.held === 1 && (await othersDone(c, poison.watchId)),
      PATIENCE_MS,
    );
    await w.stop('SIGKILL');

    // A bare BullMQ worker that allows no stall fails the job as BullMQ does, and knows nothing of
    // daybook: BullMQ's failed job is the only trace left.
    const redis = redisConnection({ REDIS_URL: c.redisUrl });
    const bare = new Worker(
      'enterprise',
      async () => {
        throw new Error('the bare worker runs no job');
      },
      {
        connection: redis,
        prefix: queuePrefix(c.prefix, 'enterprise'),
        maxStalledCount: 0,
        stalledInterval: 1000,
        lockDuration: 2000,
      },
    );
    const failed = new Promise<string>((resolve) => bare.once('failed', (_job, err) => resolve(err.message)));
    expect(await failed).toBe(STALLED_TOO_OFTEN);
    await bare.close();
    redis.disconnect();
    expect((await entryState(c, poison.watchId)).fetch?.status).toBe('fetching');

    const later = spawnWorker(env);
    workers.push(later);
    await later.started;
    await waitFor(
      'the entry to fail and the cycle to complete',
      async () => {
        const s = await entryState(c, poison.watchId);
        return s.fetch?.status === 'failed' && s.completed;
      },
      PATIENCE_MS,
    );
    const s = await entryState(c, poison.watchId);
    expect(s.fetch).toMatchObject({ status: 'failed', error_code: 'worker_died' });
    expect(s.fetch?.error_message).toMatch(/^its worker died \d+ times? while buying it/);
    expect(s.ledger).toEqual([{ status: 'presumed', credits: CREDITS }]);
    const ledger = await expectLedgerMatchesBilling(c.db.sql, c.cycle, c.sim, 1);
    expect({
      n: ledger.booked.n + ledger.presumed.n,
      credits: ledger.booked.credits + ledger.presumed.credits,
    }).toEqual(ledger.billed);
    expect(proxy.held).toBe(1);
    expect(later.lines.some((l) => l.includes('its worker died too many times'))).toBe(true);
  });
});
