import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { addWatches, countWatches, listWatches, removeWatch } from '../../src/watch/store.ts';
import { cliDatabaseOfFile } from '../support/cli.ts';
import type { TestDatabase } from '../support/db.ts';

const c = cliDatabaseOfFile('watch');
/** Runs the real `daybook` command against this file's database. */
const { daybook, file: csvFile } = c;
let t: TestDatabase;
beforeEach(async () => {
  t = c.t;
  await t.sql`truncate watchlist restart identity cascade`;
});

const rowCount = async () => (await countWatches(t.sql)).total;

describe('daybook watch', { timeout: 120_000 }, () => {
  it('adds, lists and removes entries in a round trip', async () => {
    const add = await daybook(
      'watch',
      'add',
      '上海星辰信息科技有限公司',
      '北京华拓电子有限公司',
      '--priority',
      '5',
    );
    expect(add.code).toBe(0);
    expect(add.stdout).toContain('added: 上海星辰信息科技有限公司');
    expect(add.stdout).toContain('added 2, already watched 0');

    const again = await daybook('watch', 'add', '上海星辰信息科技有限公司');
    expect(again.stdout).toContain('already watched: 上海星辰信息科技有限公司');
    expect(again.stdout).toContain('added 0, already watched 1');

    const table = await daybook('watch', 'list');
    expect(table.code).toBe(0);
    expect(table.stdout.split('\n')[0]).toMatch(
      /^id\s+keyword\s+priority\s+pid\s+last refreshed\s+last outcome/,
    );
    expect(table.stdout).toContain('北京华拓电子有限公司');

    const removed = await daybook('watch', 'remove', '北京华拓电子有限公司');
    expect(removed).toMatchObject({ code: 0 });
    const rows = JSON.parse((await daybook('watch', 'list', '--json')).stdout) as { keyword: string }[];
    expect(rows.map((r) => r.keyword)).toEqual(['上海星辰信息科技有限公司']);
    const all = JSON.parse((await daybook('watch', 'list', '--all', '--json')).stdout) as {
      active: boolean;
    }[];
    expect(all.map((r) => r.active)).toEqual([true, false]);
  });

  it('list --json prints an array of rows, highest priority first', async () => {
    await daybook('watch', 'add', '低优先公司', '--priority', '1');
    await daybook('watch', 'add', '高优先公司', '--priority', '9');
    const r = await daybook('watch', 'list', '--json');
    expect(r.code).toBe(0);
    const rows = JSON.parse(r.stdout) as {
      id: number;
      keyword: string;
      priority: number;
      pid: string | null;
    }[];
    expect(rows.map((x) => [x.keyword, x.priority, x.pid])).toEqual([
      ['高优先公司', 9, null],
      ['低优先公司', 1, null],
    ]);
    expect(typeof rows[0]?.id).toBe('number');
  });

  it('a full-width spelling of a watched name is the same entry', async () => {
    await daybook('watch', 'add', 'ABC科技有限公司');
    const r = await daybook('watch', 'add', 'ＡＢＣ科技有限公司');
    expect(r.stdout).toContain('already watched 1');
    expect(await rowCount()).toBe(1);
  });

  it('one bad name among good ones is named, exits 2 and adds nothing', async () => {
    const r = await daybook('watch', 'add', '好公司', '名'.repeat(101), '  ');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/101 characters/);
    expect(r.stderr).toMatch(/empty/);
    expect(r.stderr).toMatch(/nothing was added/);
    expect(await rowCount()).toBe(0);
  });

  it('a priority that is not a number exits 2 with a message and no stack trace', async () => {
    const r = await daybook('watch', 'add', '某公司', '--priority', 'abc');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--priority must be a whole number, got "abc"/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(await rowCount()).toBe(0);
  });

  it('an unknown subcommand exits 2', async () => {
    const r = await daybook('watch', 'frobnicate');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown command 'frobnicate'/);
  });

  it('daybook import suggests watch import, not export; a subcommand name of two groups suggests both', async () => {
    const file = csvFile('suggest.csv', 'name\nA公司\n');
    expect(await daybook('import', file)).toEqual({
      code: 2,
      stdout: '',
      stderr: "error: unknown command 'import'\n(Did you mean watch import?)\n(run with --help for usage)\n",
    });
    expect((await daybook('list')).stderr).toMatch(/^\(Did you mean watch list or subscribe list\?\)$/m);
    // Anything else keeps commander's answer.
    expect((await daybook('exprt')).stderr).toMatch(/^\(Did you mean export\?\)$/m);
    expect(await daybook('frobnicate')).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/unknown command 'frobnicate'/),
    });
    expect(await rowCount()).toBe(0);
  });

  it('removing what is not watched exits 2 with a clear message', async () => {
    const r = await daybook('watch', 'remove', '不存在的公司');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/nothing watched matches "不存在的公司"/);
  });

  it('imports a CSV with a BOM, CRLF, quotes and blank lines', async () => {
    await daybook('watch', 'add', '已有公司');
    const file = csvFile(
      'good.csv',
      '\uFEFF企业名称,Priority\r\n"星辰, ""北京"" 有限公司",3\r\n\r\n已有公司,\r\n华拓电子有限公司,-1\r\n',
    );
    const r = await daybook('watch', 'import', file);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout.trim()).toBe('imported 2, already watched 1, invalid 0');
    const rows = await listWatches(t.sql);
    expect(rows.map((x) => [x.keyword, x.priority])).toEqual([
      ['星辰, "北京" 有限公司', 3],
      ['已有公司', 0],
      ['华拓电子有限公司', -1],
    ]);
  });

  it('an invalid CSV exits 2, names each bad line on stderr and imports nothing', async () => {
    await daybook('watch', 'add', '已有公司');
    const before = await rowCount();
    const file = csvFile(
      'bad.csv',
      `name,priority\n好公司,1\n${'名'.repeat(101)},2\n坏优先级公司,abc\n好公司,3\n坏"引号公司\n`,
    );
    const r = await daybook('watch', 'import', file);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^line 3: name is 101 characters/m);
    expect(r.stderr).toMatch(/^line 4: priority "abc"/m);
    expect(r.stderr).toMatch(/^line 5: "好公司" is a duplicate of line 2$/m);
    expect(r.stderr).toMatch(/^line 6: a stray quote/m);
    expect(r.stderr).toMatch(/nothing imported/);
    expect(r.stdout).toBe('');
    expect(await rowCount()).toBe(before);
  });

  it('--skip-invalid imports the valid rows and still reports the invalid ones', async () => {
    const file = csvFile('mixed.csv', 'name,priority\n好公司,1\n坏公司,1.5\n另一家公司,\n');
    const r = await daybook('watch', 'import', file, '--skip-invalid');
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^line 3: priority "1.5"/m);
    expect(r.stdout.trim()).toBe('imported 2, already watched 0, invalid 1');
    expect((await listWatches(t.sql)).map((x) => x.keyword)).toEqual(['好公司', '另一家公司']);
  });

  it('import --json prints a summary that parses', async () => {
    const file = csvFile('json.csv', 'name\nA公司\nB公司\n,\n坏"公司\n');
    const r = await daybook('watch', 'import', file, '--json', '--skip-invalid');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ imported: 2, alreadyWatched: 0, invalid: 1 });
    expect(r.stderr).toMatch(/^line 5: /m);
    const dry = await daybook('watch', 'import', file, '--json', '--skip-invalid', '--dry-run');
    expect(JSON.parse(dry.stdout)).toEqual({ dryRun: true, imported: 0, alreadyWatched: 2, invalid: 1 });
  });

  it('--dry-run says what would be imported and writes nothing', async () => {
    await daybook('watch', 'add', 'A公司');
    const file = csvFile('dry.csv', 'name\nA公司\nB公司\n');
    const r = await daybook('watch', 'import', file, '--dry-run');
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe('would import 1, already watched 1, invalid 0');
    expect(await rowCount()).toBe(1);
  });

  it('names each column it does not read, with the closest known name, and imports the rest', async () => {
    await daybook('watch', 'add', '北京华拓电子有限公司');
    const file = csvFile(
      'columns.csv',
      'name,prioirty,analyst_note\n上海星辰信息科技有限公司,10,关注融资\n北京华拓电子有限公司,5,"供应商, 二级"\n',
    );
    const dry = await daybook('watch', 'import', file, '--dry-run');
    expect(dry.code).toBe(0);
    expect(dry.stderr.split('\n')).toEqual([
      'line 1: warning: column "prioirty" is ignored: daybook reads no column of that name; did you mean "priority"?',
      'line 1: warning: column "analyst_note" is ignored: daybook reads no column of that name',
      '',
    ]);
    expect(dry.stdout).toBe(
      'would import 1, already watched 1, invalid 0; ignored columns: prioirty, analyst_note\n',
    );
    expect(await rowCount()).toBe(1);

    const json = await daybook('watch', 'import', file, '--json');
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({
      imported: 1,
      alreadyWatched: 1,
      invalid: 0,
      ignoredColumns: ['prioirty', 'analyst_note'],
    });
    expect(json.stderr).toMatch(/^line 1: warning: column "prioirty" is ignored/m);
    expect((await listWatches(t.sql)).map((x) => [x.keyword, x.priority])).toEqual([
      ['北京华拓电子有限公司', 0],
      ['上海星辰信息科技有限公司', 0],
    ]);
  });

  it('--strict refuses a file with a column it does not read: exit 2, every column named, nothing written', async () => {
    const file = csvFile(
      'strict.csv',
      'name,prioirty,analyst_note,\n上海星辰信息科技有限公司,10,关注融资,x\n',
    );
    for (const extra of [[], ['--dry-run'], ['--skip-invalid'], ['--json']]) {
      const r = await daybook('watch', 'import', file, '--strict', ...extra);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr.split('\n')).toEqual([
        'line 1: column "prioirty": daybook reads no column of that name; did you mean "priority"?',
        'line 1: column "analyst_note": daybook reads no column of that name',
        'line 2: column 4: the header gives it no name',
        `daybook: ${file} has 3 column(s) daybook does not read (prioirty, analyst_note, column 4); nothing imported (--strict refuses them; without it they are ignored)`,
        '',
      ]);
    }
    expect(await rowCount()).toBe(0);
    const good = csvFile('strict-ok.csv', '企业名称,优先级,统一社会信用代码\n上海星辰信息科技有限公司,10,\n');
    expect(await daybook('watch', 'import', good, '--strict')).toMatchObject({
      code: 0,
      stderr: '',
      stdout: 'imported 1, already watched 0, invalid 0\n',
    });
  });

  it('reports every problem of a row, each with its line and column, and counts the row once', async () => {
    const file = csvFile(
      'two-problems.csv',
      'name,priority,uscc\n好公司,1,\n坏公司,abc,9135010\n好公司,x,\n',
    );
    const r = await daybook('watch', 'import', file);
    expect(r.code).toBe(2);
    expect(r.stderr.split('\n')).toEqual([
      'line 3: priority "abc" is not a whole number from -1000 to 1000',
      'line 3: uscc "9135010" is not a valid unified social credit code: a unified social credit code has 18 characters, this one has 7',
      'line 4: "好公司" is a duplicate of line 2',
      'line 4: priority "x" is not a whole number from -1000 to 1000',
      `daybook: 2 invalid row(s) in ${file}; nothing imported (--skip-invalid imports the valid rows)`,
      '',
    ]);
    expect(await rowCount()).toBe(0);
    const skip = await daybook('watch', 'import', file, '--skip-invalid', '--json');
    expect(JSON.parse(skip.stdout)).toEqual({ imported: 1, alreadyWatched: 0, invalid: 2 });
  });

  it('says the rows left to their holder among the other problems, in the order of the file', async () => {
    const file = csvFile(
      'shareholder-rows.csv',
      'name,priority,direct,note\n甲公司,1,true,\n乙公司,,false,\n丙公司,abc,,\n丁公司,,false,\n戊公司,2,maybe,\n',
    );
    const r = await daybook('watch', 'import', file, '--skip-invalid');
    expect(r.code).toBe(0);
    const left = (name: string) =>
      `${name} is not imported as an entry: it is watched only as a shareholder (direct is false); watching its holder with shareholders watches it again`;
    expect(r.stderr.split('\n')).toEqual([
      'line 1: warning: column "note" is ignored: daybook reads no column of that name',
      `line 3: ${left('乙公司')}`,
      'line 4: priority "abc" is not a whole number from -1000 to 1000',
      `line 5: ${left('丁公司')}`,
      'line 6: direct "maybe" is not true or false: give true (the row is an entry of yours), false (watched only as a shareholder of another), or leave it empty',
      '',
    ]);
    expect(r.stdout).toBe(
      'imported 1, already watched 0, invalid 2, shareholder rows left to their holders 2; ignored columns: note\n',
    );
    expect((await listWatches(t.sql)).map((x) => x.keyword)).toEqual(['甲公司']);
  });

  it('a missing file exits 2 with a message', async () => {
    const r = await daybook('watch', 'import', join(c.dir, 'nope.csv'));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/cannot read .*nope\.csv: no such file/);
  });

  it('a file that is not UTF-8 exits 2 and imports nothing', async () => {
    const path = join(c.dir, 'gbk.csv');
    writeFileSync(path, Buffer.from([0x6e, 0x61, 0x6d, 0x65, 0x0a, 0xc9, 0xcf, 0xba, 0xa3, 0x0a]));
    const r = await daybook('watch', 'import', path);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/not UTF-8/);
    expect(await rowCount()).toBe(0);
  });

  it('--help shows examples', async () => {
    const r = await daybook('watch', 'import', '--help');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('--skip-invalid');
    expect(r.stdout).toContain('Example');
    // Wrapped like the other help texts: no line wider than 95 columns (a Chinese character takes 2).
    const columns = (line: string) =>
      [...line].reduce((n, ch) => n + (/[\u2e80-\ua4cf\uff00-\uff60]/.test(ch) ? 2 : 1), 0);
    expect(r.stdout.split('\n').filter((line) => columns(line) > 95)).toEqual([]);
  });
});

describe('daybook watch list on a long watchlist', { timeout: 120_000 }, () => {
  beforeEach(async () => {
    await addWatches(
      t.sql,
      Array.from({ length: 1_005 }, (_, i) => ({ keyword: `公司${i}`, priority: i === 7 ? 9 : 0 })),
    );
    await removeWatch(t.sql, '公司3');
  });
  const tableRows = (stdout: string) => stdout.split('\n').filter((l) => /^\d+ /.test(l));

  it('the table shows the first 1,000 entries, highest priority first, and says how many more', async () => {
    const r = await daybook('watch', 'list');
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const rows = tableRows(r.stdout);
    expect(rows).toHaveLength(1_000);
    expect(rows[0]).toMatch(/^8 +公司7 +9\b/);
    expect(
      r.stdout.endsWith(
        '(showing the first 1,000 of 1,004 entries, highest priority first: 4 more; --limit N shows more, --csv or --json prints every entry)\n',
      ),
    ).toBe(true);
  });

  it('--limit N shows N; a limit above the count shows every entry and no line of more', async () => {
    const three = await daybook('watch', 'list', '--limit', '3');
    expect(tableRows(three.stdout).map((l) => l.split(/ +/)[1])).toEqual(['公司7', '公司0', '公司1']);
    expect(three.stdout).toMatch(
      /\(showing the first 3 of 1,004 entries, highest priority first: 1,001 more;/,
    );
    const every = await daybook('watch', 'list', '--limit', '5000', '--all');
    expect(tableRows(every.stdout)).toHaveLength(1_005);
    expect(every.stdout).not.toMatch(/more/);
  });

  it('--json and --csv print every entry unless --limit; with it, how many more is said on stderr', async () => {
    const json = await daybook('watch', 'list', '--json');
    expect(json.stderr).toBe('');
    expect(JSON.parse(json.stdout)).toHaveLength(1_004);
    const two = await daybook('watch', 'list', '--json', '--limit', '2');
    expect((JSON.parse(two.stdout) as { keyword: string }[]).map((x) => x.keyword)).toEqual([
      '公司7',
      '公司0',
    ]);
    expect(two.stderr).toBe(
      'daybook: printed the first 2 of 1,004 entries: 1,002 more (a higher --limit, or none, prints them)\n',
    );

    const csv = await daybook('watch', 'list', '--csv', '--all');
    expect(csv).toMatchObject({ code: 0, stderr: '' });
    const lines = csv.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(
      'id,keyword,priority,active,pid,added_at,last_refreshed_at,last_cycle,last_outcome,last_error,expected_uscc,pin_uscc,resolved_name,resolved_uscc,match,resolution_mismatch,changes_per_month,due_at,direct,shareholder_depth,watched_through',
    );
    expect(lines).toHaveLength(1 + 1_005);
    expect(lines[1]).toMatch(/^8,公司7,9,true,,\d{4}-\d\d-\d\dT[\d:.]+Z,,,,,,false,,,,,,,true,0,$/);
    expect(lines.filter((l) => /^\d+,公司3,0,false,/.test(l))).toHaveLength(1);
    const limited = await daybook('watch', 'list', '--csv', '--limit', '1');
    expect(limited.stdout.trimEnd().split('\n')).toHaveLength(2);
    expect(limited.stderr).toMatch(/^daybook: printed the first 1 of 1,004 entries: 1,003 more/);
  });

  it('what --csv prints, watch import reads back: names, priorities, expected codes and direct; the other columns named in one line, not warned of', async () => {
    const file = csvFile('listed.csv', (await daybook('watch', 'list', '--csv')).stdout);
    await t.sql`truncate watchlist restart identity cascade`;
    const r = await daybook('watch', 'import', file);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      'imported 1004, already watched 0, invalid 0; ignored columns: id, active, pid, added_at, last_refreshed_at, last_cycle, last_outcome, last_error, pin_uscc, resolved_name, resolved_uscc, match, resolution_mismatch, changes_per_month, due_at, watched_through\n',
    );
    expect(r.stderr).toMatch(
      /^line 1: 16 column\(s\) that watch list --csv writes for reading are not imported: id, active, pid, added_at, .*, watched_through$/m,
    );
    // No warning for a column the list wrote: a warning is for a misspelling or a stray column.
    expect(r.stderr).not.toMatch(/warning: column/);
    expect(r.stderr).not.toMatch(/column "(expected_uscc|direct)"/);
    expect((await listWatches(t.sql, { limit: 2 })).map((x) => [x.keyword, x.priority])).toEqual([
      ['公司7', 9],
      ['公司0', 0],
    ]);
  });

  it('--json with --csv, and a --limit that is not a whole number from 1, exit 2', async () => {
    expect(await daybook('watch', 'list', '--json', '--csv')).toMatchObject({
      code: 2,
      stdout: '',
      stderr: 'daybook: choose one of --json and --csv\n',
    });
    for (const bad of ['0', '-1', 'abc', '1.5'])
      expect((await daybook('watch', 'list', '--limit', bad)).code, bad).toBe(2);
  });
});

describe('the watchlist store', () => {
  it('returns one id per input entry, the same id for the same keyword key', async () => {
    const r = await addWatches(t.sql, [
      { keyword: 'A公司', priority: 1 },
      { keyword: 'B公司', priority: 2 },
      { keyword: 'Ａ公司', priority: 3 },
    ]);
    expect(r).toMatchObject({ added: 2, existing: 0 });
    expect(r.ids).toHaveLength(3);
    expect(r.ids[2]).toBe(r.ids[0]);
    expect(r.ids[1]).not.toBe(r.ids[0]);
  });

  it('keeps the priority of an entry already watched unless told to update it', async () => {
    await addWatches(t.sql, [{ keyword: 'A公司', priority: 1 }]);
    expect(await addWatches(t.sql, [{ keyword: 'a公司', priority: 9 }])).toMatchObject({
      added: 0,
      existing: 1,
    });
    expect((await listWatches(t.sql))[0]?.priority).toBe(1);
    await addWatches(t.sql, [{ keyword: 'A公司', priority: 9 }], { updatePriority: true });
    expect((await listWatches(t.sql))[0]?.priority).toBe(9);
  });

  it('watches a removed entry again, keeping its id', async () => {
    const { ids } = await addWatches(t.sql, [{ keyword: 'A公司', priority: 0 }]);
    expect(await removeWatch(t.sql, 'A公司')).toBe(1);
    expect(await countWatches(t.sql)).toEqual({ active: 0, total: 1 });
    const again = await addWatches(t.sql, [{ keyword: 'A公司', priority: 4 }]);
    expect(again.watches).toEqual([{ id: ids[0], keyword: 'A公司', status: 'reactivated' }]);
    expect(again.added).toBe(1);
    expect(await countWatches(t.sql)).toEqual({ active: 1, total: 1 });
  });

  it('removes by resolved PID every entry that resolved to it', async () => {
    await addWatches(t.sql, [
      { keyword: '星辰公司', priority: 0 },
      { keyword: '星辰信息科技有限公司', priority: 0 },
      { keyword: '别的公司', priority: 0 },
    ]);
    await t.sql`update watchlist set pid = 'pid-1' where keyword like '星辰%'`;
    expect(await removeWatch(t.sql, 'pid-1')).toBe(2);
    expect((await listWatches(t.sql)).map((r) => r.keyword)).toEqual(['别的公司']);
    expect(await removeWatch(t.sql, 'pid-1')).toBe(0);
  });

  it('adds thousands of entries in one statement', async () => {
    const entries = Array.from({ length: 30_000 }, (_, i) => ({ keyword: `公司${i}`, priority: i % 7 }));
    const r = await addWatches(t.sql, entries);
    expect(r.added).toBe(30_000);
    expect(new Set(r.ids).size).toBe(30_000);
    expect((await countWatches(t.sql)).active).toBe(30_000);
  });
});
