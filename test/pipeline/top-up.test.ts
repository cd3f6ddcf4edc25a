/**
 * The first ten minutes (the compose sandbox's order): the scheduler starts first and catches up
 * today's plan while the watchlist is still empty; then `watch add` of two companies and
 * `daybook enqueue`. The companies are bought in the same cycle, once; a second `enqueue` buys
 * nothing; a company added once the budget is spent is said to wait for credits, never for
 * "the next cycle". Real processes (`daybook scheduler`, two `daybook worker`s, the CLI), Redis,
 * and the simulator over HTTP.
 *
 * The scheduler also tops up on its own, every minute, when entries came after the plan: that
 * runs here in-process on a one-second tick, with in-process workers.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/log.ts';
import { Queues, redisConnection } from '../../src/runtime/queues.ts';
import { type RunningScheduler, startScheduler, type TickEvent } from '../../src/runtime/scheduler.ts';
import type { RunningSimulator } from '../../src/sim/server.ts';
import { cycleOf } from '../../src/time/cycles.ts';
import { expectLedgerMatchesBilling, statuses } from '../faults/support/cycle.ts';
import { spawnDaybook, spawnWorker, type WorkerProcess, waitFor } from '../faults/support/processes.ts';
import { runDaybook } from '../support/cli.ts';
import { cliAgainstSim } from '../support/cli-sim.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';
import { startPipeline, type TestPipeline, until } from '../support/pipeline.ts';
import { removeQueues } from '../support/queues.ts';
import { startTestSim, TEST_KEY, UNTHROTTLED } from '../support/sim.ts';

/** Whether the plan of `cycle` named `jobId` (or any top-up of it, with a `%`) has run. */
async function planRan(sql: TestDatabase['sql'], cycle: string, jobId: string): Promise<boolean> {
  const [r] = await sql<{ n: number }[]>`
    select count(*)::int as n from runs
    where kind = 'plan' and cycle = ${cycle} and job_id like ${jobId} and outcome = 'succeeded'`;
  return (r?.n ?? 0) > 0;
}

/** How each entry of `ids` stands in `cycle`. */
async function fetchStatus(sql: TestDatabase['sql'], cycle: string, ids: number[]): Promise<string[]> {
  const rows = await sql<{ status: string }[]>`
    select coalesce(f.status, 'none') as status
    from unnest(${ids}::bigint[]) with ordinality as t(id, n)
    left join cycle_fetches f on f.cycle = ${cycle} and f.watch_id = t.id
    order by t.n`;
  return rows.map((r) => r.status);
}

describe('a company added today is bought today', { timeout: 180_000 }, () => {
  const processes: WorkerProcess[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const p of processes.splice(0)) await p.stop('SIGTERM');
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('compose order: scheduler first on an empty watchlist, then watch add and enqueue; a second enqueue buys nothing; then credits run out', async () => {
    const db = await freshDatabase();
    const sim: RunningSimulator = await startTestSim({ enterprises: 50, rateLimits: UNTHROTTLED });
    const prefix = `dbt-top-${randomBytes(4).toString('hex')}`;
    const redis = redisConnection({ REDIS_URL: 'redis://127.0.0.1:6379' });
    const queues = new Queues(redis, prefix);
    cleanups.push(async () => {
      await removeQueues(queues, prefix, redis);
      await redis.quit();
      await sim.close();
      await db.drop();
    });
    const env = {
      DATABASE_URL: db.url,
      REDIS_URL: 'redis://127.0.0.1:6379',
      DAYBOOK_REDIS_PREFIX: prefix,
      DAYBOOK_API_BASE_URL: sim.url,
      DAYBOOK_API_KEY: TEST_KEY,
      // The cycle's plan at the cycle's start (03:00 Beijing): the catch-up is always today's.
      DAYBOOK_ENTERPRISE_CRON: '0 3 * * *',
      // Two queries' worth of credits: the third company waits for credits.
      DAYBOOK_CREDIT_BUDGET: '6',
      DAYBOOK_HTTP_TIMEOUT_MS: '5000',
      LOG_LEVEL: 'info',
    };
    const transcript: string[] = [];
    const daybook = async (...args: string[]) => {
      const r = await runDaybook(args, env);
      expect(r.code, `daybook ${args.join(' ')}: ${r.stderr}`).toBe(0);
      transcript.push(`$ daybook ${args.join(' ')}\n${r.stdout}`);
      return r.stdout;
    };
    const [a, b, c] = sim.sim
      .world()
      .all()
      .slice(0, 3)
      .map((e) => e.ENTNAME) as [string, string, string];

    // The scheduler starts first; the workers plan today's cycle over an empty watchlist.
    const scheduler = spawnDaybook('scheduler', env, [], '"msg":"scheduler started"');
    processes.push(scheduler);
    await scheduler.started;
    const cycle = cycleOf(new Date());
    for (let i = 0; i < 2; i++) processes.push(spawnWorker(env));
    await Promise.all(processes.map((p) => p.started));
    await waitFor('the plan of the empty watchlist', () => planRan(db.sql, cycle, `plan-${cycle}`), 60_000);
    expect(await statuses(db.sql, cycle)).toEqual({});

    // Two companies added, then enqueue: a top-up of today's plan.
    expect(await daybook('watch', 'add', a, b)).toBe(
      `added: ${a} (id 1)\nadded: ${b} (id 2)\nadded 2, already watched 0\n`,
    );
    const enqueued = await daybook('enqueue');
    // The scheduler tops up on its own every minute: should its tick have come first and its
    // top-up run, enqueue finds nothing left to plan; otherwise it names the same top-up.
    const topUp = new RegExp(
      `^enqueued plan-${cycle}-top-1-[0-9a-f]{10}\\n {2}a top-up of cycle ${cycle}'s plan: 2 entries due and not planned yet\\n$`,
    );
    const nothing = `enqueued nothing\n  nothing to top up: every entry due in cycle ${cycle} that it can take is planned, in flight or done\n`;
    if (enqueued !== nothing) expect(enqueued).toMatch(topUp);
    else await waitFor('the scheduler’s top-up', () => planRan(db.sql, cycle, `plan-${cycle}-top-%`), 60_000);
    await waitFor(
      'both companies bought',
      async () => (await fetchStatus(db.sql, cycle, [1, 2])).every((s) => s === 'succeeded'),
      60_000,
    );
    const status = await daybook('status', '--no-queues');
    expect(status).toContain('  Progress: 2 entries fetched\n');
    expect(status).toContain(
      '  Credits: 6 credits spent + 0 credits reserved of a budget of 6 credits (0 credits left)\n',
    );
    expect(status).not.toContain('Deferred');

    // Each company bought once, every call in the ledger, the budget never passed.
    expect(sim.sim.counters.billedQueries).toBe(2);
    expect(Math.max(...Object.values(sim.sim.counters.billedByPid))).toBe(1);
    await expectLedgerMatchesBilling(db.sql, cycle, sim);

    // A second enqueue: nothing due is left to plan, no job is added, nothing is bought twice.
    const plansBefore = (await queues.plan.getJobs(['waiting', 'active', 'delayed', 'completed'])).length;
    expect(await daybook('enqueue')).toBe(nothing);
    expect((await queues.plan.getJobs(['waiting', 'active', 'delayed', 'completed'])).length).toBe(
      plansBefore,
    );
    expect(sim.sim.counters.billedQueries).toBe(2);

    // A third company once the budget is spent: it waits for credits, in the status and in enqueue.
    expect(await daybook('watch', 'add', c)).toBe(`added: ${c} (id 3)\nadded 1, already watched 0\n`);
    const waits = await daybook('status', '--no-queues');
    expect(waits).toContain('  Progress: 1 entry deferred; 2 entries fetched\n');
    expect(waits).toContain('\nDeferred: 1 entry (credit budget reached: 1 entry); the first 1:\n');
    expect(waits).toMatch(
      new RegExp(`^${c} +credit budget reached +added after the plan; waits for credits$`, 'm'),
    );
    expect(waits).not.toMatch(/next cycle/);
    const zh = await daybook('status', '--no-queues', '--lang', 'zh');
    expect(zh).toMatch(new RegExp(`^${c} +积分预算不足 +计划后加入；等待积分$`, 'm'));
    expect(await daybook('enqueue')).toBe(
      `${nothing}  1 entry due waits for the credit budget (daybook resume --add-budget adds credits; daybook status lists it)\n`,
    );
    expect(await fetchStatus(db.sql, cycle, [3])).toEqual(['none']);
    expect(sim.sim.counters.billedQueries).toBe(2);
    await expectLedgerMatchesBilling(db.sql, cycle, sim);
    const [budget] = await db.sql<{ spent: number; reserved: number; budget: number }[]>`
      select spent, reserved, budget from cycle_budgets where cycle = ${cycle}`;
    expect(budget).toEqual({ spent: 6, reserved: 0, budget: 6 });
    console.log(transcript.join('\n'));
  });

  it('inline: daybook run after the plan buys what was added since, in the same cycle', async () => {
    const c = await cliAgainstSim({ enterprises: 10, rateLimits: UNTHROTTLED });
    cleanups.push(c.close);
    const env = { ...c.env, DAYBOOK_CREDIT_BUDGET: '6' };
    const daybook = async (...args: string[]) => {
      const r = await runDaybook(args, env);
      expect(r.code, `daybook ${args.join(' ')}: ${r.stderr}`).toBe(0);
      return r.stdout;
    };
    const cycle = cycleOf(new Date());
    const [a, b] = c.sim.sim
      .world()
      .all()
      .slice(0, 2)
      .map((e) => e.ENTNAME) as [string, string];
    expect(await daybook('run', '--only', 'enterprises')).toBe(
      `cycle ${cycle}: products skipped; enterprises none; credits 0/6\n`,
    );
    await daybook('watch', 'add', a, b);
    const status = await daybook('status', '--no-queues');
    expect(status).toContain('\nDeferred: 2 entries (added after the plan: 2 entries); the first 2:\n');
    expect(status).toMatch(
      new RegExp(
        `^${a} +added after the plan +due today: the next top-up plans it \\(daybook enqueue or run\\)$`,
        'm',
      ),
    );
    expect(await daybook('run', '--only', 'enterprises')).toBe(
      `cycle ${cycle}: products skipped; enterprises 2 succeeded; credits 6/6\n`,
    );
    expect(await fetchStatus(c.t.sql, cycle, [1, 2])).toEqual(['succeeded', 'succeeded']);
    expect(c.sim.sim.counters.billedQueries).toBe(2);
  });

  it('the scheduler tops up on its own tick when entries come after the plan', async () => {
    const p: TestPipeline = await startPipeline({ DAYBOOK_ENTERPRISE_CRON: '0 3 * * *' });
    cleanups.push(() => p.close());
    const workers = p.startWorkers(2);
    const scheduler: RunningScheduler = await startScheduler({
      config: p.config,
      queues: p.queues,
      redis: p.redis,
      log: createLogger({ level: 'silent' }),
      now: () => new Date(),
      sql: p.db.sql,
      // Every second, for the test (every minute by default).
      topUpCron: '* * * * * *',
    });
    cleanups.push(() => scheduler.stop());
    const cycle = cycleOf(new Date());
    await until([workers], () => planRan(p.db.sql, cycle, `plan-${cycle}`));

    const topUp = new Promise<TickEvent>((resolve) =>
      scheduler.events.on('tick', (t) => {
        if (t.task === 'top-up' && t.jobIds.length > 0) resolve(t);
      }),
    );
    const ids = await p.watch(2);
    const tick = await topUp;
    expect(tick.jobIds).toHaveLength(1);
    expect(tick.jobIds[0]).toMatch(new RegExp(`^plan-${cycle}-top-1-[0-9a-f]{10}$`));
    await until([workers], async () =>
      (await fetchStatus(p.db.sql, cycle, ids)).every((s) => s === 'succeeded'),
    );
    // The entries' jobs carry the top-up's id, apart from the cycle's own.
    const jobs = await p.queues.enterprise.getJobs(['waiting', 'active', 'delayed', 'completed']);
    const batch = (tick.jobIds[0] as string).slice(`plan-${cycle}-`.length);
    expect(jobs.map((j) => j.id).sort()).toEqual(
      ids.map((id) => `enterprise-${cycle}-${id}-${batch}`).sort(),
    );
    expect(p.sim.sim.counters.billedQueries).toBe(2);
    // Once it ran, a later tick finds nothing to top up: no other top-up job.
    const settledAt = Date.now();
    const later = await new Promise<TickEvent>((resolve) =>
      scheduler.events.on('tick', (t) => {
        if (t.task === 'top-up' && t.scheduledAt.getTime() > settledAt) resolve(t);
      }),
    );
    expect(later.jobIds).toEqual([]);
    const plans = await p.queues.plan.getJobs(['waiting', 'active', 'delayed', 'completed']);
    expect(plans.map((j) => j.id).sort()).toEqual([`plan-${cycle}`, tick.jobIds[0]].sort());
  });
});
