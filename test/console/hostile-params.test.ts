/**
 * Hostile parameters on every route of the admin server, the console's included: NUL and other
 * control characters, noncharacters, lone surrogates, invalid percent-encoding, 10 kB strings,
 * impossible dates, numbers out of range, SQL metacharacters, repeated parameters. No answer is a
 * 5xx, none carries a database's or a program's error text, and a streamed CSV is whole.
 *
 * The routes are read from the server itself (its route table, printed by Fastify), so a route
 * added later is covered without touching this file.
 */
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleReader, openConsoleReader } from '../../src/console/reader.ts';
import { ingestEnterpriseSuccess } from '../../src/history/ingest.ts';
import { createLogger } from '../../src/log/log.ts';
import { buildAdminApp } from '../../src/runtime/admin.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';
import { adminUrl } from '../support/pg-url.ts';
import { type OwnQueues, ownQueues } from '../support/queues.ts';
import { enterpriseAnswer } from '../support/records.ts';

const TOKEN = 'hostile-params-token-5be1';

/** Each hostile value as it goes in the address, already percent-encoded (or deliberately not). */
const HOSTILE: readonly (readonly [string, string])[] = [
  ['NUL', '%00'],
  ['NUL inside', 'a%00b'],
  ['SOH', '%01'],
  ['ESC sequence', '%1B%5B31m'],
  ['DEL', '%7F'],
  ['C1 NEL', '%C2%85'],
  ['CRLF', '%0D%0A'],
  ['U+FFFF', '%EF%BF%BF'],
  ['U+FFFE', '%EF%BF%BE'],
  ['lone surrogate', '%ED%A0%80'],
  ['invalid UTF-8', '%FF'],
  ['overlong slash', '%C0%AF'],
  ['bad percent', '%zz'],
  ['10 kB latin', 'a'.repeat(10_240)],
  ['10 kB chinese', encodeURIComponent('公'.repeat(3_500))],
  ['year 0', '0000-01-01'],
  ['hour 99', '9999-12-31T99'],
  ['February 30', '2026-02-30'],
  ['year 10000', '10000-01-01'],
  ['negative year', '-0001-01-01'],
  ['last day', '9999-12-31'],
  ['negative', '-1'],
  ['below bigint', '-9223372036854775809'],
  ['above bigint', '9223372036854775808'],
  ['huge', '1'.repeat(400)],
  ['exponent', '1e308'],
  ['NaN', 'NaN'],
  ['Infinity', 'Infinity'],
  ['hex', '0x10'],
  ['fraction', '1.5'],
  ['empty', ''],
  ['quote', encodeURIComponent("' or 1=1 --")],
  ['statement', encodeURIComponent('"; drop table events; --')],
  ['like wildcards', encodeURIComponent('%_\\')],
  ['placeholder', encodeURIComponent('$1::text')],
  ['wildcard type', encodeURIComponent('*')],
  ['markup', encodeURIComponent('<script>alert(1)</script>')],
];

/** The values sent under each parameter name alone (the rest go under all names at once). */
const SHARPEST = new Set([
  'NUL',
  'ESC sequence',
  'C1 NEL',
  'U+FFFF',
  'lone surrogate',
  'invalid UTF-8',
  '10 kB latin',
  'year 0',
  'hour 99',
  'February 30',
  'below bigint',
  'huge',
  'quote',
  'like wildcards',
]);

/** The company the cycles below write: its page reads `at`. */
const PID = 'p-hostile-1';

/** Every parameter name a route reads, and a few it does not. */
const NAMES = [
  'q',
  'at',
  'date',
  'from',
  'to',
  'pid',
  'severity',
  'category',
  'before',
  'after',
  'limit',
  'type',
  'lang',
  'next',
  'token',
  'id',
  'page',
  'jobsPerPage',
  'status',
  'activeQueue',
  'unknown',
];

/** What no answer may carry: a database's error, a program's, a stack. */
const LEAKS = [
  /invalid byte sequence/i,
  /syntax error/i,
  /out of range/i,
  /violates/i,
  /PostgresError/,
  /\bat .+\.(?:ts|js):\d+/,
  /node_modules/,
  /TypeError|RangeError|ReferenceError/,
  /Cannot read propert/,
  /stack/i,
  /\b22P02\b|\b22021\b|\b22008\b|\b42601\b/,
];

/**
 * The GET routes of the server from its route table (Fastify's printRoutes: a radix tree, each
 * line one more piece of the path under its parent).
 */
function getRoutes(app: FastifyInstance): string[] {
  const out: string[] = [];
  const stack: string[] = [];
  for (const line of app.printRoutes({ method: 'GET' }).split('\n')) {
    const m = /^((?:[│ ] {3})*)[├└]── (.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!m) continue;
    const depth = (m[1] as string).length / 4;
    stack.length = depth;
    stack.push(m[2] as string);
    if (m[3]?.split(', ').includes('GET')) out.push(stack.join(''));
  }
  return out;
}

/** A route's path with each parameter (`:name`, `*`) set to `value` (already encoded). */
function fill(route: string, value: string): string {
  return route.replace(/:[A-Za-z0-9_]+/g, value).replace(/\*$/, value);
}

interface Answer {
  url: string;
  status: number;
  type: string;
  body: string;
}

describe('hostile parameters on every route', { timeout: 600_000 }, () => {
  let db: TestDatabase;
  let q: OwnQueues;
  let reader: ConsoleReader;
  let app: FastifyInstance;
  let base: string;
  const log: string[] = [];

  beforeAll(async () => {
    db = await freshDatabase();
    q = ownQueues('hostile');
    // A company in two cycles, its name changed: a page, a change, events.
    for (const [cycle, name] of [
      ['2026-11-20', '上海示例科技有限公司'],
      ['2026-11-21', '上海示例新科技有限公司'],
    ] as const)
      await ingestEnterpriseSuccess(db.sql, enterpriseAnswer({ PID, ENTNAME: name }), name, {
        runId: null,
        cycle,
      });
    reader = await openConsoleReader(db.sql, db.url, false);
    const destination = new Writable({
      write(chunk, _enc, done) {
        log.push(String(chunk));
        done();
      },
    });
    app = await buildAdminApp({
      sql: db.sql,
      redis: q.redis,
      queues: q.queues,
      console: reader,
      host: '127.0.0.1',
      port: 0,
      token: TOKEN,
      log: createLogger({ level: 'trace', destination, pretty: false }),
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });
  afterAll(async () => {
    await app?.close();
    await reader?.close();
    await q?.remove();
    await db?.drop();
  });

  const get = async (path: string): Promise<Answer> => {
    const res = await fetch(`${base}${path}`, {
      headers: { authorization: `Bearer ${TOKEN}` },
      redirect: 'manual',
    });
    // A stream cut short rejects here: every answer must be whole.
    const body = await res.text();
    return { url: path, status: res.status, type: res.headers.get('content-type') ?? '', body };
  };

  /** Runs `paths` a few at a time; returns every answer. */
  async function getAll(paths: readonly string[]): Promise<Answer[]> {
    const answers: Answer[] = [];
    const queue = [...paths];
    const cut: string[] = [];
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let p = queue.shift(); p !== undefined; p = queue.shift()) {
          try {
            answers.push(await get(p));
          } catch (err) {
            cut.push(`${p}: ${err instanceof Error ? err.message : String(err)}`);
          }
        }
      }),
    );
    expect(cut, 'answers cut short').toEqual([]);
    return answers;
  }

  function problems(answers: readonly Answer[]): string[] {
    const bad: string[] = [];
    for (const a of answers) {
      const shown = a.url.length > 120 ? `${a.url.slice(0, 120)}…` : a.url;
      if (a.status >= 500) bad.push(`${a.status} ${shown}`);
      for (const leak of LEAKS)
        if (leak.test(a.body)) bad.push(`${a.status} ${shown}: carries ${leak} (${a.body.slice(0, 160)})`);
    }
    return bad;
  }

  it('reads the routes from the server, the console, the feed, Bull Board and the CSV among them', () => {
    const routes = getRoutes(app);
    for (const r of [
      '/ui/',
      '/ui/companies',
      '/ui/companies/:pid',
      '/ui/changes.csv',
      '/ui/products/:id',
      '/ui/raw/:id',
      '/events',
      '/metrics',
      '/healthz',
    ])
      expect(routes).toContain(r);
    expect(routes.some((r) => r.startsWith('/queues/api/'))).toBe(true);
  });

  it('answers every hostile query parameter on every route with no 5xx and no error text', async () => {
    const paths: string[] = [];
    for (const route of getRoutes(app)) {
      const path = fill(route, PID);
      // Each parameter alone, so that no other one's 400 hides it: the sharpest values.
      for (const name of NAMES) {
        for (const [label, value] of HOSTILE) if (SHARPEST.has(label)) paths.push(`${path}?${name}=${value}`);
        // Repeated: an array where one value is expected.
        paths.push(`${path}?${name}=a&${name}=b`);
        paths.push(`${path}?${name}=2026-01-01&${name}=%00`);
      }
      // Hostile names.
      for (const name of ['%00', '%ED%A0%80', 'x'.repeat(5_000), 'a[b]', '__proto__', 'constructor'])
        paths.push(`${path}?${name}=1`);
      // Every value, under every name at once.
      for (const [, value] of HOSTILE) paths.push(`${path}?${NAMES.map((n) => `${n}=${value}`).join('&')}`);
    }
    const answers = await getAll(paths);
    expect(answers.length).toBe(paths.length);
    expect(problems(answers)).toEqual([]);
  });

  it('answers every hostile path parameter with no 5xx and no error text', async () => {
    const paths: string[] = [];
    for (const route of getRoutes(app).filter((r) => /:|\*$/.test(r)))
      for (const [, value] of HOSTILE) paths.push(fill(route, value));
    expect(paths.length).toBeGreaterThan(HOSTILE.length * 3);
    const answers = await getAll(paths);
    expect(problems(answers)).toEqual([]);
  });

  it('gives 400 naming the parameter, in the page’s language on the console', async () => {
    const cases: [string, string][] = [
      [`/ui/companies/${PID}?at=0000-01-01`, 'at'],
      [`/ui/companies/${PID}?at=9999-12-31T99`, 'at'],
      [`/ui/companies/${PID}?at=2026-02-30`, 'at'],
      ['/ui/companies?q=a%00b', 'q'],
      [`/ui/companies?q=${'a'.repeat(10_240)}`, 'q'],
      ['/ui/companies/a%00b', 'pid'],
      ['/ui/products/%00', 'id'],
      ['/ui/changes?pid=%00', 'pid'],
      ['/ui/changes?before=-1', 'before'],
      ['/ui/changes?before=99999999999999999999', 'before'],
      ['/ui/changes?from=2026-01-01&from=2026-01-02', 'from'],
      ['/ui/watchlist?after=%01', 'after'],
      ['/ui/products?date=10000-01-01', 'date'],
      ['/ui/raw/-1', 'id'],
    ];
    for (const [path, name] of cases) {
      const a = await get(path);
      expect(a.status, path).toBe(400);
      expect(a.type, path).toMatch(/^text\/html/);
      expect(a.body, path).toContain(`<code>${name}</code>`);
    }
    const zh = await get(`/ui/companies/${PID}?at=2026-02-30&lang=zh`);
    expect(zh.status).toBe(400);
    expect(zh.body).toContain('<html lang="zh-CN">');
    expect(zh.body).toContain('<code>at</code>');
    expect(zh.body).toMatch(/日期/);

    for (const [path, name] of [
      ['/events?type=%00', 'type'],
      ['/events?type=a%25b', 'type'],
      ['/events?after=-1', 'after'],
      ['/events?limit=0', 'limit'],
      ['/events?limit=1&limit=2', 'limit'],
    ] as const) {
      const a = await get(path);
      expect(a.status, path).toBe(400);
      expect(a.type, path).toMatch(/^application\/json/);
      const body = JSON.parse(a.body) as { error: string; request_id: string };
      expect(body.error, path).toContain(name);
      expect(body.request_id, path).toMatch(/^[0-9a-f]{16}$/);
    }
  });

  it('refuses a bad filter of the CSV before it sends its headers', async () => {
    for (const path of [
      '/ui/changes.csv?pid=%00',
      '/ui/changes.csv?to=0000-01-01',
      '/ui/changes.csv?lang=%00&from=x',
    ]) {
      const a = await get(path);
      expect(a.status, path).toBe(400);
      expect(a.type, path).toMatch(/^text\/html/);
    }
    const ok = await fetch(`${base}/ui/changes.csv?pid=${PID}&lang=en`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toMatch(/^text\/csv/);
    const bytes = Buffer.from(await ok.arrayBuffer());
    expect(bytes.subarray(0, 3).toString('hex')).toBe('efbbbf');
    // The company's rename, under the English header.
    expect(
      bytes
        .toString('utf8')
        .split('\r\n')
        .filter((l) => l !== '').length,
    ).toBeGreaterThan(1);
  });

  it('logged no error, and neither the token nor a cookie, for any of it', () => {
    const text = log.join('');
    expect(text).not.toContain(TOKEN);
    const errors = log
      .flatMap((chunk) => chunk.split('\n'))
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as { level: number; msg: string })
      .filter((l) => l.level >= 50);
    expect(errors).toEqual([]);
  });
});

describe('a failure of the server', { timeout: 120_000 }, () => {
  let db: TestDatabase;
  let reader: ConsoleReader;
  let app: FastifyInstance;
  let base: string;
  const lines: Record<string, unknown>[] = [];

  beforeAll(async () => {
    db = await freshDatabase();
    reader = await openConsoleReader(db.sql, db.url, false);
    const destination = new Writable({
      write(chunk, _enc, done) {
        for (const l of String(chunk).split('\n')) if (l.trim() !== '') lines.push(JSON.parse(l));
        done();
      },
    });
    app = await buildAdminApp({
      sql: db.sql,
      redis: null,
      queues: null,
      console: reader,
      host: '127.0.0.1',
      port: 0,
      token: TOKEN,
      // At info, as deployed: a request that goes well writes nothing.
      log: createLogger({ level: 'info', destination, pretty: false }),
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });
  afterAll(async () => {
    await app?.close();
    await reader?.close().catch(() => {});
    await db?.drop();
  });

  const get = async (path: string, headers: Record<string, string> = {}) => {
    const res = await fetch(`${base}${path}`, {
      headers: { authorization: `Bearer ${TOKEN}`, ...headers },
      redirect: 'manual',
    });
    return {
      status: res.status,
      type: res.headers.get('content-type') ?? '',
      id: res.headers.get('x-request-id') ?? '',
      body: await res.text(),
    };
  };

  it('is logged at error with its stack under the request id the answer shows, and nothing else is said', async () => {
    for (const path of ['/ui/', '/ui/changes.csv', '/events', '/ui/companies?q=x'])
      expect((await get(path)).status, path).toBe(200);
    // Fastify says once where it listens; a request that went well says nothing at info.
    expect(
      lines.filter((l) => !String(l.msg).startsWith('Server listening at ')),
      'requests at info',
    ).toEqual([]);

    // The database goes away under the running server.
    const admin = postgres(adminUrl(), { max: 1, onnotice: () => {} });
    try {
      await admin.unsafe(`drop database "${db.name}" with (force)`);
    } finally {
      await admin.end();
    }

    const seen = new Set<string>();
    for (const [path, kind] of [
      ['/ui/', 'html'],
      ['/ui/changes.csv?lang=zh', 'html'],
      ['/ui/companies?q=x', 'html'],
      ['/events?type=company.*', 'json'],
      [`/ui/changes?token=${TOKEN}x`, 'html'],
    ] as const) {
      const a = await get(path, { 'accept-language': 'zh-CN', cookie: 'daybook_session=v1.1.a.b' });
      expect(a.status, path).toBe(500);
      expect(a.id, path).toMatch(/^[0-9a-f]{16}$/);
      expect(seen.has(a.id), 'a request id of its own').toBe(false);
      seen.add(a.id);
      if (kind === 'html') {
        expect(a.type, path).toMatch(/^text\/html/);
        expect(a.body, path).toContain(`<code class="request-id">${a.id}</code>`);
        expect(a.body, path).toContain('<html lang="zh-CN">');
      } else {
        expect(a.type, path).toMatch(/^application\/json/);
        const body = JSON.parse(a.body) as Record<string, unknown>;
        expect(body).toEqual({
          error: 'internal error: the server log has the details under this request id',
          request_id: a.id,
        });
      }
      for (const leak of [...LEAKS, /database|terminat|connection|ECONN|3D000|57P01|daybook_t_/i])
        expect(a.body, `${path}: ${leak}`).not.toMatch(leak);

      const logged = lines.filter((l) => l.requestId === a.id);
      expect(logged.length, `${path}: one line under its id`).toBe(1);
      const line = logged[0] as { level: number; err?: { message?: string; stack?: string }; url?: string };
      expect(line.level).toBe(50);
      expect(line.err?.message, path).toBeTruthy();
      expect(line.err?.stack, path).toMatch(/\n\s+at /);
      expect(line.url, path).toBe(path.replace(/[?&]token=[^&]*/, '').replace(/^([^?]*)&/, '$1?'));
    }
    // The open health check says which check failed, not how: that is in the log, at warn.
    const health = await get('/healthz');
    expect(health.status).toBe(503);
    expect(JSON.parse(health.body)).toEqual({
      status: 'unhealthy',
      request_id: health.id,
      postgres: 'error',
    });
    const warned = lines.filter((l) => l.requestId === health.id);
    expect(warned.map((l) => [l.level, l.check])).toEqual([[40, 'postgres']]);
    expect((warned[0]?.err as { message?: string } | undefined)?.message).toBeTruthy();

    const text = JSON.stringify(lines);
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain('daybook_session');
    expect(text).not.toMatch(/authorization|cookie/i);
  });
});
