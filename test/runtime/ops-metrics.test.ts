import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addSubscription, markFailing } from '../../src/delivery/store.ts';
import { writeCycleCompletion } from '../../src/events/outbox.ts';
import { exportPackages } from '../../src/export/package.ts';
import { ensureCycleBudget, pauseCycle, reserveCredits, settleCredits } from '../../src/purchase/credits.ts';
import { recordPlan } from '../../src/purchase/fetches.ts';
import { DatabaseRateLimiter, perMinute } from '../../src/purchase/limiter.ts';
import { metricsRegistry } from '../../src/runtime/admin.ts';
import { cycleDeadline, pauseCause } from '../../src/runtime/ops-metrics.ts';
import { QUEUE_NAMES } from '../../src/runtime/queues.ts';
import { queuePrefix } from '../../src/runtime/redis.ts';
import { cycleStart } from '../../src/time/cycles.ts';
import { addWatches } from '../../src/watch/store.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';
import { type OwnQueues, ownQueues } from '../support/queues.ts';

/** The samples of one scrape, as `name{labels} value` lines, by series. */
async function scrape(db: TestDatabase, q: OwnQueues): Promise<Map<string, number>> {
  const text = await metricsRegistry(db.sql, q.queues, {
    rateLimits: { 'enterprise-search': 100, 'product-listing': 30 },
  }).metrics();
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^(daybook_[a-z_]+(?:\{[^}]*\})?) (\S+)$/.exec(line);
    if (m) samples.set(m[1] as string, Number(m[2]));
  }
  return samples;
}

describe('the operator gauges of /metrics', { timeout: 60_000 }, () => {
  let db: TestDatabase;
  let q: OwnQueues;
  let dir: string;
  const cycle = '2026-11-20';

  beforeAll(async () => {
    db = await freshDatabase();
    q = ownQueues('opsm');
    dir = mkdtempSync(join(tmpdir(), 'daybook-opsm-'));
  });
  afterAll(async () => {
    await q?.remove();
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('reads the cause of a pause from the reason each pausing step writes', () => {
    expect(pauseCause('insufficient_credits at 2026-11-20T00:00:00.000Z: no credits')).toBe('credits');
    expect(pauseCause('the upstream refused 30 calls in a row (a daily cap?): stopped for the cycle')).toBe(
      'refusing',
    );
    expect(
      pauseCause(
        'the upstream asked to wait 3600 s (Retry-After), more than the 15 min daybook waits: stopped for the cycle; daybook resume continues',
      ),
    ).toBe('retry_after');
    expect(pauseCause(null)).toBe('other');
  });

  it('has no cycle series before any cycle is planned, and reports 0 workers', async () => {
    const s = await scrape(db, q);
    expect([...s.keys()].filter((k) => k.startsWith('daybook_cycle_'))).toEqual([]);
    expect(s.get('daybook_workers{queue="enterprise"}')).toBe(0);
  });

  it('reports the latest cycle: its dates, claims, credits, pause and completion', async () => {
    await ensureCycleBudget(db.sql, '2026-11-19', 99);
    await ensureCycleBudget(db.sql, cycle, 30);
    const { ids } = await addWatches(
      db.sql,
      ['甲公司', '乙公司', '丙公司'].map((keyword) => ({ keyword, priority: 0 })),
    );
    await recordPlan(db.sql, {
      cycle,
      selected: ids.slice(0, 2).map((id) => ({ id })),
      skipped: [{ entry: { id: ids[2] as number }, reason: 'recent_not_found' }],
      deferReason: 'budget',
    });
    expect((await reserveCredits(db.sql, cycle, 3)).ok).toBe(true);
    expect((await reserveCredits(db.sql, cycle, 3)).ok).toBe(true);
    await settleCredits(db.sql, cycle, 3, 3);
    let s = await scrape(db, q);
    expect(s.get(`daybook_cycle_start_timestamp_seconds{cycle="${cycle}"}`)).toBe(
      cycleStart(cycle).getTime() / 1000,
    );
    expect(s.get(`daybook_cycle_deadline_timestamp_seconds{cycle="${cycle}"}`)).toBe(
      Date.parse('2026-11-20T19:00:00Z') / 1000,
    );
    expect(cycleDeadline(cycle).toISOString()).toBe('2026-11-20T19:00:00.000Z');
    expect(s.get(`daybook_cycle_entries{cycle="${cycle}",status="planned"}`)).toBe(2);
    expect(s.get(`daybook_cycle_entries{cycle="${cycle}",status="skipped"}`)).toBe(1);
    expect(s.get(`daybook_cycle_entries{cycle="${cycle}",status="failed"}`)).toBe(0);
    expect(s.get(`daybook_cycle_credits{cycle="${cycle}",kind="budget"}`)).toBe(30);
    expect(s.get(`daybook_cycle_credits{cycle="${cycle}",kind="spent"}`)).toBe(3);
    expect(s.get(`daybook_cycle_credits{cycle="${cycle}",kind="reserved"}`)).toBe(3);
    expect(s.get(`daybook_cycle_credits_left{cycle="${cycle}"}`)).toBe(24);
    expect(s.get(`daybook_cycle_paused{cycle="${cycle}",cause="credits"}`)).toBe(0);
    expect(s.get(`daybook_cycle_completed{cycle="${cycle}"}`)).toBe(0);
    expect(s.has(`daybook_cycle_completed_timestamp_seconds{cycle="${cycle}"}`)).toBe(false);

    await pauseCycle(db.sql, cycle, 'insufficient_credits at 2026-11-20T01:00:00.000Z: the account is empty');
    await writeCycleCompletion(db.sql, cycle, new Date());
    s = await scrape(db, q);
    expect(s.get(`daybook_cycle_paused{cycle="${cycle}",cause="credits"}`)).toBe(1);
    expect(s.get(`daybook_cycle_paused{cycle="${cycle}",cause="refusing"}`)).toBe(0);
    expect(s.get(`daybook_cycle_completed{cycle="${cycle}"}`)).toBe(1);
    const [e] = await db.sql<{ at: number }[]>`
      select extract(epoch from created_at)::float8 as at from events where type = 'cycle.completed'`;
    expect(s.get(`daybook_cycle_completed_timestamp_seconds{cycle="${cycle}"}`)).toBeCloseTo(
      e?.at as number,
      2, // the driver reads timestamps to the millisecond, Postgres keeps microseconds
    );
  });

  it('reports the rate limiter: calls in the last minute, the limit, refusals in a row and the block', async () => {
    const limiter = new DatabaseRateLimiter(db.sql, {
      'enterprise-search': perMinute(100, 0),
      'product-listing': perMinute(30, 0),
    });
    expect(await limiter.tryAcquire('enterprise-search')).toBe(0);
    await limiter.block('product-listing', 30_000);
    await limiter.block('product-listing', 30_000);
    const s = await scrape(db, q);
    expect(s.get('daybook_rate_limit_calls_last_minute{operation="enterprise-search"}')).toBe(1);
    expect(s.get('daybook_rate_limit_per_minute{operation="enterprise-search"}')).toBe(100);
    expect(s.get('daybook_rate_limit_per_minute{operation="product-listing"}')).toBe(30);
    expect(s.get('daybook_rate_limit_refusals_in_a_row{operation="product-listing"}')).toBe(2);
    expect(s.get('daybook_rate_limit_blocked_seconds{operation="product-listing"}')).toBeGreaterThan(0);
    expect(s.get('daybook_rate_limit_blocked_seconds{operation="enterprise-search"}')).toBe(0);
  });

  it('reports the last export of each destination and the subscriptions failing', async () => {
    const before = await scrape(db, q);
    expect(before.get('daybook_webhook_failing_endpoints')).toBe(0);
    expect([...before.keys()].some((k) => k.startsWith('daybook_webhook_failing_since'))).toBe(false);
    expect([...before.keys()].some((k) => k.startsWith('daybook_export_last_timestamp_seconds'))).toBe(false);

    await exportPackages(db.sql, { to: dir, format: 'ndjson' });
    const { subscription } = await addSubscription(db.sql, { url: 'https://hooks.example.com/a' });
    const since = new Date('2026-11-20T02:00:00Z');
    await markFailing(db.sql, subscription.id, since);
    const s = await scrape(db, q);
    const [last] = await db.sql<{ at: number }[]>`
      select extract(epoch from completed_at)::float8 as at from exports where state = 'complete'`;
    expect(s.get(`daybook_export_last_timestamp_seconds{destination="${dir}"}`)).toBeCloseTo(
      last?.at as number,
      2, // the driver reads timestamps to the millisecond, Postgres keeps microseconds
    );
    expect(s.get('daybook_webhook_failing_endpoints')).toBe(1);
    expect(s.get(`daybook_webhook_failing_since_timestamp_seconds{subscription="${subscription.id}"}`)).toBe(
      since.getTime() / 1000,
    );
  });

  it('counts the workers connected to each queue', async () => {
    const name = QUEUE_NAMES.enterprise;
    const worker = new Worker(name, async () => null, {
      connection: q.redis.duplicate(),
      prefix: queuePrefix(q.prefix, name),
    });
    try {
      await worker.waitUntilReady();
      // Until the scrape sees the worker (a hang guard, not a deadline).
      let n = 0;
      for (const deadline = Date.now() + 30_000; n === 0 && Date.now() < deadline; ) {
        n = (await scrape(db, q)).get('daybook_workers{queue="enterprise"}') ?? 0;
        if (n === 0) await new Promise((r) => setTimeout(r, 100));
      }
      expect(n).toBe(1);
      expect((await scrape(db, q)).get('daybook_workers{queue="plan"}')).toBe(0);
    } finally {
      await worker.close();
    }
  });
});
