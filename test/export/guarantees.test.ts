/**
 * What an export promises besides equality (test/export/consumer.test.ts).
 * - replay writes the same packages again, byte for byte, in every format;
 * - a transaction that commits late is in the next package, exactly once; one left open does not
 *   hold back what others committed;
 * - two exports at once to one folder: no load number twice, no row twice;
 * - an export killed mid-write (SIGKILL) leaves nothing that looks complete, and the next one
 *   takes over; a package renamed into place but not recorded is adopted; a damaged one is
 *   moved aside and written again;
 * - Parquet files read back by an independent reader (hyparquet) hold the NDJSON's values;
 * - bad input exits 2 with one line and writes nothing.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { asyncBufferFromFile, parquetReadObjects } from 'hyparquet';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPORT_TABLES } from '../../src/export/contract.ts';
import { FORMATS, type Format } from '../../src/export/formats.ts';
import { exportPackages, type Manifest, replayPackages } from '../../src/export/package.ts';
import { BIN, runDaybook } from '../support/cli.ts';
import { type History, historyOf } from '../support/inline.ts';

const CYCLES = ['2026-11-18', '2026-11-19'];

const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');
const packagesIn = (dir: string) =>
  readdirSync(dir)
    .filter((n) => n.startsWith('load_id='))
    .sort();
const manifestOf = (dir: string, name: string) =>
  JSON.parse(readFileSync(join(dir, name, 'manifest.json'), 'utf8')) as Manifest;
const ndjson = (path: string) =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/** A promise and the function that settles it: one side waits, the other says when. */
function signal(): { wait: Promise<void>; give: () => void } {
  let give!: () => void;
  const wait = new Promise<void>((r) => {
    give = r;
  });
  return { wait, give };
}

/** Every file of every package, by relative path: its sha256. */
function fingerprint(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of packagesIn(dir))
    for (const f of readdirSync(join(dir, p))) out[`${p}/${f}`] = sha(join(dir, p, f));
  return out;
}

describe('export guarantees', { timeout: 300_000 }, () => {
  let h: History;
  let root: string;
  const folder = (name: string) => join(root, name);
  const insertEvent = (sql: postgres.Sql | postgres.TransactionSql, n: number) => sql`
    insert into events (type, severity, detected_at, data) values ('cycle.completed', 'low', now(), ${sql.json({ probe: n })})`;
  /** The probe events (numbered from..from+99) the packages of a folder hold, in package order. */
  const probes = (dir: string, from: number) =>
    packagesIn(dir).flatMap((p) =>
      ndjson(join(dir, p, 'events.ndjson'))
        .map((e) => (e.data as { probe?: number }).probe)
        .filter((n): n is number => n !== undefined && n >= from && n < from + 100),
    );

  beforeAll(async () => {
    h = await historyOf(CYCLES, 10, 300);
    root = mkdtempSync(join(tmpdir(), 'daybook-export-guarantees-'));
  });
  afterAll(async () => {
    await h?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it.each(FORMATS)(
    'replay writes %s packages again byte for byte, and leaves identical ones as they are',
    async (format: Format) => {
      const dir = folder(`replay-${format}`);
      await exportPackages(h.t.sql, { to: dir, format });
      await insertEvent(h.t.sql, 1);
      await exportPackages(h.t.sql, { to: dir, format });
      expect(packagesIn(dir)).toEqual(['load_id=0000000001', 'load_id=0000000002']);
      const before = fingerprint(dir);
      // Every file's sha256 is the manifest's.
      for (const p of packagesIn(dir))
        for (const t of Object.values(manifestOf(dir, p).tables))
          expect(sha(join(dir, p, t.file))).toBe(t.sha256);

      const same = await replayPackages(h.t.sql, { to: dir, from: 1, through: 2 });
      expect(same.map((p) => p.identical)).toEqual([true, true]);
      expect(fingerprint(dir)).toEqual(before);

      rmSync(join(dir, 'load_id=0000000001'), { recursive: true });
      rmSync(join(dir, 'load_id=0000000002'), { recursive: true });
      const again = await replayPackages(h.t.sql, { to: dir, from: 1, through: 2 });
      expect(again.map((p) => p.identical)).toEqual([true, true]);
      expect(fingerprint(dir)).toEqual(before);
      expect(readdirSync(dir).filter((n) => n.startsWith('.'))).toEqual([]);

      // A damaged package in place is repaired: moved aside, written again as recorded.
      const victim = Object.values(manifestOf(dir, 'load_id=0000000002').tables)[0]?.file as string;
      writeFileSync(join(dir, 'load_id=0000000002', victim), 'damaged');
      const repaired = await replayPackages(h.t.sql, { to: dir, from: 2, through: 2 });
      expect(repaired.map((p) => p.identical)).toEqual([true]);
      expect(fingerprint(dir)).toEqual(before);
      expect(readdirSync(dir).filter((n) => n.startsWith('.broken-load_id=0000000002'))).toHaveLength(1);
    },
  );

  it('a late commit is in the next package exactly once, and an open transaction holds nothing else back', async () => {
    const dir = folder('late');
    await exportPackages(h.t.sql, { to: dir, format: 'ndjson' });
    const other = postgres(h.t.url, { max: 1, onnotice: () => {} });
    const idle = postgres(h.t.url, { max: 1, onnotice: () => {} });
    try {
      const commit = signal();
      const inserted = signal();
      // Written first (the lower transaction id), committed last.
      const late = other.begin(async (tx) => {
        await insertEvent(tx, 100);
        inserted.give();
        await commit.wait;
      });
      late.catch(() => {});
      await inserted.wait;
      // A session idle in a transaction that holds a transaction id, as a forgotten psql would,
      // for as long as the export runs (until told, not for a time a busy machine may outlast).
      const idleHolds = signal();
      const idleRelease = signal();
      const idleTx = idle.begin(async (tx) => {
        await tx`select pg_current_xact_id()`;
        idleHolds.give();
        await idleRelease.wait;
      });
      idleTx.catch(() => {});
      await idleHolds.wait;
      await insertEvent(h.t.sql, 101);
      const [p2] = await exportPackages(h.t.sql, { to: dir, format: 'ndjson' });
      expect(p2?.kind).toBe('incremental');
      expect(probes(dir, 100)).toEqual([101]);
      idleRelease.give();
      commit.give();
      await late;
      await idleTx;
      await exportPackages(h.t.sql, { to: dir, format: 'ndjson' });
      expect(probes(dir, 100)).toEqual([101, 100]);
      expect(await exportPackages(h.t.sql, { to: dir, format: 'ndjson' })).toEqual([]);
    } finally {
      await other.end({ timeout: 5 });
      await idle.end({ timeout: 5 });
    }
  });

  it('two exports at once to one folder: each load number once, each row once', async () => {
    const dir = folder('concurrent');
    const whole = folder('concurrent-whole');
    const a = postgres(h.t.url, { max: 2, onnotice: () => {} });
    const b = postgres(h.t.url, { max: 2, onnotice: () => {} });
    try {
      const [ra, rb] = await Promise.all([
        exportPackages(a, { to: dir, format: 'ndjson' }),
        exportPackages(b, { to: dir, format: 'ndjson' }),
      ]);
      // One wrote everything; the other waited, then found nothing new.
      expect([...ra, ...rb].map((p) => p.loadNo)).toEqual([1]);
      // Two CLI processes at once, after more rows.
      await insertEvent(h.t.sql, 200);
      await insertEvent(h.t.sql, 201);
      const env = { DATABASE_URL: h.t.url };
      const [c1, c2] = await Promise.all([
        runDaybook(['export', '--to', dir, '--format', 'ndjson', '--json'], env),
        runDaybook(['export', '--to', dir, '--format', 'ndjson', '--json'], env),
      ]);
      expect([c1.code, c2.code]).toEqual([0, 0]);
      const loads = [...JSON.parse(c1.stdout).packages, ...JSON.parse(c2.stdout).packages].map(
        (p: { loadNo: number }) => p.loadNo,
      );
      expect(loads).toEqual([2]);
      expect(packagesIn(dir)).toEqual(['load_id=0000000001', 'load_id=0000000002']);
      // The same rows as one export of everything, none twice.
      await exportPackages(h.t.sql, { to: whole, format: 'ndjson' });
      for (const t of EXPORT_TABLES.filter((t) => !['runs', 'credits'].includes(t.name))) {
        const key = (r: Record<string, unknown>) => JSON.stringify(t.key.map((k) => r[k]));
        const parts = packagesIn(dir).flatMap((p) => ndjson(join(dir, p, `${t.name}.ndjson`)).map(key));
        const all = ndjson(join(whole, 'load_id=0000000001', `${t.name}.ndjson`)).map(key);
        if (t.name.endsWith('versions')) {
          // A version closed after the first package is exported again, closed: keys may repeat.
          expect(new Set(parts), t.name).toEqual(new Set(all));
        } else {
          expect(parts.sort(), t.name).toEqual(all.sort());
        }
      }
    } finally {
      await a.end({ timeout: 5 });
      await b.end({ timeout: 5 });
    }
  });

  it('an export killed mid-write leaves nothing that looks complete; the next one takes over', async () => {
    const dir = folder('killed');
    const locker = postgres(h.t.url, { max: 1, onnotice: () => {} });
    try {
      // runs is the last table written: while it is locked, the export waits with its other files
      // written under a temporary name.
      const release = signal();
      const locked = signal();
      const lock = locker.begin(async (tx) => {
        await tx`lock table runs in access exclusive mode`;
        locked.give();
        await release.wait;
      });
      await locked.wait;
      const child = spawn(process.execPath, [BIN, 'export', '--to', dir, '--format', 'parquet'], {
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '/tmp',
          CI: 'true',
          DATABASE_URL: h.t.url,
        },
        stdio: 'ignore',
      });
      // A hang guard: the process takes seconds to start on an idle machine, far more on a busy one.
      const deadline = Date.now() + 150_000;
      while (
        !(
          existsSync(dir) &&
          readdirSync(dir).some((n) => n.startsWith('.tmp-')) &&
          existsSync(
            join(
              dir,
              readdirSync(dir).find((n) => n.startsWith('.tmp-')) ?? '',
              'trending_snapshots.parquet',
            ),
          )
        )
      ) {
        if (Date.now() > deadline) throw new Error('the export never reached its last table');
        await new Promise((r) => setTimeout(r, 50));
      }
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await exited;
      release.give();
      await lock;
      // Nothing complete-looking: no load_id= folder; the claim is left writing.
      expect(packagesIn(dir)).toEqual([]);
      const [claim] = await h.t.sql<
        { state: string }[]
      >`select state from exports where destination = ${dir}`;
      expect(claim?.state).toBe('writing');
      const lines: string[] = [];
      const [p] = await exportPackages(h.t.sql, {
        to: dir,
        format: 'parquet',
        progress: (l) => lines.push(l),
      });
      expect(p?.loadNo).toBe(1);
      expect(lines.join('\n')).toMatch(/taking over load 0000000001/);
      expect(readdirSync(dir)).toEqual(['load_id=0000000001']);
    } finally {
      await locker.end({ timeout: 5 });
    }
  });

  it('a package renamed into place but not recorded is adopted; a damaged one is moved aside and written again', async () => {
    const dir = folder('adopt');
    await exportPackages(h.t.sql, { to: dir, format: 'ndjson' });
    await insertEvent(h.t.sql, 300);
    await exportPackages(h.t.sql, { to: dir, format: 'ndjson' });
    // As if load 2's process died after its rename, before its ledger row said complete.
    await h.t.sql`
      update exports set state = 'writing', holder = 'elsewhere:1:x', lease_until = now() - interval '1 minute'
      where destination = ${dir} and load_no = 2`;
    await insertEvent(h.t.sql, 301);
    const written = await exportPackages(h.t.sql, { to: dir, format: 'ndjson' });
    expect(written.map((p) => [p.loadNo, p.adopted ?? false])).toEqual([
      [2, true],
      [3, false],
    ]);
    expect(probes(dir, 300)).toEqual([300, 301]);

    // Load 4 is damaged on disk and not recorded: moved aside, written again.
    await insertEvent(h.t.sql, 302);
    await exportPackages(h.t.sql, { to: dir, format: 'ndjson' });
    const saved = join(root, 'load4-copy');
    cpSync(join(dir, 'load_id=0000000004'), saved, { recursive: true });
    writeFileSync(join(dir, 'load_id=0000000004', 'events.ndjson'), '{"damaged": true}\n');
    await h.t.sql`
      update exports set state = 'writing', holder = 'elsewhere:1:x', lease_until = now() - interval '1 minute'
      where destination = ${dir} and load_no = 4`;
    const [again] = await exportPackages(h.t.sql, { to: dir, format: 'ndjson' });
    expect(again?.loadNo).toBe(4);
    expect(again?.adopted).toBeUndefined();
    expect(readdirSync(dir).some((n) => n.startsWith('.broken-load_id=0000000004'))).toBe(true);
    expect(probes(dir, 300)).toEqual([300, 301, 302]);
  });

  it('Parquet read back by hyparquet holds the values of the NDJSON export of the same range', async () => {
    const pq = folder('hyparquet-parquet');
    const nd = folder('hyparquet-ndjson');
    await exportPackages(h.t.sql, { to: pq, format: 'parquet' });
    await exportPackages(h.t.sql, { to: nd, format: 'ndjson' });
    const m = manifestOf(pq, 'load_id=0000000001');
    // Nothing was written between the two: the same rows.
    const other = manifestOf(nd, 'load_id=0000000001');
    for (const t of EXPORT_TABLES) expect(m.tables[t.name]?.rows, t.name).toBe(other.tables[t.name]?.rows);
    let compared = 0;
    for (const table of EXPORT_TABLES) {
      const rows = await parquetReadObjects({
        file: await asyncBufferFromFile(join(pq, 'load_id=0000000001', `${table.name}.parquet`)),
      });
      const expected = ndjson(join(nd, 'load_id=0000000001', `${table.name}.ndjson`));
      expect(rows.length, table.name).toBe(expected.length);
      expect(rows.length, table.name).toBe(m.tables[table.name]?.rows);
      for (const [i, row] of rows.entries()) {
        for (const col of table.columns) {
          const want = expected[i]?.[col.name] ?? null;
          const got = row[col.name] ?? null;
          const where = `${table.name}[${i}].${col.name}`;
          if (want === null) {
            expect(got, where).toBeNull();
            continue;
          }
          switch (col.type) {
            case 'timestamp':
              expect((got as Date).getTime(), where).toBe(Date.parse(want as string));
              break;
            case 'date':
              expect((got as Date).toISOString().slice(0, 10), where).toBe(want);
              break;
            case 'decimal':
              expect(Number(got), where).toBeCloseTo(Number(want), 6);
              break;
            case 'int64':
              expect(BigInt(got as bigint), where).toBe(BigInt(want as number));
              break;
            case 'json':
              expect(typeof got === 'string' ? JSON.parse(got) : got, where).toEqual(want);
              break;
            default:
              expect(got, where).toEqual(want);
          }
          compared++;
        }
      }
    }
    expect(compared).toBeGreaterThan(1000);
  });

  it('bad input exits 2 with one line naming the problem, and writes nothing', async () => {
    const dir = folder('bad');
    await exportPackages(h.t.sql, { to: dir, format: 'parquet' });
    const env = { DATABASE_URL: h.t.url };
    const cases: [string[], RegExp][] = [
      [['export'], /--to <dir>, or set DAYBOOK_EXPORT_DIR/],
      [['export', '--to', dir, '--format', 'xml'], /--format must be one of parquet, ndjson, csv/],
      [['export', '--to', dir, '--tables', 'nope'], /unknown table nope/],
      [['export', '--to', dir, '--replay', '3..1'], /--replay 3\.\.1/],
      [['export', '--to', dir, '--gzip', '--format', 'csv'], /--gzip applies to --format ndjson only/],
      [['export', '--to', dir, '--format', 'ndjson'], /holds parquet packages/],
      [['export', '--to', dir, '--replay', '7..9'], /no complete packages numbered 7\.\.9/],
      [['export', '--to', dir, '--replay', '1..3'], /no complete package 2, 3:/],
    ];
    for (const [args, message] of cases) {
      const r = await runDaybook(args, env);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(message);
      expect(r.stderr, args.join(' ')).not.toMatch(/\n\s+at /);
    }
    expect(packagesIn(dir)).toEqual(['load_id=0000000001']);
    expect(readdirSync(dir).filter((n) => n.startsWith('.'))).toEqual([]);
  });
});
