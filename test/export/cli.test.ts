/**
 * `daybook export` as a person runs it. Bad input exits 2 with one line naming the problem (no
 * stack) and writes nothing; after `daybook rebuild` the next package is a full one, and the
 * packages written before it can no longer be replayed (exit 2).
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExportUsage, exportPackages, replayPackages } from '../../src/export/package.ts';
import { type CliResult, runDaybook } from '../support/cli.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';
import {
  CYCLES,
  expectWholePackage,
  type Fixture,
  filesOf,
  fixture,
  ledgerOf,
  manifestOf,
  ndjsonRows,
  observe,
  packagesIn,
  scratch,
} from './helpers.ts';

/** Exit 2, one line on stderr matching `message`, no stack trace, nothing on stdout. */
function expectUsage(r: CliResult, message: RegExp): void {
  expect(r.code, r.stderr).toBe(2);
  const lines = r.stderr.trimEnd().split('\n');
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(message);
  expect(r.stderr).not.toMatch(/^\s+at /m);
  expect(r.stderr).not.toMatch(/Error:/);
  expect(r.stdout).toBe('');
}

describe('daybook export: bad input', { timeout: 120_000 }, () => {
  let t: TestDatabase;
  let root: string;
  let parquetDir: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    t = await freshDatabase();
    root = scratch('export-cli');
    parquetDir = join(root, 'parquet');
    env = { DATABASE_URL: t.url, LOG_LEVEL: 'warn' };
    await observe(t.sql, 'cli-1');
    const written = await exportPackages(t.sql, { to: parquetDir, format: 'parquet' });
    expect(written.map((p) => p.loadNo)).toEqual([1]);
  });

  afterAll(async () => {
    await t?.drop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('refuses each mistake with exit 2 and one line, and writes nothing', async () => {
    const fresh = join(root, 'fresh');
    const cases: { args: string[]; message: RegExp }[] = [
      { args: ['export'], message: /--to <dir>.*DAYBOOK_EXPORT_DIR/ },
      {
        args: ['export', '--to', fresh, '--format', 'xml'],
        message: /--format must be one of parquet, ndjson, csv/,
      },
      {
        args: ['export', '--to', fresh, '--tables', 'events,nope'],
        message: /unknown table nope; the tables are/,
      },
      {
        args: ['export', '--to', fresh, '--replay', '3..1'],
        message: /--replay 3\.\.1: FROM must be at least 1 and at most TO/,
      },
      {
        args: ['export', '--to', fresh, '--gzip', '--format', 'csv'],
        message: /--gzip applies to --format ndjson only/,
      },
      {
        args: ['export', '--to', parquetDir, '--replay', '1', '--format', 'parquet'],
        message: /--replay .* takes no/,
      },
    ];
    const results = await Promise.all(cases.map((c) => runDaybook(c.args, env).then((r) => ({ c, r }))));
    for (const { c, r } of results) expectUsage(r, c.message);
    expect(existsSync(fresh) ? readdirSync(fresh) : []).toEqual([]);
    expect(await t.sql`select 1 from exports where destination = ${fresh}`).toHaveLength(0);
  });

  it('refuses another format into a folder of Parquet packages (exit 2), leaving folder and ledger as they were', async () => {
    await observe(t.sql, 'cli-2');
    const before = filesOf(parquetDir);
    const ledger = await ledgerOf(t.sql, parquetDir);
    const [viaFlag, viaEnv] = await Promise.all([
      runDaybook(['export', '--to', parquetDir, '--format', 'ndjson'], env),
      // DAYBOOK_EXPORT_DIR and DAYBOOK_EXPORT_FORMAT say the same as --to and --format.
      runDaybook(['export'], { ...env, DAYBOOK_EXPORT_DIR: parquetDir, DAYBOOK_EXPORT_FORMAT: 'csv' }),
    ]);
    expectUsage(viaFlag, /holds parquet packages; export parquet there/);
    expectUsage(viaEnv, /holds parquet packages; export parquet there/);
    const after = filesOf(parquetDir);
    expect([...after.keys()]).toEqual([...before.keys()]);
    for (const [p, bytes] of before) expect(after.get(p)?.equals(bytes), p).toBe(true);
    expect(readdirSync(parquetDir)).toEqual(['load_id=0000000001']);
    expect(await ledgerOf(t.sql, parquetDir)).toEqual(ledger);
    // The right format goes on from there.
    const ok = await exportPackages(t.sql, { to: parquetDir, format: 'parquet' });
    expect(ok.map((p) => [p.loadNo, p.kind, p.rows])).toEqual([[2, 'incremental', 1]]);
    expect(packagesIn(parquetDir)).toEqual(['load_id=0000000001', 'load_id=0000000002']);
  });

  it('refuses to replay load numbers the folder does not have (exit 2)', async () => {
    const before = filesOf(parquetDir);
    // And, at the same time, those it has: written again, identical.
    const [nine, three, ok] = await Promise.all(
      ['7..9', '3', '1..2'].map((range) =>
        runDaybook(['export', '--to', parquetDir, '--replay', range], env),
      ),
    );
    expectUsage(nine as CliResult, /has no complete packages numbered 7\.\.9/);
    expectUsage(three as CliResult, /has no complete packages numbered 3\.\.3/);
    expect([...filesOf(parquetDir).keys()]).toEqual([...before.keys()]);
    if (!ok) throw new Error('no result');
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout.trim().split('\n')).toEqual([
      expect.stringMatching(/^load 0000000001 \(replayed, identical\): 1 rows in /),
      expect.stringMatching(/^load 0000000002 \(replayed, identical\): 1 rows in /),
    ]);
  });
});

describe('daybook export after daybook rebuild', { timeout: 120_000 }, () => {
  let f: Fixture;
  let root: string;
  let dir: string;

  beforeAll(async () => {
    f = await fixture(5);
    root = scratch('export-rebuild');
    dir = join(root, 'out');
    await f.run([CYCLES[0]]);
    await exportPackages(f.t.sql, { to: dir, format: 'ndjson' });
    await f.run([CYCLES[1]]);
    const second = await exportPackages(f.t.sql, { to: dir, format: 'ndjson' });
    expect(second.map((p) => [p.loadNo, p.kind])).toEqual([[2, 'incremental']]);
  });

  afterAll(async () => {
    await f?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('writes a full package next, refuses to replay the packages before the rebuild, and goes on incrementally', async () => {
    const env = { DATABASE_URL: f.t.url, LOG_LEVEL: 'warn' };
    const rebuilt = await runDaybook(['rebuild'], env);
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    const [gen] = await f.t.sql<{ generation: number }[]>`select generation from rebuild_generation`;
    expect(gen?.generation).toBe(1);

    const third = await exportPackages(f.t.sql, { to: dir, format: 'ndjson' });
    expect(third.map((p) => [p.loadNo, p.kind])).toEqual([[3, 'full']]);
    const m3 = expectWholePackage(dir, 3);
    expect(m3.previous_load_id).toBe('0000000002');
    expect(m3.cursor.from_snapshot).toBe('1:1:');
    const [db] = await f.t.sql<{ versions: number; changes: number; sightings: number }[]>`
      select (select count(*)::int from enterprise_versions) as versions,
             (select count(*)::int from enterprise_changes) as changes,
             (select count(*)::int from enterprise_sightings) as sightings`;
    expect(db?.changes).toBeGreaterThan(0);
    expect(m3.tables.enterprise_versions?.rows).toBe(db?.versions);
    expect(m3.tables.enterprise_changes?.rows).toBe(db?.changes);
    expect(m3.tables.enterprise_sightings?.rows).toBe(db?.sightings);
    // The rebuilt history: the same versions as before it (packages 1 and 2 together).
    const keys = (rows: Record<string, unknown>[]) =>
      [...new Set(rows.map((r) => `${r.pid}/${r.version}/${r.content_hash}`))].sort();
    expect(keys(ndjsonRows(dir, 3, 'enterprise_versions'))).toEqual(
      keys([...ndjsonRows(dir, 1, 'enterprise_versions'), ...ndjsonRows(dir, 2, 'enterprise_versions')]),
    );

    const before = filesOf(dir);
    // The package written after it replays; those before it do not.
    const refused = await Promise.all(
      ['1..2', '2..3', '3'].map((range) => runDaybook(['export', '--to', dir, '--replay', range], env)),
    );
    expectUsage(
      refused[0] as CliResult,
      /load 0000000001 was written before a rebuild wrote the history again/,
    );
    expectUsage(
      refused[1] as CliResult,
      /load 0000000002 was written before a rebuild wrote the history again/,
    );
    await expect(replayPackages(f.t.sql, { to: dir, from: 1, through: 1 })).rejects.toThrow(ExportUsage);
    const after = filesOf(dir);
    expect([...after.keys()]).toEqual([...before.keys()]);
    for (const [p, bytes] of before) expect(after.get(p)?.equals(bytes), p).toBe(true);
    const ok = refused[2] as CliResult;
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/^load 0000000003 \(replayed, identical\)/);

    // Nothing new: nothing written; a new cycle: incremental again, from the full package's cut.
    expect(await exportPackages(f.t.sql, { to: dir, format: 'ndjson' })).toEqual([]);
    await f.run([CYCLES[2]]);
    const fourth = await exportPackages(f.t.sql, { to: dir, format: 'ndjson' });
    expect(fourth.map((p) => [p.loadNo, p.kind])).toEqual([[4, 'incremental']]);
    expect(manifestOf(dir, 4).cursor.from_snapshot).toBe(m3.cursor.to_snapshot);
    expect((await ledgerOf(f.t.sql, dir)).map((l) => [l.load_no, l.kind, l.state])).toEqual([
      [1, 'full', 'complete'],
      [2, 'incremental', 'complete'],
      [3, 'full', 'complete'],
      [4, 'incremental', 'complete'],
    ]);
  });
});
