/**
 * An export that stops part way. A `daybook export` killed (SIGKILL) while it writes leaves no
 * package folder without its manifest and a ledger claim in state `writing`; the next export takes
 * the claim over, clears the temporary folder and writes the package whole. A package renamed into
 * place by an export that died before the ledger said so is adopted (and the export goes on to what
 * is new); one whose files no longer match its manifest is moved aside to `.broken-…` and written
 * again.
 */
import { appendFileSync, existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExportBusy, exportPackages } from '../../src/export/package.ts';
import { spawnDaybook, waitFor } from '../faults/support/processes.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';
import {
  CYCLES,
  expectWholePackage,
  type Fixture,
  filesOf,
  fixture,
  ledgerOf,
  loadDir,
  manifestOf,
  ndjsonRows,
  observe,
  packagesIn,
  scratch,
} from './helpers.ts';

describe('an export killed while it writes', { timeout: 120_000 }, () => {
  let t: TestDatabase;
  let root: string;
  const BULK = 100_000;

  beforeAll(async () => {
    t = await freshDatabase();
    root = scratch('crash');
    // Enough rows that writing the package takes a moment (about a second).
    await t.sql`
      insert into enterprise_observations (pid, kind, cycle, detail, observed_at)
      select 'bulk-' || g, 'stale_ignored', '2026-11-18', repeat('x', 100), now()
      from generate_series(1, ${BULK}) g`;
  });

  afterAll(async () => {
    await t?.drop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('leaves no package without a manifest; the next export takes over its claim and writes load 1 whole', async () => {
    const dir = join(root, 'killed');
    const child = spawnDaybook(
      'export',
      { DATABASE_URL: t.url, LOG_LEVEL: 'warn' },
      ['--to', dir, '--format', 'parquet'],
      'writing to',
    );
    await child.started;
    // Killed while it stages the big table: the temporary folder holds some files, not all.
    let tmp = '';
    await waitFor(
      'the export to write enterprise_events',
      async () => {
        tmp = existsSync(dir) ? (readdirSync(dir).find((n) => n.startsWith('.tmp-load_id=')) ?? '') : '';
        return tmp !== '' && existsSync(join(dir, tmp, 'enterprise_events.parquet.csv'));
      },
      30_000,
      5,
    );
    const exit = await child.stop('SIGKILL');
    expect(exit.signal).toBe('SIGKILL');
    expect(existsSync(join(dir, tmp, 'manifest.json'))).toBe(false);

    // No load_id= folder without its manifest (here: none at all), and the claim still writing.
    for (const name of packagesIn(dir)) expect(existsSync(join(dir, name, 'manifest.json')), name).toBe(true);
    expect(packagesIn(dir)).toEqual([]);
    expect(readdirSync(dir).filter((n) => n.startsWith('.tmp-load_id='))).toEqual([tmp]);
    const claimed = await ledgerOf(t.sql, dir);
    expect(claimed.map((l) => [l.load_no, l.state])).toEqual([[1, 'writing']]);
    expect(claimed[0]?.holder).toContain(`:${child.pid}:`);

    const lines: string[] = [];
    const written = await exportPackages(t.sql, {
      to: dir,
      format: 'parquet',
      progress: (l) => lines.push(l),
    });
    expect(written.map((p) => [p.loadNo, p.kind, p.adopted])).toEqual([[1, 'full', undefined]]);
    expect(lines.some((l) => l.startsWith('taking over load 0000000001'))).toBe(true);
    expect(readdirSync(dir)).toEqual(['load_id=0000000001']);
    const m = expectWholePackage(dir, 1);
    expect(m.tables.enterprise_events?.rows).toBe(BULK);
    expect(m.previous_load_id).toBeNull();
    const ledger = await ledgerOf(t.sql, dir);
    expect(ledger.map((l) => [l.load_no, l.state, l.holder, l.to_snapshot])).toEqual([
      [1, 'complete', null, m.cursor.to_snapshot],
    ]);
  });
});

describe('a package the ledger does not record as complete', { timeout: 120_000 }, () => {
  let f: Fixture;
  let root: string;
  let dir: string;

  beforeAll(async () => {
    f = await fixture(3);
    root = scratch('adopt');
    dir = join(root, 'out');
    await f.run([CYCLES[0]]);
    expect((await exportPackages(f.t.sql, { to: dir, format: 'ndjson' })).map((p) => p.loadNo)).toEqual([1]);
  });

  afterAll(async () => {
    await f?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  /** What a dead export on another machine leaves: its claim, the package renamed into place. */
  const unrecord = (loadNo: number, leaseSql: string) =>
    f.t.sql.unsafe(
      `update exports set state = 'writing', holder = 'otherhost:1:x', lease_until = now() + interval '${leaseSql}',
         tables = '{}', from_snapshot = '', to_snapshot = '', rows = null, bytes = null, manifest = null,
         completed_at = null
       where destination = $1 and load_no = $2`,
      [resolve(dir), loadNo],
    );

  const detailsIn = (n: number) => ndjsonRows(dir, n, 'enterprise_events').map((r) => r.detail);

  it('waits for (or, asked not to, refuses) a claim whose lease holds on another machine', async () => {
    await observe(f.t.sql, 'adopt-2');
    await exportPackages(f.t.sql, { to: dir, format: 'ndjson' });
    await unrecord(2, '1 hour');
    await expect(exportPackages(f.t.sql, { to: dir, format: 'ndjson', wait: false })).rejects.toThrow(
      ExportBusy,
    );
    expect((await ledgerOf(f.t.sql, dir)).map((l) => [l.load_no, l.state])).toEqual([
      [1, 'complete'],
      [2, 'writing'],
    ]);
  });

  it('adopts a whole package whose claim lapsed, then goes on to write what is new', async () => {
    const m2 = manifestOf(dir, 2);
    const before = filesOf(loadDir(dir, 2));
    await unrecord(2, '-1 minute');
    await observe(f.t.sql, 'adopt-3');
    const lines: string[] = [];
    const written = await exportPackages(f.t.sql, {
      to: dir,
      format: 'ndjson',
      progress: (l) => lines.push(l),
    });
    expect(written.map((p) => [p.loadNo, p.kind, p.adopted === true])).toEqual([
      [2, 'incremental', true],
      [3, 'incremental', false],
    ]);
    expect(lines.some((l) => l.includes('adopted'))).toBe(true);
    // The adopted package is left as it was, and recorded as its manifest says.
    const after = filesOf(loadDir(dir, 2));
    expect([...after.keys()]).toEqual([...before.keys()]);
    for (const [p, bytes] of before) expect(after.get(p)?.equals(bytes), p).toBe(true);
    const ledger = await ledgerOf(f.t.sql, dir);
    expect(ledger.map((l) => [l.load_no, l.state, l.holder])).toEqual([
      [1, 'complete', null],
      [2, 'complete', null],
      [3, 'complete', null],
    ]);
    expect([ledger[1]?.from_snapshot, ledger[1]?.to_snapshot, ledger[1]?.rows]).toEqual([
      m2.cursor.from_snapshot,
      m2.cursor.to_snapshot,
      m2.rows,
    ]);
    const m3 = expectWholePackage(dir, 3);
    expect(m3.previous_load_id).toBe('0000000002');
    expect(m3.cursor.from_snapshot).toBe(m2.cursor.to_snapshot);
    expect(detailsIn(2)).toEqual(['adopt-2']);
    expect(detailsIn(3)).toEqual(['adopt-3']);
  });

  it('moves a package whose file no longer matches its manifest aside, and writes it again', async () => {
    await observe(f.t.sql, 'broken-4');
    expect((await exportPackages(f.t.sql, { to: dir, format: 'ndjson' })).map((p) => p.loadNo)).toEqual([4]);
    const original = filesOf(loadDir(dir, 4));
    const events = join(loadDir(dir, 4), 'enterprise_events.ndjson');
    appendFileSync(events, '{"event_id":0}\n');
    const corrupted = readFileSync(events);
    await unrecord(4, '-1 minute');

    const lines: string[] = [];
    const written = await exportPackages(f.t.sql, {
      to: dir,
      format: 'ndjson',
      progress: (l) => lines.push(l),
    });
    expect(written.map((p) => [p.loadNo, p.kind, p.adopted === true])).toEqual([[4, 'incremental', false]]);
    expect(lines.some((l) => l.includes('moved aside'))).toBe(true);
    const aside = readdirSync(dir).filter((n) => n.startsWith('.broken-load_id=0000000004-'));
    expect(aside).toHaveLength(1);
    expect(readFileSync(join(dir, aside[0] as string, 'enterprise_events.ndjson')).equals(corrupted)).toBe(
      true,
    );
    // Written again: the same rows (nothing else committed), the files byte for byte as first.
    const m4 = expectWholePackage(dir, 4);
    expect(m4.previous_load_id).toBe('0000000003');
    expect(m4.cursor.from_snapshot).toBe(manifestOf(dir, 3).cursor.to_snapshot);
    const again = filesOf(loadDir(dir, 4));
    for (const [p, bytes] of original) {
      if (p === 'manifest.json') continue;
      expect(again.get(p)?.equals(bytes), p).toBe(true);
    }
    expect(detailsIn(4)).toEqual(['broken-4']);
    expect((await ledgerOf(f.t.sql, dir)).map((l) => [l.load_no, l.state])).toEqual([
      [1, 'complete'],
      [2, 'complete'],
      [3, 'complete'],
      [4, 'complete'],
    ]);
    expect(packagesIn(dir)).toHaveLength(4);
  });
});
