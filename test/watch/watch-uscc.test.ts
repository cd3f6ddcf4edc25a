/** Watching by unified social credit code through the real CLI: `--uscc`, the uscc column, `--pin`, dry runs. */
import { beforeEach, describe, expect, it } from 'vitest';
import { addWatches, countWatches, listWatches, previewWatches } from '../../src/watch/store.ts';
import { type CliResult, cliDatabaseOfFile } from '../support/cli.ts';
import type { TestDatabase } from '../support/db.ts';

const c = cliDatabaseOfFile('uscc');
const { daybook, file: csvFile } = c;
let t: TestDatabase;
beforeEach(async () => {
  t = c.t;
  await t.sql`truncate watchlist restart identity cascade`;
});

const rowCount = async () => (await countWatches(t.sql)).total;
const noStackTrace = (r: CliResult) => expect(r.stderr).not.toMatch(/\n\s+at /);

interface ListedRow {
  id: number;
  keyword: string;
  expected_uscc: string | null;
  pin_uscc: boolean;
  match: string | null;
  resolution_mismatch: string | null;
}
const listed = async () => JSON.parse((await daybook('watch', 'list', '--json')).stdout) as ListedRow[];

describe('watching by unified social credit code', { timeout: 120_000 }, () => {
  it('watch add --uscc stores the code, normalized, and watch list shows it', async () => {
    const r = await daybook('watch', 'add', '星辰信息', '--uscc', ' 91310115342050446k ');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('added: 星辰信息 (id 1, expected code 91310115342050446K)');
    const [row] = await listed();
    expect(row).toMatchObject({ keyword: '星辰信息', expected_uscc: '91310115342050446K', match: null });
    const table = await daybook('watch', 'list');
    expect(table.stdout.split('\n')[0]).toMatch(
      /resolved name\s+resolved code\s+match\s+expected code\s+mismatch\s+changes\/month\s+next due\s+shareholder of$/,
    );
    expect(table.stdout).toContain('91310115342050446K');
  });

  it('a code with a wrong check character exits 2, says which character it expected, and adds nothing', async () => {
    const r = await daybook('watch', 'add', '某公司', '--uscc', '91350100M000100Y44');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      '--uscc: "91350100M000100Y44" is not a valid unified social credit code: the check character at position 18 is "4", expected "3"; nothing was added',
    );
    noStackTrace(r);
    expect(await rowCount()).toBe(0);
  });

  it('a code of the wrong length or with a letter it may not hold exits 2 naming the problem', async () => {
    const short = await daybook('watch', 'add', '某公司', '--uscc', '9135010');
    expect(short.code).toBe(2);
    expect(short.stderr).toMatch(/has 18 characters, this one has 7/);
    const letter = await daybook('watch', 'add', '某公司', '--uscc', '9135O100M000100Y43');
    expect(letter.code).toBe(2);
    expect(letter.stderr).toMatch(/the character at position 5 \("O"\) is not allowed/);
    noStackTrace(letter);
    expect(await rowCount()).toBe(0);
  });

  it('--uscc with two names, or with --pin, exits 2 and adds nothing', async () => {
    const two = await daybook('watch', 'add', 'A公司', 'B公司', '--uscc', '91350100M000100Y43');
    expect(two.code).toBe(2);
    expect(two.stderr).toMatch(/give one name, not 2/);
    const both = await daybook('watch', 'add', 'A公司', '--uscc', '91350100M000100Y43', '--pin');
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/--pin and --uscc exclude each other/);
    expect(await rowCount()).toBe(0);
  });

  it('watch add --pin marks the entry to take the code of its next refresh', async () => {
    const r = await daybook('watch', 'add', 'A公司', '--pin', '--json');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ added: 1, pin: true });
    expect(await listed()).toMatchObject([{ keyword: 'A公司', expected_uscc: null, pin_uscc: true }]);
    const table = await daybook('watch', 'list');
    expect(table.stdout).toContain('(pinned at the next refresh)');
  });

  it('imports a uscc column, codes checked and normalized, an empty cell being none', async () => {
    const file = csvFile(
      'codes.csv',
      'name,priority,统一社会信用代码\nA公司,1,91350100m000100y43\nB公司,2,\nC公司,3,91110000600037341L\n',
    );
    const r = await daybook('watch', 'import', file);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const rows = await listWatches(t.sql);
    expect(rows.map((x) => [x.keyword, x.expected_uscc])).toEqual([
      ['C公司', '91110000600037341L'],
      ['B公司', null],
      ['A公司', '91350100M000100Y43'],
    ]);
  });

  it('an import with one bad code exits 2, names its line and the problem, and imports nothing', async () => {
    await daybook('watch', 'add', '已有公司');
    const file = csvFile(
      'bad-code.csv',
      'name,uscc\n好公司,91350100M000100Y43\n坏代码公司,91350100M000100Y44\n另一家公司,\n',
    );
    const r = await daybook('watch', 'import', file);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /^line 3: uscc "91350100M000100Y44" is not a valid unified social credit code: the check character at position 18 is "4", expected "3"$/m,
    );
    expect(r.stderr).toMatch(/1 invalid row\(s\) in .*bad-code\.csv; nothing imported/);
    noStackTrace(r);
    expect(r.stdout).toBe('');
    expect((await listWatches(t.sql)).map((x) => x.keyword)).toEqual(['已有公司']);
  });

  it('import --pin pins the rows without a code only', async () => {
    const file = csvFile('pin.csv', 'name,uscc\nA公司,91350100M000100Y43\nB公司,\n');
    expect((await daybook('watch', 'import', file, '--pin')).code).toBe(0);
    const rows = await listWatches(t.sql);
    expect(rows.map((x) => [x.keyword, x.expected_uscc, x.pin_uscc])).toEqual([
      ['A公司', '91350100M000100Y43', false],
      ['B公司', null, true],
    ]);
  });

  it('a code given for an entry already watched becomes its expected code and clears its mismatch flag', async () => {
    await daybook('watch', 'add', 'A公司', '--uscc', '91350100M000100Y43');
    await t.sql`update watchlist set resolution_mismatch = '91110000600037341L 别的公司 (cycle 2026-11-20)'`;
    await daybook('watch', 'add', 'A公司');
    expect((await listWatches(t.sql))[0]).toMatchObject({
      expected_uscc: '91350100M000100Y43',
      resolution_mismatch: '91110000600037341L 别的公司 (cycle 2026-11-20)',
    });
    const r = await daybook('watch', 'add', 'A公司', '--uscc', '91110000600037341L');
    expect(r.stdout).toContain('already watched: A公司');
    expect((await listWatches(t.sql))[0]).toMatchObject({
      expected_uscc: '91110000600037341L',
      resolution_mismatch: null,
    });
  });

  it('import --dry-run takes no ids: a dry run then an import numbers entries as the import alone', async () => {
    const file = csvFile('ids.csv', 'name\nA公司\nB公司\nC公司\nD公司\n');
    const ids = async () =>
      (await t.sql<{ keyword: string; id: string }[]>`select keyword, id from watchlist order by id`).map(
        (r) => [r.keyword, Number(r.id)],
      );

    const sequence = async () =>
      (
        await t.sql<{ last: string; called: boolean }[]>`
        select last_value::text as last, is_called as called from watchlist_id_seq`
      )[0];

    await daybook('watch', 'add', 'A公司');
    const before = await sequence();
    const dry = await daybook('watch', 'import', file, '--dry-run');
    expect(dry.stdout.trim()).toBe('would import 3, already watched 1, invalid 0');
    expect(await rowCount()).toBe(1);
    expect(await sequence()).toEqual(before);
    expect((await daybook('watch', 'import', file)).stdout.trim()).toBe(
      'imported 3, already watched 1, invalid 0',
    );
    const afterDryRun = await ids();

    await t.sql`truncate watchlist restart identity cascade`;
    await daybook('watch', 'add', 'A公司');
    await daybook('watch', 'import', file);
    expect(await ids()).toEqual(afterDryRun);
  });

  it('the preview counts a removed entry as added again, like the import', async () => {
    await addWatches(t.sql, [
      { keyword: 'A公司', priority: 0 },
      { keyword: 'B公司', priority: 0 },
    ]);
    await t.sql`update watchlist set active = false where keyword = 'B公司'`;
    const entries = [
      { keyword: 'ａ公司', priority: 0 },
      { keyword: 'B公司', priority: 0 },
      { keyword: 'C公司', priority: 0 },
      { keyword: 'C公司 ', priority: 0 },
    ];
    expect(await previewWatches(t.sql, entries)).toEqual({ added: 2, existing: 1 });
    const real = await addWatches(t.sql, entries);
    expect({ added: real.added, existing: real.existing }).toEqual({ added: 2, existing: 1 });
  });
});
