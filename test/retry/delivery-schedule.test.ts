import { describe, expect, it } from 'vitest';
import { isPrivateAddress } from '../../src/delivery/address.ts';
import { safeUrl } from '../../src/delivery/engine.ts';
import { parseRetryAfter } from '../../src/retry/retry-after.ts';
import { DEFAULT_SCHEDULE, nextAttemptAt, parseDuration, parseSchedule } from '../../src/retry/schedule.ts';

describe('the webhook retry schedule', () => {
  const now = new Date('2026-11-20T00:00:00Z');
  it("is Svix's by default: at once, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h", () => {
    expect(parseSchedule(DEFAULT_SCHEDULE)).toEqual([
      0, 5000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000,
    ]);
  });
  it('takes each wait up to 20% shorter or longer, and stops when the schedule is used up', () => {
    const s = parseSchedule(DEFAULT_SCHEDULE);
    expect(nextAttemptAt(s, 1, now, null, 0)?.getTime()).toBe(now.getTime() + 4000);
    expect(nextAttemptAt(s, 1, now, null, 0.999_999)?.getTime()).toBe(now.getTime() + 6000);
    expect(nextAttemptAt(s, 7, now, null, 0.5)?.getTime()).toBe(now.getTime() + 36_000_000);
    expect(nextAttemptAt(s, 8, now, null, 0.5)).toBeNull();
  });
  it('honours a longer Retry-After, in seconds or as a date, capped at a day', () => {
    const s = parseSchedule(DEFAULT_SCHEDULE);
    expect(nextAttemptAt(s, 1, now, parseRetryAfter('120', now), 0.5)?.getTime()).toBe(
      now.getTime() + 120_000,
    );
    expect(parseRetryAfter('Fri, 20 Nov 2026 00:01:00 GMT', now)).toBe(60_000);
    expect(parseRetryAfter('999999', now)).toBe(86_400_000);
    expect(parseRetryAfter('soon', now)).toBeNull();
    expect(parseRetryAfter(undefined, now)).toBeNull();
  });
  it('reads durations and refuses what is not one', () => {
    expect(parseDuration('200ms')).toBe(200);
    expect(parseDuration('5d')).toBe(432_000_000);
    expect(() => parseDuration('5')).toThrow(/needs a unit/);
    expect(() => parseDuration('soon')).toThrow(/not a duration/);
  });
});

describe('private addresses', () => {
  it('are loopback, private, link-local, shared, multicast and unspecified, in IPv4, IPv6 and mapped form', () => {
    for (const a of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '::1',
      '::',
      'fe80::1',
      'fd00::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
    ])
      expect(isPrivateAddress(a), a).toBe(true);
    for (const a of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])
      expect(isPrivateAddress(a), a).toBe(false);
  });
});

describe('webhook URLs in logs and events', () => {
  it('keep the origin and first path segment only: a longer path or a query may hold a token', () => {
    expect(safeUrl('https://hooks.slack.com/services/T000/B000/XXXXSECRET')).toBe(
      'https://hooks.slack.com/services/…',
    );
    expect(safeUrl('https://example.com/hook?token=abc')).toBe('https://example.com/hook/…');
    expect(safeUrl('http://127.0.0.1:8799/hook')).toBe('http://127.0.0.1:8799/hook');
    expect(safeUrl('https://example.com')).toBe('https://example.com/');
  });
});
