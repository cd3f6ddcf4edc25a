/**
 * Rate limiting of upstream calls. The upstream may count with a sliding 60-second window, so
 * daybook does too: a log of admitted call times, a safety margin added to the window (a call
 * admitted here reaches the upstream a little later), and a minimum gap between starts so calls
 * are spread over the window rather than sent in bursts. Two implementations share the maths:
 * one in Redis (a Lua script; every worker on every machine shares it) and one in-process (for
 * the inline runner). When the upstream refuses anyway (429), `block` stops everyone for the
 * time it asked.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

export type LimitedOperation = 'enterprise-search' | 'product-listing';

export interface RateRule {
  /** Calls per window. */
  limit: number;
  /** Window length in ms (60 s for "per minute"). */
  windowMs: number;
  /** Added to the window, covering latency between admission and arrival. */
  marginMs: number;
}

/** The rule for "N per minute", with a 1 s margin. */
export function perMinute(limit: number, marginMs = 1000): RateRule {
  return { limit, windowMs: 60_000, marginMs };
}

/** Minimum gap between two starts: half the even spacing, so the rate is smooth but not slowed. */
export function minGapMs(rule: RateRule): number {
  return Math.floor((rule.windowMs + rule.marginMs) / rule.limit / 2);
}

export interface RateLimiter {
  /** Admits one call now (returns 0) or says how many ms to wait before asking again. */
  tryAcquire(op: LimitedOperation): Promise<number>;
  /** Blocks `op` for everyone for `ms` (the upstream said rate_limit_exceeded). */
  block(op: LimitedOperation, ms: number): Promise<void>;
}

/** Waits until admitted. Returns the total time waited. */
export async function acquire(
  limiter: RateLimiter,
  op: LimitedOperation,
  signal?: AbortSignal,
): Promise<number> {
  let waited = 0;
  for (;;) {
    signal?.throwIfAborted();
    const wait = await limiter.tryAcquire(op);
    if (wait <= 0) return waited;
    waited += wait;
    await new Promise((r) => setTimeout(r, wait));
  }
}

const SCRIPT = `
local blocked = redis.call('PTTL', KEYS[2])
if blocked > 0 then return blocked end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local gap = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
if count >= limit then
  local oldest = redis.call('ZRANGE', KEYS[1], count - limit, count - limit, 'WITHSCORES')
  return math.max(1, tonumber(oldest[2]) + window - now + 1)
end
if gap > 0 and count > 0 then
  local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
  local next = tonumber(last[2]) + gap
  if next > now then return next - now end
end
redis.call('ZADD', KEYS[1], now, ARGV[4])
redis.call('PEXPIRE', KEYS[1], window * 2)
return 0
`;

/** The global limiter: one sorted set per operation in Redis, shared by every worker. */
export class RedisRateLimiter implements RateLimiter {
  private readonly redis: Redis;
  private readonly prefix: string;
  private readonly rules: Record<LimitedOperation, RateRule>;

  constructor(redis: Redis, prefix: string, rules: Record<LimitedOperation, RateRule>) {
    this.redis = redis;
    this.prefix = prefix;
    this.rules = rules;
  }

  async tryAcquire(op: LimitedOperation): Promise<number> {
    const rule = this.rules[op];
    const result = await this.redis.eval(
      SCRIPT,
      2,
      `${this.prefix}:rate:${op}:log`,
      `${this.prefix}:rate:${op}:blocked`,
      rule.limit,
      rule.windowMs + rule.marginMs,
      minGapMs(rule),
      randomUUID(),
    );
    return Number(result);
  }

  async block(op: LimitedOperation, ms: number): Promise<void> {
    if (ms <= 0) return;
    // Keep the longer of an existing block and this one.
    const key = `${this.prefix}:rate:${op}:blocked`;
    const ttl = await this.redis.pttl(key);
    if (ttl < ms) await this.redis.set(key, '1', 'PX', Math.ceil(ms));
  }
}

/** The same rule in-process, for the inline runner. */
export class LocalRateLimiter implements RateLimiter {
  private readonly rules: Record<LimitedOperation, RateRule>;
  private readonly log: Record<LimitedOperation, number[]> = {
    'enterprise-search': [],
    'product-listing': [],
  };
  private readonly blockedUntil: Record<LimitedOperation, number> = {
    'enterprise-search': 0,
    'product-listing': 0,
  };

  constructor(rules: Record<LimitedOperation, RateRule>) {
    this.rules = rules;
  }

  async tryAcquire(op: LimitedOperation): Promise<number> {
    const now = Date.now();
    if (this.blockedUntil[op] > now) return this.blockedUntil[op] - now;
    const rule = this.rules[op];
    const window = rule.windowMs + rule.marginMs;
    const times = this.log[op];
    while (times.length > 0 && (times[0] as number) <= now - window) times.shift();
    if (times.length >= rule.limit)
      return Math.max(1, (times[times.length - rule.limit] as number) + window - now + 1);
    const last = times[times.length - 1];
    const gap = minGapMs(rule);
    if (last !== undefined && last + gap > now) return last + gap - now;
    times.push(now);
    return 0;
  }

  async block(op: LimitedOperation, ms: number): Promise<void> {
    this.blockedUntil[op] = Math.max(this.blockedUntil[op], Date.now() + ms);
  }
}
