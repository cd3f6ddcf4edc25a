import { describe, expect, it } from 'vitest';
import { closestColumn, editDistance, parseWatchlistCsv } from '../../src/watch/csv.ts';
import { keywordKey } from '../../src/watch/keyword.ts';

/** The entries as [line, keyword, priority], asserting the file had no problem. */
const ok = (text: string) => {
  const r = parseWatchlistCsv(text);
  expect(r.errors).toEqual([]);
  return r.entries.map((e) => [e.line, e.keyword, e.priority]);
};
/** The problems as "line: message". */
const problems = (text: string) => parseWatchlistCsv(text).errors.map((e) => `${e.line}: ${e.message}`);

describe('reading a watchlist CSV', () => {
  it('reads names and priorities, the header being line 1', () => {
    expect(ok('name,priority\nA公司,3\nB公司,-2\n')).toEqual([
      [2, 'A公司', 3],
      [3, 'B公司', -2],
    ]);
  });

  it('gives an empty or missing priority the default 0', () => {
    expect(ok('name,priority\nA公司,\nB公司\n')).toEqual([
      [2, 'A公司', 0],
      [3, 'B公司', 0],
    ]);
  });

  it('needs no priority column', () => expect(ok('name\nA公司\n')).toEqual([[2, 'A公司', 0]]));

  it('strips a UTF-8 BOM before the header', () =>
    expect(ok('\uFEFFname\nA公司\n')).toEqual([[2, 'A公司', 0]]));

  it('reads CRLF line ends', () =>
    expect(ok('name,priority\r\nA公司,1\r\nB公司,2\r\n')).toEqual([
      [2, 'A公司', 1],
      [3, 'B公司', 2],
    ]));

  it('reads a last line without a line end', () => expect(ok('name\nA公司')).toEqual([[2, 'A公司', 0]]));

  it('skips blank and whitespace-only lines and keeps physical line numbers', () =>
    expect(ok('\nname\n\nA公司\n  \n\r\nB公司\n\n')).toEqual([
      [4, 'A公司', 0],
      [7, 'B公司', 0],
    ]));

  it('skips a line of bare commas', () =>
    expect(ok('name,priority\n,\nA公司,1\n')).toEqual([[3, 'A公司', 1]]));

  it('reads a quoted name with a comma inside', () =>
    expect(ok('name,priority\n"A, B 公司",2\n')).toEqual([[2, 'A, B 公司', 2]]));

  it('reads doubled quotes inside a quoted name as one quote', () =>
    expect(ok('name\n"A ""B"" 公司"\n')).toEqual([[2, 'A "B" 公司', 0]]));

  it('reads a quoted priority and a quoted header', () =>
    expect(ok('"name","priority"\n"A公司","7"\n')).toEqual([[2, 'A公司', 7]]));

  it('allows spaces around a quoted field', () =>
    expect(ok('name,priority\n  "A公司"  ,1\n')).toEqual([[2, 'A公司', 1]]));

  it('trims spaces around an unquoted name', () =>
    expect(ok('name\n   A公司  \n')).toEqual([[2, 'A公司', 0]]));

  it('tolerates trailing commas on the header and the rows', () =>
    expect(ok('name,priority,\nA公司,1,\nB公司,,,\n')).toEqual([
      [2, 'A公司', 1],
      [3, 'B公司', 0],
    ]));

  it('finds the name column in any position and ignores other columns', () =>
    expect(ok('city,priority,NAME,note\n上海,4,A公司,x\n')).toEqual([[2, 'A公司', 4]]));

  it.each(['Name', 'KEYWORD', 'ent_name', '企业名称', '名称'])('accepts %s as the name column', (col) =>
    expect(ok(`${col}\nA公司\n`)).toEqual([[2, 'A公司', 0]]),
  );

  it('accepts a priority of +5, -1000 and 1000', () =>
    expect(ok('name,priority\nA,+5\nB,-1000\nC,1000\n').map((e) => e[2])).toEqual([5, -1000, 1000]));

  it('a header alone is a valid file with nothing in it', () => expect(ok('name,priority\r\n')).toEqual([]));
});

describe('line numbers across quoted line breaks', () => {
  it('a line break inside a quoted name is read, then refused as a control character', () => {
    const r = parseWatchlistCsv('name\n"A\nB"\nC公司\n');
    expect(r.errors).toEqual([{ line: 2, message: 'name contains a control character' }]);
    expect(r.entries.map((e) => [e.line, e.keyword])).toEqual([[4, 'C公司']]);
  });

  it('a CRLF inside a quoted field counts as one line', () => {
    const r = parseWatchlistCsv('name,priority\r\n"A\r\nB",1\r\nC公司,2\r\n');
    expect(r.errors.map((e) => e.line)).toEqual([2]);
    expect(r.entries.map((e) => e.line)).toEqual([4]);
  });

  it('a quoted line break in another column keeps the name and the numbering', () =>
    expect(ok('name,note\nA公司,"two\nlines"\nB公司,x\n')).toEqual([
      [2, 'A公司', 0],
      [4, 'B公司', 0],
    ]));
});

describe('problems, each with its line', () => {
  it('an empty file', () =>
    expect(problems('')).toEqual(['1: the file is empty: it needs a header row with a name column']));

  it('a file of a BOM and blank lines only', () =>
    expect(problems('\uFEFF\r\n\r\n')[0]).toMatch(/^1: the file is empty/));

  it('a header without a name column', () =>
    expect(problems('company,priority\nA,1\n')[0]).toMatch(/^1: no name column in the header/));

  it('a header with two name columns', () =>
    expect(problems('name,keyword\nA,B\n')).toEqual([
      '1: the header has 2 name columns (name, keyword): keep one',
    ]));

  it('a header with a stray quote', () =>
    expect(problems('na"me\nA\n')[0]).toMatch(/^1: header: a stray quote/));

  it('an empty name, with checkEntName’s message', () =>
    expect(problems('name,priority\n,1\n  ,2\n""\n')).toEqual([
      '2: name is empty: give an enterprise name',
      '3: name is empty: give an enterprise name',
      '4: name is empty: give an enterprise name',
    ]));

  it('a name over 100 characters; exactly 100 is fine', () => {
    expect(problems(`name\n${'名'.repeat(101)}\n`)).toEqual([
      '2: name is 101 characters long; the upstream allows at most 100',
    ]);
    expect(ok(`name\n${'名'.repeat(100)}\n`)).toHaveLength(1);
  });

  it('a name with a control character', () => {
    expect(problems('name\nA\u0001B\n')).toEqual(['2: name contains a control character']);
    expect(problems('name\nA\tB\n')).toEqual(['2: name contains a control character']);
    expect(problems('name\nA\u007fB\n')).toEqual(['2: name contains a control character']);
  });

  it.each([
    ['abc', 'abc'],
    ['1.5', '1.5'],
    ['1e3', '1e3'],
    ['5000', '5000'],
    ['-1001', '-1001'],
    [' 0x10 ', '0x10'],
  ])('a bad priority %j', (raw, shown) =>
    expect(problems(`name,priority\nA,${raw}\n`)).toEqual([
      `2: priority "${shown}" is not a whole number from -1000 to 1000`,
    ]),
  );

  it('a duplicate name', () =>
    expect(problems('name\nA公司\nB公司\nA公司\n')).toEqual(['4: "A公司" is a duplicate of line 2']));

  it('a full-width duplicate of a half-width name', () =>
    expect(problems('name\nABC公司\nＡＢＣ公司\n')).toEqual(['3: "ＡＢＣ公司" is a duplicate of line 2']));

  it('a duplicate differing only in case and spacing', () =>
    expect(problems('name\nabc  公司\n ABC 公司\n')).toEqual(['3: "ABC 公司" is a duplicate of line 2']));

  it('a duplicate of a row that was itself invalid is not reported as a duplicate', () =>
    expect(problems('name,priority\nA,x\nA,1\n')).toEqual([
      '2: priority "x" is not a whole number from -1000 to 1000',
    ]));

  it('a stray quote inside an unquoted field', () =>
    expect(problems('name\nA"B\n')[0]).toMatch(/^2: a stray quote inside an unquoted field/));

  it('a stray character after a closing quote', () =>
    expect(problems('name\n"A"B\n')[0]).toMatch(/^2: a stray character after a closing quote/));

  it('a quote never closed names the line it opened on', () =>
    expect(problems('name\nA公司\n"B公司\nC公司\n')).toEqual([
      '3: a quoted field opened on line 3 is never closed',
    ]));

  it('keeps reading after a bad row and reports every problem in line order', () => {
    const r = parseWatchlistCsv('name,priority\nA,x\nB,1\nC"D,2\n,3\nE,4\n');
    expect(r.entries.map((e) => e.keyword)).toEqual(['B', 'E']);
    expect(r.errors.map((e) => e.line)).toEqual([2, 4, 5]);
  });
});

describe('the keyword key', () => {
  it('folds full-width forms, case and spacing', () => expect(keywordKey(' Ａbc  公司 ')).toBe('abc 公司'));
  it('folds an ideographic space to a plain one', () => expect(keywordKey('A\u3000公司')).toBe('a 公司'));
  it('folds full-width brackets, as registered names often use them', () =>
    expect(keywordKey('星辰（上海）有限公司')).toBe(keywordKey('星辰(上海)有限公司')));
  it('keeps different names apart', () => expect(keywordKey('A公司')).not.toBe(keywordKey('B公司')));
});

describe('the uscc column', () => {
  it('reads each row’s code, normalized, and an empty cell as none', () => {
    const r = parseWatchlistCsv('name,uscc\nA公司, 91350100m000100y43 \nB公司,\nC公司\n');
    expect(r.errors).toEqual([]);
    expect(r.entries.map((e) => [e.keyword, e.uscc])).toEqual([
      ['A公司', '91350100M000100Y43'],
      ['B公司', null],
      ['C公司', null],
    ]);
  });

  it('may be called 统一社会信用代码, any case of uscc, uncid or credit_code', () => {
    for (const col of ['统一社会信用代码', 'USCC', 'uncid', 'Credit_Code'])
      expect(parseWatchlistCsv(`name,${col}\nA公司,91110000600037341L\n`).entries[0]?.uscc).toBe(
        '91110000600037341L',
      );
  });

  it('a bad code names the line, the code and what is wrong with it', () =>
    expect(
      problems('name,uscc\nA公司,91350100M000100Y44\nB公司,9135010\nC公司,9135O100M000100Y43\n'),
    ).toEqual([
      '2: uscc "91350100M000100Y44" is not a valid unified social credit code: the check character at position 18 is "4", expected "3"',
      '3: uscc "9135010" is not a valid unified social credit code: a unified social credit code has 18 characters, this one has 7',
      '4: uscc "9135O100M000100Y43" is not a valid unified social credit code: the character at position 5 ("O") is not allowed: a code holds only 0-9 and A-Z without I, O, S, V, Z',
    ]));

  it('a header with two code columns', () =>
    expect(problems('name,uscc,uncid\nA,1,2\n')).toEqual([
      '1: the header has 2 code columns (uscc, uncid): keep one',
    ]));
});

describe('read by csv-parse: what the hand-written reader read, and more', () => {
  it('reads on after a stray character following a closing quote', () => {
    const r = parseWatchlistCsv('name\n"A"B\nC公司\n');
    expect(r.errors.map((e) => e.line)).toEqual([2]);
    expect(r.entries.map((e) => [e.line, e.keyword])).toEqual([[3, 'C公司']]);
  });

  it('an unclosed quote names the line it opened on, after a quoted line break in the same row', () =>
    expect(problems('name,note\nA公司,"two\nlines",  "never\nclosed\n')).toEqual([
      '2: a quoted field opened on line 3 is never closed',
    ]));

  it('numbers lines across CRLF, LF and a lone CR mixed in one file', () =>
    expect(ok('name,note\r\nA公司\nB公司\rC公司\r\nD公司,"x\r\ny"\n E公司\n')).toEqual([
      [2, 'A公司', 0],
      [3, 'B公司', 0],
      [4, 'C公司', 0],
      [5, 'D公司', 0],
      [7, 'E公司', 0],
    ]));

  it('keeps Chinese text, full-width punctuation and emoji as written', () =>
    expect(ok('企业名称,优先级\n"星辰（上海）信息科技有限公司，分公司",5\n🚀火箭科技有限公司,\n')).toEqual([
      [2, '星辰（上海）信息科技有限公司，分公司', 5],
      [3, '🚀火箭科技有限公司', 0],
    ]));

  it('reads 100,000 rows, numbering the last one', () => {
    const rows = Array.from({ length: 100_000 }, (_, i) => `公司${i},${i % 7}`);
    const r = parseWatchlistCsv(`\uFEFFname,priority\r\n${rows.join('\r\n')}\r\n`);
    expect(r.errors).toEqual([]);
    expect(r.entries).toHaveLength(100_000);
    expect(r.entries.at(-1)).toEqual({
      line: 100_001,
      keyword: '公司99999',
      priority: 99_999 % 7,
      uscc: null,
      shareholders: null,
      direct: true,
    });
  });
});

describe('the with_shareholders column', () => {
  it('reads 0 to 3 levels, an empty cell as none, and names any other value', () => {
    const r = parseWatchlistCsv('name,股东层级\n甲公司,2\n乙公司,\n丙公司,4\n丁公司,one\n');
    expect(r.entries.map((e) => [e.keyword, e.shareholders])).toEqual([
      ['甲公司', 2],
      ['乙公司', null],
    ]);
    expect(r.errors).toEqual([
      {
        line: 4,
        message: '股东层级 "4" is not a number of shareholder levels: give 0, 1, 2 or 3, or leave it empty',
      },
      {
        line: 5,
        message: '股东层级 "one" is not a number of shareholder levels: give 0, 1, 2 or 3, or leave it empty',
      },
    ]);
    expect(r.ignored).toEqual([]);
  });
});

describe('the direct column (watch list --csv)', () => {
  it('marks false rows as watched through a holder, reads expected_uscc, and names any other value', () => {
    const r = parseWatchlistCsv(
      'keyword,priority,expected_uscc,direct,shareholder_depth\n甲公司,5,91110000600037341L,true,2\n乙公司,,,false,0\n丙公司,,,,\n丁公司,,,maybe,\n',
    );
    expect(r.entries.map((e) => [e.keyword, e.priority, e.uscc, e.direct, e.shareholders])).toEqual([
      ['甲公司', 5, '91110000600037341L', true, 2],
      ['乙公司', 0, null, false, 0],
      ['丙公司', 0, null, true, null],
    ]);
    expect(r.errors).toEqual([
      {
        line: 5,
        message:
          'direct "maybe" is not true or false: give true (the row is an entry of yours), false (watched only as a shareholder of another), or leave it empty',
      },
    ]);
    expect(r.ignored).toEqual([]);
  });
});

describe('every problem of a row, each naming its column', () => {
  it('a bad priority and a bad code in one row are both reported, in column order', () => {
    const r = parseWatchlistCsv('name,priority,uscc\nA公司,abc,9135010\nB公司,1,\n');
    expect(r.errors.map((e) => `${e.line}: ${e.message}`)).toEqual([
      '2: priority "abc" is not a whole number from -1000 to 1000',
      '2: uscc "9135010" is not a valid unified social credit code: a unified social credit code has 18 characters, this one has 7',
    ]);
    expect(r.invalidRows).toBe(1);
    expect(r.entries.map((e) => e.keyword)).toEqual(['B公司']);
  });

  it('an empty name, a bad priority and a bad code: three problems of one row', () =>
    expect(problems('uscc,priority,name\n91350100M000100Y44,5000,\n')).toEqual([
      '2: uscc "91350100M000100Y44" is not a valid unified social credit code: the check character at position 18 is "4", expected "3"',
      '2: priority "5000" is not a whole number from -1000 to 1000',
      '2: name is empty: give an enterprise name',
    ]));

  it('a duplicate with a bad priority is both', () =>
    expect(problems('name,priority\nA公司,1\nA公司,x\n')).toEqual([
      '3: "A公司" is a duplicate of line 2',
      '3: priority "x" is not a whole number from -1000 to 1000',
    ]));

  it('names the column as the header spells it', () =>
    expect(problems('企业名称,优先级,统一社会信用代码\n,abc,123\n')).toEqual([
      '2: 企业名称 is empty: give an enterprise name',
      '2: 优先级 "abc" is not a whole number from -1000 to 1000',
      '2: 统一社会信用代码 "123" is not a valid unified social credit code: a unified social credit code has 18 characters, this one has 3',
    ]));

  it('counts rows, not problems', () => {
    const r = parseWatchlistCsv('name,priority\n,x\nB公司,y\nC公司,1\n');
    expect(r.errors).toHaveLength(3);
    expect(r.invalidRows).toBe(2);
  });
});

describe('columns daybook does not read', () => {
  it('a misspelt priority is named, with the closest known name, and its values are not read', () => {
    const r = parseWatchlistCsv('name,prioirty,analyst_note\nA公司,5,关注融资\n');
    expect(r.errors).toEqual([]);
    expect(r.entries.map((e) => [e.keyword, e.priority])).toEqual([['A公司', 0]]);
    expect(r.ignored).toEqual([
      {
        line: 1,
        position: 2,
        name: 'prioirty',
        suggestion: 'priority',
        label: 'column "prioirty"',
        why: 'daybook reads no column of that name; did you mean "priority"?',
        listed: false,
      },
      {
        line: 1,
        position: 3,
        name: 'analyst_note',
        suggestion: null,
        label: 'column "analyst_note"',
        why: 'daybook reads no column of that name',
        listed: false,
      },
    ]);
  });

  it('a column the header leaves unnamed is ignored only when it holds a value, named by the line of the first', () => {
    expect(parseWatchlistCsv('name,priority,\nA公司,1,\nB公司,,,\n').ignored).toEqual([]);
    expect(parseWatchlistCsv('name,,priority\nA公司,,1\nB公司,x,2,y\nC公司,z\n').ignored).toEqual([
      {
        line: 3,
        position: 2,
        name: '',
        suggestion: null,
        label: 'column 2',
        why: 'the header gives it no name',
        listed: false,
      },
      {
        line: 3,
        position: 4,
        name: '',
        suggestion: null,
        label: 'column 4',
        why: 'the header gives it no name',
        listed: false,
      },
    ]);
  });

  it('the columns watch list --csv writes for reading are marked as listed, not misspellings', () =>
    expect(
      parseWatchlistCsv('id,keyword,pid,resolved_name,note\n1,A公司,p1,A,x\n').ignored.map((c) => [
        c.name,
        c.listed,
      ]),
    ).toEqual([
      ['id', true],
      ['pid', true],
      ['resolved_name', true],
      ['note', false],
    ]));

  it('known columns are not warned about, in any case', () =>
    expect(parseWatchlistCsv('NAME,Priority,统一社会信用代码\nA公司,1,\n').ignored).toEqual([]));

  it('a misspelt name column is suggested when the header has none', () =>
    expect(problems('nmae,priority\nA公司,1\n')).toEqual([
      '1: no name column in the header (expected one of: name, keyword, ent_name, 企业名称, 名称); did you mean "name" for "nmae"?',
    ]));

  it('a file separated by semicolons or tabs is told so', () =>
    expect(problems('name;priority\nA公司;1\n')[0]).toMatch(
      /^1: no name column in the header .*\(the header is one column, "name;priority": daybook reads comma-separated files\)$/,
    ));
});

describe('the closest known column', () => {
  it.each([
    ['prioirty', 'priority'],
    ['Priorty', 'priority'],
    ['nmae', 'name'],
    ['keywrod', 'keyword'],
    ['uscc_', 'uscc'],
    ['企业名', '企业名称'],
    ['credit-code', 'credit_code'],
  ])('%s → %s', (name, known) => expect(closestColumn(name)).toBe(known));

  it.each(['analyst_note', 'note', 'city', 'id', 'prio', 'x'])('%s → none', (name) =>
    expect(closestColumn(name)).toBeNull(),
  );

  it('counts a swap of neighbours as one edit, in code points', () => {
    expect(editDistance('prioirty', 'priority')).toBe(1);
    expect(editDistance('名称', '名字')).toBe(1);
    expect(editDistance('', 'abc')).toBe(3);
  });
});
