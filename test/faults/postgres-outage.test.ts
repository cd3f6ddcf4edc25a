/**
 * Postgres failing under running `daybook worker` processes. Only the test's own database is hurt
 * (its backends terminated, or connections to it refused for a while); the shared server runs on.
 *
 * What daybook promises: a job that loses its database is retried; an upstream answer already
 * bought waits (up to 2 minutes) for the database instead of being bought again; the credit
 * reservation never leaks; no worker process dies of it; every entry is refreshed exactly once.
 */
import postgres from 'postgres';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { adminUrl } from '../support/pg-url.ts';
import {
  expectLedgerMatchesBilling,
  type FaultCycle,
  figures,
  ledgerOf,
  settled,
  startFaultCycle,
  statuses,
} from './support/cycle.ts';
import { spawnWorker, type WorkerProcess, waitFor } from './support/processes.ts';

const ENTRIES = 150;
/** Enterprise calls per minute: the cycle lasts about 15 s, long enough for every fault. */
// The job lock stays at its default: nobody is killed here, and a short lock lapses when the
// machine is starved, which hands a job in flight to the other worker.
const ENV = { DAYBOOK_ENTERPRISE_RATE: '600' };

describe('Postgres failing mid-cycle', { timeout: 240_000 }, () => {
  let admin: postgres.Sql;
  let cycle: FaultCycle | undefined;
  const workers: WorkerProcess[] = [];
  beforeAll(() => {
    admin = postgres(adminUrl(), { max: 1, onnotice: () => {} });
  });
  afterAll(async () => {
    await admin.end();
  });
  afterEach(async () => {
    for (const w of workers.splice(0)) await w.stop('SIGKILL');
    if (cycle) {
      await admin.unsafe(`alter database "${cycle.db.name}" with allow_connections true`);
      await cycle.close();
    }
    cycle = undefined;
  });

  /** Terminates every backend of the test's database; returns how many there were. */
  const terminate = async (db: string): Promise<number> => {
    const rows = await admin<{ ok: boolean }[]>`
      select pg_terminate_backend(pid) as ok from pg_stat_activity
      where datname = ${db} and pid <> pg_backend_pid()`;
    return rows.filter((r) => r.ok).length;
  };

  /**
   * Polls a condition that reads the database while the database may be failing; on time-out,
   * says where the cycle stands and what the workers logged last.
   */
  const eventually = async (what: string, done: () => Promise<boolean>, timeoutMs: number) => {
    try {
      await waitFor(what, () => done().catch(() => false), timeoutMs);
    } catch (err) {
      const where = cycle ? await statuses(cycle.db.sql, cycle.cycle).catch((e: Error) => e.message) : {};
      const tails = workers.map((w) => w.lines.slice(-8).join('\n')).join('\n---\n');
      throw new Error(`${(err as Error).message}; fetches ${JSON.stringify(where)}\n${tails}`);
    }
  };

  const start = async () => {
    cycle = await startFaultCycle({ entries: ENTRIES, env: ENV });
    const c = cycle;
    for (let i = 0; i < 2; i++) workers.push(spawnWorker(c.env()));
    await Promise.all(workers.map((w) => w.started));
    await c.enqueuePlan();
    await eventually(
      'the cycle under way',
      async () => ((await statuses(c.db.sql, c.cycle)).succeeded ?? 0) >= 10,
      60_000,
    );
    return c;
  };

  /** Every entry refreshed exactly once: one version, one initial event, one ledger row each. */
  const checkOnce = async (c: FaultCycle) => {
    expect(await statuses(c.db.sql, c.cycle)).toEqual({ succeeded: ENTRIES });
    const [h] = await c.db.sql<{ versions: number; pids: number; initial: number }[]>`
      select (select count(*)::int from enterprise_versions) as versions,
             (select count(distinct pid)::int from enterprise_versions) as pids,
             (select count(*)::int from enterprise_observations where kind = 'initial') as initial`;
    expect(h).toEqual({ versions: ENTRIES, pids: ENTRIES, initial: ENTRIES });
    expect(await ledgerOf(c.db.sql, c.cycle)).toEqual({ n: ENTRIES, credits: 3 * ENTRIES });
    await expectLedgerMatchesBilling(c.db.sql, c.cycle, c.sim);
    // Runs cut short were closed as abandoned when their job ran again.
    const [running] = await c.db.sql<{ n: number }[]>`
      select count(*)::int as n from runs where outcome = 'running'`;
    expect(running?.n).toBe(0);
    // A bought answer waits for the database rather than being bought again by a retry.
    expect(c.sim.sim.counters.billedQueries).toBe(ENTRIES);
    // The workers rode the outage out: none of them died (a driver bug once made them).
    for (const w of workers) expect(w.exit, w.lines.slice(-5).join('\n')).toBeNull();
    return c.sim.sim.counters.billedQueries - ENTRIES;
  };

  it('connections terminated again and again mid-job: jobs are retried, nothing lost or doubled', async () => {
    const c = await start();
    let bursts = 0;
    let terminated = 0;
    while (bursts < 15 && !(await settled(c.db.sql, c.cycle, ENTRIES).catch(() => false))) {
      terminated += await terminate(c.db.name);
      bursts++;
      await new Promise((r) => setTimeout(r, 200 + Math.random() * 400));
    }
    expect(bursts).toBeGreaterThanOrEqual(10);
    await eventually('the cycle', () => settled(c.db.sql, c.cycle, ENTRIES), 150_000);
    const extra = await checkOnce(c);
    const retried = workers
      .flatMap((w) => w.lines)
      .filter((l) => l.includes('"msg":"enterprise will retry"'));
    expect(retried.length).toBeGreaterThan(0);
    figures('postgres backends terminated', {
      entries: ENTRIES,
      bursts,
      'connections terminated': terminated,
      'jobs retried': retried.length,
      'items lost': ENTRIES - ((await statuses(c.db.sql, c.cycle)).succeeded ?? 0),
      'extra billed queries': extra,
    });
  });

  it('the database refusing connections for a while: jobs are retried, the cycle completes, nothing lost or doubled', async () => {
    const c = await start();
    const doneBefore = (await statuses(c.db.sql, c.cycle)).succeeded ?? 0;
    await admin.unsafe(`alter database "${c.db.name}" with allow_connections false`);
    const terminated = await terminate(c.db.name);
    // The outage lasts until every worker has seen a refused connection, and 3 s more.
    const refused = () =>
      workers.every((w) => w.lines.some((l) => l.includes('is not currently accepting connections')));
    // A worker may sit in a reconnect until the driver's connect timeout (30 s) before it logs.
    await eventually('workers refused by the database', async () => refused(), 75_000);
    await new Promise((r) => setTimeout(r, 3000));
    await admin.unsafe(`alter database "${c.db.name}" with allow_connections true`);
    await eventually('the cycle', () => settled(c.db.sql, c.cycle, ENTRIES), 150_000);
    const extra = await checkOnce(c);
    const waited = workers
      .flatMap((w) => w.lines)
      .filter((l) => l.includes('with a bought answer in hand')).length;
    figures('postgres refusing connections', {
      entries: ENTRIES,
      'done before the outage': doneBefore,
      'connections terminated': terminated,
      'waits with a bought answer': waited,
      'items lost': ENTRIES - ((await statuses(c.db.sql, c.cycle)).succeeded ?? 0),
      'extra billed queries': extra,
    });
  });
});
