/**
 * Exports to one folder at the same time, in one process (two connections) and as two `daybook
 * export` processes, while rows commit. The load numbers run 1, 2, 3… with no two packages of one
 * number, each package is whole, and every row is exported once: the packages add up to what one
 * full export writes, table by table and row by row.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportPackages, type PackageWritten } from '../../src/export/package.ts';
import { runDaybook } from '../support/cli.ts';
import {
  CYCLES,
  expectWholePackage,
  type Fixture,
  fixture,
  ledgerOf,
  type Manifest,
  manifestOf,
  ndjsonRows,
  observe,
  packagesIn,
  scratch,
} from './helpers.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('concurrent exports to one folder', { timeout: 120_000 }, () => {
  let f: Fixture;
  let root: string;

  beforeAll(async () => {
    f = await fixture(3);
    root = scratch('concurrent');
    await f.run([CYCLES[0]]);
  });

  afterAll(async () => {
    await f?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  /** The folder's packages: numbered 1..n, whole, chained, the ledger agreeing; their manifests. */
  async function expectChain(dir: string): Promise<Manifest[]> {
    const names = packagesIn(dir);
    expect(names).toEqual(names.map((_, i) => `load_id=${String(i + 1).padStart(10, '0')}`));
    const manifests = names.map((_, i) => expectWholePackage(dir, i + 1));
    for (const [i, m] of manifests.entries()) {
      expect(m.kind).toBe(i === 0 ? 'full' : 'incremental');
      if (i > 0) {
        expect(m.previous_load_id).toBe(manifests[i - 1]?.load_id);
        expect(m.cursor.from_snapshot).toBe(manifests[i - 1]?.cursor.to_snapshot);
      }
    }
    const ledger = await ledgerOf(f.t.sql, dir);
    expect(ledger.map((l) => [l.load_no, l.state, l.to_snapshot])).toEqual(
      manifests.map((m) => [m.load_no, 'complete', m.cursor.to_snapshot]),
    );
    return manifests;
  }

  /** Rows per table summed over packages. */
  const rowsByTable = (manifests: Manifest[]) => {
    const out: Record<string, number> = {};
    for (const m of manifests)
      for (const [table, x] of Object.entries(m.tables)) out[table] = (out[table] ?? 0) + x.rows;
    return out;
  };

  const idsIn = (dir: string, table: string, col: string) =>
    packagesIn(dir).flatMap((_, i) => ndjsonRows(dir, i + 1, table).map((r) => String(r[col])));

  it('two exportPackages at once, on two connections, while rows commit: one package per number, every row once', async () => {
    const dir = join(root, 'in-process');
    const a = postgres(f.t.url, { max: 2, onnotice: () => {} });
    const b = postgres(f.t.url, { max: 2, onnotice: () => {} });
    const lines: string[] = [];
    try {
      let writing = true;
      const details: string[] = [];
      const writer = (async () => {
        for (let i = 0; writing || i < 5; i++) {
          details.push(`concurrent-${i}`);
          await observe(f.t.sql, `concurrent-${i}`);
          await sleep(15);
        }
      })();
      const exporter = async (sql: postgres.Sql) => {
        const out: PackageWritten[] = [];
        for (let round = 0; round < 4; round++) {
          out.push(
            ...(await exportPackages(sql, { to: dir, format: 'ndjson', progress: (l) => lines.push(l) })),
          );
          await sleep(20);
        }
        return out;
      };
      const [fromA, fromB] = await Promise.all([exporter(a), exporter(b)]);
      writing = false;
      await writer;
      // What committed after the last of them: one more export carries it.
      const last = await exportPackages(f.t.sql, { to: dir, format: 'ndjson' });
      const all = [...fromA, ...fromB, ...last];
      const numbers = all.map((p) => p.loadNo).sort((x, y) => x - y);
      expect(numbers).toEqual(numbers.map((_, i) => i + 1));
      expect(fromA.length).toBeGreaterThan(0);
      expect(fromB.length).toBeGreaterThan(0);
      // They did meet: one waited for the other's package at least once.
      expect(lines.some((l) => l.startsWith('waiting for another export'))).toBe(true);

      const manifests = await expectChain(dir);
      expect(manifests.length).toBe(numbers.length);
      expect(manifests.length).toBeGreaterThan(2);

      // The same rows as one full export of everything, now.
      const [full] = await exportPackages(f.t.sql, { to: join(root, 'reference'), format: 'ndjson' });
      expect(full?.kind).toBe('full');
      const reference = manifestOf(join(root, 'reference'), 1);
      expect(rowsByTable(manifests)).toEqual(
        Object.fromEntries(Object.entries(reference.tables).map(([t, x]) => [t, x.rows])),
      );
      const ids = idsIn(dir, 'enterprise_events', 'event_id');
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.sort()).toEqual(idsIn(join(root, 'reference'), 'enterprise_events', 'event_id').sort());
      const exported = packagesIn(dir).flatMap((_, i) =>
        ndjsonRows(dir, i + 1, 'enterprise_events').map((r) => String(r.detail)),
      );
      for (const d of details)
        expect(
          exported.filter((x) => x === d),
          d,
        ).toHaveLength(1);
    } finally {
      await a.end();
      await b.end();
    }
  });

  it('two daybook export processes at once: distinct load numbers, each package whole, every row once', async () => {
    const dir = join(root, 'cli');
    await observe(f.t.sql, 'before-the-processes');
    const env = { DATABASE_URL: f.t.url, LOG_LEVEL: 'warn' };
    const args = ['export', '--to', dir, '--format', 'ndjson', '--json'];
    const results = await Promise.all([runDaybook(args, env), runDaybook(args, env)]);
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    const packages = results.flatMap(
      (r) => (JSON.parse(r.stdout) as { packages: PackageWritten[] }).packages,
    );
    const numbers = packages.map((p) => p.loadNo).sort((x, y) => x - y);
    expect(numbers.length).toBeGreaterThan(0);
    expect(numbers).toEqual(numbers.map((_, i) => i + 1));
    const manifests = await expectChain(dir);
    expect(manifests.map((m) => m.load_no)).toEqual(numbers);
    // Nothing committed meanwhile: together they hold what one full export holds.
    const reference = join(root, 'cli-reference');
    await exportPackages(f.t.sql, { to: reference, format: 'ndjson' });
    expect(rowsByTable(manifests)).toEqual(
      Object.fromEntries(Object.entries(manifestOf(reference, 1).tables).map(([t, x]) => [t, x.rows])),
    );
    const ids = idsIn(dir, 'events', 'sequence');
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBe(manifestOf(reference, 1).tables.events?.rows);
    expect(
      idsIn(dir, 'enterprise_events', 'detail').filter((d) => d === 'before-the-processes'),
    ).toHaveLength(1);
  });
});
