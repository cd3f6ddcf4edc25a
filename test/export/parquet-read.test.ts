/**
 * The Parquet files are readable by a reader that is not the one that wrote them. hyparquet (pure
 * JavaScript, nothing shared with DuckDB) reads every Parquet file of a full and an incremental
 * package; each holds the rows of the NDJSON package of the same range, in the same order, value
 * for value: timestamps to the microsecond in UTC, dates, decimals exactly (read from their bytes,
 * not through a float), booleans, integers and JSON. The files' schema is the contract's: its
 * columns in order, each of the Parquet type docs/export.md gives it.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import {
  asyncBufferFromFile,
  type FileMetaData,
  parquetMetadataAsync,
  parquetReadObjects,
  type SchemaElement,
} from 'hyparquet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ColumnType, EXPORT_TABLES } from '../../src/export/contract.ts';
import { exportPackages } from '../../src/export/package.ts';
import {
  CYCLES,
  expectWholePackage,
  type Fixture,
  fixture,
  loadDir,
  manifestOf,
  ndjsonRows,
  type Row,
  scratch,
} from './helpers.ts';

/** A decimal as one canonical text: no trailing zeros after the point, no lone point, no -0. */
function canonicalDecimal(text: string): string {
  let s = text.includes('.') ? text.replace(/0+$/, '').replace(/\.$/, '') : text;
  if (/^-0(\.0*)?$/.test(s)) s = '0';
  return s;
}

/** A Parquet DECIMAL stored as a big-endian two's complement integer, as exact text. */
function decimalFromBytes(bytes: Uint8Array, scale: number): string {
  let v = 0n;
  for (const b of bytes) v = (v << 8n) | BigInt(b);
  if (bytes.length > 0 && ((bytes[0] as number) & 0x80) !== 0) v -= 1n << BigInt(bytes.length * 8);
  const negative = v < 0n;
  const digits = (negative ? -v : v).toString().padStart(scale + 1, '0');
  const text = `${digits.slice(0, digits.length - scale)}.${digits.slice(digits.length - scale)}`;
  return canonicalDecimal(`${negative ? '-' : ''}${text}`);
}

/** Microseconds since the epoch as the NDJSON writes a timestamp: `YYYY-MM-DDTHH:MM:SS.ffffffZ`. */
function timestampFromMicros(us: bigint): string {
  let seconds = us / 1_000_000n;
  let fraction = us % 1_000_000n;
  if (fraction < 0n) {
    seconds -= 1n;
    fraction += 1_000_000n;
  }
  return `${new Date(Number(seconds) * 1000).toISOString().slice(0, 19)}.${fraction.toString().padStart(6, '0')}Z`;
}

const parsers = {
  timestampFromMicroseconds: timestampFromMicros,
  dateFromDays: (days: number) => new Date(days * 86_400_000).toISOString().slice(0, 10),
};

/** What the Parquet schema element of each logical type must say. */
function expectParquetType(el: SchemaElement | undefined, type: ColumnType, what: string): void {
  expect(el, what).toBeDefined();
  const e = el as SchemaElement;
  switch (type) {
    case 'text':
      expect([e.type, e.converted_type], what).toEqual(['BYTE_ARRAY', 'UTF8']);
      break;
    case 'int32':
      expect(e.type, what).toBe('INT32');
      expect([undefined, 'INT_32'], what).toContain(e.converted_type);
      break;
    case 'int64':
      expect(e.type, what).toBe('INT64');
      expect([undefined, 'INT_64'], what).toContain(e.converted_type);
      break;
    case 'boolean':
      expect(e.type, what).toBe('BOOLEAN');
      break;
    case 'date':
      expect([e.type, e.converted_type], what).toEqual(['INT32', 'DATE']);
      break;
    case 'timestamp':
      expect(e.type, what).toBe('INT64');
      expect(e.logical_type, what).toEqual({ type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MICROS' });
      break;
    case 'decimal':
      expect([e.type, e.converted_type, e.precision, e.scale], what).toEqual([
        'FIXED_LEN_BYTE_ARRAY',
        'DECIMAL',
        38,
        10,
      ]);
      break;
    case 'json':
      expect([e.type, e.converted_type], what).toEqual(['BYTE_ARRAY', 'JSON']);
      break;
  }
}

describe('Parquet read back by hyparquet', { timeout: 120_000 }, () => {
  let f: Fixture;
  let root: string;
  let parquetDir: string;
  let ndjsonDir: string;

  beforeAll(async () => {
    f = await fixture(10);
    root = scratch('hyparquet');
    parquetDir = join(root, 'parquet');
    ndjsonDir = join(root, 'ndjson');
    // Two packages each, with nothing written between the two exports of one range.
    await f.run([CYCLES[0]], true);
    await exportPackages(f.t.sql, { to: ndjsonDir, format: 'ndjson' });
    await exportPackages(f.t.sql, { to: parquetDir, format: 'parquet' });
    await f.run([CYCLES[1], CYCLES[2]], true);
    await exportPackages(f.t.sql, { to: ndjsonDir, format: 'ndjson' });
    await exportPackages(f.t.sql, { to: parquetDir, format: 'parquet' });
  });

  afterAll(async () => {
    await f?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it.each([[1], [2]])(
    'load %i: every Parquet file holds the rows of the NDJSON package, in order, value for value',
    async (n) => {
      const pm = expectWholePackage(parquetDir, n);
      const nm = expectWholePackage(ndjsonDir, n);
      expect(pm.kind).toBe(n === 1 ? 'full' : 'incremental');
      expect(pm.inexact_decimals).toBeUndefined();
      const seen: Record<string, number> = {};
      const count = (what: string) => {
        seen[what] = (seen[what] ?? 0) + 1;
      };
      for (const table of EXPORT_TABLES) {
        const entry = pm.tables[table.name];
        expect(entry?.file, table.name).toBe(`${table.name}.parquet`);
        const file = await asyncBufferFromFile(join(loadDir(parquetDir, n), entry?.file as string));
        const metadata: FileMetaData = await parquetMetadataAsync(file);
        // The schema: the contract's columns, in order, of their Parquet types.
        const columns = metadata.schema.slice(1);
        expect(
          columns.map((c) => c.name),
          table.name,
        ).toEqual(table.columns.map((c) => c.name));
        for (const col of table.columns)
          expectParquetType(
            columns.find((c) => c.name === col.name),
            col.type,
            `${table.name}.${col.name}`,
          );
        for (const rg of metadata.row_groups)
          for (const chunk of rg.columns)
            expect(chunk.meta_data?.codec, table.name).toBe(String(pm.compression).toUpperCase());
        expect(Number(metadata.num_rows), table.name).toBe(entry?.rows);
        expect(entry?.rows, table.name).toBe(nm.tables[table.name]?.rows);

        // Decimals are read from their bytes: the reader's own conversion goes through a float.
        const decimals = new Set(table.columns.filter((c) => c.type === 'decimal').map((c) => c.name));
        const raw: FileMetaData = {
          ...metadata,
          schema: metadata.schema.map((el) =>
            decimals.has(el.name) ? { ...el, converted_type: undefined, logical_type: undefined } : el,
          ),
        };
        const read = await parquetReadObjects({ file, metadata: raw, parsers });
        const parquetRows = read.map((r) =>
          Object.fromEntries(
            table.columns.map((col) => {
              const v: unknown = r[col.name] ?? null;
              if (v === null) return [col.name, null];
              if (col.type === 'decimal') return [col.name, decimalFromBytes(v as Uint8Array, 10)];
              if (col.type === 'int64') return [col.name, Number(v as bigint)];
              return [col.name, v];
            }),
          ),
        );
        const ndjson = ndjsonRows(ndjsonDir, n, table.name).map((r) =>
          Object.fromEntries(
            table.columns.map((col) => {
              const v = r[col.name] ?? null;
              return [col.name, col.type === 'decimal' && v !== null ? canonicalDecimal(String(v)) : v];
            }),
          ),
        );
        expect(parquetRows.length, table.name).toBe(ndjson.length);
        for (const [i, row] of parquetRows.entries())
          expect(row, `load ${n} ${table.name} row ${i}`).toEqual(ndjson[i] as Row);
        for (const row of ndjson)
          for (const col of table.columns) {
            const v = row[col.name];
            if (v === null || v === undefined) continue;
            count(col.type);
            if (col.type === 'boolean') count(`boolean:${v}`);
            if (col.type === 'timestamp' && !String(v).endsWith('000Z')) count('timestamp:micros');
            if (col.type === 'decimal' && String(v).includes('.')) count('decimal:fraction');
            if (col.type === 'json' && Object.keys(v as object).length > 0) count('json:non-empty');
          }
      }
      // Every kind of value was compared, not just nulls.
      for (const what of [
        'text',
        'int32',
        'int64',
        'date',
        'timestamp',
        'timestamp:micros',
        'decimal',
        'decimal:fraction',
        'json',
        'json:non-empty',
        'boolean:true',
        'boolean:false',
      ])
        expect(seen[what] ?? 0, what).toBeGreaterThan(0);
      if (n === 2) expect(manifestOf(parquetDir, 2).tables.enterprise_versions?.rows).toBeGreaterThan(0);
    },
  );
});
