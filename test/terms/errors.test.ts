/**
 * Error names: a class made by namedError carries its name as an own property, so that logs,
 * stacks and the runtime's one boundary see it whatever a build does to class names; the job
 * errors each carry their own, and a held claim says until when.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BadJobDataError,
  ClaimHeldError,
  FinalForCycleError,
  LostClaimError,
} from '../../src/terms/job-errors.ts';
import { namedError } from '../../src/terms/named-error.ts';

describe('namedError', () => {
  it('names its errors with the literal, in the message line and the stack too', () => {
    class SomethingWrongError extends namedError('SomethingWrongError') {}
    const e = new SomethingWrongError('it broke');
    expect(e).toBeInstanceOf(Error);
    expect(e.name).toBe('SomethingWrongError');
    expect(Object.hasOwn(e, 'name')).toBe(true);
    expect(e.message).toBe('it broke');
    expect(String(e)).toBe('SomethingWrongError: it broke');
    expect(e.stack?.split('\n')[0]).toBe('SomethingWrongError: it broke');
    expect(JSON.parse(JSON.stringify(e))).toEqual({ name: 'SomethingWrongError' });
  });

  it('keeps the literal whatever the class is called', () => {
    const Renamed = class Minified extends namedError('RealName') {};
    expect(new Renamed('x').name).toBe('RealName');
  });

  it('makes a new class each time: errors of the same name are not each other', () => {
    const A = namedError('SameName');
    const B = namedError('SameName');
    expect(A).not.toBe(B);
    expect(new A('a')).not.toBeInstanceOf(B);
  });

  it('holds for any name and message', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (name, message) => {
        const E = namedError(name);
        const e = new E(message);
        expect(e.name).toBe(name);
        expect(e.message).toBe(message);
        expect(e).toBeInstanceOf(E);
      }),
    );
  });
});

describe('the job errors', () => {
  it.each([
    [ClaimHeldError, 'ClaimHeldError', () => new ClaimHeldError('held', new Date(0))],
    [LostClaimError, 'LostClaimError', () => new LostClaimError('lost')],
    [FinalForCycleError, 'FinalForCycleError', () => new FinalForCycleError('final')],
    [BadJobDataError, 'BadJobDataError', () => new BadJobDataError('bad')],
  ] as const)('%o is named %s and is no other job error', (cls, name, make) => {
    const e = make();
    expect(e.name).toBe(name);
    expect(e).toBeInstanceOf(Error);
    expect(e).toBeInstanceOf(cls);
    for (const other of [ClaimHeldError, LostClaimError, FinalForCycleError, BadJobDataError])
      if (other !== cls) expect(e).not.toBeInstanceOf(other);
  });

  it('says until when another holder has the claim', () => {
    const until = new Date('2026-01-02T03:04:05Z');
    const e = new ClaimHeldError('claim held by another worker', until);
    expect(e.until).toBe(until);
    expect(e.message).toBe('claim held by another worker');
    expect(String(e)).toBe('ClaimHeldError: claim held by another worker');
  });
});
