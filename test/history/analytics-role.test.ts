import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantAnalyticsRole } from '../../src/db/roles.ts';
import { runDaybook } from '../support/cli.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';
import { adminUrl, databaseUrl } from '../support/pg-url.ts';

describe('the read-only analytics role', () => {
  let t: TestDatabase;
  let reader: postgres.Sql;
  let left: string[];
  const role = `daybook_reader_${randomBytes(3).toString('hex')}`;
  // A database of the server daybook knows nothing of, open to PUBLIC as every new one is.
  const other = `daybook_t_${randomBytes(5).toString('hex')}`;
  const rolconfig = async (name: string) => {
    const [r] = await t.sql<{ rolconfig: string[] | null }[]>`
      select rolconfig from pg_roles where rolname = ${name}`;
    return r?.rolconfig;
  };
  const lobjects = async () => {
    const [r] = await t.sql<{ n: number }[]>`select count(*)::int as n from pg_largeobject_metadata`;
    return r?.n ?? -1;
  };

  beforeAll(async () => {
    t = await freshDatabase();
    await t.sql.unsafe(`create database "${other}"`);
    await t.sql`insert into watchlist (keyword, keyword_key) values ('甲公司', '甲公司')`;
    await grantAnalyticsRole(t.sql, role, null);
    left = await grantAnalyticsRole(t.sql, role, null); // twice is fine
    const u = new URL(t.url);
    u.username = role;
    reader = postgres(u.toString(), { max: 1, onnotice: () => {} });
  });
  afterAll(async () => {
    await reader.end();
    await t.sql.unsafe(`drop database if exists "${other}" with (force)`);
    await t.drop();
    const admin = postgres(adminUrl(), { max: 1, onnotice: () => {} });
    await admin.unsafe(`drop role if exists ${role}`);
    await admin.end();
  });

  it('has a statement timeout of 60 s, which its sessions start with', async () => {
    expect(await rolconfig(role)).toEqual(['statement_timeout=60s']);
    const [r] = await reader<{ statement_timeout: string }[]>`show statement_timeout`;
    expect(r?.statement_timeout).toBe('1min');
  });

  it('reads every analytics view', async () => {
    for (const v of [
      'enterprise_current',
      'enterprise_history',
      'enterprise_changes',
      'enterprise_events',
      'product_current',
      'product_trending',
      'credit_usage',
      'runs',
    ]) {
      await expect(reader.unsafe(`select * from analytics.${v} limit 1`)).resolves.toBeDefined();
    }
  });

  it('cannot read the raw landing or any internal table', async () => {
    for (const table of [
      'raw_responses',
      'raw_bodies',
      'raw_answers',
      'watchlist',
      'enterprise_versions',
      'credit_ledger',
      'ledger_entries',
      'ledger_compacted',
      'ledger_subjects',
      'raw_params',
    ]) {
      await expect(reader.unsafe(`select * from ${table} limit 1`)).rejects.toThrow(/permission denied/);
    }
  });

  it('cannot write anything', async () => {
    await expect(reader`insert into watchlist (keyword, keyword_key) values ('x', 'x')`).rejects.toThrow(
      /permission denied/,
    );
    await expect(reader`delete from watchlist`).rejects.toThrow(/permission denied/);
    await expect(reader.unsafe('create table analytics.mine (x int)')).rejects.toThrow(/permission denied/);
    await expect(reader.unsafe('create table public.mine (x int)')).rejects.toThrow(/permission denied/);
    await expect(reader.unsafe('delete from analytics.runs')).rejects.toThrow(
      /permission denied|cannot delete/,
    );
    const [n] = await t.sql<{ n: number }[]>`select count(*)::int as n from watchlist`;
    expect(n?.n).toBe(1);
  });

  it('cannot create a large object, by any of the functions that make one', async () => {
    const before = await lobjects();
    for (const [fn, args] of [
      ['lo_from_bytea', "0, 'x'"],
      ['lo_create', '0'],
      ['lo_creat', '-1'],
    ]) {
      await expect(reader.unsafe(`select ${fn}(${args})`)).rejects.toThrow(
        `permission denied for function ${fn}`,
      );
    }
    await expect(reader.unsafe("select lo_import('/etc/hostname')")).rejects.toThrow(/permission denied/);
    expect(await lobjects()).toBe(before);
  });

  it('cannot create a temporary table, while the owner still can', async () => {
    await expect(reader.unsafe('create temp table mine (x int)')).rejects.toThrow(
      /permission denied to create temporary tables/,
    );
    await expect(
      t.sql.begin((tx) => tx.unsafe('create temp table mine (x int) on commit drop')),
    ).resolves.toBeDefined();
  });

  it('can still connect to another database open to PUBLIC, which only pg_hba.conf can stop, and is told so', async () => {
    const u = new URL(databaseUrl(other));
    u.username = role;
    const elsewhere = postgres(u.toString(), { max: 1, onnotice: () => {} });
    try {
      const [r] = await elsewhere<{ db: string }[]>`select current_database() as db`;
      expect(r?.db).toBe(other);
    } finally {
      await elsewhere.end();
    }
    expect(left.filter((n) => /can still connect to/.test(n))).toHaveLength(1);
    // TEMPORARY and large objects were taken (a superuser ran it): nothing said about them.
    expect(left.filter((n) => /temporary|large objects/.test(n))).toEqual([]);
  });

  it('daybook analytics-role says what the role can read on stdout, and what Postgres still allows it on stderr', async () => {
    const second = `daybook_reader_${randomBytes(3).toString('hex')}`;
    try {
      const r = await runDaybook(['analytics-role', second], { DATABASE_URL: t.url });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe(
        `role ${second} can read the analytics schema, and nothing else in this database\n` +
          'its statements are cancelled after 60 s (statement_timeout; change it with --statement-timeout SECONDS)\n',
      );
      expect(await rolconfig(second)).toEqual(['statement_timeout=60s']);
      const changed = await runDaybook(['analytics-role', second, '--statement-timeout', '1.5'], {
        DATABASE_URL: t.url,
      });
      expect(changed.code, changed.stderr).toBe(0);
      expect(changed.stdout).toMatch(/its statements are cancelled after 1\.5 s \(statement_timeout;/);
      expect(await rolconfig(second)).toEqual(['statement_timeout=1500ms']);
      for (const bad of ['0', 'abc', '-5']) {
        const refused = await runDaybook(['analytics-role', second, '--statement-timeout', bad], {
          DATABASE_URL: t.url,
        });
        expect(refused.code, refused.stderr).toBe(2);
        expect(refused.stderr).toMatch(/option '--statement-timeout <seconds>' argument .* is invalid/);
      }
      expect(await rolconfig(second)).toEqual(['statement_timeout=1500ms']);
      expect(r.stderr).toMatch(
        new RegExp(`daybook: note: role ${second} can still connect to \\d+ other databases: .* pg_hba.conf`),
      );
    } finally {
      await t.sql.unsafe(`revoke all on database "${t.name}" from ${second}`);
      await t.sql.unsafe(`revoke all on all tables in schema analytics from ${second}`);
      await t.sql.unsafe(`revoke all on schema analytics from ${second}`);
      await t.sql.unsafe(`alter default privileges in schema analytics revoke all on tables from ${second}`);
      await t.sql.unsafe(`drop role if exists ${second}`);
    }
  });
});
