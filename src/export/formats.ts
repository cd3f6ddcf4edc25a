/**
 * Writes one table of a package in one format: NDJSON (optionally gzipped) and CSV made by
 * Postgres and streamed through a cursor, Parquet through DuckDB (`@duckdb/node-api`) from that
 * NDJSON.
 * Every writer is deterministic: the same rows give the same bytes.
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import { Readable, Transform, type TransformCallback, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import type { Sql } from '../db/connect.ts';
import { type Column, DECIMAL_PRECISION, DECIMAL_SCALE, type ExportTable, rangeSql } from './contract.ts';

export const FORMATS = ['parquet', 'ndjson', 'csv'] as const;
export type Format = (typeof FORMATS)[number];

export interface FileWritten {
  file: string;
  rows: number;
  bytes: number;
  sha256: string;
  /** Parquet: per decimal column, the values DECIMAL(38,10) cannot hold exactly (written as null). */
  inexact?: Record<string, number>;
}

/** A computed shape: one line of a text format, made by the query itself (`writeLines`). */
interface Line {
  line: string;
}

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** A column's value as the text formats carry it (timestamps in UTC, decimals as text). */
function textExpr(col: Column, csv: boolean): string {
  const e = `(${col.expr ?? col.name})`;
  switch (col.type) {
    case 'timestamp':
      return `to_char(${e} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
    case 'decimal':
      return `${e}::text`;
    case 'date':
      return `to_char(${e}, 'YYYY-MM-DD')`;
    case 'boolean':
      return csv ? `case when ${e} then 'true' when not ${e} then 'false' end` : e;
    case 'json':
      return csv ? `${e}::text` : e;
    case 'int32':
      return `${e}::integer`;
    case 'int64':
      return `${e}::bigint`;
    default:
      return e;
  }
}

/** A table's select over a range, each column as the text formats carry it (used by the benchmark too). */
export function selectSql(table: ExportTable, lo: string, hi: string, csv: boolean): string {
  const cols = table.columns.map((col) => `${textExpr(col, csv)} as ${quote(col.name)}`).join(', ');
  return rangeSql(`select ${cols} from ${table.from} where ${table.where} order by ${table.orderBy}`, lo, hi);
}

/**
 * Streams the one text column of `query` (a row per line) through a cursor into a file, each
 * line ended by `eol`, after an optional header. The cursor, not COPY: the driver's COPY stream
 * can leave its connection waiting (porsager/postgres#917, #499), and a cursor works the same on
 * every server daybook runs on (Postgres, PgBouncer, the embedded database).
 */
async function writeLines(
  tx: Sql,
  query: string,
  path: string,
  options: { eol: string; header?: string; gzip?: boolean },
): Promise<FileWritten> {
  const hash = createHash('sha256');
  let bytes = 0;
  let rows = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback) {
      hash.update(chunk);
      bytes += chunk.length;
      done(null, chunk);
    },
  });
  async function* lines(): AsyncGenerator<string> {
    if (options.header !== undefined) yield `${options.header}${options.eol}`;
    for await (const batch of tx.unsafe<Line[]>(query).cursor(2000)) {
      let text = '';
      for (const r of batch) text += `${r.line}${options.eol}`;
      rows += batch.length;
      yield text;
    }
  }
  const source = Readable.from(lines());
  // A gzip member with no name and mtime 0: the same rows give the same bytes.
  if (options.gzip) await pipeline(source, createGzip({ level: 6 }), meter, createWriteStream(path));
  else await pipeline(source, meter, createWriteStream(path));
  return { file: path, rows, bytes, sha256: hash.digest('hex') };
}

/** `table.ndjson` (or `.ndjson.gz`): one JSON object per line, columns in contract order. */
export async function writeNdjson(
  tx: Sql,
  table: ExportTable,
  lo: string,
  hi: string,
  path: string,
  gzip: boolean,
): Promise<FileWritten> {
  const query = `select to_json(t)::text as line from (${selectSql(table, lo, hi, false)}) t`;
  return writeLines(tx, query, path, { eol: '\n', gzip });
}

/**
 * `table.csv`: RFC 4180, a header line, CRLF line ends; every value quoted, NULL as an empty
 * unquoted field (so an empty text, `""`, stays apart from NULL).
 */
export async function writeCsv(
  tx: Sql,
  table: ExportTable,
  lo: string,
  hi: string,
  path: string,
): Promise<FileWritten> {
  const fields = table.columns
    .map((col) => `coalesce('"' || replace((${textExpr(col, true)})::text, '"', '""') || '"', '')`)
    .join(` || ',' || `);
  const query = rangeSql(
    `select ${fields} as line from ${table.from} where ${table.where} order by ${table.orderBy}`,
    lo,
    hi,
  );
  return writeLines(tx, query, path, { eol: '\r\n', header: table.columns.map((c) => c.name).join(',') });
}

/** DuckDB's type for each logical type. */
export function duckType(type: Column['type']): string {
  switch (type) {
    case 'text':
      return 'VARCHAR';
    case 'int32':
      return 'INTEGER';
    case 'int64':
      return 'BIGINT';
    case 'boolean':
      return 'BOOLEAN';
    case 'date':
      return 'DATE';
    case 'timestamp':
      return 'TIMESTAMPTZ';
    case 'decimal':
      return `DECIMAL(${DECIMAL_PRECISION},${DECIMAL_SCALE})`;
    case 'json':
      return 'JSON';
  }
}

const sqlString = (s: string) => `'${s.replaceAll("'", "''")}'`;

/** A DuckDB connection for writing Parquet: one thread, insertion order kept (deterministic). */
export interface ParquetWriter {
  write(table: ExportTable, ndjsonPath: string, path: string, rows: number): Promise<FileWritten>;
  close(): void;
}

export async function openParquetWriter(): Promise<ParquetWriter> {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const instance = await DuckDBInstance.create(':memory:', {
    threads: '1',
    preserve_insertion_order: 'true',
  });
  const conn = await instance.connect();
  return {
    async write(table, ndjsonPath, path, rows) {
      // Decimals arrive as text and are read as text: a value DECIMAL(38,10) cannot hold exactly
      // (more than 28 digits before the point or 10 after it) is written as null and counted,
      // never rounded. NDJSON and CSV carry every decimal exactly.
      const columns = table.columns
        .map(
          (col) =>
            `${sqlString(col.name)}: ${sqlString(col.type === 'decimal' ? 'VARCHAR' : duckType(col.type))}`,
        )
        .join(', ');
      const integral = DECIMAL_PRECISION - DECIMAL_SCALE;
      const fits = (q: string) =>
        `regexp_full_match(case when contains(${q}, '.') then rtrim(rtrim(${q}, '0'), '.') else ${q} end, '-?[0-9]{1,${integral}}(\\.[0-9]{1,${DECIMAL_SCALE}})?')`;
      const select = table.columns
        .map((col) => {
          const q = quote(col.name);
          return col.type === 'decimal'
            ? `case when ${fits(q)} then cast(${q} as ${duckType('decimal')}) end as ${q}`
            : q;
        })
        .join(', ');
      const source = `read_json(${sqlString(ndjsonPath)}, format = 'newline_delimited', columns = {${columns}})`;
      await conn.run(
        `copy (select ${select} from ${source})
         to ${sqlString(path)} (format parquet, compression snappy, row_group_size 122880)`,
      );
      const inexact: Record<string, number> = {};
      const decimals = table.columns.filter((col) => col.type === 'decimal');
      if (decimals.length > 0 && rows > 0) {
        const counts = await conn.runAndReadAll(
          `select ${decimals.map((col) => `count(*) filter (where ${quote(col.name)} is not null and not ${fits(quote(col.name))})::integer as ${quote(col.name)}`).join(', ')} from ${source}`,
        );
        for (const [name, n] of Object.entries(counts.getRowObjectsJson()[0] ?? {}))
          if (Number(n) > 0) inexact[name] = Number(n);
      }
      await rm(ndjsonPath);
      const hash = createHash('sha256');
      const { createReadStream } = await import('node:fs');
      await pipeline(
        createReadStream(path),
        new Writable({
          write(chunk, _enc, done) {
            hash.update(chunk);
            done();
          },
        }),
      );
      return {
        file: path,
        rows,
        bytes: (await stat(path)).size,
        sha256: hash.digest('hex'),
        ...(Object.keys(inexact).length > 0 ? { inexact } : {}),
      };
    },
    close() {
      conn.closeSync();
      instance.closeSync();
    },
  };
}
