/**
 * The job boundary: where a processor's outcome becomes a queue decision, once.
 * Permanent upstream errors and bad job data → not retried; rate limits → the whole queue waits
 * (not counted against the job's attempts); everything else → retried with backoff.
 */
import type { ZodType } from 'zod';
import { RateLimitedError, UpstreamError } from '../upstream/errors.ts';

/** The wait after a rate-limit answer: Retry-After when given, else to the next minute window. */
export function rateLimitWait(err: RateLimitedError, now: Date): number {
  if (err.retryAfterMs !== null && err.retryAfterMs > 0) return err.retryAfterMs;
  return 60_000 - (now.getTime() % 60_000) + 250;
}

export type BoundaryDecision =
  | { kind: 'permanent'; message: string }
  | { kind: 'rate_limited'; waitMs: number; message: string }
  | { kind: 'retry'; message: string };

/** Classifies a thrown error. */
export function decide(err: unknown, now: Date): BoundaryDecision {
  if (err instanceof RateLimitedError)
    return { kind: 'rate_limited', waitMs: rateLimitWait(err, now), message: err.message };
  if (err instanceof UpstreamError && err.errorClass === 'permanent')
    return { kind: 'permanent', message: err.message };
  if (err instanceof BadJobDataError) return { kind: 'permanent', message: err.message };
  return { kind: 'retry', message: err instanceof Error ? err.message : String(err) };
}

export class BadJobDataError extends Error {
  override readonly name = 'BadJobDataError';
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
