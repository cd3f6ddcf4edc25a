import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliResult, runDaybook } from '../support/cli.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';

const daybook = (args: string[], env: Record<string, string> = {}): Promise<CliResult> =>
  runDaybook(args, env);

describe('the daybook command', { timeout: 120_000 }, () => {
  let t: TestDatabase;
  let env: Record<string, string>;
  const dir = mkdtempSync(join(tmpdir(), 'daybook-csv-'));
  const file = (name: string, text: string) => {
    const p = join(dir, name);
    writeFileSync(p, text);
    return p;
  };
  const watchCount = async () => {
    const [r] = await t.sql<{ n: number }[]>`select count(*)::int as n from watchlist`;
    return r?.n ?? -1;
  };

  beforeAll(async () => {
    t = await freshDatabase();
    env = { DATABASE_URL: t.url, DAYBOOK_REDIS_PREFIX: 'cli-test' };
  });
  afterAll(() => t.drop());

  it('adds, lists as JSON and removes watch entries', async () => {
    const add = await daybook(
      ['watch', 'add', '上海星辰信息科技有限公司', '北京华拓电子有限公司', '--priority', '5'],
      env,
    );
    expect(add).toMatchObject({ code: 0 });
    expect(add.stdout).toContain('added 2');
    const again = await daybook(['watch', 'add', '上海星辰信息科技有限公司'], env);
    expect(again.stdout).toContain('already watched 1');
    const list = await daybook(['watch', 'list', '--json'], env);
    const rows = JSON.parse(list.stdout) as { keyword: string; priority: number }[];
    expect(rows.map((r) => r.keyword).sort()).toEqual(['上海星辰信息科技有限公司', '北京华拓电子有限公司']);
    const rm = await daybook(['watch', 'remove', '北京华拓电子有限公司'], env);
    expect(rm.code).toBe(0);
    const after = JSON.parse((await daybook(['watch', 'list', '--json'], env)).stdout) as unknown[];
    expect(after).toHaveLength(1);
  });

  it('imports a CSV with a BOM, CRLF, quotes and blank lines', async () => {
    const csv = file(
      'ok.csv',
      '\uFEFFname,priority\r\n"深圳市华拓电子有限公司",3\r\n\r\n"杭州 ""星辰"" 科技有限公司",\r\n',
    );
    const r = await daybook(['watch', 'import', csv, '--json'], env);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ imported: 2, alreadyWatched: 0, invalid: 0 });
  });

  it('an invalid CSV names each bad line, exits 2 and imports nothing; --skip-invalid imports the rest', async () => {
    const before = await watchCount();
    const csv = file(
      'bad.csv',
      `name,priority\n好公司一有限公司,1\n${'长'.repeat(101)},0\n好公司二有限公司,abc\n好公司一有限公司,2\n`,
    );
    const r = await daybook(['watch', 'import', csv], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/line 3: name is 101 characters/);
    expect(r.stderr).toMatch(/line 4: priority "abc"/);
    expect(r.stderr).toMatch(/line 5: .*duplicate of line 2/);
    expect(r.stderr).not.toMatch(/at .*\.ts:\d+/);
    expect(await watchCount()).toBe(before);
    const skip = await daybook(['watch', 'import', csv, '--skip-invalid'], env);
    expect(skip.code).toBe(0);
    expect(skip.stdout).toContain('imported 1');
    expect(await watchCount()).toBe(before + 1);
  });

  const bad: [string, string[], Record<string, string>, RegExp][] = [
    ['an unknown command', ['frobnicate'], {}, /unknown command/],
    ['an unknown option', ['watch', 'list', '--colour'], {}, /unknown option/],
    [
      'a priority that is not a number',
      ['watch', 'add', 'x公司', '--priority', 'abc'],
      {},
      /--priority must be a whole number/,
    ],
    ['an empty name', ['watch', 'add', '  '], {}, /empty/],
    ['a name of 101 characters', ['watch', 'add', '名'.repeat(101)], {}, /101 characters/],
    ['a missing CSV file', ['watch', 'import', '/nonexistent/w.csv'], {}, /cannot read .*ENOENT/],
    ['an impossible date', ['run', '--cycle', '2026-02-30'], {}, /not a real calendar date/],
    ['a date without zero padding', ['changes', '--since', '2026-1-1'], {}, /not a real calendar date/],
    [
      '--only with a bad value',
      ['run', '--only', 'everything'],
      {},
      /--only must be one of products, enterprises/,
    ],
    [
      'a backfill limit of 0',
      ['products', 'backfill', '--from', '2026-01-01', '--to', '2026-01-02', '--limit', '0'],
      {},
      /--limit must be from 1 to 20/,
    ],
    [
      'a backfill limit of 21',
      ['products', 'backfill', '--from', '2026-01-01', '--to', '2026-01-02', '--limit', '21'],
      {},
      /--limit must be from 1 to 20/,
    ],
    [
      'a backfill limit of 1.5',
      ['products', 'backfill', '--from', '2026-01-01', '--to', '2026-01-02', '--limit', '1.5'],
      {},
      /whole number/,
    ],
    [
      'a backfill range backwards',
      ['products', 'backfill', '--from', '2026-01-05', '--to', '2026-01-02'],
      {},
      /after --to/,
    ],
    [
      'a bad DATABASE_URL',
      ['watch', 'list'],
      { DATABASE_URL: 'mysql://x' },
      /DATABASE_URL must be a URL starting with postgres:/,
    ],
    [
      'an upstream base URL ending in /v1 (daybook adds /v1/ itself)',
      ['products', 'get', '--date', '2026-01-05'],
      { DAYBOOK_API_BASE_URL: 'https://api.example.com/v1', DAYBOOK_API_KEY: 'k' },
      /DAYBOOK_API_BASE_URL ends in \/v1, but daybook adds \/v1\/<operation> to the base itself .*set it without \/v1, to https:\/\/api\.example\.com$/m,
    ],
    [
      'an upstream base URL ending in /v1/, with a password',
      ['run'],
      { DAYBOOK_API_BASE_URL: 'http://me:hunter2@127.0.0.1:8787/gateway/v1/', DAYBOOK_API_KEY: 'k' },
      /ends in \/v1.*set it without \/v1, to http:\/\/me:\*\*\*@127\.0\.0\.1:8787\/gateway$/m,
    ],
    [
      'a negative credit budget',
      ['watch', 'list'],
      { DAYBOOK_CREDIT_BUDGET: '-5' },
      /DAYBOOK_CREDIT_BUDGET must be at least 0/,
    ],
    [
      'an invalid cron expression',
      ['watch', 'list'],
      { DAYBOOK_ENTERPRISE_CRON: '61 3 * * *' },
      /DAYBOOK_ENTERPRISE_CRON is not a valid cron/,
    ],
    [
      'an invalid time zone',
      ['watch', 'list'],
      { DAYBOOK_CRON_TZ: 'Mars/Olympus' },
      /DAYBOOK_CRON_TZ is not an IANA time zone/,
    ],
    ['a run without an API key', ['run'], {}, /DAYBOOK_API_BASE_URL and DAYBOOK_API_KEY are not set/],
    [
      'a worker without a shared database',
      ['worker'],
      { DATABASE_URL: '', DAYBOOK_API_BASE_URL: 'http://127.0.0.1:1', DAYBOOK_API_KEY: 'k' },
      /needs a Postgres server/,
    ],
    [
      'a bad fault spec for the simulator',
      ['sim', '--faults', 'explode=1'],
      {},
      /unknown fault kind "explode"/,
    ],
    ['a bad simulator port', ['sim', '--port', '70000'], {}, /port must be from 0 to 65535/],
    ['a query with a syntax error', ['sql', 'selec 1'], {}, /query failed: syntax error/],
    [
      'a query that writes',
      ['sql', "insert into watchlist (keyword, keyword_key) values ('a', 'a')"],
      {},
      /read-only transaction/,
    ],
  ];
  for (const [what, args, extra, message] of bad) {
    it(`refuses ${what} with exit code 2, a clear message and nothing written`, async () => {
      const before = await watchCount();
      const r = await daybook(args, { ...env, ...extra });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
      expect(await watchCount()).toBe(before);
    });
  }

  it('a one-shot command gives up on an unreachable Redis within seconds, exit 1, naming it without its password', async () => {
    const r = await daybook(['enqueue', '--cycle', '2026-11-20'], {
      ...env,
      REDIS_URL: 'redis://:hunter2@127.0.0.1:1',
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('Redis at redis://:***@127.0.0.1:1 did not answer');
    expect(r.stderr).not.toContain('hunter2');
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('prints help and the version with exit code 0', async () => {
    const help = await daybook(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Commands:');
    const watchHelp = await daybook(['watch', 'import', '--help']);
    expect(watchHelp.stdout).toContain('--skip-invalid');
    expect((await daybook(['--version'])).stdout.trim()).toBe('0.1.0');
  });
});
