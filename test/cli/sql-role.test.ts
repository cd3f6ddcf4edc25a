/**
 * `daybook sql` runs a person's text as the database's sql reader, a login role of its own, in a
 * read-only transaction that is rolled back, one statement at a time. With a superuser DATABASE_URL
 * (as here), nothing in the text may write, run a program, read a server file or signal another
 * backend; each refusal is exit code 2 with the server's reason and no stack.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliResult, runDaybook } from '../support/cli.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';
import { adminUrl, databaseUrl } from '../support/pg-url.ts';

const STACK_LINE = /\n\s+at .+[:(].*\d+:\d+\)?/;

/** Exit code 2, `message` on stderr, no stack trace, nothing on stdout. */
/** The statement ran past `--timeout 1`: exit 1, said on stderr, no stack, nothing printed. */
function expectTimedOut(r: CliResult): void {
  expect(r.code, r.stderr).toBe(1);
  expect(r.stderr).toContain(
    'daybook sql: the statement ran longer than 1 s and was cancelled (statement_timeout); raise it with --timeout SECONDS',
  );
  expect(r.stderr).not.toMatch(STACK_LINE);
  expect(r.stdout).toBe('');
}

function expectRefused(r: CliResult, message: RegExp): void {
  expect(r.code, r.stderr).toBe(2);
  expect(r.stderr).toMatch(message);
  expect(r.stderr).not.toMatch(STACK_LINE);
  expect(r.stdout).toBe('');
}

describe('daybook sql against a Postgres server, as a superuser', { timeout: 120_000 }, () => {
  let t: TestDatabase;
  let env: Record<string, string>;
  const sql = (query: string, ...flags: string[]) => runDaybook(['sql', ...flags, query], env);
  const watchCount = async () => {
    const [r] = await t.sql<{ n: number }[]>`select count(*)::int as n from watchlist`;
    return r?.n ?? -1;
  };

  beforeAll(async () => {
    t = await freshDatabase();
    await t.sql`insert into watchlist (keyword, keyword_key) values ('甲公司', '甲公司')`;
    env = { DATABASE_URL: t.url };
  });
  afterAll(() => t.drop());

  it('reads the analytics views, as the sql reader and not as the superuser of DATABASE_URL', async () => {
    const plain = await sql('select * from analytics.enterprise_current');
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).toContain('(0 rows)');
    const who = await sql(
      'select session_user, current_user, rolsuper from pg_roles where rolname = current_user',
      '--json',
    );
    expect(who.code, who.stderr).toBe(0);
    const [row] = JSON.parse(who.stdout) as {
      session_user: string;
      current_user: string;
      rolsuper: boolean;
    }[];
    expect(row?.session_user).toMatch(/^daybook_sql_[0-9a-f]{12}$/);
    expect(row?.current_user).toBe(row?.session_user);
    expect(row?.rolsuper).toBe(false);
    const [stored] = await t.sql<{ role: string }[]>`select role from sql_reader`;
    expect(row?.session_user).toBe(stored?.role);
  });

  it('grants CONNECT on a clone of the migrated template to the template’s reader, at the next daybook sql', async () => {
    const [stored] = await t.sql<{ role: string }[]>`select role from sql_reader`;
    const role = stored?.role ?? '';
    // The role was made for the template, under the template's name, not this clone's.
    expect(role).not.toBe(`daybook_sql_${(await md5(t.sql, t.name)).slice(0, 12)}`);
    const granted = async () => {
      const [r] = await t.sql<{ granted: boolean }[]>`
        select exists (
          select from pg_database d, aclexplode(d.datacl) a
          where d.datname = current_database() and a.privilege_type = 'CONNECT'
            and a.grantee = (select oid from pg_roles where rolname = ${role})
        ) as granted`;
      return r?.granted;
    };
    await t.sql.unsafe(`revoke connect on database "${t.name}" from ${role}`);
    expect(await granted()).toBe(false);
    const r = await sql('select 1 as one', '--json');
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([{ one: 1 }]);
    expect(await granted()).toBe(true);
  });

  it('refuses copy to a program, and the program does not run', async () => {
    const file = join(tmpdir(), `daybook-pwned-${randomBytes(4).toString('hex')}`);
    const r = await sql(`copy (select 1) to program 'touch ${file}'`);
    expectRefused(
      r,
      /query failed: must be superuser or have privileges of the pg_execute_server_program role/,
    );
    expect(existsSync(file)).toBe(false);
  });

  it('refuses to read a server file', async () => {
    expectRefused(
      await sql("select pg_read_file('/etc/hostname')"),
      /query failed: permission denied for function pg_read_file/,
    );
  });

  it('refuses to terminate another connection, a superuser’s or another role’s, and both stay alive', async () => {
    const other = `daybook_victim_${randomBytes(3).toString('hex')}`;
    await t.sql.unsafe(`create role ${other} login`);
    const u = new URL(t.url);
    u.username = other;
    const victims = [
      {
        sql: postgres(t.url, { max: 1, onnotice: () => {} }),
        refusal:
          /query failed: (must be a superuser to terminate superuser process|permission denied to terminate process)/,
      },
      {
        sql: postgres(u.toString(), { max: 1, onnotice: () => {} }),
        refusal:
          /query failed: (must be a member of the role whose process is being terminated or member of pg_signal_backend|permission denied to terminate process)/,
      },
    ];
    try {
      for (const victim of victims) {
        const [before] = await victim.sql<{ pid: number }[]>`select pg_backend_pid() as pid`;
        expectRefused(await sql(`select pg_terminate_backend(${before?.pid})`), victim.refusal);
        expectRefused(await sql(`select pg_cancel_backend(${before?.pid})`), /query failed: /);
        const [after] = await victim.sql<{ pid: number }[]>`select pg_backend_pid() as pid`;
        expect(after?.pid).toBe(before?.pid);
      }
    } finally {
      for (const victim of victims) await victim.sql.end({ timeout: 5 });
      await t.sql.unsafe(`drop role ${other}`);
    }
  });

  it('refuses set transaction read write, alone or followed by a write, and writes nothing', async () => {
    const before = await watchCount();
    expectRefused(
      await sql('set transaction read write'),
      /query failed: transaction read-write mode must be set before any query/,
    );
    expectRefused(
      await sql(
        "set transaction read write; insert into watchlist (keyword, keyword_key) values ('乙', '乙')",
      ),
      /query failed: cannot insert multiple commands into a prepared statement \(daybook sql runs one statement at a time\)/,
    );
    expect(await watchCount()).toBe(before);
  });

  it('refuses commit followed by an insert, and no row is inserted', async () => {
    const before = await watchCount();
    expectRefused(
      await sql("commit; insert into watchlist (keyword, keyword_key) values ('丙', '丙')"),
      /daybook sql runs one statement at a time/,
    );
    expectRefused(
      await sql("insert into watchlist (keyword, keyword_key) values ('丙', '丙')"),
      /query failed: cannot execute INSERT in a read-only transaction/,
    );
    expect(await watchCount()).toBe(before);
    const [r] = await t.sql<{ n: number }[]>`select count(*)::int as n from watchlist where keyword = '丙'`;
    expect(r?.n).toBe(0);
  });

  it('refuses to take the superuser role back with set_config, set role or reset role', async () => {
    expectRefused(
      await sql("select set_config('role', 'postgres', false)"),
      /query failed: permission denied to set role "postgres"/,
    );
    expectRefused(
      await sql("select set_config('role', 'postgres', false), pg_read_file('/etc/hostname')"),
      /query failed: permission denied/,
    );
    expectRefused(await sql('set role postgres'), /query failed: permission denied to set role "postgres"/);
    expectRefused(
      await sql("reset role; select pg_read_file('/etc/hostname')"),
      /daybook sql runs one statement at a time/,
    );
    // RESET ROLE inside the statement leaves the reader the reader: its session is its own.
    expectRefused(
      await sql("do $$ begin reset role; perform pg_read_file('/etc/hostname'); end $$"),
      /query failed: permission denied for function pg_read_file/,
    );
  });

  it('refuses a temporary table, and rolls back a large object, which Postgres 15 allows a read-only transaction', async () => {
    expectRefused(
      await sql('create temp table mine (x int)'),
      /query failed: cannot execute CREATE TABLE in a read-only transaction/,
    );
    const count = async () => {
      const [r] = await t.sql<{ n: number }[]>`select count(*)::int as n from pg_largeobject_metadata`;
      return r?.n ?? -1;
    };
    const before = await count();
    const r = await sql("select lo_from_bytea(0, 'daybook')");
    // Refused (Postgres 16 and later) or made and rolled back (15): either way, none is left.
    expect([0, 2]).toContain(r.code);
    expect(await count()).toBe(before);
  });

  it('cannot read the internal tables or the stored password', async () => {
    for (const table of ['watchlist', 'raw_responses', 'raw_bodies', 'raw_answers', 'sql_reader']) {
      expectRefused(await sql(`select * from ${table}`), /query failed: permission denied for (table|view)/);
    }
  });

  it('keeps a person’s SQL mistake a usage error with the server’s message', async () => {
    expectRefused(await sql('selec 1'), /query failed: syntax error at or near "selec"/);
    expectRefused(await sql('copy (select 1) to stdout'), /query failed: daybook sql does not run COPY/);
  });

  it('cancels a statement that runs past --timeout: exit 1, said on stderr', async () => {
    expectTimedOut(await sql('select pg_sleep(5)', '--timeout', '1'));
  });

  it('sets the timeout in the statement’s own transaction: 60 s unless --timeout gives another', async () => {
    const shown = async (...flags: string[]) => {
      const r = await sql('show statement_timeout', '--json', ...flags);
      expect(r.code, r.stderr).toBe(0);
      return (JSON.parse(r.stdout) as { statement_timeout: string }[])[0]?.statement_timeout;
    };
    expect(await shown()).toBe('1min');
    expect(await shown('--timeout', '0.25')).toBe('250ms');
    expect(await shown('--timeout', '300')).toBe('5min');
  });

  it('refuses a --timeout that is not a number of seconds above 0, and --max-rows below 1, naming the option', async () => {
    for (const bad of ['0', '-1', 'abc', '1e3', '0.0001', '2147484']) {
      expectRefused(
        await sql('select 1', '--timeout', bad),
        /option '--timeout <seconds>' argument .* is invalid/,
      );
    }
    expectRefused(await sql('select 1', '--max-rows', '0'), /--max-rows must be from 1 to/);
    expectRefused(await sql('select 1', '--max-rows', '2.5'), /--max-rows must be a whole number/);
    expectRefused(
      await sql('select 1', '--json', '--max-rows', '3'),
      /--max-rows limits the table only; --json prints every row/,
    );
  });

  it('shows at most --max-rows rows in the table, says that more were left out, exit 1', async () => {
    const r = await sql('select g from generate_series(1, 10) g', '--max-rows', '3');
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(
      'daybook sql: showing the first 3 rows; more were left out — use --max-rows N, --csv or --json for all of them',
    );
    expect(r.stdout.split('\n')).toEqual([
      'g',
      '-',
      '1',
      '2',
      '3',
      '(the first 3 rows; more were left out)',
      '',
    ]);
  });

  it('fetches no row past the one that tells more were left out', async () => {
    // Row 5 divides by zero: the table of 3 never reaches it, the fourth row says there are more.
    const failing = 'select 1 / (g - 5) as x from generate_series(1, 10) g';
    const capped = await sql(failing, '--max-rows', '3');
    expect(capped.code, capped.stderr).toBe(1);
    expect(capped.stderr).toMatch(/showing the first 3 rows; more were left out/);
    expectRefused(await sql(failing, '--max-rows', '5'), /query failed: division by zero/);
  });

  it('says nothing when the rows are exactly --max-rows, and caps the table at 1,000 rows by default', async () => {
    const exact = await sql('select g from generate_series(1, 10) g', '--max-rows', '10');
    expect(exact.code, exact.stderr).toBe(0);
    expect(exact.stdout).toMatch(/\n10\n\(10 rows\)\n$/);
    const thousand = await sql('select g from generate_series(1, 1000) g');
    expect(thousand.code, thousand.stderr).toBe(0);
    expect(thousand.stdout).toMatch(/\(1,000 rows\)\n$/);
    const more = await sql('select g from generate_series(1, 1001) g');
    expect(more.code, more.stderr).toBe(1);
    expect(more.stderr).toMatch(/showing the first 1,000 rows; more were left out/);
    expect(more.stdout).toMatch(/\n1000\n\(the first 1,000 rows; more were left out\)\n$/);
  });

  it('prints every row with --json and --csv, whatever the table’s cap', async () => {
    const json = await sql('select g from generate_series(1, 10) g', '--json');
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(Array.from({ length: 10 }, (_, i) => ({ g: i + 1 })));
    const csv = await sql('select g from generate_series(1, 1001) g', '--csv');
    expect(csv.code, csv.stderr).toBe(0);
    expect(csv.stdout).toBe(`g\n${Array.from({ length: 1001 }, (_, i) => `${i + 1}\n`).join('')}`);
  });

  it('refuses, and says why, when the stored role is a member of pg_signal_backend', async () => {
    const role = `daybook_sql_bad_${randomBytes(3).toString('hex')}`;
    const [stored] = await t.sql<{ role: string; password: string }[]>`select role, password from sql_reader`;
    await t.sql.unsafe(`create role ${role} login`);
    await t.sql.unsafe(`grant pg_signal_backend to ${role}`);
    await t.sql`update sql_reader set role = ${role}`;
    try {
      expectRefused(
        await sql('select 1'),
        new RegExp(
          `daybook sql runs queries as a read-only role, and cannot here: role ${role} is a member of pg_signal_backend; and DATABASE_URL's user postgres is a superuser`,
        ),
      );
    } finally {
      await t.sql`update sql_reader set role = ${stored?.role ?? ''}`;
      await t.sql.unsafe(`revoke all on database "${t.name}" from ${role}`);
      await t.sql.unsafe(`revoke all on all tables in schema analytics from ${role}`);
      await t.sql.unsafe(`revoke all on schema analytics from ${role}`);
      await t.sql.unsafe(`revoke all on all tables in schema console from ${role}`);
      await t.sql.unsafe(`revoke all on schema console from ${role}`);
      await t.sql.unsafe(`drop role ${role}`);
    }
  });
});

describe('daybook sql as an ordinary user, without the sql reader', { timeout: 120_000 }, () => {
  let t: TestDatabase;
  const user = `daybook_plain_${randomBytes(3).toString('hex')}`;
  let env: Record<string, string>;

  beforeAll(async () => {
    t = await freshDatabase();
    await t.sql.unsafe(`create role ${user} login nosuperuser`);
    await t.sql.unsafe(`grant usage on schema analytics, drizzle to ${user}`);
    await t.sql.unsafe(`grant select on all tables in schema analytics to ${user}`);
    await t.sql.unsafe(`grant select on drizzle.__drizzle_migrations to ${user}`);
    // It may write the watchlist, so that a refused insert is the read-only transaction's doing.
    await t.sql.unsafe(`grant select, insert on watchlist to ${user}`);
    const u = new URL(t.url);
    u.username = user;
    env = { DATABASE_URL: u.toString() };
  });
  afterAll(async () => {
    await t.drop();
    const admin = postgres(adminUrl(), { max: 1, onnotice: () => {} });
    await admin.unsafe(`drop role if exists ${user}`);
    await admin.end();
  });

  it('runs the statement as that user, read-only, when it may not read the stored role', async () => {
    const r = await runDaybook(['sql', '--json', 'select current_user'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([{ current_user: user }]);
    expectRefused(
      await runDaybook(['sql', "insert into watchlist (keyword, keyword_key) values ('丁', '丁')"], env),
      /query failed: cannot execute INSERT in a read-only transaction/,
    );
  });

  it('refuses when that user may signal any backend', async () => {
    await t.sql.unsafe(`grant pg_signal_backend to ${user}`);
    try {
      expectRefused(
        await runDaybook(['sql', 'select 1'], env),
        new RegExp(
          `cannot here: only the owner of the table sql_reader may read which role that is; and DATABASE_URL's user ${user} is a member of pg_signal_backend`,
        ),
      );
    } finally {
      await t.sql.unsafe(`revoke pg_signal_backend from ${user}`);
    }
  });
});

describe('daybook sql never migrates', { timeout: 120_000 }, () => {
  it('says a database is not migrated yet, exit 1, and leaves it as it was', async () => {
    const name = `daybook_t_${randomBytes(5).toString('hex')}`;
    const admin = postgres(adminUrl(), { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database "${name}"`);
    try {
      const r = await runDaybook(['sql', 'select 1'], { DATABASE_URL: databaseUrl(name) });
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toMatch(
        /the database is not migrated yet \(0 of \d+ migrations applied\): run `daybook migrate` first/,
      );
      expect(r.stderr).not.toMatch(STACK_LINE);
      const db = postgres(databaseUrl(name), { max: 1, onnotice: () => {} });
      const [n] = await db<{ n: number }[]>`
        select count(*)::int as n from pg_namespace where nspname in ('drizzle', 'analytics')`;
      await db.end();
      expect(n?.n).toBe(0);
    } finally {
      await admin.unsafe(`drop database if exists "${name}" with (force)`);
      await admin.end();
    }
  });

  it('does not create the embedded database when there is none', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'daybook-sql-'));
    const r = await runDaybook(['sql', 'select 1'], { DATABASE_URL: '' }, cwd);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/there is no embedded database in \.daybook\/ yet: run `daybook migrate`/);
    expect(readdirSync(cwd)).toEqual([]);
  });
});

describe('daybook sql on the embedded database', { timeout: 180_000 }, () => {
  const cwd = mkdtempSync(join(tmpdir(), 'daybook-sql-embedded-'));
  const env = { DATABASE_URL: '' };
  const sql = (query: string, ...flags: string[]) => runDaybook(['sql', ...flags, query], env, cwd);

  beforeAll(async () => {
    const m = await runDaybook(['migrate'], env, cwd);
    expect(m.code, m.stderr).toBe(0);
  });

  it('runs the text after SET ROLE to the sql reader', async () => {
    const r = await sql(
      'select current_user, (select count(*)::int from analytics.enterprise_current) as n',
      '--json',
    );
    expect(r.code, r.stderr).toBe(0);
    const [row] = JSON.parse(r.stdout) as { current_user: string; n: number }[];
    expect(row?.current_user).toMatch(/^daybook_sql_[0-9a-f]{12}$/);
    expect(row?.n).toBe(0);
  });

  it('refuses the ways back to the superuser within one statement: set_config and a DO block', async () => {
    expectRefused(
      await sql("select set_config('role', 'postgres', true), pg_read_file('PG_VERSION')"),
      /query failed: permission denied for function set_config/,
    );
    expectRefused(
      await sql("do $$ begin reset role; perform pg_read_file('PG_VERSION'); end $$"),
      /query failed: permission denied for language plpgsql/,
    );
  });

  it('ends a statement that runs past --timeout, which PGlite does not, and the database opens again after', async () => {
    expectTimedOut(await sql('select pg_sleep(5)', '--timeout', '1'));
    const after = await sql('select count(*)::int as n from analytics.enterprise_current', '--json');
    expect(after.code, after.stderr).toBe(0);
    expect(JSON.parse(after.stdout)).toEqual([{ n: 0 }]);
  });

  it('shows at most --max-rows rows, and --csv prints every row', async () => {
    const r = await sql('select g from generate_series(1, 10) g', '--max-rows', '3');
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/daybook sql: showing the first 3 rows; more were left out/);
    expect(r.stdout.split('\n')).toEqual([
      'g',
      '-',
      '1',
      '2',
      '3',
      '(the first 3 rows; more were left out)',
      '',
    ]);
    const csv = await sql('select g from generate_series(1, 10) g', '--csv');
    expect(csv.code, csv.stderr).toBe(0);
    expect(csv.stdout.trim().split('\n')).toEqual(['g', ...Array.from({ length: 10 }, (_, i) => `${i + 1}`)]);
  });

  it('refuses copy to a program, reading a file and writing', async () => {
    const file = join(tmpdir(), `daybook-pwned-${randomBytes(4).toString('hex')}`);
    expectRefused(
      await sql(`copy (select 1) to program 'touch ${file}'`),
      /query failed: permission denied to COPY to or from an external program/,
    );
    expect(existsSync(file)).toBe(false);
    expectRefused(
      await sql("select pg_read_file('PG_VERSION')"),
      /query failed: permission denied for function pg_read_file/,
    );
    expectRefused(
      await sql("commit; insert into watchlist (keyword, keyword_key) values ('戊', '戊')"),
      /daybook sql runs one statement at a time/,
    );
  });
});

async function md5(sql: postgres.Sql, s: string): Promise<string> {
  const [r] = await sql<{ h: string }[]>`select md5(${s}) as h`;
  return r?.h ?? '';
}
