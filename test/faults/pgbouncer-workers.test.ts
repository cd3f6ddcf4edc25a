/**
 * Workers run through PgBouncer in transaction-pooling mode (Debian's 1.18, no prepared
 * statements), and complete a cycle, one of them killed with SIGKILL mid-cycle: the claims it held
 * lapse and are taken over, nothing is lost, and the ledger is the billing.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { type PgBouncer, startPgBouncer } from '../support/pgbouncer.ts';
import {
  expectLedgerMatchesBilling,
  type FaultCycle,
  figures,
  settled,
  startFaultCycle,
  statuses,
} from './support/cycle.ts';
import { spawnWorker, type WorkerProcess, waitFor } from './support/processes.ts';

const ENTRIES = 120;
const CONCURRENCY = 4;

describe('workers behind PgBouncer in transaction mode', { timeout: 240_000 }, () => {
  let c: FaultCycle;
  let bouncer: PgBouncer;
  const workers: WorkerProcess[] = [];
  afterAll(async () => {
    for (const w of workers) await w.stop('SIGKILL');
    await bouncer?.stop();
    await c?.close();
  });

  it('complete a cycle, a SIGKILLed worker included: its leases lapse and are taken over', async () => {
    c = await startFaultCycle({
      entries: ENTRIES,
      env: { DAYBOOK_ENTERPRISE_RATE: '600', DAYBOOK_JOB_LOCK_MS: '3000' },
    });
    // Fewer server connections than the workers' pools hold: only transaction pooling fits them.
    bouncer = await startPgBouncer({ database: c.db.name, poolMode: 'transaction', poolSize: 6 });
    const env = c.env({
      DATABASE_URL: bouncer.url,
      DAYBOOK_DB_PREPARE: 'false',
      DAYBOOK_WORKER_CONCURRENCY: String(CONCURRENCY),
    });
    const a = spawnWorker(env);
    const b = spawnWorker(env);
    workers.push(a, b);
    await Promise.all([a.started, b.started]);
    await c.enqueuePlan();
    await waitFor(
      'a third of the cycle',
      async () => ((await statuses(c.db.sql, c.cycle)).succeeded ?? 0) >= 40,
      120_000,
    );
    const exit = await a.stop('SIGKILL');
    expect(exit.signal).toBe('SIGKILL');
    await waitFor('the cycle', () => settled(c.db.sql, c.cycle, ENTRIES), 180_000);
    await b.stop('SIGTERM');

    expect(await statuses(c.db.sql, c.cycle)).toEqual({ succeeded: ENTRIES });
    // The killed worker held claims (its jobs wait for the rate limit with a claim): taken over.
    const [taken] = await c.db.sql<{ n: number }[]>`
      select count(*)::int as n from cycle_fetches where cycle = ${c.cycle} and fence >= 2`;
    expect(taken?.n).toBeGreaterThan(0);
    // A call the killed worker had sent may have been billed: presumed, at most one per job it ran.
    const ledger = await expectLedgerMatchesBilling(c.db.sql, c.cycle, c.sim, CONCURRENCY);
    const extra = c.sim.sim.counters.billedQueries - ENTRIES;
    expect(extra).toBeGreaterThanOrEqual(0);
    expect(extra).toBeLessThanOrEqual(CONCURRENCY);
    // No worker held a session-level lock through the bouncer.
    const [locks] = await c.db.sql<{ n: number }[]>`
      select count(*)::int as n from pg_locks l join pg_database d on d.oid = l.database
      where l.locktype = 'advisory' and d.datname = ${c.db.name}`;
    expect(locks?.n).toBe(0);
    figures('pgbouncer transaction mode', {
      entries: ENTRIES,
      'server connections': 6,
      'claims taken over': taken?.n ?? 0,
      'extra billed queries': extra,
      'ledger booked': ledger.booked.n,
      presumed: ledger.presumed.n,
      'items lost': ENTRIES - ((await statuses(c.db.sql, c.cycle)).succeeded ?? 0),
    });
  });
});
