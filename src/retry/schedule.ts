/**
 * When a failed delivery is tried again. Pure. The default schedule is Svix's: at once, then
 * 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h after each failure, each wait up to 20% shorter
 * or longer at random. A `Retry-After` longer than the next wait is honoured (parsed by
 * retry-after.ts).
 */
import { backoffMs } from './backoff.ts';
import { isFinalAttempt } from './decision.ts';

/** How much of each scheduled wait is random: up to 20% shorter or longer. */
export const SCHEDULE_JITTER = 0.2;

export const DEFAULT_SCHEDULE = '0,5s,5m,30m,2h,5h,10h,10h';

const UNIT: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** A duration such as `5s`, `30m`, `2h`, `200ms` or `0`, in ms; throws on anything else. */
export function parseDuration(text: string): number {
  const m = /^(\d+)(ms|s|m|h|d)?$/.exec(text.trim());
  if (!m) throw new Error(`"${text}" is not a duration (such as 0, 200ms, 5s, 30m, 2h, 5d)`);
  const n = Number(m[1]);
  if (!m[2]) {
    if (n !== 0) throw new Error(`"${text}" needs a unit (ms, s, m, h or d)`);
    return 0;
  }
  return n * (UNIT[m[2]] as number);
}

/** A comma-separated schedule: the wait before each attempt, the first one's included. */
export function parseSchedule(text: string): number[] {
  const waits = text.split(',').map(parseDuration);
  if (waits.length === 0) throw new Error('a schedule needs at least one attempt');
  return waits;
}

/**
 * The time of attempt `attempt + 1` (attempts counted from 1) after a failure at `now`, or null
 * when the schedule is used up. `random` is in [0, 1).
 */
export function nextAttemptAt(
  schedule: readonly number[],
  attempt: number,
  now: Date,
  retryAfterMs: number | null,
  random: number,
): Date | null {
  if (isFinalAttempt(attempt, schedule.length)) return null;
  // The schedule gives each wait itself (so factor 1); the jitter is the one backoff rule's.
  const jittered = backoffMs(
    0,
    { baseMs: schedule[attempt] as number, factor: 1, jitter: SCHEDULE_JITTER, jitterMode: 'both' },
    () => random,
  );
  const wait = Math.max(jittered, retryAfterMs ?? 0);
  return new Date(now.getTime() + Math.round(wait));
}
