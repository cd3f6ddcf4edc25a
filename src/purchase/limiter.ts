/**
 * Rate limiting of upstream calls, shared by every daybook process on one database: workers,
 * `daybook run`, backfills, `products get`, `resume --inline`, on any number of machines. The
 * upstream may count with a sliding 60-second window, so daybook does too: the start times of the
 * calls admitted (by the database's clock, so no machine's clock matters), a safety margin added
 * to the window (a call admitted here reaches the upstream a little later), and a minimum gap
 * between starts so calls are spread over the window rather than sent in bursts. It lives in
 * Postgres (a row per operation in `rate_limits`, changed under its lock by the function
 * `daybook_rate_admit`) because the database is the one thing every mode shares, the embedded one
 * included; it works through PgBouncer in transaction mode. When the upstream refuses anyway
 * (429), `block` stops everyone for the time it asked and counts the refusal.
 */
import type { Sql } from '../db/connect.ts';
import type { DriverRow } from '../db/rows.ts';
import type { rateLimits } from '../db/schema.ts';

/** A computed shape: how many ms to wait before the call (`daybook_rate_admit`, an integer). */
interface AdmitWait {
  wait: number;
}

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
  /**
   * Blocks `op` for everyone for `ms` (the upstream said rate_limit_exceeded); returns how many
   * refusals in a row every process has now seen.
   */
  block(op: LimitedOperation, ms: number): Promise<number>;
  /** The upstream answered a call of `op` without refusing it: the refusals in a row end. */
  answered(op: LimitedOperation): Promise<void>;
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

/** The limiter in Postgres: every process on the database shares it. */
export class DatabaseRateLimiter implements RateLimiter {
  private readonly sql: Sql;
  private readonly rules: Record<LimitedOperation, RateRule>;
  /** Whether a refusal may be counted (skips a write per answer while there is none). */
  private readonly refused: Record<LimitedOperation, boolean> = {
    'enterprise-search': true,
    'product-listing': true,
  };

  constructor(sql: Sql, rules: Record<LimitedOperation, RateRule>) {
    this.sql = sql;
    this.rules = rules;
  }

  async tryAcquire(op: LimitedOperation): Promise<number> {
    const rule = this.rules[op];
    const [row] = await this.sql<AdmitWait[]>`
      select daybook_rate_admit(${op}, ${rule.limit}, ${rule.windowMs + rule.marginMs}, ${minGapMs(rule)}) as wait`;
    return Number(row?.wait ?? 0);
  }

  async block(op: LimitedOperation, ms: number): Promise<number> {
    this.refused[op] = true;
    const [row] = await this.sql<Pick<DriverRow<typeof rateLimits>, 'refusals'>[]>`
      insert into rate_limits (operation, blocked_until, refusals)
      values (${op}, clock_timestamp() + ${Math.max(0, Math.ceil(ms))} * interval '1 millisecond', 1)
      on conflict (operation) do update set
        blocked_until = greatest(coalesce(rate_limits.blocked_until, '-infinity'), excluded.blocked_until),
        refusals = rate_limits.refusals + 1
      returning refusals`;
    return row?.refusals ?? 1;
  }

  async answered(op: LimitedOperation): Promise<void> {
    // Another process may have counted refusals; this one looks once, then after its own refusals.
    if (!this.refused[op]) return;
    this.refused[op] = false;
    await this.sql`update rate_limits set refusals = 0 where operation = ${op} and refusals > 0`;
  }
}

/**
 * The state of the shared limiter for one operation: calls admitted in the last 60 seconds,
 * refusals in a row, and seconds until it may call again (0: not blocked). A computed shape of
 * `rate_limits`.
 */
export interface LimiterState {
  operation: string;
  calls: number;
  refusals: number;
  blocked: number;
}

/** The state of the shared limiter, one row per operation that ever called. */
export async function limiterState(sql: Sql): Promise<LimiterState[]> {
  return sql<LimiterState[]>`
      select operation,
        (select count(*) from unnest(calls) c where c > now() - interval '60 seconds')::int as calls,
        refusals,
        greatest(0, coalesce(extract(epoch from blocked_until - now()), 0))::float8 as blocked
      from rate_limits`;
}
