import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/log.ts';
import { startScheduler } from '../../src/runtime/scheduler.ts';
import { ownQueues } from '../support/queues.ts';

describe('the scheduler', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function setup() {
    const s = ownQueues('sch');
    cleanups.push(s.remove);
    return s;
  }

  for (const [label, now, cycle] of [
    ['just after 03:30 Beijing', '2026-11-21T19:31:00Z', '2026-11-22'],
    ['just before 03:30 Beijing', '2026-11-21T19:29:00Z', '2026-11-21'],
    ['across a year end', '2026-12-31T19:40:00Z', '2027-01-01'],
    ['on a leap day', '2028-02-28T19:45:00Z', '2028-02-29'],
  ] as const) {
    it(`two instances started ${label} plan exactly one cycle, ${cycle}`, async () => {
      const { config, redis, queues } = await setup();
      const log = createLogger({ level: 'silent' });
      const deps = { config, queues, redis, log, now: () => new Date(now) };
      const [a, b] = await Promise.all([startScheduler(deps), startScheduler(deps)]);
      cleanups.push(async () => {
        await a.stop();
        await b.stop();
      });
      const plans = await queues.plan.getJobs(['waiting', 'delayed', 'active', 'completed']);
      expect(plans.map((j) => j.id)).toEqual([`plan-${cycle}`]);
      expect(plans[0]?.data).toEqual({ cycle });
      const products = await queues.products.getJobs(['waiting']);
      expect(new Set(products.map((j) => j.id)).size).toBe(products.length);
      expect(products.length).toBe(config.DAYBOOK_PRODUCT_LOOKBACK_DAYS);
    });
  }
});
