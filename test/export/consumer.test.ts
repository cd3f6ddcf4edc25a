/**
 * A warehouse rebuilt from the export equals daybook, row for row.
 *
 * Three cycles run against the simulator, with changes, a disappearance, format drift and
 * product pulls; after each, `exportPackages` writes one Parquet package to a folder. A fresh
 * DuckDB then runs docs/recipes/duckdb-load.sql as it is (the recipe the documentation gives
 * users) over that folder, and every view it defines is compared with the analytics view of the
 * same name in Postgres: the same rows, every column the analytics view has, values compared
 * after writing both sides as text the same way (timestamps to the microsecond, in UTC).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scheduledPulls } from '../../jobs/products.ts';
import { exportPackages, type PackageWritten } from '../../src/export/package.ts';
import { ingestFailure } from '../../src/history/ingest.ts';
import { rebuild } from '../../src/history/rebuild.ts';
import { parseFaultSpec } from '../../src/sim/faults.ts';
import type { RunningSimulator } from '../../src/sim/server.ts';
import { pacificDate } from '../../src/time/cycles.ts';
import { NotFoundError } from '../../src/upstream/errors.ts';
import { type CliSim, cliAgainstSim } from '../support/cli-sim.ts';
import type { TestDatabase } from '../support/db.ts';
import { runCyclesInline, watchChanging } from '../support/inline.ts';
import { UNTHROTTLED } from '../support/sim.ts';

const CYCLES = ['2026-11-18', '2026-11-19', '2026-11-20'];
const RECIPE = new URL('../../docs/recipes/duckdb-load.sql', import.meta.url);

/** The views compared, and the columns that identify a row (to line both sides up). */
const VIEWS: { view: string; key: string[] }[] = [
  { view: 'enterprise_current', key: ['pid'] },
  { view: 'enterprise_history', key: ['pid', 'version'] },
  { view: 'enterprise_changes', key: ['change_id'] },
  { view: 'enterprise_events', key: ['event_id'] },
  { view: 'events', key: ['sequence'] },
  { view: 'product_current', key: ['product_id'] },
  { view: 'product_trending', key: ['list_date', 'raw_response_id', 'position'] },
  { view: 'credit_usage', key: ['cycle', 'operation'] },
];

type Row = Record<string, string | null>;

/** A value as one canonical text: decimals without trailing zeros, JSON with sorted keys. */
function canonical(value: string | null, pgType: string): string | null {
  if (value === null) return null;
  if (pgType === 'numeric') return value.includes('.') ? value.replace(/0+$/, '').replace(/\.$/, '') : value;
  if (pgType === 'jsonb' || pgType === 'json' || pgType === 'ARRAY') {
    const sorted = (v: unknown): unknown =>
      Array.isArray(v)
        ? v.map(sorted)
        : v !== null && typeof v === 'object'
          ? Object.fromEntries(
              Object.entries(v as Record<string, unknown>)
                .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
                .map(([k, x]) => [k, sorted(x)]),
            )
          : v;
    return JSON.stringify(sorted(JSON.parse(value)));
  }
  return value;
}

const byKey = (key: string[]) => (a: Row, b: Row) => {
  const ka = JSON.stringify(key.map((k) => a[k]));
  const kb = JSON.stringify(key.map((k) => b[k]));
  return ka < kb ? -1 : ka > kb ? 1 : 0;
};

/** Runs the DuckDB recipe over `dir` and compares every view with daybook's analytics view. */
async function expectWarehouseEqual(t: TestDatabase, dir: string): Promise<void> {
  const instance = await DuckDBInstance.create(':memory:');
  const duck = await instance.connect();
  try {
    await duck.run(`SET VARIABLE export_dir = '${dir.replaceAll("'", "''")}'`);
    await duck.run(readFileSync(RECIPE, 'utf8'));
    for (const { view, key } of VIEWS) {
      const columns = await t.sql<{ name: string; type: string }[]>`
        select column_name as name, data_type as type from information_schema.columns
        where table_schema = 'analytics' and table_name = ${view} order by ordinal_position`;
      expect(columns.length, view).toBeGreaterThan(0);
      const pgExpr = (c: { name: string; type: string }) => {
        const q = `"${c.name}"`;
        if (c.type === 'timestamp with time zone')
          return `to_char(${q} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US')`;
        if (c.type === 'ARRAY') return `to_json(${q})::text`;
        return `${q}::text`;
      };
      const pgRows = await t.sql.unsafe<Row[]>(
        `select ${columns.map((c) => `${pgExpr(c)} as "${c.name}"`).join(', ')} from analytics.${view}`,
      );
      const described = new Map(
        (await duck.runAndReadAll(`describe select * from ${view}`))
          .getRowObjectsJson()
          .map((r) => [String(r.column_name), String(r.column_type)]),
      );
      const missing = columns.filter((c) => !described.has(c.name)).map((c) => c.name);
      expect(missing, `${view}: columns the DuckDB view lacks`).toEqual([]);
      const duckExpr = (name: string) => {
        const type = described.get(name) ?? '';
        const q = `"${name}"`;
        if (type.startsWith('TIMESTAMP')) return `strftime(${q}, '%Y-%m-%dT%H:%M:%S.%f')`;
        if (type.endsWith('[]')) return `to_json(${q})::VARCHAR`;
        return `${q}::VARCHAR`;
      };
      const duckRows = (
        await duck.runAndReadAll(
          `select ${columns.map((c) => `${duckExpr(c.name)} as "${c.name}"`).join(', ')} from ${view}`,
        )
      ).getRowObjectsJson() as Row[];
      const norm = (rows: Row[]) =>
        rows
          .map((r) => Object.fromEntries(columns.map((c) => [c.name, canonical(r[c.name] ?? null, c.type)])))
          .sort(byKey(key));
      const expected = norm(pgRows);
      expect(expected.length, `${view} is empty in Postgres`).toBeGreaterThan(0);
      const actual = norm(duckRows);
      expect(actual.length, view).toBe(expected.length);
      expect(actual, view).toEqual(expected);
    }
  } finally {
    duck.closeSync();
    instance.closeSync();
  }
}

describe('a warehouse rebuilt from the export packages', { timeout: 300_000 }, () => {
  let t: TestDatabase;
  let sim: RunningSimulator;
  let dbSim: CliSim;
  let dir: string;
  const packages: PackageWritten[] = [];

  beforeAll(async () => {
    dbSim = await cliAgainstSim({ enterprises: 400, rateLimits: UNTHROTTLED });
    ({ t, sim } = dbSim);
    dir = mkdtempSync(join(tmpdir(), 'daybook-export-'));
    await watchChanging(t, sim, CYCLES, 20);
    for (const [i, cycle] of CYCLES.entries()) {
      // The second cycle's answers drift in shape now and then.
      sim.sim.setFaults(parseFaultSpec(i === 1 ? 'drift=0.3' : ''));
      await runCyclesInline(t, sim, [cycle], (now) => scheduledPulls(pacificDate(now), 2));
      if (i > 0) {
        // A company found before answers not_found: it disappears (and its history stays). The
        // one of the second cycle is found again by the third: it reappears.
        const [w] = await t.sql<{ keyword: string }[]>`
          select keyword from watchlist where pid is not null order by id offset ${i - 1} limit 1`;
        if (!w) throw new Error('no keyword resolved');
        await ingestFailure(
          t.sql,
          new NotFoundError(
            'enterprise-search (HTTP 404): not_found',
            { operation: 'enterprise-search', params: { ent_name: w.keyword } },
            {
              httpStatus: 404,
              bodyText: '{"status":"error","error":{"code":"not_found","message":"none"}}',
              durationMs: 3,
              fetchedAt: new Date(),
            },
          ),
          { runId: null, cycle },
        );
      }
      packages.push(...(await exportPackages(t.sql, { to: dir, format: 'parquet' })));
    }
    sim.sim.setFaults(parseFaultSpec(''));
  });

  afterAll(async () => {
    await dbSim?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the history holds changes, a disappearance and drift, and each cycle made one package', async () => {
    const [counts] = await t.sql<
      { changes: number; gone: number; back: number; drift: number; closed: number }[]
    >`
      select (select count(*)::int from enterprise_changes) as changes,
             (select count(*)::int from enterprises where presence = 'disappeared') as gone,
             (select count(*)::int from enterprise_observations where kind = 'reappeared') as back,
             (select count(*)::int from format_drift) as drift,
             (select count(*)::int from enterprise_versions where valid_to is not null) as closed`;
    expect(counts?.changes).toBeGreaterThan(0);
    expect(counts?.gone).toBe(1);
    expect(counts?.back).toBe(1);
    expect(counts?.drift).toBeGreaterThan(0);
    expect(counts?.closed).toBeGreaterThan(0);
    expect(packages.map((p) => [p.loadNo, p.kind])).toEqual([
      [1, 'full'],
      [2, 'incremental'],
      [3, 'incremental'],
    ]);
    // An incremental package holds what is new, not everything again.
    const manifest = (n: number) =>
      JSON.parse(readFileSync(join(dir, `load_id=${String(n).padStart(10, '0')}`, 'manifest.json'), 'utf8'));
    const [first, second, third] = [manifest(1), manifest(2), manifest(3)];
    expect(second.previous_load_id).toBe(first.load_id);
    expect(third.previous_load_id).toBe(second.load_id);
    expect(second.cursor.from_snapshot).toBe(first.cursor.to_snapshot);
    const [all] = await t.sql<{ n: number }[]>`select count(*)::int as n from enterprise_versions`;
    const exported =
      first.tables.enterprise_versions.rows +
      second.tables.enterprise_versions.rows +
      third.tables.enterprise_versions.rows;
    // Every version once, plus the closed ones once more (as closed).
    expect(exported).toBeGreaterThan(all?.n ?? 0);
    expect(second.tables.enterprise_versions.rows).toBeLessThan(all?.n ?? 0);
  });

  it('DuckDB, loading the packages with the documented recipe, equals every analytics view row for row', async () => {
    await expectWarehouseEqual(t, dir);
  });

  it('after a rebuild the next package is a full one, and the warehouse still equals daybook', async () => {
    await rebuild(t.sql);
    const [p] = await exportPackages(t.sql, { to: dir, format: 'parquet' });
    expect(p?.kind).toBe('full');
    expect(p?.loadNo).toBe(4);
    await expectWarehouseEqual(t, dir);
  });
});
