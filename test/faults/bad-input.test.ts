/**
 * The bad-input corpus (test/faults/corpus/bad-inputs.ts) through the real `daybook` command. Each
 * case: exit code 2, its message on stderr, no stack trace, the row count of every table unchanged,
 * no Redis key written, nothing sent to the upstream, and nothing left in the working directory but
 * the case's own files.
 */
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyPattern, redisConnection } from '../../src/runtime/queues.ts';
import type { RunningSimulator } from '../../src/sim/server.ts';
import { runDaybook } from '../support/cli.ts';
import { type CliSim, cliAgainstSim } from '../support/cli-sim.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';
import { TEST_KEY } from '../support/sim.ts';
import { BAD_INPUTS, type BadInput } from './corpus/bad-inputs.ts';

/** Row counts of every base table of the database, by schema-qualified name. */
async function rowCounts(t: TestDatabase): Promise<Record<string, number>> {
  const tables = await t.sql<{ name: string }[]>`
    select format('%I.%I', table_schema, table_name) as name from information_schema.tables
    where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema')
    order by 1`;
  const counts = await t.sql.unsafe<{ name: string; n: number }[]>(
    tables.map((r) => `select '${r.name}' as name, count(*)::int as n from ${r.name}`).join(' union all '),
  );
  return Object.fromEntries(counts.map((c) => [c.name, c.n]));
}

/** Requests the simulator has seen, over both operations and every key (an unknown key too). */
function upstreamRequests(sim: RunningSimulator): number {
  const { requests } = sim.sim.counters as unknown as { requests: Record<string, number> };
  return Object.values(requests).reduce((n, v) => n + v, 0);
}

const STACK_LINE = /\n\s+at .+[:(].*\d+:\d+\)?/;

describe('the bad-input corpus', { timeout: 240_000 }, () => {
  let t: TestDatabase;
  let sim: RunningSimulator;
  let dbSim: CliSim;
  let redis: Redis;
  const prefix = `bad-${process.pid}`;
  let baseEnv: Record<string, string>;
  let baseline: Record<string, number>;
  let redisKeysBefore: number;
  const passed: Record<string, number> = {};
  const tried: Record<string, number> = {};

  beforeAll(async () => {
    // The test simulator's default world and rate limits.
    dbSim = await cliAgainstSim({});
    ({ t, sim } = dbSim);
    redis = redisConnection('redis://127.0.0.1:6379');
    // Something to lose: watch entries, a run, a landed answer.
    await t.sql`insert into watchlist (keyword, keyword_key, priority) values
      ('上海星辰信息科技有限公司', '上海星辰信息科技有限公司', 5), ('北京华拓电子有限公司', '北京华拓电子有限公司', 0)`;
    await t.sql`insert into runs (kind, entity) values ('products', 'd1')`;
    baseEnv = {
      DATABASE_URL: t.url,
      DAYBOOK_REDIS_PREFIX: prefix,
      DAYBOOK_API_BASE_URL: sim.url,
      DAYBOOK_API_KEY: TEST_KEY,
    };
    baseline = await rowCounts(t);
    redisKeysBefore = (await redis.keys(keyPattern(prefix))).length;
  });

  afterAll(async () => {
    const total = Object.values(tried).reduce((a, b) => a + b, 0);
    const ok = Object.values(passed).reduce((a, b) => a + b, 0);
    const by = Object.keys(tried)
      .map((a) => `${a} ${passed[a] ?? 0}/${tried[a]}`)
      .join(', ');
    console.log(`bad inputs tried: ${total}, refused correctly: ${ok} (${by})`);
    const keys = await redis.keys(keyPattern(prefix));
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
    await dbSim?.close();
  });

  it('has at least 100 cases over every area, each named once', () => {
    expect(BAD_INPUTS.length).toBeGreaterThanOrEqual(100);
    expect(new Set(BAD_INPUTS.map((c) => `${c.area}: ${c.what}`)).size).toBe(BAD_INPUTS.length);
    for (const area of ['cli', 'csv', 'env', 'product']) {
      expect(BAD_INPUTS.filter((c) => c.area === area).length).toBeGreaterThanOrEqual(10);
    }
  });

  describe.concurrent('each case', () => {
    for (const c of BAD_INPUTS) {
      it(`${c.area}: refuses ${c.what}`, async () => {
        tried[c.area] = (tried[c.area] ?? 0) + 1;
        const r = await refuse(c);
        expect(r.code, `exit code; stderr: ${r.stderr}`).toBe(2);
        for (const pattern of c.expect) expect(r.stderr).toMatch(pattern);
        expect(r.stderr).not.toMatch(STACK_LINE);
        expect(r.stderr).not.toMatch(/\b(TypeError|RangeError|SyntaxError|ReferenceError)\b/);
        expect(r.stdout).not.toMatch(/^(imported|added|enqueued|rebuilt|cycle \d)/m);
        expect(r.leftover, 'files written into the working directory').toEqual([]);
        expect(await rowCounts(t)).toEqual(baseline);
        passed[c.area] = (passed[c.area] ?? 0) + 1;
      });
    }
  });

  it('sent nothing to the upstream and wrote nothing to Redis', async () => {
    expect(upstreamRequests(sim)).toBe(0);
    expect((await redis.keys(keyPattern(prefix))).length).toBe(redisKeysBefore);
    expect(await rowCounts(t)).toEqual(baseline);
  });

  /** Runs a case in a working directory of its own holding only the case's files. */
  async function refuse(c: BadInput) {
    const cwd = mkdtempSync(join(tmpdir(), 'daybook-bad-'));
    for (const [name, content] of Object.entries(c.files ?? {})) writeFileSync(join(cwd, name), content);
    const r = await runDaybook(c.args, { ...baseEnv, ...c.env }, cwd);
    const own = new Set(Object.keys(c.files ?? {}));
    return { ...r, leftover: readdirSync(cwd).filter((f) => !own.has(f)) };
  }
});

describe('--skip-invalid, the one way an invalid file imports something', { timeout: 120_000 }, () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await freshDatabase();
  });
  afterAll(() => t.drop());

  it('imports the valid rows, lists the invalid ones by line and exits 0', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'daybook-skip-'));
    writeFileSync(
      join(cwd, 'w.csv'),
      `\uFEFFname,priority\r\n上海好运科技有限公司,3\r\n${'长'.repeat(101)},1\r\n\r\n北京华拓电子有限公司,abc\r\n深圳星辰科技有限公司,\r\n`,
    );
    const r = await runDaybook(
      ['watch', 'import', 'w.csv', '--skip-invalid', '--json'],
      { DATABASE_URL: t.url },
      cwd,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/line 3: name is 101 characters/);
    expect(r.stderr).toMatch(/line 5: priority "abc"/);
    expect(JSON.parse(r.stdout)).toEqual({ imported: 2, alreadyWatched: 0, invalid: 2 });
    const rows = await t.sql<{ keyword: string; priority: number }[]>`
      select keyword, priority from watchlist order by keyword`;
    expect(rows).toEqual([
      { keyword: '上海好运科技有限公司', priority: 3 },
      { keyword: '深圳星辰科技有限公司', priority: 0 },
    ]);
  });
});
