/**
 * Time zones, leap days and daylight saving. Schedulers started (with an injected clock) just
 * before and just after 03:00 Asia/Shanghai, across the hours when the UTC and Beijing dates differ
 * (16:00-24:00 UTC), around a leap day and a US daylight-saving change, two at once, and restarted
 * after a missed tick: each start plans exactly one cycle, the right one, and the product pulls of
 * the right Pacific day, once.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/log.ts';
import { RedisRunCoordinator, type RunningScheduler, startScheduler } from '../../src/runtime/scheduler.ts';
import { type OwnQueues, ownQueues } from '../support/queues.ts';

const log = createLogger({ level: 'silent' });
const planned: string[] = [];

type Setup = OwnQueues;

describe('schedulers on an injected clock', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  afterAll(() => {
    console.log(
      `scheduler starts: ${starts} (two pairs at once, four restarts among them), cycles planned: ${planned.length}, each exactly once, none doubled or missed: ${planned.join(', ')}`,
    );
  });
  let starts = 0;

  async function setup(env: Record<string, string> = {}): Promise<Setup> {
    const s = ownQueues('time', env);
    cleanups.push(s.remove);
    return s;
  }

  /** Starts a scheduler whose clock says `at`; it is stopped after the test. */
  async function start(s: Setup, at: string): Promise<RunningScheduler> {
    starts++;
    const scheduler = await startScheduler({
      config: s.config,
      queues: s.queues,
      redis: s.redis,
      log,
      now: () => new Date(at),
    });
    cleanups.push(() => scheduler.stop());
    return scheduler;
  }

  const planIds = async (s: Setup) =>
    (await s.queues.plan.getJobs(['waiting', 'delayed', 'active', 'completed', 'failed']))
      .map((j) => j.id as string)
      .sort();
  const productIds = async (s: Setup) =>
    (await s.queues.products.getJobs(['waiting', 'delayed', 'active', 'completed', 'failed']))
      .map((j) => j.id as string)
      .sort();

  /** Exactly one plan job, of `cycle`; and, when given, exactly these product pulls. */
  async function expectOneCycle(s: Setup, cycle: string, pulls?: string[]) {
    const plans = await planIds(s);
    expect(plans).toEqual([`plan-${cycle}`]);
    const jobs = await s.queues.plan.getJobs(['waiting']);
    expect(jobs.map((j) => j.data)).toEqual([{ cycle }]);
    if (pulls) expect(await productIds(s)).toEqual(pulls.sort());
    planned.push(cycle);
  }

  // [label, clock (UTC), enterprise cron, expected cycle]. The default cron is 03:30 Beijing.
  const cases: [string, string, string, string][] = [
    ['at 02:59 Beijing, before the refresh (03:00 cron)', '2026-11-21T18:59:00Z', '0 3 * * *', '2026-11-21'],
    [
      'at 03:00:30 Beijing, just after the refresh (03:00 cron)',
      '2026-11-21T19:00:30Z',
      '0 3 * * *',
      '2026-11-22',
    ],
    ['at 02:59 Beijing (default 03:30 cron)', '2026-11-21T18:59:00Z', '30 3 * * *', '2026-11-21'],
    [
      'at 03:01 Beijing, before the 03:30 tick (default cron)',
      '2026-11-21T19:01:00Z',
      '30 3 * * *',
      '2026-11-21',
    ],
    [
      'at 03:31 Beijing, after the 03:30 tick (default cron)',
      '2026-11-21T19:31:00Z',
      '30 3 * * *',
      '2026-11-22',
    ],
    [
      'at 16:00 UTC, when the Beijing date has just changed',
      '2026-11-21T16:00:00Z',
      '30 3 * * *',
      '2026-11-21',
    ],
    ['at 23:59 UTC, Beijing already at 07:59 next day', '2026-11-21T23:59:00Z', '30 3 * * *', '2026-11-22'],
    ['at 00:00 UTC, both dates the same again', '2026-11-22T00:00:00Z', '30 3 * * *', '2026-11-22'],
    ['on the eve of a leap day, 02:59 Beijing 29 Feb', '2028-02-28T18:59:00Z', '0 3 * * *', '2028-02-28'],
    ['on a leap day, 03:00:30 Beijing', '2028-02-28T19:00:30Z', '0 3 * * *', '2028-02-29'],
    ['the day after a leap day, 03:31 Beijing 1 Mar', '2028-02-29T19:31:00Z', '30 3 * * *', '2028-03-01'],
    ['at a year end, 03:31 Beijing 1 Jan', '2026-12-31T19:31:00Z', '30 3 * * *', '2027-01-01'],
  ];
  for (const [label, at, cron, cycle] of cases) {
    it(`a scheduler started ${label} plans exactly cycle ${cycle}`, async () => {
      const s = await setup({ DAYBOOK_ENTERPRISE_CRON: cron });
      await start(s, at);
      await expectOneCycle(s, cycle);
      expect(new Set(await productIds(s)).size).toBe(s.config.DAYBOOK_PRODUCT_LOOKBACK_DAYS);
    });
  }

  it('two schedulers started at the same instant plan one cycle between them', async () => {
    const s = await setup();
    const at = '2028-02-28T19:45:00Z'; // 03:45 Beijing on 29 Feb 2028
    const [a, b] = await Promise.all([start(s, at), start(s, at)]);
    expect(a.tasks).toHaveLength(2);
    expect(b.tasks).toHaveLength(2);
    // Products: the 16:15 Beijing tick of 28 Feb (08:15 UTC, 00:15 PST on the 28th).
    await expectOneCycle(s, '2028-02-29', ['products-2028-02-27-d1', 'products-2028-02-26-d2']);
  });

  it('three schedulers racing for the same cron tick elect one', async () => {
    const s = await setup();
    const coordinators = [1, 2, 3].map(() => new RedisRunCoordinator(s.redis, s.prefix));
    const tick = 'daybook-enterprise:2026-11-21T19:30:00.000Z';
    const won = await Promise.all(coordinators.map((c) => c.shouldRun(tick, 60_000)));
    expect(won.filter(Boolean)).toHaveLength(1);
    expect(await coordinators[0]?.shouldRun('daybook-enterprise:2026-11-22T19:30:00.000Z', 60_000)).toBe(
      true,
    );
  });

  it('a restart the same day plans nothing new; a restart after a missed tick catches up that one cycle', async () => {
    const s = await setup();
    await start(s, '2026-11-21T19:31:00Z'); // 03:31 Beijing 22 Nov
    expect(await planIds(s)).toEqual(['plan-2026-11-22']);
    planned.push('2026-11-22');
    await start(s, '2026-11-22T02:00:00Z'); // restarted at 10:00 Beijing the same day
    expect(await planIds(s)).toEqual(['plan-2026-11-22']);
    // Down over the 03:30 tick of 23 Nov, back at 09:00 Beijing: that cycle is caught up, once.
    await start(s, '2026-11-23T01:00:00Z');
    expect(await planIds(s)).toEqual(['plan-2026-11-22', 'plan-2026-11-23']);
    planned.push('2026-11-23 (caught up)');
    // Two restarts racing after the next missed tick, across the UTC midnight.
    await Promise.all([start(s, '2026-11-24T00:00:00Z'), start(s, '2026-11-24T00:00:00Z')]);
    expect(await planIds(s)).toEqual(['plan-2026-11-22', 'plan-2026-11-23', 'plan-2026-11-24']);
    planned.push('2026-11-24 (caught up by two)');
  });

  it('product pulls follow the Pacific day across the end of US daylight saving time', async () => {
    const s = await setup();
    // 16:15 Beijing on 1 Nov 2026 is 08:15 UTC, 01:15 PDT: DST ends at 02:00 that morning.
    await start(s, '2026-11-01T08:20:00Z');
    expect(await productIds(s)).toEqual(['products-2026-10-30-d2', 'products-2026-10-31-d1']);
    // A day later the same tick is 00:15 PST.
    const t = await setup();
    await start(t, '2026-11-02T08:20:00Z');
    expect(await productIds(t)).toEqual(['products-2026-10-31-d2', 'products-2026-11-01-d1']);
  });
});
