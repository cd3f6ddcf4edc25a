import { Backoffs } from 'bullmq';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { OUTAGE_BACKOFF } from '../../src/db/outage.ts';
import { type Backoff, backoffMs, seededRandom } from '../../src/retry/backoff.ts';
import { isFinalAttempt } from '../../src/retry/decision.ts';
import { nextAttemptAt } from '../../src/retry/schedule.ts';
import { backoffStrategy, RETRY_POLICY, retryDelayMs } from '../../src/runtime/queues.ts';
import { RECONNECT_BACKOFF } from '../../src/runtime/reachability.ts';

const unit = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });
const backoffArb: fc.Arbitrary<Backoff> = fc.record({
  baseMs: fc.integer({ min: 0, max: 3_600_000 }),
  // Exactly 1, or clearly more: a factor a hair above 1 would test Math.pow's last bit, not the rule.
  factor: fc.oneof(fc.constant(1), fc.double({ min: 1.1, max: 3, noNaN: true })),
  capMs: fc.integer({ min: 0, max: 7 * 86_400_000 }),
  jitter: fc.double({ min: 0, max: 1, noNaN: true }),
  jitterMode: fc.constantFrom('down' as const, 'both' as const),
});

describe('the one backoff function', () => {
  it('grows from the base by the factor up to the cap, without jitter', () => {
    const b = { baseMs: 500, capMs: 30_000 };
    expect([0, 1, 2, 3, 4, 5, 6, 7, 50, 5000].map((a) => backoffMs(a, b))).toEqual([
      500, 1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000, 30_000,
    ]);
    expect(backoffMs(3, { baseMs: 100, factor: 1 })).toBe(100);
  });
  it('takes up to `jitter` off (down), or puts it on either side (both)', () => {
    expect(backoffMs(2, { baseMs: 1000, jitter: 0.5 }, () => 0)).toBe(2000);
    expect(backoffMs(2, { baseMs: 1000, jitter: 0.5 }, () => 0.999_999)).toBe(3999);
    expect(backoffMs(0, { baseMs: 5000, jitter: 0.2, jitterMode: 'both' }, () => 0)).toBe(4000);
    expect(backoffMs(0, { baseMs: 5000, jitter: 0.2, jitterMode: 'both' }, () => 0.5)).toBe(5000);
    expect(backoffMs(0, { baseMs: 5000, jitter: 0.2, jitterMode: 'both' }, () => 0.999_999)).toBe(6000);
  });
  it('refuses parameters outside their ranges', () => {
    expect(() => backoffMs(-1, { baseMs: 1 })).toThrow(RangeError);
    expect(() => backoffMs(0, { baseMs: -1 })).toThrow(RangeError);
    expect(() => backoffMs(0, { baseMs: 1, jitter: 1.5 })).toThrow(RangeError);
    expect(() => backoffMs(0, { baseMs: 1, capMs: Number.NaN })).toThrow(RangeError);
  });

  it('is a whole number of milliseconds within [0, cap]', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 200 }), backoffArb, unit, (attempt, b, r) => {
        const ms = backoffMs(attempt, b, () => r);
        expect(Number.isInteger(ms)).toBe(true);
        expect(ms).toBeGreaterThanOrEqual(0);
        expect(ms).toBeLessThanOrEqual(b.capMs as number);
      }),
    );
  });
  it('stays within its jitter band around the unjittered wait', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 40 }), backoffArb, unit, (attempt, b, r) => {
        const w = backoffMs(attempt, { ...b, jitter: 0 });
        const j = b.jitter as number;
        const ms = backoffMs(attempt, b, () => r);
        expect(ms).toBeGreaterThanOrEqual(Math.floor(w * (1 - j)));
        expect(ms).toBeLessThanOrEqual(b.jitterMode === 'down' ? w : Math.ceil(w * (1 + j)));
      }),
    );
  });
  it('never shrinks from one attempt to the next for the same draw, so neither does its expectation', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 60 }), backoffArb, unit, (attempt, b, r) => {
        expect(backoffMs(attempt + 1, b, () => r)).toBeGreaterThanOrEqual(backoffMs(attempt, b, () => r));
      }),
    );
    fc.assert(
      fc.property(backoffArb, fc.integer(), (b, seed) => {
        const mean = (attempt: number) => {
          const random = seededRandom(seed);
          let sum = 0;
          for (let i = 0; i < 200; i++) sum += backoffMs(attempt, b, random);
          return sum / 200;
        };
        const means = [0, 1, 2, 3, 4, 5, 6, 7, 8].map(mean);
        for (let i = 1; i < means.length; i++)
          expect(means[i]).toBeGreaterThanOrEqual(means[i - 1] as number);
      }),
      { numRuns: 50 },
    );
  });
  it('draws reproducibly from a seed, within [0, 1)', () => {
    const a = seededRandom(42);
    const b = seededRandom(42);
    const draws = Array.from({ length: 1000 }, () => a());
    expect(Array.from({ length: 1000 }, () => b())).toEqual(draws);
    expect(draws.every((x) => x >= 0 && x < 1)).toBe(true);
    expect(new Set(draws).size).toBe(1000);
    expect(seededRandom(43)()).not.toBe(draws[0]);
  });
});

/** The formulas each caller had before, kept here to show the waits did not change. */
const before = {
  inline: (attempt: number, delay: number, jitter: number, r: number) =>
    Math.round(delay * 2 ** (attempt - 1) * (1 - jitter * r)),
  outage: (retry: number) => Math.min(5000, 250 * 2 ** retry),
  reconnect: (attempt: number) => Math.min(30_000, 500 * 2 ** attempt),
  webhook: (
    schedule: readonly number[],
    attempt: number,
    now: Date,
    retryAfter: number | null,
    r: number,
  ) => {
    if (attempt >= schedule.length) return null;
    const jittered = (schedule[attempt] as number) * (0.8 + 0.4 * r);
    return new Date(now.getTime() + Math.round(Math.max(jittered, retryAfter ?? 0)));
  },
};

describe('every former backoff, through the one function', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("gives BullMQ jobs the waits of BullMQ's own 'exponential' backoff, to the millisecond", async () => {
    const delay = fc.integer({ min: 10, max: 3_600_000 });
    const jitter = fc.constantFrom(0, 0.5, 0.25, 1);
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 100 }), delay, jitter, unit, async (n, d, j, r) => {
        vi.spyOn(Math, 'random').mockReturnValue(r);
        const builtin = await Backoffs.calculate(
          { type: 'exponential', delay: d, jitter: j },
          n,
          new Error(),
          {} as never,
        );
        const job = { opts: { backoff: { ...RETRY_POLICY.backoff, delay: d, jitter: j } } };
        const ours = await backoffStrategy(n, RETRY_POLICY.backoff.type, new Error(), job as never);
        expect(ours).toBe(builtin);
        expect(retryDelayMs(n, { delay: d, jitter: j }, () => r)).toBe(builtin);
        vi.restoreAllMocks();
      }),
    );
  });
  it('gives the inline runner the same waits as the queue; its own formula differed by at most 1 ms', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 30 }),
        fc.integer({ min: 10, max: 3_600_000 }),
        unit,
        (n, d, r) => {
          // The old rule took r off where BullMQ adds it: the same draw mirrored.
          const now = retryDelayMs(n, { delay: d, jitter: 0.5 }, () => 1 - r);
          expect(Math.abs(now - before.inline(n, d, 0.5, r))).toBeLessThanOrEqual(1);
        },
      ),
    );
  });
  it('waits out a database outage as before: 250 ms doubling to 5 s', () => {
    for (let retry = 0; retry < 1100; retry++)
      expect(backoffMs(retry, OUTAGE_BACKOFF)).toBe(before.outage(retry));
  });
  it('waits between reconnects as before: 500 ms doubling to 30 s', () => {
    for (let attempt = 0; attempt < 1100; attempt++)
      expect(backoffMs(attempt, RECONNECT_BACKOFF)).toBe(before.reconnect(attempt));
  });
  it('schedules webhook retries as before', () => {
    const now = new Date('2026-11-20T00:00:00Z');
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 5 * 86_400_000 }), { minLength: 1, maxLength: 10 }),
        fc.integer({ min: 1, max: 12 }),
        fc.option(fc.integer({ min: 0, max: 86_400_000 })),
        unit,
        (schedule, attempt, retryAfter, r) => {
          expect(nextAttemptAt(schedule, attempt, now, retryAfter, r)).toEqual(
            before.webhook(schedule, attempt, now, retryAfter, r),
          );
        },
      ),
    );
  });
});

describe('the final attempt', () => {
  it('is the one whose number reaches the attempts allowed', () => {
    expect(isFinalAttempt(1, 1)).toBe(true);
    expect(isFinalAttempt(1, 8)).toBe(false);
    expect(isFinalAttempt(7, 8)).toBe(false);
    expect(isFinalAttempt(8, 8)).toBe(true);
    expect(isFinalAttempt(9, 8)).toBe(true);
  });
  it('is where the webhook schedule ends', () => {
    const now = new Date('2026-11-20T00:00:00Z');
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10 }), fc.integer({ min: 1, max: 12 }), (length, attempt) => {
        const schedule = Array.from({ length }, () => 1000);
        expect(nextAttemptAt(schedule, attempt, now, null, 0.5) === null).toBe(
          isFinalAttempt(attempt, length),
        );
      }),
    );
  });
});
