/**
 * A worker process killed with SIGKILL at random points of a 300-entry cycle, and restarted each
 * time, ends with the same analytics as a clean run of the same cycle.
 */
import { afterAll, describe, expect, it } from 'vitest';
import {
  analyticsSnapshot,
  expectLedgerMatchesBilling,
  type FaultCycle,
  figures,
  settled,
  snapshotDiff,
  startFaultCycle,
  statuses,
  WORKER_CONCURRENCY,
} from './support/cycle.ts';
import { spawnWorker, type WorkerProcess, waitFor } from './support/processes.ts';

const ENTRIES = 300;
const KILLS = 12;
/** Enterprise calls per minute: slow enough that the cycle outlasts the kills. */
const RATE = '400';
/** How long a dead worker's jobs stay locked before another worker takes them over. */
const LOCK_MS = '5000';

/** A small seeded generator, so a failing run can be replayed with its seed. */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe('a worker killed with SIGKILL during a cycle', { timeout: 240_000 }, () => {
  const cycles: FaultCycle[] = [];
  const workers: WorkerProcess[] = [];
  afterAll(async () => {
    for (const w of workers) await w.stop('SIGKILL');
    for (const c of cycles) await c.close();
  });

  it('ends with the analytics of a clean run, no entry missing, at most one extra billed query per call a kill cut off, each in the ledger', async () => {
    const env = { DAYBOOK_ENTERPRISE_RATE: RATE, DAYBOOK_JOB_LOCK_MS: LOCK_MS };
    const clean = await startFaultCycle({ entries: ENTRIES, env });
    cycles.push(clean);
    const crashed = await startFaultCycle({ entries: ENTRIES, env });
    cycles.push(crashed);
    expect(crashed.cycle).toBe(clean.cycle);

    const cleanRun = async () => {
      const w = spawnWorker(clean.env());
      workers.push(w);
      await w.started;
      await clean.enqueuePlan();
      await waitFor('clean cycle', () => settled(clean.db.sql, clean.cycle, ENTRIES), 180_000);
      await w.stop('SIGTERM');
    };

    const seed = Number(process.env.DAYBOOK_FAULT_SEED ?? Date.now() % 100_000);
    const random = lcg(seed);
    let kills = 0;
    const crashRun = async () => {
      let w = spawnWorker(crashed.env());
      workers.push(w);
      await w.started;
      await crashed.enqueuePlan();
      while (kills < KILLS) {
        // A random point of the worker's life: between 0.2 s and 2.5 s after it started.
        await new Promise((r) => setTimeout(r, 200 + random() * 2300));
        if (await settled(crashed.db.sql, crashed.cycle, ENTRIES)) break;
        const exit = await w.stop('SIGKILL');
        expect(exit.signal).toBe('SIGKILL');
        kills++;
        w = spawnWorker(crashed.env());
        workers.push(w);
        await w.started;
      }
      await waitFor('crashed cycle', () => settled(crashed.db.sql, crashed.cycle, ENTRIES), 180_000);
      await w.stop('SIGTERM');
    };

    await Promise.all([cleanRun(), crashRun()]);
    expect(kills, `the cycle ended before ${KILLS} kills (seed ${seed})`).toBe(KILLS);

    // No entry missing: every watch entry refreshed in both runs.
    expect(await statuses(clean.db.sql, clean.cycle)).toEqual({ succeeded: ENTRIES });
    expect(await statuses(crashed.db.sql, crashed.cycle)).toEqual({ succeeded: ENTRIES });

    // The analytics views, row by row.
    const expected = await analyticsSnapshot(clean.db.sql);
    const actual = await analyticsSnapshot(crashed.db.sql);
    // A difference names its rows and the seed, so that a rare kill point can be replayed.
    expect(snapshotDiff(expected, actual), `the crashed run's analytics differ (seed ${seed})`).toEqual([]);
    for (const view of Object.keys(expected)) {
      expect(actual[view]?.length, view).toBe(expected[view]?.length);
      expect(actual[view], view).toEqual(expected[view]);
    }
    expect(expected.enterprise_current).toHaveLength(ENTRIES);

    // Billing: the clean run bought each entry once; the crashed run at most one more per call in
    // flight at a kill, which is at most the worker's concurrency.
    const cleanBilled = clean.sim.sim.counters.billedQueries;
    const crashBilled = crashed.sim.sim.counters.billedQueries;
    expect(cleanBilled).toBe(ENTRIES);
    // The ledger is what the simulator billed: exactly in the clean run; in the crashed run,
    // booked or presumed (a call cut off by a kill may have been billed), never less.
    const cleanLedger = await expectLedgerMatchesBilling(clean.db.sql, clean.cycle, clean.sim);
    expect(cleanLedger.booked).toEqual({ n: ENTRIES, credits: 3 * ENTRIES });
    const crashLedger = await expectLedgerMatchesBilling(
      crashed.db.sql,
      crashed.cycle,
      crashed.sim,
      kills * WORKER_CONCURRENCY,
    );
    const extra = crashBilled - cleanBilled;
    expect(extra).toBeGreaterThanOrEqual(0);
    expect(extra).toBeLessThanOrEqual(kills * WORKER_CONCURRENCY);
    // Every extra query is in the ledger as a presumed call.
    expect(crashLedger.presumed.n).toBeGreaterThanOrEqual(extra);
    const [abandoned] = await crashed.db.sql<{ n: number }[]>`
      select count(*)::int as n from runs where outcome = 'abandoned'`;
    figures('worker crash', {
      seed,
      entries: ENTRIES,
      'kills survived': kills,
      'items lost': ENTRIES - ((await statuses(crashed.db.sql, crashed.cycle)).succeeded ?? 0),
      'extra billed queries': extra,
      'ledger booked': crashLedger.booked.credits,
      presumed: crashLedger.presumed.credits,
      'simulator billed': crashLedger.billed.credits,
      'runs cut short (abandoned)': abandoned?.n ?? 0,
    });
  });
});
