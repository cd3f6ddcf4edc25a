/**
 * What the export package tests share: reading a destination folder (its packages, manifests,
 * files and their sha256, computed here and not by the code under test), the ledger, and a
 * history of a few cycles against the simulator.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { expect } from 'vitest';
import { scheduledPulls } from '../../jobs/products.ts';
import type { Sql } from '../../src/db/connect.ts';
import type { Manifest } from '../../src/export/package.ts';
import type { RunningSimulator } from '../../src/sim/server.ts';
import { pacificDate } from '../../src/time/cycles.ts';
import { cliAgainstSim } from '../support/cli-sim.ts';
import type { TestDatabase } from '../support/db.ts';
import { runCyclesInline, watchChanging } from '../support/inline.ts';
import { UNTHROTTLED } from '../support/sim.ts';

export type { Manifest };

export const CYCLES = ['2026-11-18', '2026-11-19', '2026-11-20'] as const;

/** A folder of its own under the system's temporary folder. */
export const scratch = (what: string) => mkdtempSync(join(tmpdir(), `daybook-${what}-`));

export const loadDir = (dir: string, n: number) => join(dir, `load_id=${String(n).padStart(10, '0')}`);

/** The `load_id=…` folders of a destination, sorted. */
export const packagesIn = (dir: string) =>
  existsSync(dir)
    ? readdirSync(dir)
        .filter((n) => n.startsWith('load_id='))
        .sort()
    : [];

export const manifestOf = (dir: string, n: number): Manifest =>
  JSON.parse(readFileSync(join(loadDir(dir, n), 'manifest.json'), 'utf8')) as Manifest;

export const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** Every file of a folder (recursively), by relative path: its bytes. */
export function filesOf(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const name of readdirSync(dir, { recursive: true }).map(String).sort()) {
    const path = join(dir, name);
    if (statSync(path).isFile()) out.set(name, readFileSync(path));
  }
  return out;
}

/** The rows of a text file of a package (NDJSON, gzipped NDJSON, or CSV without its header). */
export function rowsInFile(path: string): number {
  let text = readFileSync(path);
  if (path.endsWith('.gz')) text = gunzipSync(text);
  const s = text.toString('utf8');
  if (path.endsWith('.csv')) {
    // Every value is quoted: a record ends at a CRLF outside quotes.
    let records = 0;
    let quoted = false;
    for (let i = 0; i < s.length; i++) {
      const ch = s[i];
      if (ch === '"') quoted = !quoted;
      else if (ch === '\r' && !quoted && s[i + 1] === '\n') records++;
    }
    return records - 1;
  }
  return s === '' ? 0 : s.split('\n').length - 1;
}

export type Row = Record<string, unknown>;

/** The rows of a table's NDJSON file (plain or gzipped) in a package. */
export function ndjsonRows(dir: string, n: number, table: string): Row[] {
  const m = manifestOf(dir, n);
  const f = m.tables[table];
  if (!f) throw new Error(`load ${n} of ${dir} has no ${table}`);
  let bytes = readFileSync(join(loadDir(dir, n), f.file));
  if (f.file.endsWith('.gz')) bytes = gunzipSync(bytes);
  return bytes
    .toString('utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Row);
}

/**
 * Checks a package on disk as a loader would: a manifest naming every file, each file's bytes,
 * sha256 and rows as the manifest says (computed here), schema.json present, nothing else.
 */
export function expectWholePackage(dir: string, n: number): Manifest {
  const pkg = loadDir(dir, n);
  const m = manifestOf(dir, n);
  expect(m.load_no).toBe(n);
  expect(m.load_id).toBe(String(n).padStart(10, '0'));
  let rows = 0;
  for (const [table, f] of Object.entries(m.tables)) {
    const bytes = readFileSync(join(pkg, f.file));
    expect(sha256(bytes), `${table} sha256`).toBe(f.sha256);
    expect(bytes.length, `${table} bytes`).toBe(f.bytes);
    if (m.format !== 'parquet') expect(rowsInFile(join(pkg, f.file)), `${table} rows`).toBe(f.rows);
    rows += f.rows;
  }
  expect(m.rows).toBe(rows);
  expect(readdirSync(pkg).sort()).toEqual(
    [...Object.values(m.tables).map((f) => f.file), 'manifest.json', 'schema.json'].sort(),
  );
  return m;
}

export interface LedgerEntry {
  load_no: number;
  load_id: string;
  previous_load_id: string | null;
  kind: string;
  format: string;
  state: string;
  holder: string | null;
  from_snapshot: string;
  to_snapshot: string;
  rows: number | null;
}

export const ledgerOf = (sql: Sql, dir: string) =>
  sql<LedgerEntry[]>`
    select load_no, load_id, previous_load_id, kind, format, state, holder, from_snapshot, to_snapshot,
           rows::int as rows
    from exports where destination = ${resolve(dir)} order by load_no`;

/** A database whose watchlist holds the enterprises that change in CYCLES, and `others`. */
export interface Fixture {
  t: TestDatabase;
  sim: RunningSimulator;
  /** Runs these cycles (of CYCLES, in order), pulling two product lists each when `products`. */
  run(cycles: readonly string[], products?: boolean): Promise<void>;
  close(): Promise<void>;
}

export async function fixture(others = 5, enterprises = 300): Promise<Fixture> {
  const { t, sim, close } = await cliAgainstSim({ enterprises, rateLimits: UNTHROTTLED });
  await watchChanging(t, sim, CYCLES, others);
  return {
    t,
    sim,
    run: (cycles, products = false) =>
      runCyclesInline(t, sim, cycles, products ? (now) => scheduledPulls(pacificDate(now), 2) : () => []),
    close,
  };
}

/** A company event committed now, in a transaction of its own: a row of enterprise_events. */
export async function observe(sql: Sql, detail: string): Promise<number> {
  const [row] = await sql<{ id: string }[]>`
    insert into enterprise_observations (pid, kind, cycle, detail, observed_at)
    values ('test-pid', 'stale_ignored', '2026-11-20', ${detail}, now()) returning id::text`;
  return Number(row?.id);
}
