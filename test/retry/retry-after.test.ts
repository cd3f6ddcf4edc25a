import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseRetryAfter, RETRY_AFTER_CAP_MS } from '../../src/retry/retry-after.ts';

describe('Retry-After', () => {
  const now = new Date('2026-11-22T00:00:00Z');
  it('reads seconds and HTTP dates', () => {
    expect(parseRetryAfter('7', now)).toBe(7000);
    expect(parseRetryAfter('Sun, 22 Nov 2026 00:00:30 GMT', now)).toBe(30_000);
  });
  it('never waits a negative time and ignores what it cannot read', () => {
    expect(parseRetryAfter('Sat, 21 Nov 2026 00:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeNull();
    expect(parseRetryAfter(null, now)).toBeNull();
    expect(parseRetryAfter('', now)).toBeNull();
  });
});

describe('the one Retry-After parser', () => {
  const now = new Date('2026-11-22T00:00:00Z');
  it('reads decimal seconds, rounded to the millisecond, and ignores surrounding blanks', () => {
    expect(parseRetryAfter('1.5', now)).toBe(1500);
    expect(parseRetryAfter('120.5', now)).toBe(120_500);
    expect(parseRetryAfter('0.0004', now)).toBe(0);
    expect(parseRetryAfter('  7 ', now)).toBe(7000);
    expect(parseRetryAfter('0', now)).toBe(0);
  });
  it('reads the obsolete HTTP-date forms too', () => {
    expect(parseRetryAfter('Sunday, 22-Nov-26 00:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Sun Nov 22 00:00:30 2026', new Date(2026, 10, 22, 0, 0, 0))).toBe(30_000);
  });
  it('refuses negative and malformed numbers rather than reading them as dates in 2001', () => {
    for (const v of ['-5', '+5', '-1.5', '1.', '.5', '1.2.3', '1e3', '0x10', '5 s', '   '])
      expect(parseRetryAfter(v, now), v).toBeNull();
  });
  it('caps every wait at a day, seconds and dates alike', () => {
    expect(RETRY_AFTER_CAP_MS).toBe(86_400_000);
    expect(parseRetryAfter('86400', now)).toBe(86_400_000);
    expect(parseRetryAfter('999999', now)).toBe(RETRY_AFTER_CAP_MS);
    expect(parseRetryAfter('9'.repeat(400), now)).toBe(RETRY_AFTER_CAP_MS);
    expect(parseRetryAfter('Tue, 24 Nov 2026 00:00:00 GMT', now)).toBe(RETRY_AFTER_CAP_MS);
  });
  it('gives null or a whole number of milliseconds within [0, the cap], whatever the header', () => {
    fc.assert(
      fc.property(fc.option(fc.string(), { nil: undefined }), fc.date({ noInvalidDate: true }), (h, at) => {
        const ms = parseRetryAfter(h, at);
        if (ms === null) return;
        expect(Number.isInteger(ms)).toBe(true);
        expect(ms).toBeGreaterThanOrEqual(0);
        expect(ms).toBeLessThanOrEqual(RETRY_AFTER_CAP_MS);
      }),
    );
  });
  it('reads whole and decimal seconds exactly, below the cap', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 86_400 }), fc.integer({ min: 0, max: 999 }), (s, frac) => {
        expect(parseRetryAfter(String(s), now)).toBe(s * 1000);
        const text = `${s}.${String(frac).padStart(3, '0')}`;
        expect(parseRetryAfter(text, now)).toBe(Math.min(s * 1000 + frac, RETRY_AFTER_CAP_MS));
      }),
    );
  });
});
