import { describe, expect, it } from 'vitest';
import { parseFaultSpec, planFaults } from '../../src/sim/faults.ts';
import { SlidingWindowLimiter } from '../../src/sim/ratelimit.ts';
import { Rng } from '../../src/sim/rng.ts';
import { brokenSuccessOf, jsonDepth } from '../../src/upstream/client.ts';
import { charLength, checkEntName, checkListLimit } from '../../src/upstream/params.ts';

describe('parameter rules', () => {
  it('counts characters, not UTF-16 units or bytes', () => {
    expect(charLength('𠮷'.repeat(100))).toBe(100);
    expect(checkEntName(`  ${'𠮷'.repeat(100)}  `)).toBe('𠮷'.repeat(100));
  });
  it('accepts limits as digit strings', () => {
    expect(checkListLimit('20')).toBe(20);
    expect(checkListLimit(1)).toBe(1);
    expect(() => checkListLimit('-1')).toThrow(/limit/);
  });
});

describe('fault specs', () => {
  it('parses kinds, probabilities and a latency range', () => {
    const spec = parseFaultSpec('latency=0.2@50-400, 500=0.02,reset=0.01,drift');
    expect(spec.rates).toEqual({ latency: 0.2, '500': 0.02, reset: 0.01, drift: 1 });
    expect(spec.latencyMs).toEqual([50, 400]);
  });
  it('parses trickle, which is never drawn together with truncated, nor changes a spec without it', () => {
    const spec = parseFaultSpec('trickle=0.5,truncated=0.5');
    expect(spec.rates).toEqual({ trickle: 0.5, truncated: 0.5 });
    const plans = Array.from({ length: 200 }, (_, i) => planFaults(spec, new Rng(i)));
    expect(plans.some((p) => p.trickle)).toBe(true);
    expect(plans.some((p) => p.truncate)).toBe(true);
    expect(plans.filter((p) => p.trickle && p.truncate)).toEqual([]);
    const without = parseFaultSpec('truncated=0.5,drift=0.5');
    for (let i = 0; i < 50; i++) {
      const a = planFaults(without, new Rng(i));
      expect(a.trickle).toBe(false);
      // The draws after the plan (drift variants, the cut) are those of a spec from before trickle.
      const b = new Rng(i);
      b.next();
      b.next();
      b.next();
      b.next();
      expect(a.rng.next()).toBe(b.next());
    }
  });
  it('names what is wrong', () => {
    expect(() => parseFaultSpec('explode=0.1')).toThrow(/unknown fault kind "explode"/);
    expect(() => parseFaultSpec('500=2')).toThrow(/probability/);
    expect(() => parseFaultSpec('500=0.6,503=0.6')).toThrow(/more than 1/);
    expect(() => parseFaultSpec('reset@1-2')).toThrow(/only latency/);
  });
});

describe('the sliding-window limiter', () => {
  it('admits the limit in any 60 seconds and no more, whatever the window edges', () => {
    const l = new SlidingWindowLimiter();
    for (let i = 0; i < 100; i++) expect(l.tryAcquire('k', 100, 59_000 + i)).toBe(0);
    // A fixed window would reset at 60 000; a sliding one does not.
    expect(l.tryAcquire('k', 100, 60_500)).toBeGreaterThan(0);
    expect(l.tryAcquire('k', 100, 119_000)).toBe(0);
  });
  it('says how long until a slot frees', () => {
    const l = new SlidingWindowLimiter();
    l.tryAcquire('k', 1, 1000);
    expect(l.tryAcquire('k', 1, 31_000)).toBe(30_000);
  });
});

describe('a success answer that broke off', () => {
  const full = JSON.stringify({
    status: 'success',
    markdown: '# "usage": {"credits": 99}, "content": {"PID": "fake"}',
    metadata: { usage: { credits: 3, remark: 'x' }, content: { PID: 'p-42', ENTNAME: '某公司' } },
  });
  it('is recognised as billed, with the credits and PID it got as far as', () => {
    const E = 'enterprise-search';
    expect(brokenSuccessOf(full.slice(0, full.indexOf('ENTNAME')), E)).toEqual({ credits: 3, pid: 'p-42' });
    expect(brokenSuccessOf(full.slice(0, 40), E)).toEqual({ credits: null, pid: null });
    expect(brokenSuccessOf('{"result":"success","markdown":["# A', 'product-listing')).toEqual({
      credits: null,
      pid: null,
    });
  });
  it('is not confused with an error body, HTML or markdown that mentions the keys', () => {
    const E = 'enterprise-search';
    expect(brokenSuccessOf('{"status":"error","error":{"code":"x"', E)).toBeNull();
    expect(brokenSuccessOf('<html><body>', E)).toBeNull();
    expect(brokenSuccessOf(full.slice(0, full.indexOf('metadata')), E)).toEqual({ credits: null, pid: null });
  });
});

describe('the nesting depth of a body', () => {
  it('counts objects and arrays outside strings, in one pass', () => {
    expect(jsonDepth('{"a":1}')).toBe(1);
    expect(jsonDepth('{"a":[{"b":[]}]}')).toBe(4);
    expect(jsonDepth('{"a":"[[[[{{{{\\"]]"}')).toBe(1);
    expect(jsonDepth('not json')).toBe(0);
    expect(jsonDepth(`${'['.repeat(100_000)}${']'.repeat(100_000)}`)).toBe(100_000);
  });
});
