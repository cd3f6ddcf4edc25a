/** daybook behind PgBouncer 1.18 in transaction pooling mode (no protocol-level prepared statements). */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import { drizzle } from 'drizzle-orm/postgres-js';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connect.ts';
import { MIGRATIONS_DIR, migrateDatabase } from '../../src/db/migrate.ts';
import { runDaybook } from '../support/cli.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';
import { adminUrl, databaseUrl } from '../support/pg-url.ts';
import { type PgBouncer, startPgBouncer } from '../support/pgbouncer.ts';

const MIGRATIONS = readMigrationFiles({ migrationsFolder: MIGRATIONS_DIR });

type Recorded = { hash: string; created_at: string }[];
const recorded = (sql: postgres.Sql) =>
  sql<Recorded>`select hash, created_at::text from drizzle.__drizzle_migrations order by id`;

/** Advisory locks held or awaited in database `name`, whatever their scope. */
const advisoryLocks = async (sql: postgres.Sql, name: string) => {
  const [row] = await sql<{ n: number }[]>`
    select count(*)::int as n from pg_locks l join pg_database d on d.oid = l.database
    where l.locktype = 'advisory' and d.datname = ${name}`;
  return row?.n ?? -1;
};

describe('daybook through PgBouncer in transaction pooling mode', () => {
  let t: TestDatabase;
  let bouncer: PgBouncer;
  beforeAll(async () => {
    t = await freshDatabase();
    bouncer = await startPgBouncer({ database: t.name, poolMode: 'transaction', poolSize: 10 });
  });
  afterAll(async () => {
    await bouncer?.stop();
    await t?.drop();
  });

  it('the bouncer pools transactions: one client connection is served by several server connections', async () => {
    // Shows the setup is what it claims; in session mode a client keeps one backend throughout.
    const a = postgres(bouncer.url, { max: 1, prepare: false, onnotice: () => {} });
    const b = postgres(bouncer.url, { max: 1, prepare: false, onnotice: () => {} });
    try {
      const pid = async (sql: postgres.Sql | postgres.TransactionSql) =>
        (await sql<{ pid: number }[]>`select pg_backend_pid() as pid`)[0]?.pid;
      const first = await pid(a);
      // While b's transaction holds a server connection, a's next statement runs on another one.
      const [inB, second] = await b.begin(async (tx) => [await pid(tx), await pid(a)]);
      expect(second).not.toBe(inB);
      expect(new Set([first, second]).size).toBe(2);
    } finally {
      await a.end({ timeout: 5 });
      await b.end({ timeout: 5 });
    }
  });

  it('migrating the already-migrated database through the bouncer applies nothing, twice', async () => {
    const before = await recorded(t.sql);
    expect(before.length).toBe(MIGRATIONS.length);
    expect(await migrateDatabase(bouncer.url)).toBe(0);
    expect(await migrateDatabase(bouncer.url)).toBe(0);
    expect(await recorded(t.sql)).toEqual(before);
  });

  it('two migrations started at once through the bouncer both succeed and apply nothing', async () => {
    const results = await Promise.all([migrateDatabase(bouncer.url), migrateDatabase(bouncer.url)]);
    expect(results).toEqual([0, 0]);
    expect((await recorded(t.sql)).length).toBe(MIGRATIONS.length);
  });

  it('a pool without prepared statements runs parameterised queries and 50 concurrent transactions', async () => {
    await t.sql`create table bouncer_scratch (n int primary key, pid int not null, held boolean not null)`;
    const db = openDatabase(bouncer.url, { prepare: false, max: 4, applicationName: 'daybook-bouncer' });
    try {
      const sums = await Promise.all(
        Array.from({ length: 50 }, (_, n) => db.sql<{ m: number }[]>`select ${n}::int + ${1000}::int as m`),
      );
      expect(sums.map((r) => r[0]?.m)).toEqual(Array.from({ length: 50 }, (_, n) => n + 1000));

      // The application name crosses the bouncer to the server connection.
      const [named] = await db.sql<{ name: string }[]>`select current_setting('application_name') as name`;
      expect(named?.name).toBe('daybook-bouncer');

      await Promise.all(
        Array.from({ length: 50 }, (_, n) =>
          db.sql.begin(async (tx) => {
            await tx`select pg_advisory_xact_lock(1, ${n}::int)`;
            // The lock is seen on the connection that inserts: the transaction stayed on one backend.
            await tx`
              insert into bouncer_scratch (n, pid, held)
              select ${n}::int, pg_backend_pid(), exists (
                select 1 from pg_locks where locktype = 'advisory' and pid = pg_backend_pid()
                  and classid = 1 and objid = ${n}::int and objsubid = 2 and granted)`;
          }),
        ),
      );
    } finally {
      await db.close();
    }
    const rows = await t.sql<{ n: number; pid: number; held: boolean }[]>`
      select n, pid, held from bouncer_scratch order by n`;
    expect(rows.map((r) => r.n)).toEqual(Array.from({ length: 50 }, (_, n) => n));
    expect(rows.every((r) => r.held)).toBe(true);
  });

  it('daybook export runs through the bouncer: a package, then only what is new', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'daybook-bouncer-export-'));
    try {
      const env = { DATABASE_URL: bouncer.url, DAYBOOK_DB_PREPARE: 'false', DAYBOOK_EXPORT_DIR: dir };
      const event = (n: number) => t.sql`
        insert into events (type, severity, detected_at, data)
        values ('cycle.completed', 'low', now(), ${t.sql.json({ n })})`;
      await event(1);
      await event(2);
      const first = await runDaybook(['export', '--format', 'ndjson', '--json'], env);
      expect(first.stderr).not.toMatch(/Error|at /);
      expect(first.code).toBe(0);
      expect(JSON.parse(first.stdout).packages).toEqual([
        expect.objectContaining({ loadNo: 1, kind: 'full', rows: 2 }),
      ]);
      await event(3);
      const second = await runDaybook(['export', '--format', 'ndjson', '--json'], env);
      expect(JSON.parse(second.stdout).packages).toEqual([
        expect.objectContaining({ loadNo: 2, kind: 'incremental', rows: 1 }),
      ]);
      const lines = readFileSync(join(dir, 'load_id=0000000002', 'events.ndjson'), 'utf8')
        .trim()
        .split('\n');
      expect(lines.map((l) => JSON.parse(l).data)).toEqual([{ n: 3 }]);
      const third = await runDaybook(['export', '--format', 'ndjson'], env);
      expect(third.stdout).toContain('nothing new');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('afterwards no advisory lock is left held on the server', async () => {
    // None is left by the migrations or the transactions run through the bouncer...
    expect(await advisoryLocks(t.sql, t.name)).toBe(0);
    // ...and the check does see a session lock when one is held.
    const holder = postgres(t.url, { max: 1, onnotice: () => {} });
    try {
      await holder`select pg_advisory_lock(424242)`;
      expect(await advisoryLocks(t.sql, t.name)).toBe(1);
      await holder`select pg_advisory_unlock(424242)`;
    } finally {
      await holder.end({ timeout: 5 });
    }
  });
});

describe('migrating an empty database through the bouncer', () => {
  const names = [1, 2].map(() => `daybook_t_${randomBytes(5).toString('hex')}`);
  const [viaBouncer = '', viaDrizzle = ''] = names;
  let admin: postgres.Sql;
  let bouncer: PgBouncer;
  beforeAll(async () => {
    admin = postgres(adminUrl(), { max: 1, onnotice: () => {} });
    for (const name of names) await admin.unsafe(`create database "${name}"`);
    bouncer = await startPgBouncer({ database: viaBouncer });
  });
  afterAll(async () => {
    await bouncer?.stop();
    for (const name of names) await admin.unsafe(`drop database if exists "${name}" with (force)`);
    await admin.end({ timeout: 5 });
  });

  it('two runners at once: one applies every migration, the other waits and applies none; recorded as drizzle’s own migrator does', async () => {
    const results = await Promise.all([migrateDatabase(bouncer.url), migrateDatabase(bouncer.url)]);
    expect(results.sort((x, y) => x - y)).toEqual([0, MIGRATIONS.length]);

    const direct = postgres(databaseUrl(viaDrizzle), { max: 1, onnotice: () => {} });
    const migrated = postgres(databaseUrl(viaBouncer), { max: 1, onnotice: () => {} });
    try {
      await migrate(drizzle(direct), { migrationsFolder: MIGRATIONS_DIR });
      const ours = await recorded(migrated);
      expect(ours).toEqual(await recorded(direct));
      expect(ours).toEqual(MIGRATIONS.map((m) => ({ hash: m.hash, created_at: String(m.folderMillis) })));

      // The same tables on both sides.
      const tables = (sql: postgres.Sql) =>
        sql<{ name: string }[]>`
          select table_schema || '.' || table_name as name from information_schema.tables
          where table_schema not in ('pg_catalog', 'information_schema') order by 1`;
      const ourTables = await tables(migrated);
      expect(ourTables.length).toBeGreaterThan(1);
      expect(ourTables).toEqual(await tables(direct));

      // A database drizzle's migrator brought up to date is up to date for daybook too.
      expect(await migrateDatabase(databaseUrl(viaDrizzle))).toBe(0);
      expect(await migrateDatabase(bouncer.url)).toBe(0);
      expect((await recorded(direct)).length).toBe(MIGRATIONS.length);
    } finally {
      await direct.end({ timeout: 5 });
      await migrated.end({ timeout: 5 });
    }
    expect(await advisoryLocks(admin, viaBouncer)).toBe(0);
  });
});
