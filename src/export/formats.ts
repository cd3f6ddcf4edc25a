/**
 * Writes one table of a package in one format: NDJSON (optionally gzipped) and CSV made by
 * Postgres and streamed out by `COPY … TO STDOUT` (a cursor on the embedded database), Parquet
 * through DuckDB (`@duckdb/node-api`) from that CSV, staged beside it.
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
 * How a server hands the rows out. `copy`: `COPY (…) TO STDOUT`, Postgres making every byte of
 * the file and the driver passing them on in large chunks (no row is handled one by one here).
 * `cursor`: a cursor, 2,000 rows a fetch, for the embedded database (PGlite), which answers a
 * COPY with the whole table at once (its memory would grow with the table). Both give the same
 * bytes (test/export/transfer.test.ts).
 */
export type Transfer = 'copy' | 'cursor';

/** The transfer for the server `tx` talks to: a cursor on the embedded database, COPY elsewhere. */
export async function transferOf(tx: Sql): Promise<Transfer> {
  const [row] = await tx.unsafe<{ version: string }[]>('select version() as version');
  return row?.version.includes('PGlite') ? 'cursor' : 'copy';
}

/** What a file's bytes go through: optional gzip, then a sha256 and byte count, then the file. */
async function writeStream(
  source: AsyncIterable<Buffer | string>,
  path: string,
  gzip: boolean,
): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash('sha256');
  let bytes = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback) {
      hash.update(chunk);
      bytes += chunk.length;
      done(null, chunk);
    },
  });
  const from = Readable.from(source);
  // A gzip member with no name and mtime 0: the same rows give the same bytes.
  if (gzip) await pipeline(from, createGzip({ level: 6 }), meter, createWriteStream(path));
  else await pipeline(from, meter, createWriteStream(path));
  return { bytes, sha256: hash.digest('hex') };
}

/** How much a COPY hands on at a time (its rows arrive one message each). */
const COPY_CHUNK = 1 << 20;

/** A `COPY … TO STDOUT` under way: its output, and a way to wait until the connection is free. */
interface CopyOut {
  /** The output in chunks of about COPY_CHUNK bytes. */
  chunks: AsyncGenerator<Buffer>;
  /**
   * Reads what is left of the output, dropping it, and waits for its end: the connection is then
   * ready for the next statement. Call it once the file is written or failed; it does nothing when
   * the COPY never began.
   */
  drain(): Promise<void>;
}

/**
 * Starts reading `statement`, a `COPY … TO STDOUT`, when its chunks are first asked for, counting
 * its LFs in `rows.n` when asked (one per row when no value holds a LF).
 */
function copyOut(tx: Sql, statement: string, rows?: { n: number }): CopyOut {
  let opening: Promise<Readable> | null = null;
  /** Set by `drain`: what arrives from then on is dropped, and the stream is never paused. */
  let draining = false;
  async function drain(): Promise<void> {
    draining = true;
    if (!opening) return;
    let readable: Readable;
    try {
      readable = await opening;
    } catch {
      return; // The statement failed: the driver has ended it.
    }
    if (!readable.readableEnded && !readable.destroyed) {
      const ended = new Promise((resolve) => {
        readable.once('end', resolve);
        readable.once('close', resolve);
        readable.once('error', resolve);
      });
      readable.on('data', () => {});
      readable.resume();
      await ended;
    }
    // The driver pauses its socket when the stream's buffer is full and resumes it only when
    // the stream asks for more. A COPY whose last rows filled the buffer leaves the socket
    // paused after its end: the statement's completion would then never be read, and the next
    // statement on the connection would wait forever. Asking once more resumes it.
    (readable as unknown as { _read(size: number): void })._read(0);
  }
  async function* chunks(): AsyncGenerator<Buffer> {
    opening = tx.unsafe(statement).readable();
    const readable = await opening;
    // 'data' events only (no 'readable' listener), so that `drain` can make it flow.
    let parts: Buffer[] = [];
    let size = 0;
    let ended = false;
    let failure: Error | null = null;
    let wake: (() => void) | null = null;
    const onData = (chunk: Buffer) => {
      if (draining) return;
      if (rows) for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) rows.n++;
      parts.push(chunk);
      size += chunk.length;
      if (size >= COPY_CHUNK) {
        readable.pause();
        wake?.();
      }
    };
    const onEnd = () => {
      ended = true;
      wake?.();
    };
    const onError = (err: Error) => {
      failure = err;
      wake?.();
    };
    readable.on('data', onData);
    readable.once('end', onEnd);
    readable.once('error', onError);
    try {
      for (;;) {
        if (failure) throw failure;
        if (size >= COPY_CHUNK || (ended && size > 0)) {
          const out = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, size);
          parts = [];
          size = 0;
          yield out;
          readable.resume();
          continue;
        }
        if (ended) return;
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = null;
      }
    } finally {
      readable.off('data', onData);
      readable.off('end', onEnd);
      readable.off('error', onError);
    }
  }
  return { chunks: chunks(), drain };
}

interface CsvState {
  quoted: boolean;
  rows: number;
}

/**
 * CSV as COPY writes it (LF line ends) with every line end outside quotes made a CRLF. `quoted`
 * carries the state from one chunk to the next. Every value is quoted (FORCE_QUOTE *), so a
 * quote character toggles the state and a doubled one toggles it twice. `rows` counts the line
 * ends outside quotes: the records.
 */
function crlfLineEnds(chunk: Buffer, state: CsvState): Buffer {
  let quoted = state.quoted;
  let ends = 0;
  const n = chunk.length;
  for (let i = 0; i < n; i++) {
    const b = chunk[i];
    if (b === 34) quoted = !quoted;
    else if (b === 10 && !quoted) ends++;
  }
  state.rows += ends;
  if (ends === 0) {
    state.quoted = quoted;
    return chunk;
  }
  const out = Buffer.allocUnsafe(n + ends);
  quoted = state.quoted;
  let from = 0;
  let to = 0;
  for (let i = 0; i < n; i++) {
    const b = chunk[i];
    if (b === 34) quoted = !quoted;
    else if (b === 10 && !quoted) {
      to += chunk.copy(out, to, from, i);
      out[to++] = 13;
      out[to++] = 10;
      from = i + 1;
    }
  }
  chunk.copy(out, to, from, n);
  state.quoted = quoted;
  return out;
}

/**
 * Streams the one text column of `query` (a row per line) through a cursor, each line ended by
 * `eol`: the embedded database's transfer.
 */
async function* cursorLines(
  tx: Sql,
  query: string,
  eol: string,
  rows: { n: number },
): AsyncGenerator<string> {
  for await (const batch of tx.unsafe<Line[]>(query).cursor(2000)) {
    let text = '';
    for (const r of batch) text += `${r.line}${eol}`;
    rows.n += batch.length;
    yield text;
  }
}

/** The select of `to_json` lines, one per row, columns in contract order. */
const jsonLinesSql = (table: ExportTable, lo: string, hi: string) =>
  `select to_json(t)::text as line from (${selectSql(table, lo, hi, false)}) t`;

/**
 * COPY's CSV format with a delimiter and a quote character (0x01, 0x02) that JSON text never
 * holds (it escapes every control character) and a line that is never empty: each value goes out
 * as it is, no quoting or escaping, one per line. COPY's text format would escape backslashes.
 */
const RAW_LINES = "(format csv, delimiter e'\\x01', quote e'\\x02')";

/** The CSV options of COPY: every value quoted, NULL an empty unquoted field. */
const CSV_COPY = '(format csv, force_quote *)';

/**
 * The COPY statement of a table's NDJSON lines or CSV records (LF line ends, no header), as the
 * writers run it (used by the benchmark too).
 */
export function copyStatement(table: ExportTable, lo: string, hi: string, format: 'ndjson' | 'csv'): string {
  return format === 'ndjson'
    ? `copy (${jsonLinesSql(table, lo, hi)}) to stdout ${RAW_LINES}`
    : `copy (${selectSql(table, lo, hi, true)}) to stdout ${CSV_COPY}`;
}

/** `table.ndjson` (or `.ndjson.gz`): one JSON object per line, columns in contract order. */
export async function writeNdjson(
  tx: Sql,
  table: ExportTable,
  lo: string,
  hi: string,
  path: string,
  gzip: boolean,
  transfer: Transfer = 'copy',
): Promise<FileWritten> {
  const rows = { n: 0 };
  if (transfer === 'copy') {
    const copy = copyOut(tx, copyStatement(table, lo, hi, 'ndjson'), rows);
    try {
      return { file: path, ...(await writeStream(copy.chunks, path, gzip)), rows: rows.n };
    } finally {
      await copy.drain();
    }
  }
  const written = await writeStream(cursorLines(tx, jsonLinesSql(table, lo, hi), '\n', rows), path, gzip);
  return { file: path, rows: rows.n, ...written };
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
  transfer: Transfer = 'copy',
): Promise<FileWritten> {
  const header = `${table.columns.map((c) => c.name).join(',')}\r\n`;
  if (transfer === 'copy') {
    const state: CsvState = { quoted: false, rows: 0 };
    const copy = copyOut(tx, copyStatement(table, lo, hi, 'csv'));
    try {
      const written = await writeStream(
        (async function* () {
          yield header;
          for await (const chunk of copy.chunks) yield crlfLineEnds(chunk, state);
        })(),
        path,
        false,
      );
      return { file: path, rows: state.rows, ...written };
    } finally {
      await copy.drain();
    }
  }
  const rows = { n: 0 };
  const fields = table.columns
    .map((col) => `coalesce('"' || replace((${textExpr(col, true)})::text, '"', '""') || '"', '')`)
    .join(` || ',' || `);
  const query = rangeSql(
    `select ${fields} as line from ${table.from} where ${table.where} order by ${table.orderBy}`,
    lo,
    hi,
  );
  const written = await writeStream(
    (async function* () {
      yield header;
      yield* cursorLines(tx, query, '\r\n', rows);
    })(),
    path,
    false,
  );
  return { file: path, rows: rows.n, ...written };
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

/**
 * The longest row DuckDB reads from a staged CSV file (bytes), as the NDJSON reader allowed
 * before. Its read buffer is twice that: a larger one holds a whole table's file at once.
 * The buffer's size shapes the Parquet files' bytes (it sets where DuckDB's batches end): it
 * stays as it is, or packages written again would differ.
 */
const MAX_LINE = 16 * 1024 * 1024;

/** A DuckDB connection for writing Parquet: one thread, insertion order kept (deterministic). */
export interface ParquetWriter {
  write(table: ExportTable, csvPath: string, path: string, rows: number): Promise<FileWritten>;
  close(): void;
}

export async function openParquetWriter(): Promise<ParquetWriter> {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const instance = await DuckDBInstance.create(':memory:', {
    threads: '1',
    preserve_insertion_order: 'true',
    // Hand freed memory back to the system after every statement. A wide table's row group
    // (enterprise_versions: 100,000 rows in one) takes a few hundred MiB while it is written;
    // otherwise DuckDB's allocator keeps most of it cached for the next file, and the next
    // file's row group comes on top of it. The bytes written do not change.
    allocator_flush_threshold: '0MB',
    allocator_bulk_deallocation_flush_threshold: '0MB',
  });
  const conn = await instance.connect();
  // One file at a time (the package's lanes may ask together): DuckDB's memory stays one
  // table's row group.
  let turn: Promise<unknown> = Promise.resolve();
  return {
    write(table, csvPath, path, rows) {
      const mine = turn.then(() => writeOne(table, csvPath, path, rows));
      turn = mine.catch(() => {});
      return mine;
    },
    close() {
      conn.closeSync();
      instance.closeSync();
    },
  };

  async function writeOne(
    table: ExportTable,
    csvPath: string,
    path: string,
    rows: number,
  ): Promise<FileWritten> {
    {
      // Decimals arrive as text and are read as text: a value DECIMAL(38,10) cannot hold exactly
      // (more than 28 digits before the point or 10 after it) is written as null and counted,
      // never rounded. NDJSON and CSV carry every decimal exactly.
      const columns = table.columns
        .map(
          (col) =>
            `${sqlString(col.name)}: ${sqlString(col.type === 'decimal' || col.type === 'json' ? 'VARCHAR' : duckType(col.type))}`,
        )
        .join(', ');
      const integral = DECIMAL_PRECISION - DECIMAL_SCALE;
      const fits = (q: string) =>
        `regexp_full_match(case when contains(${q}, '.') then rtrim(rtrim(${q}, '0'), '.') else ${q} end, '-?[0-9]{1,${integral}}(\\.[0-9]{1,${DECIMAL_SCALE}})?')`;
      // DuckDB casts text to a DECIMAL wider than 18 digits slowly (about 10 µs a value: most of
      // a wide table's time), and text to an integer fast. So a value that fits is read as its
      // digits at the scale (the integral part, then the fraction padded to DECIMAL_SCALE digits;
      // what a longer fraction loses is only zeros, as `fits` says), an exact HUGEINT, which
      // becomes the decimal by a multiplication that changes no digit. The same values, the
      // same bytes as a cast.
      const unit = `0.${'0'.repeat(DECIMAL_SCALE - 1)}1::${duckType('decimal')}`;
      const exact = (q: string) =>
        `cast(cast(split_part(${q}, '.', 1) || rpad(split_part(${q}, '.', 2), ${DECIMAL_SCALE}, '0') as HUGEINT) as DECIMAL(${DECIMAL_PRECISION},0)) * ${unit}`;
      const select = table.columns
        .map((col) => {
          const q = quote(col.name);
          if (col.type === 'decimal') return `case when ${fits(q)} then ${exact(q)} end as ${q}`;
          // JSON text as Postgres writes it, minified (json()): as it has always been written.
          if (col.type === 'json') return `json(${q}) as ${q}`;
          return q;
        })
        .join(', ');
      // The CSV writer's file (header, every value quoted, NULL an empty unquoted field).
      const source = `read_csv(${sqlString(csvPath)}, auto_detect = false, header = true, delim = ',', quote = '"', escape = '"', nullstr = '', allow_quoted_nulls = false, max_line_size = ${MAX_LINE}, buffer_size = ${2 * MAX_LINE}, columns = {${columns}})`;
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
      await rm(csvPath);
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
    }
  }
}
