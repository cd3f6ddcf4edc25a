/**
 * The longest wait a Retry-After is read as: one day. A server asking for longer has stopped
 * serving for now; callers with a shorter patience apply their own limit on top (the job
 * boundary pauses a cycle past 15 minutes, boundary.ts MAX_RETRY_AFTER_MS).
 */
export const RETRY_AFTER_CAP_MS = 86_400_000;

/**
 * Parses an HTTP Retry-After header (RFC 9110: delay-seconds or an HTTP-date) into a wait in
 * milliseconds, for the upstream's rate limits and webhook receivers alike. Pure: `now` is passed
 * in. The rules:
 *
 * - absent, empty or blank: null;
 * - seconds, whole or decimal (`120`, `1.5`): that many seconds, rounded to the millisecond;
 * - any other number (`-5`, `+5`, `1.`, `.5`): null. It is never read as a date, as `Date.parse`
 *   would (`-5` is May 2001 to it);
 * - an HTTP-date (`Sun, 22 Nov 2026 00:00:30 GMT`, or another form `Date.parse` reads): the time
 *   until then, 0 when it has passed;
 * - anything else: null;
 *
 * and the wait is at most RETRY_AFTER_CAP_MS. It is never negative.
 */
export function parseRetryAfter(header: string | null | undefined, now: Date): number | null {
  if (header == null) return null;
  const value = header.trim();
  if (value === '') return null;
  let ms: number;
  if (/^\d+(\.\d+)?$/.test(value)) ms = Math.round(Number(value) * 1000);
  else if (/^[-+.\d]+$/.test(value)) return null;
  else {
    const at = Date.parse(value);
    if (Number.isNaN(at)) return null;
    ms = Math.max(0, at - now.getTime());
  }
  return Math.min(ms, RETRY_AFTER_CAP_MS);
}
