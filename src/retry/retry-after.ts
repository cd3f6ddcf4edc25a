/**
 * Parses an HTTP Retry-After header (RFC 9110: delay-seconds or an HTTP-date) into a wait in
 * milliseconds. Pure: `now` is passed in. Returns null when absent or unreadable, and never a
 * negative wait.
 */
export function parseRetryAfter(header: string | null | undefined, now: Date): number | null {
  if (header == null) return null;
  const value = header.trim();
  if (value === '') return null;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
  const at = Date.parse(value);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - now.getTime());
}
