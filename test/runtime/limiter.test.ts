import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalRateLimiter, minGapMs, perMinute, RedisRateLimiter } from '../../src/budget/limiter.ts';

describe('the global rate limiter in Redis', () => {
  let redis: Redis;
  const prefix = `t-${randomBytes(4).toString('hex')}`;
  beforeAll(() => {
    redis = new Redis('redis://127.0.0.1:6379');
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    await redis.quit();
  });

  it('admits at most the limit within the window (plus margin), shared by every client', async () => {
    const rule = { limit: 5, windowMs: 1000, marginMs: 100 };
    const rules = { 'enterprise-search': rule, 'product-listing': rule };
    const a = new RedisRateLimiter(redis, prefix, rules);
    const other = new Redis('redis://127.0.0.1:6379');
    const b = new RedisRateLimiter(other, prefix, rules);
    const admitted: number[] = [];
    const started = Date.now();
    while (Date.now() - started < 1500) {
      for (const l of [a, b]) {
        if ((await l.tryAcquire('enterprise-search')) === 0) admitted.push(Date.now());
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    await other.quit();
    // In any window of 1100 ms there are at most 5 admissions.
    for (let i = 0; i < admitted.length; i++) {
      const within = admitted.filter(
        (t) => t >= (admitted[i] as number) && t < (admitted[i] as number) + 1090,
      );
      expect(within.length).toBeLessThanOrEqual(5);
    }
    expect(admitted.length).toBeGreaterThanOrEqual(6);
    // Starts are spread, not bursted.
    for (let i = 1; i < admitted.length; i++) {
      expect((admitted[i] as number) - (admitted[i - 1] as number)).toBeGreaterThanOrEqual(
        minGapMs(rule) - 5,
      );
    }
  });

  it('a block stops everyone until it expires', async () => {
    const l = new RedisRateLimiter(redis, `${prefix}-b`, {
      'enterprise-search': perMinute(1000),
      'product-listing': perMinute(1000),
    });
    await l.block('product-listing', 300);
    const wait = await l.tryAcquire('product-listing');
    expect(wait).toBeGreaterThan(200);
    expect(await l.tryAcquire('enterprise-search')).toBe(0);
  });
});

describe('the in-process limiter', () => {
  it('follows the same rule', async () => {
    const rule = { limit: 3, windowMs: 60_000, marginMs: 1000 };
    const l = new LocalRateLimiter({ 'enterprise-search': rule, 'product-listing': rule });
    let admitted = 0;
    for (let i = 0; i < 10; i++) {
      const wait = await l.tryAcquire('enterprise-search');
      if (wait === 0) admitted++;
      else await new Promise((r) => setTimeout(r, Math.min(wait, 20)));
    }
    expect(admitted).toBeLessThanOrEqual(3);
  });
});
