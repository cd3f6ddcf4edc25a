import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../src/sim/server.ts';
import { presumedBillingOf } from '../../src/upstream/client.ts';
import {
  AuthenticationError,
  InsufficientCreditsError,
  InvalidDateError,
  InvalidParameterError,
  InvalidProductNameError,
  InvalidRequestError,
  MalformedBodyError,
  MissingParametersError,
  NetworkError,
  NotFoundError,
  RateLimitedError,
  ServerError,
  TimeoutError,
  UnknownErrorCodeError,
  type UpstreamError,
} from '../../src/upstream/errors.ts';
import { balanceOf, clientFor, rawGet, startTestSim, TEST_KEY } from '../support/sim.ts';

async function failure(p: Promise<unknown>): Promise<UpstreamError> {
  try {
    await p;
  } catch (err) {
    return err as UpstreamError;
  }
  throw new Error('expected the call to fail');
}

describe('the client against the simulator', () => {
  let sim: RunningSimulator;
  let name: string;

  beforeAll(async () => {
    sim = await startTestSim();
    const first = sim.sim.world().all()[0];
    if (!first) throw new Error('empty world');
    name = first.ENTNAME;
  });
  afterAll(() => sim.close());

  it('returns the enterprise record with its raw body, status and timing', async () => {
    const { data, exchange } = await clientFor(sim).searchEnterprise(name);
    expect(data.status).toBe('success');
    expect(data.metadata.content.ENTNAME).toBe(name);
    expect(data.metadata.usage).toMatchObject({ credits: 3, remark: expect.stringMatching(/enterprise/) });
    expect(exchange.httpStatus).toBe(200);
    expect(exchange.operation).toBe('enterprise-search');
    expect(exchange.params).toEqual({ ent_name: name });
    expect(JSON.parse(exchange.bodyText ?? '')).toEqual(exchange.bodyJson);
    expect(exchange.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('finds an enterprise by a partial name and by its former name', async () => {
    const withFormer = sim.sim
      .world()
      .all()
      .find((e) => e.HISTORYNAME !== '');
    expect(withFormer).toBeDefined();
    const byFormer = await clientFor(sim).searchEnterprise(withFormer?.HISTORYNAME ?? '');
    expect(byFormer.data.metadata.content.PID).toBe(withFormer?.PID);
    const partial = name.slice(0, Math.max(4, name.length - 4));
    const byPart = await clientFor(sim).searchEnterprise(partial);
    expect(byPart.data.metadata.content.ENTNAME).toContain(partial.slice(0, 2));
  });

  it('answers not_found for a name with nothing close, and charges nothing', async () => {
    const before = await balanceOf(sim);
    const err = await failure(clientFor(sim).searchEnterprise('Zzyzx Qwv Llc Nonexistent'));
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err.errorClass).toBe('permanent');
    expect(await balanceOf(sim)).toBe(before);
  });

  it('deducts exactly 3 credits per successful enterprise query', async () => {
    const before = await balanceOf(sim);
    await clientFor(sim).searchEnterprise(name);
    await clientFor(sim).searchEnterprise(name);
    expect(await balanceOf(sim)).toBe(before - 6);
  });

  it('lists a day of trending products, at most the limit asked', async () => {
    const { data } = await clientFor(sim).listProducts('2026-11-18', 20);
    expect(data.result).toBe('success');
    expect(data.metadata.length).toBeGreaterThanOrEqual(10);
    expect(data.metadata.length).toBeLessThanOrEqual(20);
    expect(data.markdown).toHaveLength(data.metadata.length);
    const five = await clientFor(sim).listProducts('2026-11-18', 5);
    expect(five.data.metadata).toHaveLength(5);
  });

  it('fetches one product by name', async () => {
    const { data } = await clientFor(sim).listProducts('2026-11-18', 3);
    const first = data.metadata[0];
    if (!first) throw new Error('empty list');
    const detail = await clientFor(sim).getProduct(first.name.toUpperCase());
    expect(detail.data.metadata.product_id).toBe(first.product_id);
    expect(typeof detail.data.markdown).toBe('string');
    const err = await failure(clientFor(sim).getProduct('No Such Product 98765'));
    expect(err).toBeInstanceOf(InvalidProductNameError);
  });

  describe('refuses bad parameters before sending anything', () => {
    const cases: [string, () => Promise<unknown>, string][] = [
      ['an empty enterprise name', () => clientFor(sim).searchEnterprise(''), 'ent_name'],
      ['a blank enterprise name', () => clientFor(sim).searchEnterprise('   '), 'ent_name'],
      ['a name of 101 characters', () => clientFor(sim).searchEnterprise('公'.repeat(101)), 'ent_name'],
      [
        'a name with a control character',
        () => clientFor(sim).searchEnterprise('上海\u0007公司'),
        'ent_name',
      ],
      ['2026-02-30', () => clientFor(sim).listProducts('2026-02-30'), 'date'],
      ['2026-1-1', () => clientFor(sim).listProducts('2026-1-1'), 'date'],
      ['an empty date', () => clientFor(sim).listProducts(''), 'date'],
      ['limit 0', () => clientFor(sim).listProducts('2026-11-18', 0), 'limit'],
      ['limit 21', () => clientFor(sim).listProducts('2026-11-18', 21), 'limit'],
      ['limit 1.5', () => clientFor(sim).listProducts('2026-11-18', 1.5), 'limit'],
      ['limit abc', () => clientFor(sim).listProducts('2026-11-18', 'abc'), 'limit'],
      ['an empty product name', () => clientFor(sim).getProduct(' '), 'product_name'],
    ];
    for (const [what, call, parameter] of cases) {
      it(`rejects ${what}`, async () => {
        const before = sim.sim.counters.requests;
        const total = before['enterprise-search'] + before['product-listing'];
        let caught: unknown;
        try {
          await call();
        } catch (err) {
          caught = err;
        }
        expect(caught).toBeInstanceOf(InvalidRequestError);
        expect((caught as InvalidRequestError).parameter).toBe(parameter);
        expect((caught as Error).message).toContain(parameter);
        const after = sim.sim.counters.requests;
        expect(after['enterprise-search'] + after['product-listing']).toBe(total);
      });
    }
    it('accepts a name of exactly 100 characters (counted as characters, not bytes)', async () => {
      const err = await failure(clientFor(sim).searchEnterprise('龘'.repeat(100)));
      expect(err).toBeInstanceOf(NotFoundError);
    });
  });

  it('refuses a missing or unknown key with a permanent authentication error', async () => {
    const missing = await rawGet(sim, `/v1/enterprise-search?ent_name=${encodeURIComponent(name)}`, null);
    expect(missing.status).toBe(401);
    expect(missing.json).toMatchObject({ status: 'error', error: { code: 'unauthorized' } });
    const err = await failure(clientFor(sim, 'sk-wrong-key').searchEnterprise(name));
    expect(err).toBeInstanceOf(AuthenticationError);
    expect(err.errorClass).toBe('permanent');
  });

  it('never shows the API key in an error, its JSON or the inspected client', async () => {
    const secret = 'sk-very-secret-9d1e77';
    const client = clientFor(sim, secret);
    const err = await failure(client.searchEnterprise(name));
    const shown = [
      err.message,
      JSON.stringify(err),
      inspect(err, { depth: 10 }),
      inspect(client),
      JSON.stringify(client),
    ];
    for (const text of shown) expect(text).not.toContain(secret);
  });
});

describe('the simulator HTTP surface', () => {
  let sim: RunningSimulator;
  beforeAll(async () => {
    sim = await startTestSim();
  });
  afterAll(() => sim.close());

  it('answers invalid_parameter for a blank or too long ent_name', async () => {
    for (const value of ['', '%20%20', 'a'.repeat(101)]) {
      const r = await rawGet(sim, `/v1/enterprise-search?ent_name=${value}`);
      expect(r.json).toMatchObject({ status: 'error', error: { code: 'invalid_parameter' } });
    }
  });

  it('reads parameters from a url-encoded body as well as the query string', async () => {
    const name = sim.sim.world().all()[3]?.ENTNAME ?? '';
    const { request } = await import('node:http');
    const body = `ent_name=${encodeURIComponent(name)}`;
    const text = await new Promise<string>((resolve, reject) => {
      const req = request(
        `${sim.url}/v1/enterprise-search`,
        {
          method: 'GET',
          headers: {
            Authorization: `Bearer ${TEST_KEY}`,
            'Content-Type': 'application/x-www-form-urlencoded',
            'Content-Length': Buffer.byteLength(body),
          },
        },
        (res) => {
          let out = '';
          res.on('data', (c) => {
            out += c;
          });
          res.on('end', () => resolve(out));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    expect(JSON.parse(text)).toMatchObject({ status: 'success', metadata: { content: { ENTNAME: name } } });
  });

  it('answers the product-listing codes: missing_parameters, invalid_date, both parameters, bad limit', async () => {
    expect((await rawGet(sim, '/v1/product-listing')).json).toMatchObject({
      error: { code: 'missing_parameters' },
    });
    expect((await rawGet(sim, '/v1/product-listing?date=2026-1-1')).json).toMatchObject({
      error: { code: 'invalid_date' },
    });
    expect((await rawGet(sim, '/v1/product-listing?date=2026-02-30')).json).toMatchObject({
      error: { code: 'invalid_date' },
    });
    expect((await rawGet(sim, '/v1/product-listing?date=2026-11-18&product_name=x')).json).toMatchObject({
      error: { code: 'invalid_parameter' },
    });
    expect((await rawGet(sim, '/v1/product-listing?date=2026-11-18&limit=21')).json).toMatchObject({
      error: { code: 'invalid_parameter' },
    });
  });

  it('returns the default number of items when no limit is given, and ignores limit with product_name', async () => {
    const r = await rawGet(sim, '/v1/product-listing?date=2026-11-18');
    expect((r.json as { metadata: unknown[] }).metadata).toHaveLength(10);
  });

  it('returns an empty list for a day that has not begun', async () => {
    const r = await rawGet(sim, '/v1/product-listing?date=2027-06-01&limit=5');
    expect(r.json).toMatchObject({ result: 'success', metadata: [], markdown: [] });
  });
});

describe('configurable gaps of the spec', () => {
  it('can answer every error with HTTP 200 and the client still reads the error body', async () => {
    const sim = await startTestSim({ errorStatus: '200' });
    try {
      const r = await rawGet(sim, '/v1/enterprise-search?ent_name=');
      expect(r.status).toBe(200);
      const err = await failure(clientFor(sim).searchEnterprise('Zzyzx Qwv Nothing Like It'));
      expect(err).toBeInstanceOf(NotFoundError);
      expect(err.response?.httpStatus).toBe(200);
      const dateErr = await failure(clientFor(sim).getProduct('none such'));
      expect(dateErr).toBeInstanceOf(InvalidProductNameError);
    } finally {
      await sim.close();
    }
  });

  it('can use another code for date with product_name and clamp a bad limit', async () => {
    const sim = await startTestSim({
      bothParamsCode: 'missing_parameters',
      badLimitCode: 'clamp',
      defaultLimit: 20,
    });
    try {
      expect((await rawGet(sim, '/v1/product-listing?date=2026-11-18&product_name=x')).json).toMatchObject({
        error: { code: 'missing_parameters' },
      });
      const r = await rawGet(sim, '/v1/product-listing?date=2026-11-18&limit=50');
      expect((r.json as { metadata: unknown[] }).metadata.length).toBeLessThanOrEqual(20);
      const all = await rawGet(sim, '/v1/product-listing?date=2026-11-18');
      expect((all.json as { metadata: unknown[] }).metadata.length).toBeGreaterThan(10);
    } finally {
      await sim.close();
    }
  });

  it('maps each documented error code to its typed error', async () => {
    const sim = await startTestSim();
    try {
      const c = clientFor(sim);
      expect(await failure(c.searchEnterprise('Zzyzx Qwv Nothing'))).toBeInstanceOf(NotFoundError);
      const raw = await rawGet(sim, '/v1/enterprise-search?ent_name=%20');
      expect(raw.json).toMatchObject({ error: { code: 'invalid_parameter' } });
      expect(await failure(c.getProduct('not a product'))).toBeInstanceOf(InvalidProductNameError);
      sim.sim.setCredits(TEST_KEY, 2);
      const credits = await failure(c.searchEnterprise(sim.sim.world().all()[0]?.ENTNAME ?? ''));
      expect(credits).toBeInstanceOf(InsufficientCreditsError);
      expect(credits.errorClass).toBe('budget');
      expect(await balanceOf(sim)).toBe(2);
    } finally {
      await sim.close();
    }
  });
});

describe('the rate limit', () => {
  it('refuses the 101st enterprise request within a minute from one key, with Retry-After, at no charge', async () => {
    const sim = await startTestSim();
    try {
      const c = clientFor(sim);
      const before = await balanceOf(sim);
      const results = [];
      for (let i = 0; i < 100; i++) results.push(await failure(c.searchEnterprise(`Zzyzx Qwv Nothing ${i}`)));
      expect(results.every((e) => e instanceof NotFoundError)).toBe(true);
      const name = sim.sim.world().all()[0]?.ENTNAME ?? '';
      const err = await failure(c.searchEnterprise(name));
      expect(err).toBeInstanceOf(RateLimitedError);
      expect(err.errorClass).toBe('transient');
      expect((err as RateLimitedError).retryAfterMs).toBeGreaterThan(0);
      expect((err as RateLimitedError).retryAfterMs).toBeLessThanOrEqual(60_000);
      expect(err.response?.httpStatus).toBe(429);
      expect(await balanceOf(sim)).toBe(before);
      expect(sim.sim.counters.rateLimited['enterprise-search']).toBe(1);
      // The product operation has its own window.
      await clientFor(sim).listProducts('2026-11-18', 1);
    } finally {
      await sim.close();
    }
  });

  it('counts each key separately', async () => {
    const sim = await startTestSim({
      rateLimits: { 'enterprise-search': 2, 'product-listing': 100 },
      keys: new Map([
        [TEST_KEY, 100],
        ['sk-other', 100],
      ]),
    });
    try {
      await failure(clientFor(sim).searchEnterprise('Zzyzx 1'));
      await failure(clientFor(sim).searchEnterprise('Zzyzx 2'));
      expect(await failure(clientFor(sim).searchEnterprise('Zzyzx 3'))).toBeInstanceOf(RateLimitedError);
      expect(await failure(clientFor(sim, 'sk-other').searchEnterprise('Zzyzx 3'))).toBeInstanceOf(
        NotFoundError,
      );
    } finally {
      await sim.close();
    }
  });
});

describe('fault injection maps to the right error class', () => {
  const cases: [string, new (...args: never[]) => UpstreamError][] = [
    ['500', ServerError],
    ['502', ServerError],
    ['503', ServerError],
    ['reset', NetworkError],
    ['timeout', TimeoutError],
    ['html', MalformedBodyError],
    ['truncated', MalformedBodyError],
    ['error200', UnknownErrorCodeError],
  ];
  let sim: RunningSimulator;
  beforeAll(async () => {
    sim = await startTestSim();
  });
  afterAll(() => sim.close());

  for (const [kind, errorClass] of cases) {
    it(`${kind} → ${errorClass.name} (transient), with what arrived kept`, async () => {
      sim.sim.setFaults({ rates: { [kind]: 1 }, latencyMs: [0, 0] });
      const name = sim.sim.world().all()[1]?.ENTNAME ?? '';
      const err = await failure(clientFor(sim, TEST_KEY, 600).searchEnterprise(name));
      expect(err).toBeInstanceOf(errorClass);
      expect(err.errorClass).toBe('transient');
      if (kind !== 'reset' && kind !== 'timeout') expect(err.response?.bodyText?.length).toBeGreaterThan(0);
    });
  }

  it('gateway faults are never billed; a truncated answer was billed, as a real service would', async () => {
    const name = sim.sim.world().all()[1]?.ENTNAME ?? '';
    sim.sim.setFaults({ rates: { '503': 1 }, latencyMs: [0, 0] });
    const before = await balanceOf(sim);
    await failure(clientFor(sim).searchEnterprise(name));
    expect(await balanceOf(sim)).toBe(before);
    sim.sim.setFaults({ rates: { truncated: 1 }, latencyMs: [0, 0] });
    await failure(clientFor(sim).searchEnterprise(name));
    expect(await balanceOf(sim)).toBe(before - 3);
  });

  it('trickle → TimeoutError with the first bytes kept: billed by the simulator, presumed billed by daybook', async () => {
    const name = sim.sim.world().all()[2]?.ENTNAME ?? '';
    sim.sim.setFaults({ rates: { trickle: 1 }, latencyMs: [0, 0] });
    const before = await balanceOf(sim);
    const err = await failure(clientFor(sim, TEST_KEY, 600).searchEnterprise(name));
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err.response?.httpStatus).toBe(200);
    expect(err.response?.bodyText).toMatch(/^\{/);
    expect(presumedBillingOf(err)).not.toBeNull();
    expect(await balanceOf(sim)).toBe(before - 3);
    sim.sim.setFaults({ rates: {}, latencyMs: [0, 0] });
  });

  it('latency delays the answer but it still arrives', async () => {
    sim.sim.setFaults({ rates: { latency: 1 }, latencyMs: [150, 150] });
    const started = Date.now();
    const { data } = await clientFor(sim).listProducts('2026-11-18', 2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(data.metadata).toHaveLength(2);
  });

  it('format drift still parses: REGCAP as text, OPTO as words, unknown fields kept', async () => {
    sim.sim.setFaults({ rates: { drift: 1 }, latencyMs: [0, 0] });
    const seen = new Set<string>();
    for (const e of sim.sim.world().all().slice(10, 40)) {
      const { data } = await clientFor(sim).searchEnterprise(e.ENTNAME);
      const c = data.metadata.content as Record<string, unknown>;
      if (typeof c.REGCAP === 'string') seen.add('regcap');
      if ('ENTNAME_EN' in c) seen.add('extra');
      if (!('HISTORYNAME' in c) || !('participants' in c) || !('SCONFORM' in c)) seen.add('missing');
    }
    expect([...seen].sort()).toEqual(['extra', 'missing', 'regcap']);
    sim.sim.setFaults({ rates: {}, latencyMs: [0, 0] });
  });

  it('decides faults deterministically from the seed and the request', async () => {
    const outcomes = async () => {
      const s = await startTestSim();
      s.sim.setFaults({ rates: { '503': 0.5 }, latencyMs: [0, 0] });
      const seen: string[] = [];
      for (let i = 0; i < 12; i++) {
        try {
          await clientFor(s).listProducts('2026-11-18', 1);
          seen.push('ok');
        } catch (err) {
          seen.push((err as Error).name);
        }
      }
      await s.close();
      return seen;
    };
    const a = await outcomes();
    expect(a).toEqual(await outcomes());
    expect(a).toContain('ok');
    expect(a).toContain('ServerError');
  });
});

describe('errors from other mistakes', () => {
  it('an unreachable upstream is a transient network error', async () => {
    const sim = await startTestSim();
    const url = sim.url;
    await sim.close();
    const { UpstreamClient } = await import('../../src/upstream/client.ts');
    const err = await failure(
      new UpstreamClient({ baseUrl: url, apiKey: TEST_KEY }).listProducts('2026-11-18'),
    );
    expect(err).toBeInstanceOf(NetworkError);
    expect(err.errorClass).toBe('transient');
  });

  it('classes are permanent, budget or transient as docs/upstream.md says', () => {
    const request = { operation: 'enterprise-search' as const, params: {} };
    expect(new InvalidParameterError('x', request, null).errorClass).toBe('permanent');
    expect(new InvalidDateError('x', request, null).errorClass).toBe('permanent');
    expect(new MissingParametersError('x', request, null).errorClass).toBe('permanent');
    expect(new InsufficientCreditsError('x', request, null).errorClass).toBe('budget');
    expect(new RateLimitedError('x', request, null, null).errorClass).toBe('transient');
  });
});
