import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatTable, forTerminal, isTerminalControl } from '../../src/cli/terminal.ts';
import { keywordKey } from '../../src/watch/keyword.ts';
import { runDaybook } from '../support/cli.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';

const hex = (cp: number) => `\\u${cp.toString(16).padStart(4, '0')}`;
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('forTerminal', () => {
  it('writes every C0 control, tab, newline and CR included, as \\uXXXX', () => {
    for (const cp of range(0x00, 0x1f)) expect(forTerminal(String.fromCharCode(cp))).toBe(hex(cp));
    expect(forTerminal('a\tb\nc\r\n')).toBe('a\\u0009b\\u000ac\\u000d\\u000a');
    expect(forTerminal('\x1b[2J\x1b[1;1HFAILED')).toBe('\\u001b[2J\\u001b[1;1HFAILED');
    expect(forTerminal('\x07\x08\x00')).toBe('\\u0007\\u0008\\u0000');
  });

  it('writes DEL and the C1 controls as \\uXXXX', () => {
    expect(forTerminal('\x7f')).toBe('\\u007f');
    for (const cp of range(0x80, 0x9f)) expect(forTerminal(String.fromCharCode(cp))).toBe(hex(cp));
    // CSI as one 8-bit character: clears the screen on a terminal taking 8-bit controls.
    expect(forTerminal('\x9b2J')).toBe('\\u009b2J');
  });

  it('writes the bidi embeddings, overrides and isolates as \\uXXXX', () => {
    for (const cp of [...range(0x202a, 0x202e), ...range(0x2066, 0x2069)])
      expect(forTerminal(`x${String.fromCharCode(cp)}y`)).toBe(`x${hex(cp)}y`);
    expect(forTerminal('invoice\u202Egpj.exe')).toBe('invoice\\u202egpj.exe');
  });

  it('leaves everything else as it is: printable ASCII, Latin-1, CJK, emoji, combining marks, neighbours of the ranges', () => {
    const kept = [
      ' ~!"#$%&\'()*+,-./0123456789:;<=>?@AZaz[\\]^_`{|}',
      '\u00a0\u00a9é café',
      '上海星辰信息科技有限公司',
      '（全角）ｈａｌｆ',
      '𠀀𪚥',
      '😀👩‍💻🇨🇳👍🏽',
      'e\u0301',
      '\u2029\u202f\u2065\u206a\u200e\u200f\u200d',
      'a literal \\u001b stays as typed',
    ];
    for (const s of kept) expect(forTerminal(s)).toBe(s);
    expect(forTerminal('')).toBe('');
  });

  it('leaves no control behind, and escaping twice changes nothing more', () => {
    const all = String.fromCharCode(...range(0, 0x2100), ...range(0x2066, 0x2069));
    const once = forTerminal(all);
    expect([...once].some((ch) => isTerminalControl(ch.codePointAt(0) as number))).toBe(false);
    expect(forTerminal(once)).toBe(once);
  });
});

/** Terminal columns of a line, counting the wide characters the tests use as 2. */
const columns = (s: string) =>
  [...s].reduce((w, ch) => w + (/[\u4e00-\u9fff\u{1f300}-\u{1f64f}]/u.test(ch) ? 2 : 1), 0);

/** The terminal column where a line's last column (a cell without spaces) starts. */
const lastColumnStart = (line: string) => columns(line.slice(0, line.lastIndexOf(' ') + 1));

describe('formatTable', () => {
  it('escapes every cell and header, and aligns the escaped text', () => {
    const rows = [
      { name: '\x1b[2J\x1b[1;1HFAILED: all data deleted\r\n', n: 1 },
      { name: '上海星辰\t信息', n: 22 },
      { name: '😀 ok', n: 333 },
    ];
    const out = formatTable(rows, ['name', 'n']);
    // Only the table's own line ends are left raw.
    const raw = [...out].filter((ch) => {
      const cp = ch.codePointAt(0) as number;
      return (cp < 0x20 && cp !== 0x0a) || (cp >= 0x7f && cp <= 0x9f);
    });
    expect(raw).toEqual([]);
    const lines = out.trimEnd().split('\n');
    expect(lines).toHaveLength(5);
    expect(lines[2]).toContain('\\u001b[2J\\u001b[1;1HFAILED: all data deleted\\u000d\\u000a');
    expect(lines[3]).toContain('上海星辰\\u0009信息');
    // The second column starts at the same terminal column on every line.
    expect(new Set(lines.map(lastColumnStart)).size).toBe(1);

    const header = formatTable([{ 'k\x1b[31m': 'v' }]);
    expect(header.split('\n')[0]).toBe('k\\u001b[31m');
  });

  it('cuts a long cell at whole characters and keeps the columns aligned', () => {
    const out = formatTable(
      [
        { a: `${'上'.repeat(40)}\x1b`, b: 'x' },
        { a: `a${'😀'.repeat(40)}`, b: 'y' },
        { a: `${'x'.repeat(57)}\x1b[2J`, b: 'z' },
        { a: 'short', b: 'w' },
      ],
      ['a', 'b'],
    );
    const lines = out.trimEnd().split('\n');
    for (const l of lines.slice(2, 5)) expect(l).toContain('…');
    // No emoji cut in half: no lone surrogate.
    expect(out).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
    expect(lines[4]).toContain(`${'x'.repeat(57)}\\u…`);
    const starts = lines.map(lastColumnStart);
    expect(new Set(starts).size).toBe(1);
    expect(starts[0]).toBe(62);
  });
});

describe('the CLI prints upstream text inert on a terminal', { timeout: 120_000 }, () => {
  const CYCLE = '2026-11-20';
  const FORGED = '\x1b[2J\x1b[1;1HFAILED: all data deleted\r\n';
  // Short enough for the 60 columns of a table cell once escaped.
  const keyword = `星${FORGED}`;
  const error = `upstream said \x1b]0;owned\x07${FORGED}`;
  const reason = `insufficient\x9b2J\u202Elive${FORGED}`;
  let t: TestDatabase;
  let env: Record<string, string>;

  beforeAll(async () => {
    t = await freshDatabase();
    env = { DATABASE_URL: t.url };
    const [w] = await t.sql<{ id: string }[]>`
      insert into watchlist (keyword, keyword_key, priority, last_outcome, last_refreshed_at)
      values (${keyword}, ${keywordKey(keyword)}, 5, 'failed', now()) returning id`;
    await t.sql`
      insert into cycle_fetches (cycle, watch_id, status, attempts, error_code, error_message)
      values (${CYCLE}, ${w?.id as string}, 'failed', 3, 'invalid_request', ${error})`;
    await t.sql`
      insert into runs (kind, cycle, entity, outcome, error_code, error_message, finished_at)
      values ('enterprise', ${CYCLE}, ${keyword}, 'failed', 'upstream_error', ${error}, now())`;
    await t.sql`
      insert into cycle_budgets (cycle, budget, spent, paused_at, paused_reason)
      values (${CYCLE}, 100, 3, now(), ${reason})`;
  });
  afterAll(() => t?.drop());

  /** No raw ESC, CR, C1 or bidi control; the forged line only escaped, never at a line start. */
  const expectInert = (out: string, what: string) => {
    expect(out, what).not.toContain('\x1b');
    expect(out, what).not.toContain('\r');
    expect(out, what).not.toMatch(/[\x80-\x9f\u202a-\u202e\u2066-\u2069]/);
    expect(out, what).toContain('\\u001b[2J\\u001b[1;1HFAILED: all data deleted\\u000d\\u000a');
    expect(out.split('FAILED: all data deleted').length - 1, what).toBe(
      out.split('\\u001b[1;1HFAILED: all data deleted').length - 1,
    );
    expect(out, what).not.toMatch(/^\s*FAILED/m);
  };

  it('daybook watch list', async () => {
    const r = await runDaybook(['watch', 'list'], env);
    expect(r.code, r.stderr).toBe(0);
    expectInert(r.stdout, 'watch list');
    const json = await runDaybook(['watch', 'list', '--json'], env);
    const rows = JSON.parse(json.stdout) as { keyword: string }[];
    expect(rows.map((row) => row.keyword)).toEqual([keyword]);
  });

  it('daybook sql: the table escaped (headers too), JSON exact, CSV byte-exact', async () => {
    // daybook sql reads the analytics views only; the hostile text comes in as a value here.
    const value = `convert_from(decode('${Buffer.from(keyword).toString('hex')}', 'hex'), 'UTF8')`;
    const r = await runDaybook(['sql', `select ${value} as keyword`], env);
    expect(r.code, r.stderr).toBe(0);
    expectInert(r.stdout, 'sql');
    const aliased = await runDaybook(['sql', `select ${value} as "k\x1b[2J"`], env);
    expect(aliased.code, aliased.stderr).toBe(0);
    expect(aliased.stdout.split('\n')[0]).toBe('k\\u001b[2J');
    expectInert(aliased.stdout, 'sql aliased');
    const json = await runDaybook(['sql', '--json', `select ${value} as keyword`], env);
    expect(JSON.parse(json.stdout)).toEqual([{ keyword }]);
    const csv = await runDaybook(['sql', '--csv', `select ${value} as keyword`], env);
    expect(csv.stdout).toBe(`keyword\n"${keyword}"\n`);
  });

  it('daybook status: failed entries, recent failures and the pause reason', async () => {
    const r = await runDaybook(['status', '--no-queues', '--cycle', CYCLE, '--lang', 'en'], env);
    expect(r.code, r.stderr).toBe(0);
    expectInert(r.stdout, 'status');
    expect(r.stdout).toContain('PAUSED: insufficient\\u009b2J\\u202elive\\u001b[2J');
    expect(r.stdout).toContain('upstream said \\u001b]0;owned\\u0007');
    const json = await runDaybook(['status', '--no-queues', '--cycle', CYCLE, '--json'], env);
    const report = JSON.parse(json.stdout) as {
      credits: { pausedReason: string };
      failed: { enterprises: { keyword: string; detail: string }[] };
      recentFailures: { entity: string; error_message: string }[];
    };
    expect(report.credits.pausedReason).toBe(reason);
    expect(report.failed.enterprises).toMatchObject([{ keyword, detail: error }]);
    expect(report.recentFailures).toMatchObject([{ entity: keyword, error_message: error }]);
  });
});
