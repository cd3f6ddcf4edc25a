/**
 * An entry is bought at most once per cycle in every mode at once. Two `daybook run`, two `daybook
 * worker` processes and a `daybook resume --inline` all take the same cycle, against a simulator
 * whose rate limit is the configured one: each entry is bought exactly once, the ledger equals what
 * the simulator billed, and the simulator refuses nothing for the rate.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { runDaybook } from '../support/cli.ts';
import {
  expectLedgerMatchesBilling,
  type FaultCycle,
  figures,
  settled,
  startFaultCycle,
  statuses,
} from './support/cycle.ts';
import { spawnWorker, type WorkerProcess, waitFor } from './support/processes.ts';

const ENTRIES = 24;
/** Per minute, for daybook and the simulator alike: 24 entries need more than one window. */
const RATE = 20;

describe('one cycle taken by every mode at once', { timeout: 300_000 }, () => {
  let c: FaultCycle;
  const workers: WorkerProcess[] = [];
  afterAll(async () => {
    for (const w of workers) await w.stop('SIGKILL');
    await c?.close();
  });

  it('buys each entry exactly once, books every billed credit, and is never refused for the rate', async () => {
    c = await startFaultCycle({
      entries: ENTRIES,
      simRate: RATE,
      env: { DAYBOOK_ENTERPRISE_RATE: String(RATE), DAYBOOK_JOB_LOCK_MS: '5000' },
    });
    const env = c.env();
    const started = Date.now();
    for (let i = 0; i < 2; i++) workers.push(spawnWorker(env));
    await Promise.all(workers.map((w) => w.started));
    const run = () =>
      runDaybook(['run', '--only', 'enterprises', '--cycle', c.cycle, '--json'], env, undefined, 240_000);
    const runs = [run(), run()];
    await c.enqueuePlan();
    // `resume` needs the cycle planned: it joins once a plan made the cycle's budget.
    await waitFor(
      'the first plan',
      async () => (await c.db.sql`select 1 from cycle_budgets where cycle = ${c.cycle}`).length > 0,
      60_000,
    );
    const resume = runDaybook(['resume', '--inline', '--cycle', c.cycle], env, undefined, 240_000);
    const results = await Promise.all([...runs, resume]);
    for (const r of results) expect(r.code, r.stderr.slice(-2000)).toBe(0);
    await waitFor('the cycle', () => settled(c.db.sql, c.cycle, ENTRIES), 200_000);
    for (const w of workers) await w.stop('SIGTERM');

    expect(await statuses(c.db.sql, c.cycle)).toEqual({ succeeded: ENTRIES });
    const counters = c.sim.sim.counters;
    expect(Object.keys(counters.billedByPid)).toHaveLength(ENTRIES);
    expect(Math.max(...Object.values(counters.billedByPid))).toBe(1);
    expect(counters.billedQueries).toBe(ENTRIES);
    const ledger = await expectLedgerMatchesBilling(c.db.sql, c.cycle, c.sim);
    expect(counters.rateLimited['enterprise-search']).toBe(0);
    // Every process took part in the one limit: more than a window's worth went through it.
    expect(counters.requests['enterprise-search']).toBeGreaterThan(RATE);
    const byMode = await c.db.sql<{ mode: string; n: number }[]>`
      select case when job_id like 'inline-%' then 'inline' else 'worker' end as mode, count(*)::int as n
      from runs where kind = 'enterprise' and outcome = 'succeeded' group by 1 order by 1`;
    figures('once in every mode', {
      entries: ENTRIES,
      'processes at once': 5,
      'billed queries': counters.billedQueries,
      'distinct enterprises billed': Object.keys(counters.billedByPid).length,
      'ledger booked': ledger.booked.n,
      presumed: ledger.presumed.n,
      'rate-limit refusals': counters.rateLimited['enterprise-search'],
      'bought by': byMode.map((m) => `${m.mode} ${m.n}`).join(' + '),
      'wall s': Math.round((Date.now() - started) / 1000),
    });
  });
});
