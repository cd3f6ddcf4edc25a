/**
 * Secret hygiene. A distinctive API key is accepted by a simulator process (`daybook sim --key`),
 * and daybook runs whole cycles with it through the real CLI: `daybook run` inline, and `daybook
 * enqueue` + `daybook worker` over Redis, with 5xx and HTML faults, not_found keywords, a wrong
 * variant of the key (401s, failed jobs), a base URL that answers 404, a malformed base URL, and an
 * upstream that echoes the key back in its error body. Then the output of every process, a pg_dump
 * of the database, the raw landing, every recorded error (runs, watchlist, cycle_fetches), `daybook
 * status --json` and every value under the Redis prefix must hold the key zero times.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { secretMatcher } from '../../src/log/redact.ts';
import { keyPattern, Queues, redisConnection } from '../../src/runtime/queues.ts';
import { defaultSimOptions, startSimulator } from '../../src/sim/server.ts';
import { addDays, cycleOf } from '../../src/time/cycles.ts';
import { BIN, type CliResult, runDaybook } from '../support/cli.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';
import { removeQueues } from '../support/queues.ts';
import { cycleProgress, cycleSettled } from '../support/settled.ts';

const KEY = `sk-LEAKCHECK-${randomBytes(8).toString('hex')}`;

/** `key` as a provider might echo it: JSON-escaped, URL-encoded, in base64, upper case. */
function encodings(key: string): string[] {
  return [
    [...key].map((c, i) => (i % 2 ? c : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)).join(''),
    [...key].map((c) => `%${c.charCodeAt(0).toString(16)}`).join(''),
    Buffer.from(`Bearer ${key}`).toString('base64'),
    key.toUpperCase(),
  ];
}
/** A wrong variant that holds the real key: any trace of it is a trace of the key. */
const WRONG_KEY = `${KEY}-revoked`;
const ENTERPRISES = 300;
const FAULTS = '500=0.06,503=0.04,html=0.03';

const occurrences = (text: string, needle: string) => text.split(needle).length - 1;

/** A long-running daybook process whose output is kept. */
interface Proc {
  child: ChildProcess;
  out: string[];
}

function startDaybook(args: string[], env: Record<string, string>): Proc {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', CI: 'true', ...env },
    cwd: tmpdir(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out: string[] = [];
  child.stdout?.on('data', (d) => out.push(String(d)));
  child.stderr?.on('data', (d) => out.push(String(d)));
  return { child, out };
}

async function stop(p: Proc): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  const exited = once(p.child, 'exit');
  p.child.kill('SIGTERM');
  await exited;
}

/**
 * Resolves when `done()` is true, checking every 250 ms; rejects after `ms` (a hang guard, not a
 * deadline: every wait here is for a state), saying what `state()` last read.
 */
async function until(
  done: () => Promise<boolean>,
  ms: number,
  what: string,
  state?: () => Promise<unknown>,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > deadline)
      throw new Error(
        `${what}: not done within ${ms} ms${state ? ` (${JSON.stringify(await state())})` : ''}`,
      );
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** How long a daybook command or process may take before the test calls it hung: a machine may be busy. */
const HANG_MS = 180_000;

/** Every value under a Redis prefix, as text. */
async function redisText(redis: Redis, prefix: string): Promise<string> {
  const parts: string[] = [];
  for (const key of await redis.keys(keyPattern(prefix))) {
    const type = await redis.type(key);
    let value: unknown;
    if (type === 'string') value = await redis.get(key);
    else if (type === 'hash') value = await redis.hgetall(key);
    else if (type === 'list') value = await redis.lrange(key, 0, -1);
    else if (type === 'set') value = await redis.smembers(key);
    else if (type === 'zset') value = await redis.zrange(key, 0, -1, 'WITHSCORES');
    else if (type === 'stream') value = await redis.xrange(key, '-', '+');
    parts.push(`${key} ${JSON.stringify(value)}`);
  }
  return parts.join('\n');
}

// About fifteen daybook processes one after another: a minute on an idle machine, several on a
// busy one (each process takes seconds to start there). Every wait inside is for a state, with a
// hang guard of its own (HANG_MS); the test's timeout is one too.
describe('secret hygiene', { timeout: 15 * 60_000 }, () => {
  let t: TestDatabase;
  let redis: Redis;
  let sim: Proc;
  let simUrl = '';
  let echo: Server;
  let echoUrl = '';
  const prefix = `leak-${randomBytes(4).toString('hex')}`;
  const outputs: { what: string; text: string }[] = [];
  const procs: Proc[] = [];
  let env: Record<string, string>;
  const cycle = cycleOf(new Date());

  const daybook = async (what: string, args: string[], extra: Record<string, string> = {}) => {
    const r: CliResult = await runDaybook(args, { ...env, ...extra }, undefined, HANG_MS);
    outputs.push({ what, text: `${r.stdout}\n${r.stderr}` });
    return r;
  };

  beforeAll(async () => {
    t = await freshDatabase();
    redis = redisConnection('redis://127.0.0.1:6379');
    sim = startDaybook(
      [
        'sim',
        '--port',
        '0',
        '--enterprises',
        String(ENTERPRISES),
        '--key',
        `${KEY}:1000000`,
        '--enterprise-rate',
        '6000',
        '--product-rate',
        '6000',
        '--faults',
        FAULTS,
      ],
      {},
    );
    procs.push(sim);
    await until(async () => /listening on (http:\S+)/.test(sim.out.join('')), HANG_MS, 'simulator start');
    simUrl = /listening on (http:\S+)/.exec(sim.out.join(''))?.[1] as string;
    // An upstream that echoes the Authorization header back in a 401 error body.
    echo = createServer((req, res) => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          status: 'error',
          // The key as sent, and again in the encodings a provider might echo it in.
          error: {
            code: 'unauthorized',
            message: `Invalid API key: ${req.headers.authorization}; as seen: ${encodings(String(req.headers.authorization).replace(/^Bearer /, '')).join(' | ')}`,
          },
        }),
      );
    });
    echo.listen(0, '127.0.0.1');
    await once(echo, 'listening');
    echoUrl = `http://127.0.0.1:${(echo.address() as AddressInfo).port}`;
    env = {
      DATABASE_URL: t.url,
      DAYBOOK_REDIS_PREFIX: prefix,
      DAYBOOK_API_BASE_URL: simUrl,
      DAYBOOK_API_KEY: KEY,
      DAYBOOK_ENTERPRISE_RATE: '3000',
      DAYBOOK_PRODUCT_RATE: '3000',
      DAYBOOK_HTTP_TIMEOUT_MS: '5000',
      // Retries of the 5xx and HTML faults back off from 100 ms, not 2 s: a cycle through them
      // takes seconds, however the retries fall.
      DAYBOOK_RETRY_BASE_MS: '100',
      LOG_LEVEL: 'debug',
    };
  }, HANG_MS);

  afterAll(async () => {
    for (const p of procs) await stop(p);
    echo?.close();
    await removeQueues(new Queues(redis, prefix), prefix, redis);
    await redis.quit();
    await t.drop();
  });

  it('a full cycle with faults, wrong keys and bad URLs leaves the key nowhere', async () => {
    // The watchlist: enterprises of the simulator's world (same seed, same names) and three
    // keywords that match nothing (not_found).
    const world = await startSimulator({ ...defaultSimOptions(), enterprises: ENTERPRISES });
    const names = world.sim
      .world()
      .all()
      .slice(0, 24)
      .map((e) => e.ENTNAME);
    await world.close();
    const csv = join(tmpdir(), `leak-${prefix}.csv`);
    writeFileSync(
      csv,
      `name\n${[...names, '无此企业甲有限公司', '无此企业乙有限公司', '无此企业丙有限公司'].join('\n')}\n`,
    );
    expect((await daybook('watch import', ['watch', 'import', csv])).code).toBe(0);

    // 1. Inline: products and enterprises, through the faults.
    const inline = await daybook('run (inline)', ['run', '--cycle', cycle, '--json']);
    const summary = JSON.parse(inline.stdout) as { enterprises: Record<string, number> };
    expect(summary.enterprises.succeeded).toBeGreaterThanOrEqual(20);

    // 2. Inline with a wrong variant of the key: every call refused with 401.
    const refused = await daybook(
      'run (wrong key)',
      ['run', '--cycle', addDays(cycle, -1), '--only', 'enterprises'],
      {
        DAYBOOK_API_KEY: WRONG_KEY,
      },
    );
    expect(refused.code, `${refused.stdout}\n${refused.stderr.slice(-3000)}`).toBe(1);
    expect(refused.stdout).toMatch(/failed: watch entry .*refused|unauthorized/);

    // 3. Queue mode: a worker process, the plan enqueued by hand.
    const next = addDays(cycle, 1);
    const worker = startDaybook(['worker', '--concurrency', '4'], env);
    procs.push(worker);
    expect(
      (await daybook('enqueue', ['enqueue', '--cycle', next, '--products', addDays(cycle, -3)])).code,
    ).toBe(0);
    // The worker's cycle is done when its plan has run and no row it wrote is still to be bought
    // (retrying ones included), and the products pull has ended, one way or the other: nothing of
    // it is left for the next worker, which has the wrong key.
    const queues = new Queues(redis, prefix);
    const productsEnded = async () => {
      const c = await queues.products.getJobCounts('completed', 'failed');
      return (c.completed ?? 0) + (c.failed ?? 0);
    };
    await until(
      async () => (await cycleSettled(t.sql, next)) && (await productsEnded()) === 1,
      HANG_MS,
      'worker cycle',
      async () => ({ cycle: await cycleProgress(t.sql, next), productsEnded: await productsEnded() }),
    );
    expect((await cycleProgress(t.sql, next)).total).toBeGreaterThanOrEqual(20);
    await stop(worker);
    outputs.push({ what: 'worker', text: worker.out.join('') });

    // 4. A worker with the wrong key: failed jobs kept in Redis with their reasons. Each job the
    // plan enqueued is refused (401, permanent: no retry), fails its row, then fails in BullMQ.
    // The entries that are resting after not_found were skipped by the plan: no job, no failure.
    const later = addDays(cycle, 2);
    const wrongWorker = startDaybook(['worker'], { ...env, DAYBOOK_API_KEY: WRONG_KEY });
    procs.push(wrongWorker);
    await daybook('enqueue (wrong key)', ['enqueue', '--cycle', later]);
    const failedOf = async (c: string) =>
      (await queues.enterprise.getFailed()).filter((j) => (j.data as { cycle?: string }).cycle === c).length;
    const refusedState = async () => ({
      cycle: await cycleProgress(t.sql, later),
      failedJobs: await failedOf(later),
    });
    await until(
      async () => {
        const { cycle: p, failedJobs } = await refusedState();
        return p.planned && p.pending === 0 && failedJobs >= (p.statuses.failed ?? 0);
      },
      HANG_MS,
      'failed jobs',
      refusedState,
    );
    const refusedCycle = await refusedState();
    expect(refusedCycle.cycle.statuses.failed ?? 0, JSON.stringify(refusedCycle)).toBeGreaterThanOrEqual(20);
    expect(refusedCycle.cycle.statuses.succeeded ?? 0).toBe(0);
    const failed = await queues.enterprise.getFailed();
    await queues.close();
    await stop(wrongWorker);
    outputs.push({ what: 'worker (wrong key)', text: wrongWorker.out.join('') });
    expect(failed.length).toBeGreaterThanOrEqual(20);
    outputs.push({
      what: 'failed job reasons',
      text: failed
        .map((j) => `${j.failedReason}\n${(j.stacktrace ?? []).join('\n')}\n${JSON.stringify(j.data)}`)
        .join('\n'),
    });

    // 5. Bad base URLs and an upstream that echoes the key: three commands that share nothing,
    // run at once (each is mostly a process starting, which a busy machine makes slow).
    const [wrongPath, malformed, echoed] = await Promise.all([
      daybook('a base URL answering 404', ['products', 'get', '--date', addDays(cycle, -5)], {
        DAYBOOK_API_BASE_URL: `${simUrl}/no/such/prefix`,
      }),
      daybook('a malformed base URL', ['run'], { DAYBOOK_API_BASE_URL: `htp:/${KEY}` }),
      daybook('an upstream echoing the key', ['products', 'get', '--date', addDays(cycle, -6)], {
        DAYBOOK_API_BASE_URL: echoUrl,
      }),
    ]);
    expect(wrongPath.code).toBe(1);
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toMatch(/DAYBOOK_API_BASE_URL must be a URL/);
    expect(echoed.code).toBe(1);
    expect(echoed.stdout).toMatch(/Invalid API key: Bearer \[redacted\]/);

    // 6. What a person reads afterwards (read-only: the four at once).
    const statuses = await Promise.all(
      [cycle, addDays(cycle, -1), next, later].map((c) =>
        daybook(`status ${c}`, ['status', '--cycle', c, '--json']),
      ),
    );
    for (const status of statuses) expect(status.code, status.stderr).toBe(0);

    // The faults really happened: 5xx and HTML answers, 401s, not_found, landed.
    const kinds = await t.sql<{ kind: string; n: number }[]>`
      select case when http_status >= 500 then '5xx' when http_status = 401 then '401'
                  else outcome end as kind,
             count(*)::int as n
      from raw_answers group by 1 order by 1`;
    const seen = Object.fromEntries(kinds.map((k) => [k.kind, k.n]));
    expect(seen['5xx'] ?? 0, JSON.stringify(seen)).toBeGreaterThan(0);
    expect(seen['401'] ?? 0).toBeGreaterThanOrEqual(20 * 2);
    expect(seen.not_found ?? 0).toBeGreaterThanOrEqual(3);

    // Everything that was written or said.
    const dump = await promisify(execFile)('pg_dump', ['-h', '127.0.0.1', '-U', 'postgres', t.name], {
      maxBuffer: 512 * 1024 * 1024,
    });
    const landing = await t.sql`select * from raw_answers order by id`;
    const errors = await t.sql`
      select 'runs' as source, error_code, error_message from runs where error_message is not null
      union all select 'watchlist', last_outcome, last_error from watchlist
      union all select 'cycle_fetches', error_code, error_message from cycle_fetches where error_message is not null`;
    outputs.push({ what: 'simulator', text: sim.out.join('') });
    outputs.push({ what: 'pg_dump', text: dump.stdout });
    outputs.push({ what: 'raw landing', text: JSON.stringify(landing) });
    outputs.push({ what: 'recorded errors', text: JSON.stringify(errors) });
    outputs.push({ what: 'redis', text: await redisText(redis, prefix) });

    expect(errors.length).toBeGreaterThan(0);
    // The key in any form: as is, in any case, JSON-escaped, URL-encoded, base64.
    const matcher = secretMatcher(KEY) as RegExp;
    const leaks = outputs
      .map((o) => ({ what: o.what, n: occurrences(o.text, KEY) + (o.text.match(matcher)?.length ?? 0) }))
      .filter((o) => o.n > 0);
    const bytes = outputs.reduce((n, o) => n + Buffer.byteLength(o.text), 0);
    const data = ['pg_dump', 'raw landing', 'recorded errors', 'redis', 'failed job reasons'];
    console.log(
      `secrets leaked: ${leaks.reduce((n, l) => n + l.n, 0)} (searched ${Math.round(bytes / 1024)} KiB: the output of ${outputs.length - data.length} daybook processes, a pg_dump, the raw landing, recorded errors, failed job reasons and Redis; answers landed: ${JSON.stringify(seen)})`,
    );
    expect(leaks).toEqual([]);
  });
});
