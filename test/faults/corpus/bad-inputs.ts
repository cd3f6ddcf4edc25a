/**
 * The bad-input corpus: command lines, watchlist CSV files, environment values and product
 * parameters a person might get wrong. Each one must be refused with exit code 2, a message that
 * names the problem (`expect`, every pattern must match stderr), no stack trace and nothing
 * written anywhere. Used by test/faults/bad-input.test.ts.
 */

export type Area = 'cli' | 'csv' | 'env' | 'product';

export interface BadInput {
  area: Area;
  what: string;
  args: string[];
  /** Added to the test's environment; an empty string unsets a variable. */
  env?: Record<string, string>;
  /** Files written into the case's working directory first: name → content. */
  files?: Record<string, string | Buffer>;
  expect: RegExp[];
}

const cli = (what: string, args: string[], ...expect: RegExp[]): BadInput => ({
  area: 'cli',
  what,
  args,
  expect,
});
const product = (what: string, args: string[], ...expect: RegExp[]): BadInput => ({
  area: 'product',
  what,
  args,
  expect,
});
const env = (what: string, vars: Record<string, string>, ...expect: RegExp[]): BadInput => ({
  area: 'env',
  what,
  args: ['watch', 'list'],
  env: vars,
  expect,
});
const envFor = (
  what: string,
  args: string[],
  vars: Record<string, string>,
  ...expect: RegExp[]
): BadInput => ({
  area: 'env',
  what,
  args,
  env: vars,
  expect,
});
/** `daybook watch import w.csv [extra…]` with `content` as w.csv. */
const csv = (what: string, content: string | Buffer, expect: RegExp[], extra: string[] = []): BadInput => ({
  area: 'csv',
  what,
  args: ['watch', 'import', 'w.csv', ...extra],
  files: { 'w.csv': content },
  expect,
});

const LONG = '长'.repeat(101);
const notDate = (opt: string, value: string) =>
  new RegExp(`${opt} "${value}" is not a real calendar date YYYY-MM-DD`);

export const BAD_INPUTS: BadInput[] = [
  // ---- command lines -------------------------------------------------------------------
  cli('an unknown command', ['frobnicate'], /unknown command 'frobnicate'/),
  cli('an unknown option', ['watch', 'list', '--colour'], /unknown option '--colour'/),
  cli('watch add without a name', ['watch', 'add'], /missing required argument 'name'/),
  cli('watch import without a file', ['watch', 'import'], /missing required argument 'file\.csv'/),
  cli('watch remove with a blank name', ['watch', 'remove', '  '], /give a name or a PID to remove/),
  cli(
    'watch remove of a name not watched',
    ['watch', 'remove', '无此公司有限公司'],
    /nothing watched matches "无此公司有限公司"/,
  ),
  cli(
    'a priority that is not a number',
    ['watch', 'add', '某某科技有限公司', '--priority', 'abc'],
    /--priority must be a whole number, got "abc"/,
  ),
  cli('a blank enterprise name', ['watch', 'add', '   '], /the name is empty/),
  cli('a name of 101 characters', ['watch', 'add', LONG], /the name is 101 characters long.*at most 100/),
  cli(
    'a name with a control character',
    ['watch', 'add', 'A\u0001B公司'],
    /"A\\u0001B公司": the name contains a control character/,
  ),
  cli('a name of a zero-width space', ['watch', 'add', '\u200b'], /invisible format character \(U\+200B/),
  cli(
    'one bad name among good ones',
    ['watch', 'add', '上海好运科技有限公司', LONG],
    /101 characters long.*nothing was added/,
  ),
  cli('run with an extra argument', ['run', 'now'], /too many arguments for 'run'/),
  cli('run --cycle 2026-02-30', ['run', '--cycle', '2026-02-30'], notDate('--cycle', '2026-02-30')),
  cli('run --cycle tomorrow', ['run', '--cycle', 'tomorrow'], notDate('--cycle', 'tomorrow')),
  cli('run --cycle without a value', ['run', '--cycle'], /option '--cycle <date>' argument missing/),
  cli(
    'run --only with a bad value',
    ['run', '--only', 'everything'],
    /--only must be one of products, enterprises; got "everything"/,
  ),
  cli('worker --concurrency 0', ['worker', '--concurrency', '0'], /concurrency must be from 1 to 256/),
  cli('resume --add-budget -1', ['resume', '--add-budget', '-1'], /--add-budget must be at least 0/),
  cli('resume --cycle 2026-13-01', ['resume', '--cycle', '2026-13-01'], notDate('--cycle', '2026-13-01')),
  cli(
    'resume of a cycle never planned',
    ['resume', '--cycle', '2030-01-01'],
    /cycle 2030-01-01 has no budget yet: nothing was planned for it/,
  ),
  cli('enqueue --cycle 2026-02-29', ['enqueue', '--cycle', '2026-02-29'], notDate('--cycle', '2026-02-29')),
  cli('serve --port 70000', ['serve', '--port', '70000'], /port must be from 0 to 65535/),
  cli(
    'serve beyond loopback without a token',
    ['serve', '--host', '0.0.0.0'],
    /binding the admin server to 0\.0\.0\.0 exposes it beyond this machine: set a token/,
  ),
  cli('products without a subcommand', ['products'], /Usage: daybook products/),
  cli('status --cycle 2026-1-1', ['status', '--cycle', '2026-1-1'], notDate('--cycle', '2026-1-1')),
  cli('changes --since 2026-02-30', ['changes', '--since', '2026-02-30'], notDate('--since', '2026-02-30')),
  cli(
    'changes --severity critical',
    ['changes', '--severity', 'critical'],
    /--severity must be one of high, medium, low; got "critical"/,
  ),
  cli('sql with a syntax error', ['sql', 'selec 1'], /query failed: syntax error at or near "selec"/),
  cli(
    'sql that writes',
    ['sql', "insert into watchlist (keyword, keyword_key) values ('x', 'x')"],
    /query failed: cannot execute INSERT in a read-only transaction/,
  ),
  cli(
    'sql of an unknown table',
    ['sql', 'select * from nope'],
    /query failed: relation "nope" does not exist/,
  ),
  cli('sql with an empty query', ['sql', '   '], /the query is empty/),
  cli('sql --json --csv together', ['sql', '--json', '--csv', 'select 1'], /choose one of --json and --csv/),
  cli('rebuild --batch-size 0', ['rebuild', '--batch-size', '0'], /--batch-size must be from 1 to 100000/),
  cli('rebuild --batch-size abc', ['rebuild', '--batch-size', 'abc'], /--batch-size must be a whole number/),
  cli(
    'an analytics role name with a semicolon',
    ['analytics-role', 'reader;drop'],
    /role name "reader;drop" must be lower-case letters, digits and _/,
  ),
  cli(
    'analytics-role with an unset password variable',
    ['analytics-role', 'daybook_reader', '--password-env', 'NO_SUCH_PASSWORD_VAR'],
    /--password-env NO_SUCH_PASSWORD_VAR: that variable is not set/,
  ),
  cli('sim --faults with an unknown kind', ['sim', '--faults', 'explode=1'], /unknown fault kind "explode"/),
  cli('sim --clock yesterday', ['sim', '--clock', 'yesterday'], /"yesterday" is not an ISO 8601 instant/),
  cli('demo --cycles 0', ['demo', '--cycles', '0'], /--cycles must be from 1 to 30/),

  // ---- product parameters ----------------------------------------------------------------
  product(
    'a backfill without --from',
    ['products', 'backfill', '--to', '2026-01-02'],
    /required option '--from <date>' not specified/,
  ),
  product(
    'a backfill from 2026-02-30',
    ['products', 'backfill', '--from', '2026-02-30', '--to', '2026-03-02'],
    notDate('--from', '2026-02-30'),
  ),
  product(
    'a backfill to 2026-1-1',
    ['products', 'backfill', '--from', '2025-12-30', '--to', '2026-1-1'],
    notDate('--to', '2026-1-1'),
  ),
  ...['0', '21'].map((limit) =>
    product(
      `a backfill limit of ${limit}`,
      ['products', 'backfill', '--from', '2026-01-01', '--to', '2026-01-02', '--limit', limit],
      /--limit must be from 1 to 20/,
    ),
  ),
  ...['1.5', 'abc'].map((limit) =>
    product(
      `a backfill limit of "${limit}"`,
      ['products', 'backfill', '--from', '2026-01-01', '--to', '2026-01-02', '--limit', limit],
      new RegExp(`--limit must be a whole number, got "${limit.replace('.', '\\.')}"`),
    ),
  ),
  product(
    'a backfill range backwards',
    ['products', 'backfill', '--from', '2026-01-05', '--to', '2026-01-02'],
    /--from 2026-01-05 is after --to 2026-01-02/,
  ),
  product(
    'a backfill of more than ten years',
    ['products', 'backfill', '--from', '2000-01-01', '--to', '2026-01-01'],
    /at most ten years at a time/,
  ),
  product('enqueue --products abc', ['enqueue', '--products', 'abc'], notDate('--products', 'abc')),
  product(
    'products get --date 2026-02-30',
    ['products', 'get', '--date', '2026-02-30'],
    notDate('--date', '2026-02-30'),
  ),
  product(
    'products get --date 2026-1-1',
    ['products', 'get', '--date', '2026-1-1'],
    notDate('--date', '2026-1-1'),
  ),
  product('products get --date empty', ['products', 'get', '--date', ''], notDate('--date', '')),
  product(
    'a date and a product name together',
    ['products', 'get', '--date', '2026-01-01', '--name', 'Acme Notes'],
    /--date and --name cannot be used together/,
  ),
  product('an empty product name', ['products', 'get', '--name', ''], /--name is empty/),
  product(
    'a product name with a control character',
    ['products', 'get', '--name', 'Acme\u0007'],
    /--name contains a control character/,
  ),
  ...['0'].map((limit) =>
    product(
      `a list limit of ${limit}`,
      ['products', 'get', '--date', '2026-01-01', '--limit', limit],
      /--limit must be from 1 to 20/,
    ),
  ),
  ...['1.5'].map((limit) =>
    product(
      `a list limit of "${limit}"`,
      ['products', 'get', '--date', '2026-01-01', '--limit', limit],
      new RegExp(`--limit must be a whole number, got "${limit.replace('.', '\\.')}"`),
    ),
  ),
  product(
    'a limit with a product name',
    ['products', 'get', '--name', 'Acme Notes', '--limit', '5'],
    /--limit applies only to a list: use it with --date/,
  ),
  product('products get with neither date nor name', ['products', 'get'], /give --date YYYY-MM-DD/),

  // ---- watchlist CSV files ---------------------------------------------------------------
  csv('an empty file', '', [/line 1: the file is empty: it needs a header row with a name column/]),
  csv('a file of only a BOM', '\uFEFF', [/the file is empty/]),
  csv('a file of only blank lines', '\n\r\n   \n\n', [/the file is empty/]),
  csv('a header only', 'name,priority\n', [/w\.csv has a header but no rows: nothing to import/]),
  csv('a header only with a BOM, CRLF and blank lines', '\uFEFFname,priority\r\n\r\n,\r\n', [
    /has a header but no rows/,
  ]),
  csv('a wrong name column', 'company,priority\n上海好运科技有限公司,1\n', [
    /line 1: no name column in the header \(expected one of: name, keyword/,
  ]),
  csv('a semicolon-separated file', 'name;priority\n上海好运科技有限公司;1\n', [/line 1: no name column/]),
  csv('two name columns', 'name,keyword\nA公司,B公司\n', [
    /line 1: the header has 2 name columns \(name, keyword\)/,
  ]),
  csv('two priority columns', 'name,priority,优先级\nA公司,1,2\n', [/more than one priority column/]),
  csv('a quote inside the header', '"na"me,priority\nA公司,1\n', [
    /line 1: header: a stray character after a closing quote/,
  ]),
  csv('a name over 100 characters', `name\n${LONG}\n`, [/line 2: name is 101 characters long/]),
  csv('a name with a control character', 'name\r\n好公司\r\n\r\n坏\u0001公司\r\n', [
    /line 4: name contains a control character/,
  ]),
  csv('a line break inside a quoted name', 'name\n"上海\n公司"\n', [
    /line 2: name contains a control character/,
  ]),
  csv('a zero-width space inside a name', 'name\n上海\u200b公司\n', [
    /line 2: name contains an invisible format character \(U\+200B/,
  ]),
  csv('an exact duplicate', 'name\n上海好运科技有限公司\n上海好运科技有限公司\n', [
    /line 3: "上海好运科技有限公司" is a duplicate of line 2/,
  ]),
  csv('a duplicate differing in width and case', 'name\nABC科技有限公司\nａｂｃ科技有限公司\n', [
    /line 3: .* is a duplicate of line 2/,
  ]),
  csv('a stray quote in an unquoted field', 'name\nAB"C公司\n', [
    /line 2: a stray quote inside an unquoted field/,
  ]),
  csv('an unclosed quote', 'name\nA公司\n"B公司,1\n', [
    /line 3: a quoted field opened on line 3 is never closed/,
  ]),
  csv('a character after a closing quote', 'name\n"A公司"x\n', [
    /line 2: a stray character after a closing quote/,
  ]),
  csv('an empty quoted name', 'name,priority\n"",1\n', [/line 2: name is empty/]),
  csv('a priority that is not a number', 'name,priority\nA公司,abc\n', [
    /line 2: priority "abc" is not a whole number from -1000 to 1000/,
  ]),
  csv('a priority out of range', 'name,priority\nA公司,1001\n', [
    /line 2: priority "1001" is not a whole number/,
  ]),
  csv('binary junk', Buffer.from([0x00, 0xff, 0xfe, 0x13, 0x9c, 0x80, 0x00, 0xc3, 0x28, 0x0a]), [
    /w\.csv is not UTF-8 text: save it as "CSV UTF-8"/,
  ]),
  // 名称\n上海公司 in GBK,, as a spreadsheet on a Chinese Windows saves it.
  csv(
    'a GBK export',
    Buffer.from([0xc3, 0xfb, 0xb3, 0xc6, 0x0a, 0xc9, 0xcf, 0xba, 0xa3, 0xb9, 0xab, 0xcb, 0xbe, 0x0a]),
    [/is not UTF-8 text: save it as "CSV UTF-8" \(a GBK export reads as garbage\)/],
  ),
  csv(
    'a UTF-16 file',
    Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('name\n上海公司\n', 'utf16le')]),
    [/is not UTF-8 text/],
  ),
  csv(
    '--skip-invalid when every row is invalid',
    `name,priority\n${LONG}\nA公司,abc\n`,
    [/line 2: name is 101/, /line 3: priority "abc"/, /no valid row in w\.csv; nothing imported/],
    ['--skip-invalid'],
  ),
  csv(
    '--dry-run of a file with an invalid row',
    'name\n上海好运科技有限公司\nA\u0001\n',
    [/line 3: name contains a control character/, /1 invalid row\(s\) in w\.csv; nothing imported/],
    ['--dry-run'],
  ),
  {
    area: 'csv',
    what: 'a missing file',
    args: ['watch', 'import', 'nope.csv'],
    expect: [/cannot read nope\.csv: no such file \(ENOENT\)/],
  },

  // ---- environment values ----------------------------------------------------------------
  env(
    'DATABASE_URL of another database kind',
    { DATABASE_URL: 'mysql://root@127.0.0.1/x' },
    /DATABASE_URL must be a URL starting with postgres:\/\/ or postgresql:\/\//,
  ),
  env('DATABASE_URL that is not a URL', { DATABASE_URL: 'not a url' }, /DATABASE_URL must be a URL/),
  env(
    'REDIS_URL with http',
    { REDIS_URL: 'http://127.0.0.1:6379' },
    /REDIS_URL must be a URL starting with redis:\/\/ or rediss:\/\//,
  ),
  env(
    'REDIS_CLUSTER_NODES with an entry that is not host:port',
    { REDIS_CLUSTER_NODES: '127.0.0.1:7000,127.0.0.1:notaport' },
    /REDIS_CLUSTER_NODES entry 2 .*is not host:port|REDIS_CLUSTER_NODES entry 2 is not host:port/,
  ),
  env(
    'REDIS_CLUSTER_NODES naming a database, its password masked',
    { REDIS_CLUSTER_NODES: 'redis://:hunter2-secret@127.0.0.1:7000/2' },
    /REDIS_CLUSTER_NODES entry 1 \(redis:\/\/:\*\*\*@127\.0\.0\.1:7000\/2\) names a database/,
  ),
  env(
    'REDIS_CLUSTER_NODES mixing TLS and plain nodes',
    { REDIS_CLUSTER_NODES: 'rediss://a.example:6379,redis://b.example:6379' },
    /REDIS_CLUSTER_NODES mixes redis:\/\/ and rediss:\/\//,
  ),
  env(
    'a Redis prefix with a colon',
    { DAYBOOK_REDIS_PREFIX: 'day:book' },
    /DAYBOOK_REDIS_PREFIX may hold letters, digits, _ and - only/,
  ),
  env(
    'an API base URL with ftp',
    { DAYBOOK_API_BASE_URL: 'ftp://api.example.com' },
    /DAYBOOK_API_BASE_URL must be a URL starting with http:\/\/ or https:\/\//,
  ),
  env(
    'an API base URL without a host',
    { DAYBOOK_API_BASE_URL: 'http://' },
    /DAYBOOK_API_BASE_URL must be a URL/,
  ),
  env(
    'an API key with Chinese characters',
    { DAYBOOK_API_KEY: 'sk-密钥-1234' },
    /DAYBOOK_API_KEY may hold printable ASCII only/,
  ),
  env(
    'an HTTP timeout of 0',
    { DAYBOOK_HTTP_TIMEOUT_MS: '0' },
    /DAYBOOK_HTTP_TIMEOUT_MS must be from 1000 to 600000/,
  ),
  env(
    'a cron minute of 61',
    { DAYBOOK_ENTERPRISE_CRON: '61 3 * * *' },
    /DAYBOOK_ENTERPRISE_CRON is not a valid cron expression/,
  ),
  env(
    'a products cron of three fields',
    { DAYBOOK_PRODUCTS_CRON: '* * *' },
    /DAYBOOK_PRODUCTS_CRON is not a valid cron expression/,
  ),
  env(
    'an unknown time zone',
    { DAYBOOK_CRON_TZ: 'Mars/Olympus' },
    /DAYBOOK_CRON_TZ is not an IANA time zone/,
  ),
  env(
    'an enterprise rate of 0',
    { DAYBOOK_ENTERPRISE_RATE: '0' },
    /DAYBOOK_ENTERPRISE_RATE must be from 1 to 100000/,
  ),
  env(
    'a fractional product rate',
    { DAYBOOK_PRODUCT_RATE: '1.5' },
    /DAYBOOK_PRODUCT_RATE must be a whole number/,
  ),
  env(
    'a negative credit budget',
    { DAYBOOK_CREDIT_BUDGET: '-5' },
    /DAYBOOK_CREDIT_BUDGET must be at least 0/,
  ),
  env(
    'zero credits per query',
    { DAYBOOK_CREDITS_PER_QUERY: '0' },
    /DAYBOOK_CREDITS_PER_QUERY must be from 1 to 1000/,
  ),
  env(
    'a concurrency in words',
    { DAYBOOK_WORKER_CONCURRENCY: 'four' },
    /DAYBOOK_WORKER_CONCURRENCY must be a whole number/,
  ),
  env('a product limit of 21', { DAYBOOK_PRODUCT_LIMIT: '21' }, /DAYBOOK_PRODUCT_LIMIT must be from 1 to 20/),
  env(
    'a short admin token',
    { DAYBOOK_ADMIN_TOKEN: 'secret' },
    /DAYBOOK_ADMIN_TOKEN must be at least 16 characters/,
  ),
  env('an unknown log level', { LOG_LEVEL: 'loud' }, /LOG_LEVEL: Invalid option: expected one of "trace"/),
  env(
    'several bad values at once',
    { DAYBOOK_HTTP_TIMEOUT_MS: 'abc', DAYBOOK_CREDIT_BUDGET: '-1', DAYBOOK_CRON_TZ: 'Nowhere' },
    /bad configuration:/,
    /- DAYBOOK_HTTP_TIMEOUT_MS must be a whole number/,
    /- DAYBOOK_CREDIT_BUDGET must be at least 0/,
    /- DAYBOOK_CRON_TZ is not an IANA time zone/,
  ),
  {
    area: 'env',
    what: 'a bad value in the .env file',
    args: ['watch', 'list'],
    files: { '.env': '# daybook\nDAYBOOK_CREDIT_BUDGET=-100\n' },
    expect: [/DAYBOOK_CREDIT_BUDGET must be at least 0/],
  },
  envFor(
    'run without an API key or base URL',
    ['run'],
    { DAYBOOK_API_BASE_URL: '', DAYBOOK_API_KEY: '' },
    /DAYBOOK_API_BASE_URL and DAYBOOK_API_KEY are not set/,
  ),
  envFor(
    'a scheduler with a bad cron',
    ['scheduler'],
    { DAYBOOK_PRODUCTS_CRON: '15 25 * * *' },
    /DAYBOOK_PRODUCTS_CRON is not a valid cron expression/,
  ),
  envFor(
    'a backfill with a bad product limit',
    ['products', 'backfill', '--from', '2026-01-01', '--to', '2026-01-01'],
    { DAYBOOK_PRODUCT_LIMIT: 'abc' },
    /DAYBOOK_PRODUCT_LIMIT must be a whole number/,
  ),
];
