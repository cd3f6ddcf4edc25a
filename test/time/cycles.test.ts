import { describe, expect, it } from 'vitest';
import {
  addDays,
  cycleOf,
  cycleStart,
  isCalendarDate,
  nextRefresh,
  pacificDate,
  pacificDayOver,
  pacificDayStart,
} from '../../src/time/cycles.ts';

describe('refresh cycles in Beijing time', () => {
  it('at 02:59 Beijing the cycle is still the previous day; at 03:00 it turns', () => {
    expect(cycleOf(new Date('2026-11-21T18:59:59.999Z'))).toBe('2026-11-21'); // 02:59:59 on the 22nd
    expect(cycleOf(new Date('2026-11-21T19:00:00.000Z'))).toBe('2026-11-22'); // 03:00 on the 22nd
  });

  it('a cycle starts at 03:00 Beijing, 19:00 UTC the day before', () => {
    expect(cycleStart('2026-11-22').toISOString()).toBe('2026-11-21T19:00:00.000Z');
    expect(cycleOf(cycleStart('2026-11-22'))).toBe('2026-11-22');
  });

  it('crosses a leap day and a year end', () => {
    expect(cycleOf(new Date('2028-02-28T19:00:00Z'))).toBe('2028-02-29');
    expect(cycleOf(new Date('2028-02-29T19:00:00Z'))).toBe('2028-03-01');
    expect(cycleOf(new Date('2026-12-31T19:00:00Z'))).toBe('2027-01-01');
    expect(addDays('2028-02-28', 1)).toBe('2028-02-29');
  });

  it('the next refresh after an instant is the next 03:00 Beijing', () => {
    expect(nextRefresh(new Date('2026-11-21T18:00:00Z')).toISOString()).toBe('2026-11-21T19:00:00.000Z');
    expect(nextRefresh(new Date('2026-11-21T19:00:00Z')).toISOString()).toBe('2026-11-22T19:00:00.000Z');
  });

  it('knows real calendar dates', () => {
    expect(isCalendarDate('2026-02-28')).toBe(true);
    expect(isCalendarDate('2028-02-29')).toBe(true);
    for (const bad of ['2026-02-29', '2026-02-30', '2026-1-1', '2026-13-01', '', 'abc', '2026-01-01T00:00']) {
      expect(isCalendarDate(bad)).toBe(false);
    }
  });
});

describe('product days in US Pacific time', () => {
  it('the Pacific date follows daylight saving', () => {
    expect(pacificDate(new Date('2026-07-01T06:59:00Z'))).toBe('2026-06-30'); // PDT, UTC-7
    expect(pacificDate(new Date('2026-07-01T07:00:00Z'))).toBe('2026-07-01');
    expect(pacificDate(new Date('2026-12-01T07:59:00Z'))).toBe('2026-11-30'); // PST, UTC-8
  });

  it('finds Pacific midnight, including on the days the clocks change', () => {
    expect(pacificDayStart('2026-07-01').toISOString()).toBe('2026-07-01T07:00:00.000Z');
    expect(pacificDayStart('2026-12-01').toISOString()).toBe('2026-12-01T08:00:00.000Z');
    expect(pacificDayStart('2026-03-08').toISOString()).toBe('2026-03-08T08:00:00.000Z');
    expect(pacificDayStart('2026-11-01').toISOString()).toBe('2026-11-01T07:00:00.000Z');
  });
});

describe('the end of a US-Pacific product day', () => {
  it('is the next Pacific midnight, daylight saving included', () => {
    // PST (UTC-8): 2026-11-20 ends at 2026-11-21T08:00Z.
    expect(pacificDayOver('2026-11-20', new Date('2026-11-21T07:59:59.999Z'))).toBe(false);
    expect(pacificDayOver('2026-11-20', new Date('2026-11-21T08:00:00.000Z'))).toBe(true);
    // PDT (UTC-7) in summer; the day DST ends (2026-11-01) is 25 hours long.
    expect(pacificDayOver('2026-07-04', new Date('2026-07-05T06:59:59.999Z'))).toBe(false);
    expect(pacificDayOver('2026-07-04', new Date('2026-07-05T07:00:00.000Z'))).toBe(true);
    expect(pacificDayOver('2026-11-01', new Date('2026-11-02T07:59:59.999Z'))).toBe(false);
    expect(pacificDayOver('2026-11-01', new Date('2026-11-02T08:00:00.000Z'))).toBe(true);
  });
});
