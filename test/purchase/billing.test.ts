import { describe, expect, it } from 'vitest';
import { costOfAnswer, isBilledSuccess, statedCredits, usageOf } from '../../src/purchase/billing.ts';

describe('what a billed answer cost', () => {
  it.each([
    [3, 3],
    [0, 0],
    ['3', 3],
    [' 12 ', 12],
    ['3.0', 3],
    [2_147_483_647, 2_147_483_647],
  ])('a stated amount %j reads as %d', (value, credits) => {
    expect(statedCredits(value)).toBe(credits);
    expect(costOfAnswer({ credits: value }, 3)).toMatchObject({ credits, basis: 'stated' });
  });

  it.each([
    [undefined],
    [null],
    ['three'],
    [-3],
    [2.5],
    ['2.5'],
    [1e12],
    [Number.NaN],
    [{ amount: 3 }],
    [[3]],
    [true],
  ])('an unreadable amount %j books the configured cost, and says so', (value) => {
    expect(statedCredits(value)).toBeNull();
    const cost = costOfAnswer(value === undefined ? { remark: 'q' } : { credits: value, remark: 'q' }, 7);
    expect(cost.credits).toBe(7);
    expect(cost.basis).toBe('assumed');
    expect(cost.remark).toMatch(/^q; the answer stated .*: the configured 7 credits were booked$/);
  });

  it('a missing usage block books the configured cost', () => {
    expect(costOfAnswer(undefined, 3)).toMatchObject({ credits: 3, basis: 'assumed' });
    expect(costOfAnswer('3', 3)).toMatchObject({ credits: 3, basis: 'assumed' });
  });

  it('reads usage and success from a body of any shape', () => {
    expect(usageOf({ metadata: { usage: { credits: 3 } } })).toEqual({ credits: 3 });
    expect(usageOf({ metadata: [] })).toBeUndefined();
    expect(usageOf('x')).toBeUndefined();
    expect(isBilledSuccess({ status: 'success' })).toBe(true);
    expect(isBilledSuccess({ status: 'error' })).toBe(false);
    expect(isBilledSuccess([{ status: 'success' }])).toBe(false);
  });
});
