/**
 * The job boundary: where an attempt's failure becomes what happens next, once, for every mode.
 * Queue workers (worker.ts) and the inline runner (inline.ts) both ask `afterFailure` and only
 * carry the answer out their own way (BullMQ's retry and rate limit, or a sleep in process).
 * Permanent upstream errors and bad job data → not retried; a rate limit → everyone waits (no
 * attempt used; too many refusals in a row pause the cycle); an entry another holder is buying →
 * looked at again later (no attempt used); everything else → retried with backoff, then failed.
 */
import type { ZodType } from 'zod';
import type { Sql } from '../db/connect.ts';
import { pauseCycle } from '../purchase/credits.ts';
import type { LimitedOperation, RateLimiter } from '../purchase/limiter.ts';
import { isFinalAttempt } from '../retry/decision.ts';
import { BadJobDataError, ClaimHeldError, FinalForCycleError, LostClaimError } from '../terms/job-errors.ts';
import { RateLimitedError, UpstreamError } from '../upstream/errors.ts';

export { BadJobDataError, ClaimHeldError, FinalForCycleError, LostClaimError };

/**
 * The longest `Retry-After` daybook waits out. An upstream asking for more (an hour, a day) has
 * stopped serving for now: enterprise work of the cycle is paused, saying why, and a product pull
 * fails, instead of a run sleeping for a day.
 */
export const MAX_RETRY_AFTER_MS = 15 * 60_000;

/** After this many rate-limit refusals in a row (by any process), the upstream is taken to be refusing for the day. */
export const MAX_CONSECUTIVE_REFUSALS = 30;

/** The wait after a rate-limit answer: Retry-After when given, else to the next minute window. */
export function rateLimitWait(err: RateLimitedError, now: Date): number {
  if (err.retryAfterMs !== null && err.retryAfterMs > 0) return err.retryAfterMs;
  return 60_000 - (now.getTime() % 60_000) + 250;
}

export type BoundaryDecision =
  | { kind: 'permanent'; message: string }
  | { kind: 'rate_limited'; waitMs: number; message: string }
  | { kind: 'busy'; waitMs: number; message: string }
  | { kind: 'retry'; message: string };

/** Classifies a thrown error. Pure. */
export function decide(err: unknown, now: Date): BoundaryDecision {
  if (err instanceof RateLimitedError)
    return { kind: 'rate_limited', waitMs: rateLimitWait(err, now), message: err.message };
  if (err instanceof UpstreamError && err.errorClass === 'permanent')
    return { kind: 'permanent', message: err.message };
  if (err instanceof BadJobDataError || err instanceof FinalForCycleError)
    return { kind: 'permanent', message: err.message };
  if (err instanceof ClaimHeldError) {
    const waitMs = Math.max(1000, err.until.getTime() - now.getTime() + 250);
    return { kind: 'busy', waitMs: Math.min(waitMs, 600_000), message: err.message };
  }
  if (err instanceof LostClaimError) return { kind: 'busy', waitMs: 1000, message: err.message };
  return { kind: 'retry', message: err instanceof Error ? err.message : String(err) };
}

/** What follows a failed attempt. */
export type NextStep =
  /** Permanent, or the last attempt failed: the job fails with this reason. */
  | { do: 'fail'; permanent: boolean; message: string }
  /** The upstream refused for the rate: everyone waits `ms`; no attempt is used. */
  | { do: 'wait'; ms: number; refusals: number; message: string }
  /** The upstream keeps refusing: enterprise work of the cycle is paused. */
  | { do: 'pause'; refusals: number; message: string }
  /** Another holder has the entry: look again in `ms`; no attempt is used. */
  | { do: 'yield'; ms: number; message: string }
  /** A transient failure: try again after the backoff; the attempt is used. */
  | { do: 'retry'; message: string };

export interface AttemptContext {
  sql: Sql;
  limiter: RateLimiter;
  now: Date;
  /** The operation the job calls, when it calls one. */
  op: LimitedOperation | null;
  /** The enterprise cycle the job belongs to, when it belongs to one. */
  cycle: string | null;
  /** This attempt (1 for the first) and how many there may be. */
  attempt: number;
  attempts: number;
}

/**
 * Decides what follows a failed attempt, and does what every mode does about it: a rate-limit
 * refusal blocks the operation for every process and is counted; the count reaching
 * MAX_CONSECUTIVE_REFUSALS pauses the cycle.
 */
export async function afterFailure(err: unknown, ctx: AttemptContext): Promise<NextStep> {
  const d = decide(err, ctx.now);
  switch (d.kind) {
    case 'permanent':
      return { do: 'fail', permanent: true, message: d.message };
    case 'busy':
      return { do: 'yield', ms: d.waitMs, message: d.message };
    case 'rate_limited': {
      if (!ctx.op) return { do: 'retry', message: d.message };
      if (d.waitMs > MAX_RETRY_AFTER_MS) {
        const message = `the upstream asked to wait ${Math.round(d.waitMs / 1000)} s (Retry-After), more than the ${MAX_RETRY_AFTER_MS / 60_000} min daybook waits: stopped for the cycle; daybook resume continues`;
        if (!ctx.cycle) return { do: 'fail', permanent: true, message: `${d.message}; ${message}` };
        await pauseCycle(ctx.sql, ctx.cycle, message, 'retry_after');
        return { do: 'pause', refusals: 0, message };
      }
      const refusals = await ctx.limiter.block(ctx.op, d.waitMs);
      if (refusals >= MAX_CONSECUTIVE_REFUSALS && ctx.cycle) {
        const message = `the upstream refused ${refusals} calls in a row (a daily call cap?): stopped for the cycle`;
        await pauseCycle(ctx.sql, ctx.cycle, message, 'refusing');
        return { do: 'pause', refusals, message: `upstream keeps refusing: ${d.message}` };
      }
      if (refusals >= MAX_CONSECUTIVE_REFUSALS)
        return { do: 'fail', permanent: true, message: `upstream keeps refusing: ${d.message}` };
      return { do: 'wait', ms: d.waitMs, refusals, message: d.message };
    }
    case 'retry':
      if (isFinalAttempt(ctx.attempt, ctx.attempts))
        return { do: 'fail', permanent: false, message: d.message };
      return { do: 'retry', message: d.message };
  }
}

/** Parses job data with its schema; bad data is a permanent failure naming the problem. */
export function parseJobData<T>(schema: ZodType<T>, data: unknown, kind: string): T {
  const parsed = schema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new BadJobDataError(
      `bad ${kind} job data: ${issue?.path.join('.') ?? ''} ${issue?.message ?? ''}`.trim(),
    );
  }
  return parsed.data;
}
