/**
 * Calendar arithmetic on YYYY-MM-DD dates with integers only (days from civil dates, after
 * H. Hinnant): generating a world computes tens of thousands of dates, and Date objects made
 * that a sizeable part of its time. Proleptic Gregorian, UTC, like `addDays` of time/cycles.ts.
 */

/** Days since 1970-01-01 of year `y`, month `m` (1–12), day `d`; a day past the month's end rolls over. */
export function dayNumber(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5) + d - 1;
  return era * 146097 + yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy - 719468;
}

/** Days since 1970-01-01 of a YYYY-MM-DD date (a datetime's date part is read). */
export function dayOf(date: string): number {
  return dayNumber(Number(date.slice(0, 4)), Number(date.slice(5, 7)), Number(date.slice(8, 10)));
}

/** The YYYY-MM-DD date of a day number. */
export function dateOf(day: number): string {
  const z = day + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  return `${y}-${m < 10 ? '0' : ''}${m}-${d < 10 ? '0' : ''}${d}`;
}

/** `date` moved by `days` (negative moves back). */
export function shiftDate(date: string, days: number): string {
  return dateOf(dayOf(date) + days);
}

/**
 * The last day of a term of `years` from `start`: the day before the anniversary (for a start on
 * 29 February, the anniversary in a common year is 1 March).
 */
export function termEnd(start: string, years: number): string {
  return dateOf(
    dayNumber(Number(start.slice(0, 4)) + years, Number(start.slice(5, 7)), Number(start.slice(8, 10))) - 1,
  );
}
