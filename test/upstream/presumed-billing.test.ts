/**
 * The rule for an HTTP 200 answer that could not complete (src/upstream/client.ts): the upstream
 * bills before it sends the body, so once a body began to arrive the call is presumed billed,
 * unless the bytes that arrived prove an error (a top-level verdict that cannot be "success", a
 * top-level `error` key) or prove it is not the upstream's JSON (nothing but whitespace, a first
 * character other than `{`).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { brokenSuccessOf, presumedBillingOf, provablyUnbilled } from '../../src/upstream/client.ts';
import {
  BodyTooLargeError,
  MalformedBodyError,
  NetworkError,
  type Operation,
  type ResponseContext,
  ServerError,
  TimeoutError,
} from '../../src/upstream/errors.ts';
import { sampleEnterpriseRecord, sampleProductRecord } from '../support/records.ts';

const E: Operation = 'enterprise-search';
const P: Operation = 'product-listing';

const billed = (text: string, op: Operation = E) => brokenSuccessOf(text, op) !== null;

describe('a 200 whose body began to arrive', () => {
  it('is presumed billed from its first byte, whatever key comes first', () => {
    expect(brokenSuccessOf('{"status":"suc', E)).toEqual({ credits: null, pid: null });
    expect(brokenSuccessOf('{', E)).toEqual({ credits: null, pid: null });
    expect(brokenSuccessOf('  \n{"', E)).toEqual({ credits: null, pid: null });
    expect(billed('{"metadata":{"usage":{"credits":3')).toBe(true);
    expect(billed('{"markdown":"# 上海示例')).toBe(true);
    expect(billed('{"result":"succ', P)).toBe(true);
    expect(billed('{"status":"success","error":null')).toBe(true);
  });

  it('keeps what the prefix shows of the amount and the PID, and no amount it has not seen in full', () => {
    expect(
      brokenSuccessOf('{"metadata":{"usage":{"credits":3,"remark":"q"},"content":{"PID":"p-7"', E),
    ).toEqual({ credits: 3, pid: 'p-7' });
    // "3" may be the start of "30": no amount is read until a character after it arrived.
    expect(brokenSuccessOf('{"metadata":{"usage":{"credits":3', E)).toEqual({ credits: null, pid: null });
    expect(brokenSuccessOf('{"metadata":{"usage":{"credits":"12"', E)?.credits).toBe(12);
    expect(brokenSuccessOf('{"metadata":{"content":{"PID":"p-\\u0041"', E)?.pid).toBe('p-A');
  });

  it('is not billed when the bytes prove an error', () => {
    expect(billed('{"status":"error","error":{"code":"not_found","message":"none"}}')).toBe(false);
    expect(billed('{"status":"error","error":{"code":"x"')).toBe(false);
    expect(billed('{"status":"err')).toBe(false);
    expect(billed('{"status":"e')).toBe(false);
    expect(billed('{"status" : "fail')).toBe(false);
    expect(billed('{"error":{"code":"internal_error"')).toBe(false);
    // Only a key follows `{` or `,` at the top level: `"error"` there is the error body's key.
    expect(billed('{"error"')).toBe(false);
    expect(billed('{"error":')).toBe(false);
    expect(billed('{"status"')).toBe(true);
    expect(billed('{"result":"err', P)).toBe(false);
    expect(billed('{"status":"error"', P)).toBe(false);
    // A complete verdict other than "success" is no success either.
    expect(billed('{"status":"successful"')).toBe(false);
    expect(billed('{"status":"Success"')).toBe(false);
  });

  it('is not billed when it is not the upstream JSON at all, or nothing but whitespace arrived', () => {
    expect(billed('<html><body><h1>502 Bad Gateway')).toBe(false);
    expect(billed('<')).toBe(false);
    expect(billed('[{"status":"success"')).toBe(false);
    expect(billed('Service Unavailable')).toBe(false);
    expect(billed('')).toBe(false);
    expect(billed(' \r\n\t ')).toBe(false);
    expect(brokenSuccessOf(null, E)).toBeNull();
  });

  it('reads the verdict at the top level only, outside strings', () => {
    expect(billed('{"markdown":"\\"status\\":\\"error\\"')).toBe(true);
    expect(billed('{"markdown":"\\"status\\":\\"error\\", \\"error\\": {}","status":"suc')).toBe(true);
    expect(billed('{"metadata":{"status":"error","error":{"code":"x"}},"markdown":"')).toBe(true);
    expect(billed('{"metadata":[{"error":1}],"status":"succ')).toBe(true);
    // The verdict after a nested value is read.
    expect(billed('{"metadata":{"a":[1,{"b":"}"}]},"status":"er')).toBe(false);
    // `result` is a product's verdict; on an enterprise answer it is some other key.
    expect(billed('{"result":"error"', E)).toBe(true);
  });

  it('reads escapes in keys and values, and waits for an escape cut short', () => {
    expect(billed('{"status":"suc\\u0063')).toBe(true);
    expect(billed('{"status":"suc\\u00')).toBe(true);
    expect(billed('{"status":"suc\\')).toBe(true);
    expect(billed('{"status":"\\u0065rr')).toBe(false);
    expect(billed('{"st\\u0061tus":"err')).toBe(false);
  });
});

/** `value` with the keys of every object in an order drawn from `rng`. */
function shuffled(value: unknown, rng: () => number): unknown {
  if (Array.isArray(value)) return value.map((v) => shuffled(v, rng));
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value);
  for (let i = entries.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [entries[i], entries[j]] = [entries[j] as [string, unknown], entries[i] as [string, unknown]];
  }
  return Object.fromEntries(entries.map(([k, v]) => [k, shuffled(v, rng)]));
}

/** A seeded float source for fast-check to drive. */
function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Markdown that spells error verdicts inside a string: it must never count.
const TRAP =
  '# 上海示例\n"status":"error", "error": {"code": "x"}, {"result":"err", "usage": {"credits": 99}}';

describe('the rule over every prefix', () => {
  it('says billed for any prefix of a success document, keys in any order', () => {
    fc.assert(
      fc.property(fc.integer(), fc.double({ min: 0, max: 1, noNaN: true }), (seed, cut) => {
        const doc = {
          status: 'success',
          markdown: TRAP,
          metadata: {
            usage: { credits: 30, remark: 'enterprise query' },
            content: sampleEnterpriseRecord({ PID: 'p-9"\\x' }),
          },
        };
        const text = JSON.stringify(shuffled(doc, seeded(seed)));
        const prefix = text.slice(0, 1 + Math.floor(cut * (text.length - 1)));
        const got = brokenSuccessOf(prefix, E);
        expect(got, prefix).not.toBeNull();
        // An amount is the stated one or none: never a part of it.
        expect([null, 30]).toContain(got?.credits);
        expect([null, 'p-9"\\x']).toContain(got?.pid);
      }),
      { numRuns: 500 },
    );
  });

  it('says billed for any prefix of a product success, keys in any order', () => {
    fc.assert(
      fc.property(fc.integer(), fc.double({ min: 0, max: 1, noNaN: true }), (seed, cut) => {
        const doc = { result: 'success', markdown: [TRAP], metadata: [sampleProductRecord()] };
        const text = JSON.stringify(shuffled(doc, seeded(seed)));
        const prefix = text.slice(0, 1 + Math.floor(cut * (text.length - 1)));
        expect(billed(prefix, P), prefix).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('says not billed for any prefix of an error document that shows 3 characters of its status', () => {
    fc.assert(
      fc.property(
        fc.integer(),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.constantFrom(E, P),
        fc.string({ maxLength: 40 }),
        (seed, cut, op, message) => {
          const doc = { status: 'error', error: { code: 'internal_error', message: `${TRAP} ${message}` } };
          const text = JSON.stringify(shuffled(doc, seeded(seed)));
          const from = text.indexOf('"status":"') + '"status":"'.length + 3;
          const prefix = text.slice(0, from + Math.floor(cut * (text.length - from)));
          expect(billed(prefix, op), prefix).toBe(false);
          expect(provablyUnbilled(prefix, op)).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('the billing a failed call is presumed to have made', () => {
  const request = { operation: E, params: { ent_name: 'x' } };
  const response = (httpStatus: number | null, bodyText: string | null): ResponseContext => ({
    httpStatus,
    bodyText,
    durationMs: 1500,
    fetchedAt: new Date(),
  });

  it('is there for a 200 cut off by the timeout, a broken connection or the size limit', () => {
    expect(presumedBillingOf(new TimeoutError('t', request, response(200, '{"status":"suc')))).toEqual({
      credits: null,
      pid: null,
    });
    expect(presumedBillingOf(new NetworkError('n', request, response(200, '{')))).not.toBeNull();
    const cut = brokenSuccessOf('{"metadata":{"usage":{"credits":3,', E);
    expect(presumedBillingOf(new BodyTooLargeError('l', request, response(200, '{"metadata"'), cut))).toEqual(
      {
        credits: 3,
        pid: null,
      },
    );
  });

  it('is not there for an error, another status, or nothing received', () => {
    expect(presumedBillingOf(new TimeoutError('t', request, response(null, null)))).toBeNull();
    expect(presumedBillingOf(new TimeoutError('t', request, response(200, '')))).toBeNull();
    expect(presumedBillingOf(new TimeoutError('t', request, response(200, '{"status":"err')))).toBeNull();
    expect(presumedBillingOf(new NetworkError('n', request, response(502, '{"status":"suc')))).toBeNull();
    expect(presumedBillingOf(new ServerError('s', request, response(200, '{"status":"suc')))).toBeNull();
    expect(presumedBillingOf(new MalformedBodyError('m', request, response(200, '<html>'), null))).toBeNull();
  });
});
