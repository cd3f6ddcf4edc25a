/**
 * The .env file is read by Node's own reader (util.parseEnv): what daybook always read stays read
 * the same (a BOM, comments, stray lines, export, spaces around =, quotes, CRLF, a later line
 * winning), what Node adds is read as docker compose reads it (comments after a value, escapes and
 * several lines in double quotes), and a value Node would cut short at a # is refused, naming the
 * variable and its line, never the value. The real CLI reads it from its working directory.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, dotenvProblems, loadConfig, parseDotenv } from '../../src/config/config.ts';
import { runDaybook } from '../support/cli.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';

/** The configuration `text` as the .env file of a folder of its own gives, over `env`. */
const configFrom = (text: string, env: Record<string, string> = {}) => {
  const dir = mkdtempSync(join(tmpdir(), 'daybook-dotenv-'));
  writeFileSync(join(dir, '.env'), text);
  return loadConfig(env, join(dir, '.env'));
};
const problemsOf = (text: string, env: Record<string, string> = {}): string[] => {
  try {
    configFrom(text, env);
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
};

describe('parseDotenv: what daybook always read', () => {
  it('reads KEY=VALUE lines, skipping blank lines and comments, a later line winning', () =>
    expect(parseDotenv('# daybook\n\nA=1\n   \nB=two\n# C=3\nA=one\n')).toEqual({ A: 'one', B: 'two' }));

  it('reads export, spaces around = and around the value, CRLF line ends', () =>
    expect(parseDotenv('export A=1\r\n  B = 2  \r\nexport C = three four\r\n')).toEqual({
      A: '1',
      B: '2',
      C: 'three four',
    }));

  it('takes the quotes off single- and double-quoted values, keeping what is inside', () =>
    expect(parseDotenv(`A="  padded  "\nB='it is'\nC="it's"\nD='say "hi"'\nE=""\nF=\n`)).toEqual({
      A: '  padded  ',
      B: 'it is',
      C: "it's",
      D: 'say "hi"',
      E: '',
      F: '',
    }));

  it('skips a UTF-8 BOM before the first key', () =>
    expect(parseDotenv('\uFEFFDAYBOOK_CREDIT_BUDGET=5\nLOG_LEVEL=warn\n')).toEqual({
      DAYBOOK_CREDIT_BUDGET: '5',
      LOG_LEVEL: 'warn',
    }));

  it('skips a line that is no assignment, and an indented comment, without losing the next key', () =>
    expect(parseDotenv('oops\nA=1\n   # indented\nB=2\nnot one either\n# c\nC=3\n')).toEqual({
      A: '1',
      B: '2',
      C: '3',
    }));

  it('keeps =, $, backslashes and URLs of an unquoted value as written', () =>
    expect(
      parseDotenv(
        'A=x=y\nB=$HOME/x\nC=C:\\data\\new\nD=postgres://u:p@h:5432/db?sslmode=require\nE=30 3 * * *\n',
      ),
    ).toEqual({
      A: 'x=y',
      B: '$HOME/x',
      C: 'C:\\data\\new',
      D: 'postgres://u:p@h:5432/db?sslmode=require',
      E: '30 3 * * *',
    }));

  it('reads .env.example as docker compose does: every variable with its value', () => {
    const example = parseDotenv(readFileSync(join(import.meta.dirname, '../../.env.example'), 'utf8'));
    expect(example).toMatchObject({
      COMPOSE_PROFILES: 'upstream',
      DAYBOOK_API_BASE_URL: '',
      DAYBOOK_CREDIT_BUDGET: '3000',
      LOG_LEVEL: 'info',
      DAYBOOK_PG_HOST_PORT: '15432',
    });
    expect(Object.keys(example).every((k) => /^[A-Z_][A-Z0-9_]*$/.test(k))).toBe(true);
  });
});

describe("parseDotenv: what Node's reader adds, as docker compose reads it", () => {
  it('a comment after a value and a space is not part of it', () =>
    expect(parseDotenv('LOG_LEVEL=warn # quieter\nA="x # y" # z\n')).toEqual({
      LOG_LEVEL: 'warn',
      A: 'x # y',
    }));

  it('double quotes read \\n as a line break and may span lines; single quotes keep it', () =>
    expect(parseDotenv('A="one\\ntwo"\nB=\'one\\ntwo\'\nC="first\nsecond"\nD=after\n')).toEqual({
      A: 'one\ntwo',
      B: 'one\\ntwo',
      C: 'first\nsecond',
      D: 'after',
    }));
});

describe('loadConfig over a .env file', () => {
  it('reads the file, the environment winning, an empty value counting as unset', () => {
    const c = configFrom('DAYBOOK_CREDIT_BUDGET=5\nLOG_LEVEL=warn\nDAYBOOK_PRODUCT_LIMIT=\n', {
      LOG_LEVEL: 'error',
    });
    expect([c.DAYBOOK_CREDIT_BUDGET, c.LOG_LEVEL, c.DAYBOOK_PRODUCT_LIMIT]).toEqual([5, 'error', 20]);
  });

  it('a value Node would cut at a # is refused, naming the variable and its line but not the value', () => {
    const found = problemsOf('# keys\nDAYBOOK_API_KEY=sk-abc#123\nDAYBOOK_ADMIN_TOKEN=0123456789abcdef#x\n');
    expect(found).toEqual([
      `DAYBOOK_API_KEY in .env (line 2) holds a # right after another character, which Node's .env reader takes for the start of a comment (docker compose does not): put the value in quotes, DAYBOOK_API_KEY="…"`,
      `DAYBOOK_ADMIN_TOKEN in .env (line 3) holds a # right after another character, which Node's .env reader takes for the start of a comment (docker compose does not): put the value in quotes, DAYBOOK_ADMIN_TOKEN="…"`,
    ]);
    expect(found.join('\n')).not.toMatch(/sk-abc|123|0123456789abcdef/);
  });

  it('the same value in quotes is read whole; a comment after a space, a variable daybook does not read, and one the environment sets are no problem', () => {
    expect(configFrom('DAYBOOK_API_KEY="sk-abc#123"\n').DAYBOOK_API_KEY).toBe('sk-abc#123');
    expect(configFrom("DAYBOOK_API_KEY='sk-abc#123' # the key\n").DAYBOOK_API_KEY).toBe('sk-abc#123');
    expect(configFrom('DAYBOOK_API_KEY=sk-abc # the key\nOTHER=a#b\n').DAYBOOK_API_KEY).toBe('sk-abc');
    expect(configFrom('DAYBOOK_API_KEY=sk-abc#123\n', { DAYBOOK_API_KEY: 'sk-env' }).DAYBOOK_API_KEY).toBe(
      'sk-env',
    );
  });

  it('dotenvProblems looks at the last line of a key only', () =>
    expect(dotenvProblems('A=x#y\nA="x#y"\nB="q"\nB=q#r\n', new Set(['A', 'B']))).toEqual([
      expect.stringMatching(/^B in \.env \(line 4\) holds a #/),
    ]));
});

describe('the real CLI reads .env from its working directory', { timeout: 120_000 }, () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await freshDatabase();
  });
  afterAll(() => t.drop());

  const inFolder = (dotenv: string, ...args: string[]) => {
    const dir = mkdtempSync(join(tmpdir(), 'daybook-dotenv-cli-'));
    writeFileSync(join(dir, '.env'), dotenv);
    return runDaybook(args, {}, dir);
  };

  it('a .env saved with a BOM and CRLF by a Windows editor, comments and all', async () => {
    await t.sql`truncate watchlist restart identity cascade`;
    await t.sql`insert into watchlist (keyword, keyword_key, priority) values ('上海星辰信息科技有限公司', '上海星辰信息科技有限公司', 5)`;
    const r = await inFolder(
      `\uFEFF# daybook\r\nDATABASE_URL="${t.url}" # the test database\r\n  # indented comment\r\nLOG_LEVEL=warn\r\n`,
      'watch',
      'list',
      '--json',
    );
    expect(r.stderr).toBe('');
    expect((JSON.parse(r.stdout) as { keyword: string }[]).map((x) => x.keyword)).toEqual([
      '上海星辰信息科技有限公司',
    ]);
  });

  it('a value cut at a # exits 2 with the line to fix, and no stack trace', async () => {
    const r = await inFolder(`DATABASE_URL=${t.url}\nDAYBOOK_API_KEY=sk-abc#123\n`, 'watch', 'list');
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `daybook: bad configuration:\n  - DAYBOOK_API_KEY in .env (line 2) holds a # right after another character, which Node's .env reader takes for the start of a comment (docker compose does not): put the value in quotes, DAYBOOK_API_KEY="…"\n`,
    );
  });
});
