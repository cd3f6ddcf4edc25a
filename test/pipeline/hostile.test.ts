/**
 * A hostile upstream of our own, one keyword per behaviour a real provider could show. For every
 * case: the run ends within a bound, the ledger equals what this upstream billed, nothing is bought
 * twice in the cycle, the key is in none of the stores, and a rebuild succeeds.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobDeps } from '../../jobs/deps.ts';
import { loadConfig } from '../../src/config/config.ts';
import { rebuild } from '../../src/history/rebuild.ts';
import { createLogger } from '../../src/log/log.ts';
import { secretMatcher } from '../../src/log/redact.ts';
import { BEYOND_INT32, UNSTORABLE } from '../../src/normalize/drift.ts';
import { type InlineSummary, runInline } from '../../src/runtime/inline.ts';
import { UpstreamClient } from '../../src/upstream/client.ts';
import { keywordKey } from '../../src/watch/keyword.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';
import { fastLimiter } from '../support/inline.ts';
import { sampleEnterpriseRecord } from '../support/records.ts';

const KEY = 'sk-hostile-7f3a9c2e5b';
const CYCLE = '2026-11-20';
const TIMEOUT_MS = 1500;
const MAX_BODY = 4 * 1024 * 1024;

const success = (keyword: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    status: 'success',
    markdown: '# x',
    metadata: {
      usage: { credits: 3, remark: 'q' },
      content: sampleEnterpriseRecord({ PID: `pid-${keyword}`, ...extra }),
    },
  });

/** `text` encoded in GBK (node has no GBK encoder: the CJK of the record is mapped by hand). */
function gbkBytes(text: string): Buffer {
  const table = new Map<string, number[]>();
  // Every GBK double byte, decoded once, gives the encoder's table for the characters we need.
  const decoder = new TextDecoder('gbk');
  const wanted = new Set([...text].filter((c) => c.charCodeAt(0) > 0x7f));
  for (let hi = 0x81; hi <= 0xfe && table.size < wanted.size; hi++) {
    for (let lo = 0x40; lo <= 0xfe; lo++) {
      const c = decoder.decode(Uint8Array.of(hi, lo));
      if (wanted.has(c) && !table.has(c)) table.set(c, [hi, lo]);
    }
  }
  const out: number[] = [];
  for (const c of text) out.push(...(table.get(c) ?? [...Buffer.from(c, 'latin1')]));
  return Buffer.from(out);
}

type Behaviour = (req: IncomingMessage, res: ServerResponse, bill: () => void) => void;

/**
 * A body made once, on first use (the tests make them all before the run): made at request time,
 * in this process, the large ones held up the event loop, the client's timer with it, and on a
 * busy machine long enough for its timeout to fire before the limit the answer is there to test.
 */
const madeOnce = <T>(make: () => T): (() => T) => {
  let made: T | undefined;
  return () => {
    made ??= make();
    return made;
  };
};
/** 40 MB of JSON-looking text, gzipped (about 40 KB). */
const gzipBomb = madeOnce(() =>
  gzipSync(
    Buffer.concat([Buffer.from(success('gzip-bomb').slice(0, 60)), Buffer.alloc(40 * 1024 * 1024, 0x61)]),
  ),
);
/** Objects nested 30,000 deep. */
const deepBody = madeOnce(() => {
  const nest = `${'{"a":'.repeat(30_000)}1${'}'.repeat(30_000)}`;
  return success('deep').replace('"OPSCOPE"', `"DEEP":${nest},"OPSCOPE"`);
});
/** 40,000 persons. */
const manyPersonsBody = madeOnce(() => {
  const persons = Array.from({ length: 40_000 }, (_, i) => ({ NAME: `人${i}`, POSITION: '监事' }));
  return success('many-persons', { PERSONS: persons });
});

/** keyword → what the upstream does; `bill()` counts a billed answer. */
const BEHAVIOURS: Record<string, Behaviour> = {
  plain: (_q, res, bill) => {
    bill();
    res.setHeader('content-type', 'application/json');
    res.end(success('plain'));
  },
  'retry-after-a-day': (_q, res) => {
    res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '86400' });
    res.end(
      JSON.stringify({ status: 'error', error: { code: 'rate_limit_exceeded', message: 'slow down' } }),
    );
  },
  'gzip-bomb': (_q, res, bill) => {
    bill();
    res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
    res.end(gzipBomb());
  },
  'slow-body': (_q, res, bill) => {
    bill();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write(success('slow-body').slice(0, 80));
    const t = setInterval(() => res.write(' '), 200);
    res.on('close', () => clearInterval(t));
    setTimeout(() => {
      clearInterval(t);
      res.end();
    }, 20_000).unref();
  },
  truncated: (_q, res, bill) => {
    bill();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write(success('truncated').slice(0, 120));
    setTimeout(() => res.destroy(), 20);
  },
  // A 200 that began as a success, then one byte every 200 ms, far past any timeout. The rest of
  // "success" comes spelled in escapes (`\u0063`…, as JSON allows), so no part that arrives in time
  // says "success" in full: only the rule for a body that began to arrive books it.
  trickle: (_q, res, bill) => {
    bill();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"status":"suc');
    const rest = `\\u0063\\u0065\\u0073\\u0073${success('trickle').slice('{"status":"success'.length)}`;
    let at = 0;
    const t = setInterval(() => res.write(rest[at++] ?? ' '), 200);
    res.on('close', () => clearInterval(t));
    setTimeout(() => res.destroy(), 60_000).unref();
  },
  gbk: (_q, res, bill) => {
    bill();
    res.writeHead(200, { 'content-type': 'application/json; charset=GBK' });
    res.end(gbkBytes(success('gbk')));
  },
  // Answers daybook lands and books, then cannot apply: failed for the cycle, not bought again.
  'nul-in-name': (_q, res, bill) => {
    bill();
    res.setHeader('content-type', 'application/json');
    res.end(success('nul-in-name', { ENTNAME: '上海\u0000示例' }));
  },
  // Text Postgres refuses, numbers no double holds, keys that are object internals: kept, marked.
  'nul-in-scope': (_q, res, bill) => {
    bill();
    res.setHeader('content-type', 'application/json');
    const persons = [{ NAME: '王\u0000五', POSITION: '董事', 'NOTE\u0000': 'k' }];
    res.end(success('nul-in-scope', { OPSCOPE: '软件开发\u0000；技术服务', PERSONS: persons }));
  },
  'lone-surrogate': (_q, res, bill) => {
    bill();
    res.setHeader('content-type', 'application/json');
    // JSON escapes of half a surrogate pair: valid JSON, text no database can hold.
    res.end(
      success('lone-surrogate', { HISTORYNAME: 'H', NICK: 'N' })
        .replace('"HISTORYNAME":"H"', '"HISTORYNAME":"旧名\\ud800"')
        .replace('"NICK":"N"', '"NICK":{"deep":["ok","\\udc00x"]}'),
    );
  },
  'thirty-digits': (_q, res, bill) => {
    bill();
    res.setHeader('content-type', 'application/json');
    res.end(
      success('thirty-digits', { REGCAPCUR: '万元人民币' }).replace(
        /"REGCAP":[^,]+,/,
        '"REGCAP":123456789012345678901234567890,"RATIO":0.1000000000000000055511151231257827,"TINY":1e-400,"HUGE_IN":{"v":[1e400]},',
      ),
    );
  },
  'exponent-capital': (_q, res, bill) => {
    bill();
    res.setHeader('content-type', 'application/json');
    res.end(success('exponent-capital').replace(/"REGCAP":[^,]+,/, '"REGCAP":1.5E+3,'));
  },
  'proto-key': (_q, res, bill) => {
    bill();
    res.setHeader('content-type', 'application/json');
    res.end(
      success('proto-key').replace(
        '"ENTNAME"',
        '"__proto__":{"polluted":true},"constructor":"c","toString":1,"hasOwnProperty":[1],"ENTNAME"',
      ),
    );
  },
  'long-pid': (_q, res, bill) => {
    bill();
    res.setHeader('content-type', 'application/json');
    res.end(
      success('long-pid').replace('"pid-long-pid"', JSON.stringify(`p${randomBytes(4500).toString('hex')}`)),
    );
  },
  deep: (_q, res, bill) => {
    bill();
    res.setHeader('content-type', 'application/json');
    res.end(deepBody());
  },
  'many-persons': (_q, res, bill) => {
    bill();
    res.setHeader('content-type', 'application/json');
    res.end(manyPersonsBody());
  },
  // Values that must come in exactly.
  'big-number': (_q, res, bill) => {
    bill();
    res.setHeader('content-type', 'application/json');
    res.end(
      success('big-number').replace(
        /"REGCAP":[^,]+,/,
        '"REGCAP":1e400,"BIG_ID":123456789012345678901234567890,',
      ),
    );
  },
  'invalid-utf8': (_q, res, bill) => {
    bill();
    res.setHeader('content-type', 'application/json; charset=utf-8');
    // Two bytes that are no UTF-8 in place of the first 技 of the name.
    const body = Buffer.from(success('invalid-utf8'));
    const at = body.indexOf(Buffer.from('技'));
    res.end(Buffer.concat([body.subarray(0, at), Buffer.from([0xff, 0xfe]), body.subarray(at + 3)]));
  },
  'echo-key-escaped': (req, res) => {
    const key = String(req.headers.authorization).replace(/^Bearer /, '');
    const escaped = [...key].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
    res.writeHead(401, { 'content-type': 'application/json' });
    // The escapes stay escapes in the JSON text; parsed, they would be the key itself.
    res.end(
      `{"status":"error","error":{"code":"unauthorized","message":"bad key ${escaped} (${Buffer.from(key).toString('base64')})"}}`,
    );
  },
};

/** What the jobs run with against the upstream at `url`: short backoff, three tries, the test's bounds. */
function depsFor(t: TestDatabase, url: string): Omit<JobDeps, 'enqueue'> {
  const config = loadConfig(
    {
      DATABASE_URL: t.url,
      DAYBOOK_API_BASE_URL: url,
      DAYBOOK_API_KEY: KEY,
      DAYBOOK_RETRY_BASE_MS: '10',
      DAYBOOK_RETRY_ATTEMPTS: '3',
      LOG_LEVEL: 'silent',
    },
    '/nonexistent',
  );
  return {
    sql: t.sql,
    client: new UpstreamClient({ baseUrl: url, apiKey: KEY, timeoutMs: TIMEOUT_MS, maxBodyBytes: MAX_BODY }),
    limiter: fastLimiter(t.sql),
    config,
    log: createLogger({ level: 'silent' }),
    now: () => new Date(),
  };
}

describe('a hostile upstream', { timeout: 120_000 }, () => {
  let t: TestDatabase;
  let server: Server;
  let url: string;
  const billed: Record<string, number> = {};
  let summary: InlineSummary;
  let productCalls = 0;
  let deps: Omit<JobDeps, 'enqueue'>;
  /** How long each enterprise request was held open, from its arrival to its connection's end. */
  const held: { keyword: string; ms: number }[] = [];
  let wallMs = 0;

  beforeAll(async () => {
    t = await freshDatabase();
    server = createServer((req, res) => {
      const u = new URL(req.url ?? '/', 'http://x');
      if (u.pathname.endsWith('/product-listing')) {
        // A day's list where one comment holds a NUL character.
        productCalls++;
        const product = {
          id: '0b6f7a5e-1111-4a4a-9b9b-222222222222',
          product_id: '901',
          name: 'NulNotes',
          votes_count: 5,
          comments_count: 1,
          comments: [{ body: 'nice\u0000tool', created_at: '2026-11-18T10:00:00Z' }],
        };
        const big = {
          ...product,
          id: '0b6f7a5e-3333-4a4a-9b9b-444444444444',
          product_id: '902',
          name: 'BigVotes',
        };
        res.setHeader('content-type', 'application/json');
        res.end(
          `{"result":"success","markdown":["# NulNotes"],"metadata":[${JSON.stringify(product).replace('\\\\u0000', '\\u0000')},${JSON.stringify({ ...big, comments: [] }).replace('"votes_count":5', '"votes_count":3000000000')}]}`,
        );
        return;
      }
      const keyword = u.searchParams.get('ent_name') ?? '';
      const b = BEHAVIOURS[keyword];
      if (!b) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ status: 'error', error: { code: 'not_found', message: 'none' } }));
        return;
      }
      const arrived = Date.now();
      res.on('close', () => held.push({ keyword, ms: Date.now() - arrived }));
      b(req, res, () => {
        billed[keyword] = (billed[keyword] ?? 0) + 1;
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const address = server.address();
    url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    const keywords = Object.keys(BEHAVIOURS);
    await t.sql`insert into watchlist ${t.sql(keywords.map((k, i) => ({ keyword: k, keyword_key: keywordKey(k), priority: k === 'retry-after-a-day' ? -1 : 100 - i })))}`;
    deps = depsFor(t, url);
    for (const made of [gzipBomb, deepBody, manyPersonsBody]) made();
    // One at a time, in priority order: the day-long Retry-After comes last and pauses the cycle.
    // Some seconds on an idle machine, a minute on a busy one: the hook's timeout is a hang guard.
    const started = Date.now();
    summary = await runInline(deps, { cycle: CYCLE, only: 'enterprises', concurrency: 1 });
    wallMs = Date.now() - started;
  }, 300_000);
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await t.drop();
  });

  it('ends within a bound: no answer stalls the run', () => {
    // Each request is let go at the client's timeout (TIMEOUT_MS): the answers that stall would
    // hold theirs for 20 s (slow-body) or 60 s (trickle). Bounded per request, not for the whole
    // run, so a busy machine, which makes the run slower, does not make it fail.
    expect(held.length).toBeGreaterThanOrEqual(Object.keys(BEHAVIOURS).length);
    const longest = held.reduce((a, h) => (h.ms > a.ms ? h : a));
    expect(longest.ms, JSON.stringify(longest)).toBeLessThan(10_000);
    expect(summary.enterprises.succeeded).toBeGreaterThanOrEqual(1);
  });

  it('books exactly what the upstream billed, and buys nothing twice in the cycle', async () => {
    const ledger = await t.sql<{ keyword: string; n: number; credits: number }[]>`
      select keyword, count(*)::int as n, sum(credits)::int as credits from credit_ledger
      where status = 'booked' group by keyword order by keyword`;
    const expected = Object.entries(billed)
      .map(([keyword, n]) => ({ keyword, n, credits: 3 * n }))
      .sort((a, b) => a.keyword.localeCompare(b.keyword));
    expect(ledger).toEqual(expected);
    for (const n of Object.values(billed)) expect(n).toBe(1);
    const [presumed] = await t.sql<
      { n: number }[]
    >`select count(*)::int as n from credit_ledger where status = 'presumed'`;
    expect(presumed?.n).toBe(0);
    const [landed] = await t.sql<{ n: number }[]>`
      select count(distinct r.id)::int as n from raw_answers r join credit_ledger l on l.raw_response_id = r.id`;
    // Stored: billed answers whose content reached history (a version or an observation).
    const [stored] = await t.sql<{ n: number }[]>`
      select count(distinct l.raw_response_id)::int as n from credit_ledger l
      where exists (select 1 from enterprise_observations o where o.raw_response_id = l.raw_response_id)`;
    console.log(
      `[hostile] ${Object.keys(BEHAVIOURS).length} behaviours: answers billed ${Object.values(billed).reduce((a, b) => a + b, 0)}, landed ${landed?.n}, booked ${ledger.reduce((a, l) => a + l.n, 0)}, bought twice ${Object.values(billed).filter((n) => n > 1).length}, stored in history ${stored?.n} (the rest: cut off, too large, too deep or too many persons), hung 0 (longest request ${Math.round(Math.max(...held.map((h) => h.ms)) / 100) / 10} s, whole run ${Math.round(wallMs / 100) / 10} s)`,
    );
  });

  it('reports each billed answer it could not use as a failure of its entry for the cycle, with the reason', async () => {
    const rows = await t.sql<
      { keyword: string; status: string; error_code: string | null; error_message: string | null }[]
    >`
      select w.keyword, f.status, f.error_code, f.error_message from cycle_fetches f join watchlist w on w.id = f.watch_id
      order by w.keyword`;
    const of = (k: string) => rows.find((r) => r.keyword === k);
    expect(of('plain')?.status).toBe('succeeded');
    expect(of('gzip-bomb')).toMatchObject({ status: 'failed', error_code: 'body_too_large' });
    expect(of('slow-body')).toMatchObject({ status: 'failed', error_code: 'timeout' });
    expect(of('slow-body')?.error_message).toMatch(/billed, not usable, not bought again this cycle/);
    expect(of('truncated')).toMatchObject({ status: 'failed', error_code: 'network_error' });
    expect(of('echo-key-escaped')).toMatchObject({ status: 'failed', error_code: 'unauthorized' });
    // Nested deeper than daybook reads: refused before anything walks it, billed, not bought again.
    expect(of('deep')).toMatchObject({ status: 'failed', error_code: 'body_too_deep' });
    expect(of('deep')?.error_message).toMatch(/nested \d+ levels deep, more than the 64 daybook reads/);
    for (const k of ['long-pid', 'many-persons']) {
      expect(of(k), k).toMatchObject({ status: 'failed', error_code: 'unusable_answer' });
      expect(of(k)?.error_message).toMatch(/^billed, landed \(raw response \d+\), not applicable: /);
    }
    // Kept, not refused: text Postgres refuses, numbers no double holds, object-internal keys.
    for (const k of [
      'nul-in-name',
      'nul-in-scope',
      'lone-surrogate',
      'big-number',
      'thirty-digits',
      'exponent-capital',
      'proto-key',
    ])
      expect(of(k), `${k}: ${of(k)?.error_message}`).toMatchObject({ status: 'succeeded' });
    expect(of('invalid-utf8'), JSON.stringify(of('invalid-utf8'))).toMatchObject({ status: 'succeeded' });
    expect(of('invalid-utf8')?.status).toBe('succeeded');
  });

  it('books a 200 that trickled past the timeout once, presumed billed, and does not buy it again', async () => {
    expect(billed.trickle).toBe(1);
    const [fetch] = await t.sql<{ status: string; error_code: string; error_message: string }[]>`
      select f.status, f.error_code, f.error_message from cycle_fetches f join watchlist w on w.id = f.watch_id
      where w.keyword = 'trickle' and f.cycle = ${CYCLE}`;
    expect(fetch).toMatchObject({ status: 'failed', error_code: 'timeout' });
    expect(fetch?.error_message).toMatch(/^presumed billed, not usable, not bought again this cycle: /);
    const ledger = await t.sql`select credits, status, remark from credit_ledger where keyword = 'trickle'`;
    expect(ledger).toEqual([
      {
        credits: 3,
        status: 'booked',
        remark: expect.stringMatching(
          /^a success cut off by the timeout after its first \d+ bytes; presumed billed/,
        ),
      },
    ]);
  });

  it('pauses the cycle, saying why, rather than wait a day for a Retry-After', async () => {
    const [budget] = await t.sql<{ paused_reason: string | null }[]>`
      select paused_reason from cycle_budgets where cycle = ${CYCLE}`;
    expect(budget?.paused_reason).toMatch(/asked to wait 86400 s \(Retry-After\)/);
  });

  it('lands every billed answer exactly as received: numbers to the last digit, bytes as sent', async () => {
    const [big] = await t.sql<{ regcap: string; id: string }[]>`
      select body_json#>>'{metadata,content,REGCAP}' as regcap, body_json#>>'{metadata,content,BIG_ID}' as id
      from raw_answers where params->>'ent_name' = 'big-number'`;
    expect(big?.regcap).toBe(`1${'0'.repeat(400)}`);
    expect(big?.id).toBe('123456789012345678901234567890');
    const [bad] = await t.sql<{ bytes: Buffer }[]>`
      select body_bytes as bytes from raw_answers where params->>'ent_name' = 'invalid-utf8'`;
    expect(bad?.bytes.includes(Buffer.from([0xff, 0xfe]))).toBe(true);
    const [gbk] = await t.sql<{ bytes: Buffer | null; text: string | null }[]>`
      select body_bytes as bytes, body_json->>'status' as text from raw_answers where params->>'ent_name' = 'gbk'`;
    expect(gbk?.bytes?.length).toBeGreaterThan(0);
    expect(gbk?.text).toBe('success');
    // Every billed answer landed, the ones daybook could not apply included.
    const landed = await t.sql<{ k: string }[]>`
      select distinct params->>'ent_name' as k from raw_answers r join credit_ledger l on l.raw_response_id = r.id`;
    expect(landed.map((r) => r.k).sort()).toEqual(Object.keys(billed).sort());
  });

  it('reports bytes that are not UTF-8 text, and numbers no double holds, as format drift', async () => {
    const drift = await t.sql<{ field: string; seen: string; responses: number }[]>`
      select field, seen, responses from analytics.format_drift where field in ('$body', 'REGCAP') order by field, seen`;
    expect(drift).toEqual([
      { field: '$body', seen: 'bytes that are not UTF-8 text (kept in body_bytes)', responses: 2 },
      { field: 'REGCAP', seen: 'non-finite number', responses: 1 },
    ]);
    // What storable() changed, one row per field and kind of change, with how many answers.
    const changed = await t.sql<{ field: string; seen: string; responses: number }[]>`
      select field, seen, responses from analytics.format_drift
      where seen like '%Postgres cannot store%' or seen like '%beyond%' order by field, seen`;
    expect(changed).toEqual([
      { field: 'ENTNAME', seen: UNSTORABLE.text, responses: 1 },
      { field: 'HISTORYNAME', seen: UNSTORABLE.text, responses: 1 },
      { field: 'HUGE_IN.v[]', seen: UNSTORABLE.number, responses: 1 },
      { field: 'NICK.deep[]', seen: UNSTORABLE.text, responses: 1 },
      { field: 'OPSCOPE', seen: UNSTORABLE.text, responses: 1 },
      { field: 'PERSONS[].NAME', seen: UNSTORABLE.text, responses: 1 },
      { field: 'PERSONS[].NOTE\uFFFD', seen: UNSTORABLE.key, responses: 1 },
    ]);
  });

  it('stores every answer it kept: exact numbers, marked text, every key', async () => {
    const rows = await t.sql<
      {
        pid: string;
        ent_name: string;
        history_name: string | null;
        op_scope: string | null;
        reg_cap: string | null;
        capital_amount: string | null;
        extra: string;
      }[]
    >`
      select e.pid, v.ent_name, v.history_name, v.op_scope, v.reg_cap::text, v.capital_amount::text, v.extra::text
      from enterprises e join enterprise_versions v on v.id = e.current_version_id order by e.pid`;
    const of = (k: string) => rows.find((r) => r.pid === `pid-${k}`);
    expect(of('nul-in-name')?.ent_name).toBe('上海\uFFFD示例');
    expect(of('nul-in-scope')?.op_scope).toBe('软件开发\uFFFD；技术服务');
    expect(of('lone-surrogate')?.history_name).toBe('旧名\uFFFD');
    expect(JSON.parse(of('lone-surrogate')?.extra ?? '{}').NICK).toEqual({ deep: ['ok', '\uFFFDx'] });
    // Every digit, and the amount in yuan computed on the digits.
    expect(of('thirty-digits')?.reg_cap).toBe('123456789012345678901234567890');
    expect(of('thirty-digits')?.capital_amount).toBe('1234567890123456789012345678900000');
    expect(of('thirty-digits')?.extra).toContain('"RATIO": 0.1000000000000000055511151231257827');
    expect(of('thirty-digits')?.extra).toContain('"TINY": null');
    expect(of('thirty-digits')?.extra).toContain('"HUGE_IN": {"v": [null]}');
    expect(of('exponent-capital')?.reg_cap).toBe('1500');
    // 1e400 is beyond any column: null, and drift says so (above), never a rounded value.
    expect(of('big-number')?.reg_cap).toBeNull();
    expect(of('big-number')?.extra).toContain('"BIG_ID": 123456789012345678901234567890');
    const extra = JSON.parse(of('proto-key')?.extra ?? '{}');
    expect(Object.keys(extra).sort()).toEqual(['__proto__', 'constructor', 'hasOwnProperty', 'toString']);
    expect(Object.getOwnPropertyDescriptor(extra, '__proto__')?.value).toEqual({ polluted: true });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const [person] = await t.sql<{ name: string; extra: Record<string, string> }[]>`
      select p.name, p.extra from enterprise_persons p join enterprises e on e.current_version_id = p.version_id
      where e.pid = 'pid-nul-in-scope'`;
    expect(person).toEqual({ name: '王\uFFFD五', extra: { 'NOTE\uFFFD': 'k' } });
  });

  it('decodes a body in its declared charset', async () => {
    const [row] = await t.sql<{ ent_name: string }[]>`
      select ent_name from analytics.enterprise_current where pid = 'pid-gbk'`;
    expect(row?.ent_name).toBe('上海示例科技有限公司');
  });

  it('keeps the key out of every store, in any encoding', async () => {
    const matcher = secretMatcher(KEY) as RegExp;
    for (const table of [
      'raw_responses',
      'raw_bodies',
      'runs',
      'cycle_fetches',
      'watchlist',
      'credit_ledger',
      'ledger_subjects',
      'raw_params',
    ]) {
      const rows = await t.sql.unsafe(`select * from ${table}`);
      const text = JSON.stringify(rows);
      expect(text.match(matcher), table).toBeNull();
    }
  });

  it('stores every product of a list whose text or counts Postgres cannot hold as sent, pulled once, landed as received', async () => {
    const r = await runInline(deps, {
      cycle: CYCLE,
      only: 'products',
      concurrency: 1,
      productDates: [{ date: '2026-11-18', pull: 'd1' }],
    });
    expect(r.productPulls).toMatchObject([{ date: '2026-11-18', outcome: 'succeeded' }]);
    expect(productCalls).toBe(1);
    // Every product of the list is stored, the comment with U+FFFD for its NUL, the count beyond
    // 32 bits as null (and as drift).
    const trending = await t.sql<{ name: string; votes: number | null }[]>`
      select p.name, s.votes_count as votes from trending_snapshots s
      join product_versions p on p.product_id = s.product_id and p.is_current order by s.position`;
    expect(trending).toEqual([
      { name: 'NulNotes', votes: 5 },
      { name: 'BigVotes', votes: null },
    ]);
    const comments = await t.sql<{ body: string }[]>`select body from product_comments order by body`;
    expect(comments.map((c) => c.body)).toEqual(['nice\uFFFDtool']);
    const drift = await t.sql<{ field: string; seen: string }[]>`
      select field, seen from analytics.format_drift where operation = 'product-listing' order by field`;
    expect(drift).toEqual(
      expect.arrayContaining([
        { field: 'comments[].body', seen: UNSTORABLE.text },
        { field: 'votes_count', seen: BEYOND_INT32 },
      ]),
    );
    const [raw] = await t.sql<{ text: string | null }[]>`
      select body_text as text from raw_answers where operation = 'product-listing'`;
    expect(raw?.text).toContain('nice\\u0000tool');
  });

  it('rebuilds afterwards, keeping every event', async () => {
    const versions = () =>
      t.sql`select e.pid, v.ent_name, v.op_scope, v.reg_cap::text, v.extra::text from enterprises e
            join enterprise_versions v on v.pid = e.pid order by e.pid, v.version`;
    const before = await t.sql`select pid, kind from enterprise_observations order by pid, kind`;
    const versionsBefore = await versions();
    const productsBefore = await t.sql`select body from product_comments order by body`;
    await rebuild(t.sql);
    expect(await t.sql`select pid, kind from enterprise_observations order by pid, kind`).toEqual(before);
    // The kept answers come back the same: marked text, exact numbers, every key.
    expect(await versions()).toEqual(versionsBefore);
    expect(await t.sql`select body from product_comments order by body`).toEqual(productsBefore);
  });
});

describe('an upstream that trickles a billed answer, cycle after cycle', { timeout: 60_000 }, () => {
  const CYCLES = ['2026-11-20', '2026-11-21'];
  let t: TestDatabase;
  let server: Server;
  let calls = 0;
  let billedCalls = 0;
  let deps: Omit<JobDeps, 'enqueue'>;

  beforeAll(async () => {
    t = await freshDatabase();
    server = createServer((req, res) => {
      calls++;
      BEHAVIOURS.trickle?.(req, res, () => {
        billedCalls++;
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const address = server.address();
    const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    await t.sql`insert into watchlist ${t.sql({ keyword: 'trickle', keyword_key: keywordKey('trickle') })}`;
    deps = depsFor(t, url);
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await t.drop();
  });

  it('buys it once a cycle and books it each time: the ledger equals what the upstream billed', async () => {
    for (const [i, cycle] of CYCLES.entries()) {
      const summary = await runInline(deps, { cycle, only: 'enterprises', concurrency: 1 });
      expect(summary.enterprises.failed, cycle).toBe(1);
      // One call in the cycle: the retries of the job did not buy it again.
      expect(calls, cycle).toBe(i + 1);
      expect(billedCalls, cycle).toBe(i + 1);
      const [fetch] = await t.sql<{ status: string; error_message: string }[]>`
        select status, error_message from cycle_fetches where cycle = ${cycle}`;
      expect(fetch?.status, cycle).toBe('failed');
      expect(fetch?.error_message, cycle).toMatch(
        /^presumed billed, not usable, not bought again this cycle/,
      );
      const ledger = await t.sql<{ cycle: string; n: number; credits: number }[]>`
        select cycle::text, count(*)::int as n, sum(credits)::int as credits from credit_ledger
        where status = 'booked' group by cycle order by cycle`;
      expect(ledger).toEqual(CYCLES.slice(0, i + 1).map((c) => ({ cycle: c, n: 1, credits: 3 })));
      const [budget] = await t.sql<{ spent: number; reserved: number }[]>`
        select spent, reserved from cycle_budgets where cycle = ${cycle}`;
      expect(budget).toEqual({ spent: 3, reserved: 0 });
    }
  });
});
