/**
 * Time maths for the upstream's daily refresh. All functions are pure: they take an instant
 * and never read the clock. Asia/Shanghai has no DST (UTC+8 all year), and the product day
 * runs on US Pacific time (America/Los_Angeles, which has DST).
 */

const SHANGHAI_OFFSET_MS = 8 * 3600_000;
/** The upstream refreshes enterprise data at 03:00 Beijing time. */
export const REFRESH_HOUR_SHANGHAI = 3;

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** True when `s` is a real calendar date written YYYY-MM-DD (2026-02-30 and 2026-1-1 are not). */
export function isCalendarDate(s: string): boolean {
  const m = DATE_RE.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const t = new Date(Date.UTC(y, mo - 1, d));
  return t.getUTCFullYear() === y && t.getUTCMonth() === mo - 1 && t.getUTCDate() === d;
}

/** The YYYY-MM-DD date of `instant` in Asia/Shanghai. */
export function shanghaiDate(instant: Date): string {
  return new Date(instant.getTime() + SHANGHAI_OFFSET_MS).toISOString().slice(0, 10);
}

/**
 * The refresh cycle in force at `instant`: the Beijing date of the most recent 03:00 refresh.
 * At 02:59 Beijing time on the 22nd the cycle is still the 21st; at 03:00 it becomes the 22nd.
 */
export function cycleOf(instant: Date): string {
  return shanghaiDate(new Date(instant.getTime() - REFRESH_HOUR_SHANGHAI * 3600_000));
}

/** The instant of the 03:00 Beijing refresh that starts `cycle` (YYYY-MM-DD). */
export function cycleStart(cycle: string): Date {
  if (!isCalendarDate(cycle)) throw new RangeError(`not a calendar date: ${cycle}`);
  return new Date(Date.parse(`${cycle}T00:00:00Z`) - SHANGHAI_OFFSET_MS + REFRESH_HOUR_SHANGHAI * 3600_000);
}

/** The first refresh strictly after `instant`. */
export function nextRefresh(instant: Date): Date {
  return cycleStart(addDays(cycleOf(instant), 1));
}

/** `date` (YYYY-MM-DD) moved by `days` calendar days. */
export function addDays(date: string, days: number): string {
  const t = Date.parse(`${date}T00:00:00Z`);
  if (Number.isNaN(t)) throw new RangeError(`not a date: ${date}`);
  return new Date(t + days * 86400_000).toISOString().slice(0, 10);
}

/** Whole days from `from` to `to` (both YYYY-MM-DD); negative when `to` is earlier. */
export function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86400_000);
}

const pacificFormat = new Intl.DateTimeFormat('en-CA', {
  timeZone: 'America/Los_Angeles',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
});

/** The YYYY-MM-DD date of `instant` in US Pacific time: the product day it falls in. */
export function pacificDate(instant: Date): string {
  return pacificFormat.format(instant);
}

/** The instant at which the Pacific day `date` begins (midnight America/Los_Angeles). */
export function pacificDayStart(date: string): Date {
  // Pacific is UTC-8 or UTC-7; try both and keep the one that lands on local midnight of `date`.
  for (const offsetHours of [8, 7]) {
    const guess = new Date(Date.parse(`${date}T00:00:00Z`) + offsetHours * 3600_000);
    if (pacificDate(guess) === date && pacificDate(new Date(guess.getTime() - 1)) !== date) return guess;
  }
  throw new RangeError(`cannot place Pacific midnight for ${date}`);
}

/**
 * Whether the Pacific day `date` is over at `instant`. Until it is, the upstream's list of that day
 * may be incomplete, or empty because it is not published yet; afterwards it is final.
 */
export function pacificDayOver(date: string, instant: Date): boolean {
  return instant.getTime() >= pacificDayStart(addDays(date, 1)).getTime();
}
