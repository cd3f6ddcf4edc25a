/**
 * Warehouse export (docs/export.md): load packages written to a folder, incrementally, each a
 * directory `load_id=<n>/` holding one file per table, `schema.json` and, written last,
 * `manifest.json`. A package is complete when its manifest is there, and nothing else makes one:
 * it is written under a temporary name and renamed whole.
 *
 * The cursor is the writing transaction of each row (`load_xid`, src/db/schema.ts). A package's
 * cut is a transaction snapshot: the package holds the rows of the transactions it sees and the
 * previous package's cut did not (src/export/contract.ts). A transaction that commits late is in
 * the next package, never skipped; one left open does not hold the others back; and writing a
 * range again (`--replay`) gives the same rows.
 *
 * The `exports` ledger keeps every package. One export at a time writes to a folder: it claims
 * the next load number (a ledger row in state `writing`, its lease per src/db/lease.ts), and a
 * claim whose process is gone (or whose lease lapsed) is taken over. A package renamed into place
 * whose process died before the ledger said so is adopted by the next export, after its files
 * are checked against its manifest.
 */
import { createHash, randomBytes } from 'node:crypto';
import { constants, createReadStream, existsSync } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type postgres from 'postgres';
import type { Sql } from '../db/connect.ts';
import {
  leaseLive,
  leaseUntil,
  letGo,
  localProcessGone,
  mayTake,
  PROCESS_HOLDER,
  stillHeld,
  take,
} from '../db/lease.ts';
import type { DriverRow, Recast } from '../db/rows.ts';
import type { exports as exportsTable } from '../db/schema.ts';
import { rebuildGeneration } from '../history/rebuild.ts';
import {
  EXPORT_TABLES,
  type ExportTable,
  jsonSchemaOf,
  rangeSql,
  SCHEMA_VERSION,
  SNAPSHOT_ZERO,
  TABLE_NAMES,
} from './contract.ts';
import {
  type FileWritten,
  type Format,
  openParquetWriter,
  type ParquetWriter,
  type Transfer,
  transferOf,
  writeCsv,
  writeNdjson,
} from './formats.ts';

export interface ExportOptions {
  /** The destination folder (created when missing). */
  to: string;
  format: Format;
  /** NDJSON only: gzip each file. */
  gzip?: boolean;
  /** A subset of the tables (default: all). Fixed for a destination by its first package. */
  tables?: string[];
  /** Write a complete snapshot up to now instead of what is new. */
  full?: boolean;
  /** Lines of progress (one per table). */
  progress?: (line: string) => void;
  /** How long a claim holds without its process being checked (default 6 hours). */
  leaseMs?: number;
  /** Wait for another export to the same folder to end (default true); false: throw ExportBusy. */
  wait?: boolean;
}

export interface PackageWritten {
  loadNo: number;
  loadId: string;
  kind: 'incremental' | 'full';
  dir: string;
  rows: number;
  bytes: number;
  /** Adopted: found complete on disk, written by an export that died before recording it. */
  adopted?: boolean;
  /** Replay only: identical to the package already there (left as it was). */
  identical?: boolean;
}

export interface Manifest {
  load_id: string;
  load_no: number;
  previous_load_id: string | null;
  kind: 'incremental' | 'full';
  format: Format;
  compression: 'gzip' | 'snappy' | null;
  schema_version: number;
  /** The two cuts (transaction snapshots, `xmin:xmax:xip,…`). */
  cursor: { from_snapshot: string; to_snapshot: string };
  created_at: string;
  tables: Record<string, { file: string; rows: number; bytes: number; sha256: string; key: string[] }>;
  rows: number;
  /**
   * Parquet only, when there are any: per `table.column`, the decimals DECIMAL(38,10) cannot hold
   * exactly, written as null (NDJSON and CSV carry them exactly).
   */
  inexact_decimals?: Record<string, number>;
}

export class ExportBusy extends Error {
  override readonly name = 'ExportBusy';
}

/** A problem with what the user asked for (exit 2). */
export class ExportUsage extends Error {
  override readonly name = 'ExportUsage';
}

/** The folder name of load number n: sortable as text (zero-padded). */
export const loadIdOf = (n: number) => String(n).padStart(10, '0');
export const packageDirName = (loadId: string) => `load_id=${loadId}`;

/** A ledger row as `ledgerColumns` reads it: the columns a CHECK bounds read as their values. */
type LedgerRow = Recast<
  Recast<
    Recast<
      Recast<
        Pick<
          DriverRow<typeof exportsTable>,
          | 'id'
          | 'load_no'
          | 'load_id'
          | 'previous_load_id'
          | 'kind'
          | 'format'
          | 'tables'
          | 'from_snapshot'
          | 'to_snapshot'
          | 'generation'
          | 'schema_version'
          | 'state'
          | 'holder'
          | 'manifest'
        >,
        'kind',
        'incremental' | 'full'
      >,
      'format',
      Format
    >,
    'state',
    'writing' | 'complete'
  >,
  'manifest',
  Manifest | null
> & { lease_live: boolean };

/** A computed shape: whether a table has a row in a range (`select exists (…) as n`). */
interface AnyRow {
  n: boolean;
}

const ledgerColumns = (sql: Sql) => sql`id::text, load_no, load_id, previous_load_id, kind, format, tables,
  from_snapshot, to_snapshot, generation, schema_version, state, holder, ${leaseLive(sql)} as lease_live, manifest`;

function tablesOf(names: string[] | undefined): ExportTable[] {
  if (!names || names.length === 0) return EXPORT_TABLES;
  const unknown = names.filter((n) => !TABLE_NAMES.includes(n));
  if (unknown.length > 0)
    throw new ExportUsage(`unknown table ${unknown.join(', ')}; the tables are ${TABLE_NAMES.join(', ')}`);
  return EXPORT_TABLES.filter((t) => names.includes(t.name));
}

const fileName = (table: string, format: Format, gzip: boolean) =>
  `${table}.${format === 'ndjson' ? (gzip ? 'ndjson.gz' : 'ndjson') : format}`;

async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

async function fsyncPath(path: string): Promise<void> {
  const fh = await open(path, constants.O_RDONLY);
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** Checks a package folder's files against its manifest: null when whole, else what is wrong. */
export async function verifyPackage(
  dir: string,
): Promise<{ manifest: Manifest | null; problem: string | null }> {
  let manifest: Manifest;
  try {
    manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as Manifest;
  } catch (err) {
    return { manifest: null, problem: `no readable manifest.json (${(err as Error).message})` };
  }
  for (const [name, f] of Object.entries(manifest.tables ?? {})) {
    const path = join(dir, f.file);
    if (!existsSync(path)) return { manifest, problem: `${name}: ${f.file} is missing` };
    if ((await sha256File(path)) !== f.sha256)
      return { manifest, problem: `${name}: ${f.file} differs from its sha256` };
  }
  return { manifest, problem: null };
}

/** Claims the next load number of a destination, or takes over a dead export's claim. */
async function claim(
  sql: postgres.Sql,
  destination: string,
  leaseMs: number,
  wait: boolean,
  progress: (line: string) => void,
): Promise<{ row: LedgerRow; previous: LedgerRow | null }> {
  let told = false;
  for (;;) {
    const outcome = await sql.begin(async (tx) => {
      const [writing] = await tx<LedgerRow[]>`
        select ${ledgerColumns(tx)} from exports where destination = ${destination} and state = 'writing' for update`;
      const [previous] = await tx<LedgerRow[]>`
        select ${ledgerColumns(tx)} from exports where destination = ${destination} and state = 'complete'
        order by load_no desc limit 1`;
      if (writing) {
        // Another export in this process is a claimant like any other: no `reentrant`.
        const lease = { holder: writing.holder, live: writing.lease_live };
        if (!mayTake(lease, PROCESS_HOLDER, { probeProcess: true })) return { busy: writing };
        const [row] = await tx<LedgerRow[]>`
          update exports set ${take(tx, PROCESS_HOLDER, leaseMs)}, started_at = now()
          where id = ${writing.id} returning ${ledgerColumns(tx)}`;
        return { row: row as LedgerRow, previous: previous ?? null, takenOver: writing.holder };
      }
      const loadNo = (previous?.load_no ?? 0) + 1;
      const [row] = await tx<LedgerRow[]>`
        insert into exports (destination, load_no, load_id, previous_load_id, kind, format, tables, from_snapshot,
                             to_snapshot, generation, schema_version, state, holder, lease_until)
        values (${destination}, ${loadNo}, ${loadIdOf(loadNo)}, ${previous?.load_id ?? null}, 'incremental', 'ndjson',
                '{}', '', '', 0, ${SCHEMA_VERSION}, 'writing', ${PROCESS_HOLDER}, ${leaseUntil(tx, leaseMs)})
        on conflict (destination, load_no) do nothing
        returning ${ledgerColumns(tx)}`;
      if (!row) return { retry: true };
      return { row, previous: previous ?? null };
    });
    if ('row' in outcome && outcome.row) {
      if ('takenOver' in outcome && outcome.takenOver)
        progress(`taking over load ${outcome.row.load_id}, left unfinished by ${outcome.takenOver}`);
      return { row: outcome.row, previous: outcome.previous ?? null };
    }
    if ('busy' in outcome && outcome.busy) {
      if (!wait)
        throw new ExportBusy(
          `another export is writing load ${outcome.busy.load_id} to ${destination} (${outcome.busy.holder})`,
        );
      if (!told) progress(`waiting for another export to ${destination} (${outcome.busy.holder}) to end`);
      told = true;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

async function release(sql: Sql, row: LedgerRow): Promise<void> {
  await sql`delete from exports
            where id = ${row.id} and state = 'writing' and ${stillHeld(sql, { holder: PROCESS_HOLDER })}`;
}

/** Removes what unfinished exports left in the folder (temporary package folders). */
async function sweep(destination: string): Promise<void> {
  for (const name of await readdir(destination)) {
    // `.tmp-load_id=<id>-<pid>-<tag>` (an export) or `.tmp-replay-load_id=…-<pid>-<tag>` (a replay):
    // left alone while the process that writes it runs on this machine.
    const m = /^\.tmp-(?:replay-)?load_id=\d+-(\d+)-[0-9a-f]+$/.exec(name);
    if (!m) continue;
    if (!localProcessGone(Number(m[1]))) continue;
    await rm(join(destination, name), { recursive: true, force: true });
  }
}

interface Plan {
  loadNo: number;
  loadId: string;
  previousLoadId: string | null;
  kind: 'incremental' | 'full';
  format: Format;
  gzip: boolean;
  tables: ExportTable[];
  lo: string;
  hi: string;
  createdAt: string;
}

/**
 * A second transaction on another connection of the pool that sees exactly what the package's
 * transaction sees (its snapshot, exported by `pg_export_snapshot`): the tables are written two
 * at a time, one per connection. Only with COPY (not on the embedded database), and only when the
 * pool has a connection free at once (never waiting for one: a caller may hold the others).
 */
export interface Lane {
  tx: Sql;
  /** Ends the transaction and gives the connection back. */
  end(): Promise<void>;
}

async function secondLane(sql: postgres.Sql, tx: Sql, transfer: Transfer): Promise<Lane | null> {
  if (transfer !== 'copy' || (sql.options.max ?? 1) < 2) return null;
  const reserving = sql.reserve();
  const timeout = new Promise<null>((resolve) => setTimeout(() => resolve(null), 1000).unref());
  const reserved = await Promise.race([reserving, timeout]);
  if (!reserved) {
    reserving.then(
      (r) => r.release(),
      () => {},
    );
    return null;
  }
  try {
    const [row] = await tx<{ id: string }[]>`select pg_export_snapshot() as id`;
    await reserved.unsafe('begin isolation level repeatable read read only');
    await reserved.unsafe(`set transaction snapshot '${String(row?.id).replaceAll("'", "''")}'`);
  } catch {
    await reserved.unsafe('rollback').catch(() => {});
    reserved.release();
    return null;
  }
  return {
    tx: reserved,
    end: async () => {
      try {
        await reserved.unsafe('rollback');
      } finally {
        reserved.release();
      }
    },
  };
}

/** Writes one package under a temporary name, manifest last, and renames it into place. */
async function writePackage(
  tx: Sql,
  destination: string,
  plan: Plan,
  parquet: () => Promise<ParquetWriter>,
  progress: (line: string) => void,
  target = join(destination, packageDirName(plan.loadId)),
  pool: postgres.Sql | null = null,
): Promise<{ dir: string; manifest: Manifest }> {
  const tmp = join(
    destination,
    `.tmp-${packageDirName(plan.loadId)}-${process.pid}-${randomBytes(4).toString('hex')}`,
  );
  await mkdir(tmp);
  try {
    const transfer = await transferOf(tx);
    const writeTable = async (t: Sql, table: ExportTable): Promise<FileWritten> => {
      const path = join(tmp, fileName(table.name, plan.format, plan.gzip));
      let written: FileWritten;
      if (plan.format === 'csv') written = await writeCsv(t, table, plan.lo, plan.hi, path, transfer);
      else if (plan.format === 'ndjson')
        written = await writeNdjson(t, table, plan.lo, plan.hi, path, plan.gzip, transfer);
      else {
        // Parquet: the table's CSV file, staged beside it, read by DuckDB column by column.
        const staged = await writeCsv(t, table, plan.lo, plan.hi, `${path}.csv`, transfer);
        written = await (await parquet()).write(table, `${path}.csv`, path, staged.rows);
      }
      for (const [column, n] of Object.entries(written.inexact ?? {}))
        progress(
          `  ${table.name}.${column}: ${n} values DECIMAL(38,10) cannot hold exactly, written as null`,
        );
      await fsyncPath(path);
      if (written.rows > 0) progress(`  ${table.name}: ${written.rows} rows`);
      return written;
    };
    // The tables in contract order, taken by whichever lane is free: each file is the same
    // whichever lane writes it.
    const results = new Map<string, FileWritten>();
    const queue = [...plan.tables];
    let failed = false;
    const work = async (t: Sql) => {
      for (let table = queue.shift(); table && !failed; table = queue.shift()) {
        try {
          results.set(table.name, await writeTable(t, table));
        } catch (err) {
          failed = true;
          throw err;
        }
      }
    };
    const lane = pool && plan.tables.length > 1 ? await secondLane(pool, tx, transfer) : null;
    let outcomes: PromiseSettledResult<void>[];
    try {
      outcomes = await Promise.allSettled([work(tx), ...(lane ? [work(lane.tx)] : [])]);
    } finally {
      await lane?.end();
    }
    const failure = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    if (failure) throw failure.reason;
    const tables: Manifest['tables'] = {};
    const inexact: Record<string, number> = {};
    let rows = 0;
    for (const table of plan.tables) {
      const written = results.get(table.name) as FileWritten;
      tables[table.name] = {
        file: fileName(table.name, plan.format, plan.gzip),
        rows: written.rows,
        bytes: written.bytes,
        sha256: written.sha256,
        key: table.key,
      };
      rows += written.rows;
      for (const [column, n] of Object.entries(written.inexact ?? {})) inexact[`${table.name}.${column}`] = n;
    }
    await writeFile(
      join(tmp, 'schema.json'),
      `${JSON.stringify({ schema_version: SCHEMA_VERSION, tables: Object.fromEntries(plan.tables.map((t) => [t.name, jsonSchemaOf(t)])) }, null, 2)}\n`,
    );
    const manifest: Manifest = {
      load_id: plan.loadId,
      load_no: plan.loadNo,
      previous_load_id: plan.previousLoadId,
      kind: plan.kind,
      format: plan.format,
      compression: plan.format === 'parquet' ? 'snappy' : plan.gzip ? 'gzip' : null,
      schema_version: SCHEMA_VERSION,
      cursor: { from_snapshot: plan.lo, to_snapshot: plan.hi },
      created_at: plan.createdAt,
      tables,
      rows,
      ...(Object.keys(inexact).length > 0 ? { inexact_decimals: inexact } : {}),
    };
    await fsyncPath(join(tmp, 'schema.json'));
    await writeFile(join(tmp, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    await fsyncPath(join(tmp, 'manifest.json'));
    await fsyncPath(tmp);
    await rename(tmp, target);
    await fsyncPath(destination);
    return { dir: target, manifest };
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    throw err;
  }
}

/** The DuckDB writer, opened when a Parquet file is first written (only then). */
function lazyParquet(): { get: () => Promise<ParquetWriter>; close: () => void } {
  let writer: ParquetWriter | null = null;
  return {
    get: async () => {
      writer ??= await openParquetWriter();
      return writer;
    },
    close: () => writer?.close(),
  };
}

/** A folder holds one format and one set of tables, fixed by its packages (a --full one may change them). */
function refuseMismatch(
  destination: string,
  previous: LedgerRow | null,
  options: ExportOptions,
  tables: ExportTable[],
): void {
  if (!previous || options.full) return;
  if (previous.format !== options.format)
    throw new ExportUsage(
      `${destination} holds ${previous.format} packages; export ${previous.format} there, or start another folder (or a --full package)`,
    );
  const had = [...previous.tables].sort().join(',');
  const want = tables
    .map((t) => t.name)
    .sort()
    .join(',');
  if (had !== want)
    throw new ExportUsage(
      `${destination} holds packages of the tables ${previous.tables.join(', ')}; export the same tables there (or a --full package)`,
    );
}

/** Whether any table has a row in the range. */
async function anyRows(tx: Sql, tables: ExportTable[], lo: string, hi: string): Promise<boolean> {
  for (const t of tables) {
    const [row] = await tx.unsafe<AnyRow[]>(
      rangeSql(`select exists (select 1 from ${t.from} where ${t.where}) as n`, lo, hi),
    );
    if (row?.n) return true;
  }
  return false;
}

async function complete(
  sql: Sql,
  row: LedgerRow,
  plan: Plan,
  manifest: Manifest,
  generation: number,
): Promise<void> {
  const bytes = Object.values(manifest.tables).reduce((n, f) => n + f.bytes, 0);
  await sql`
    update exports set state = 'complete', kind = ${plan.kind}, format = ${plan.format},
      tables = ${plan.tables.map((t) => t.name)}, from_snapshot = ${plan.lo}, to_snapshot = ${plan.hi},
      generation = ${generation}, schema_version = ${SCHEMA_VERSION}, rows = ${manifest.rows}, bytes = ${bytes},
      manifest = ${manifest as never}, completed_at = now(), ${letGo(sql)}
    where id = ${row.id}`;
}

/**
 * A package renamed into place by an export that died before the ledger recorded it: adopted when
 * whole and following the ledger (returned), else moved aside (null).
 */
async function adoptLeftover(
  sql: postgres.Sql,
  destination: string,
  row: LedgerRow,
  previous: LedgerRow | null,
  progress: (line: string) => void,
): Promise<PackageWritten | null> {
  const onDisk = join(destination, packageDirName(row.load_id));
  if (!existsSync(onDisk)) return null;
  const { manifest, problem } = await verifyPackage(onDisk);
  if (
    manifest &&
    !problem &&
    manifest.load_no === row.load_no &&
    manifest.previous_load_id === (previous?.load_id ?? null)
  ) {
    const plan: Plan = {
      loadNo: manifest.load_no,
      loadId: manifest.load_id,
      previousLoadId: manifest.previous_load_id,
      kind: manifest.kind,
      format: manifest.format,
      gzip: manifest.compression === 'gzip',
      tables: tablesOf(Object.keys(manifest.tables)),
      lo: manifest.cursor.from_snapshot,
      hi: manifest.cursor.to_snapshot,
      createdAt: manifest.created_at,
    };
    await complete(sql, row, plan, manifest, await rebuildGeneration(sql));
    progress(
      `load ${row.load_id}: adopted (found whole in ${onDisk}, left unrecorded by an export that stopped)`,
    );
    return {
      loadNo: row.load_no,
      loadId: row.load_id,
      kind: plan.kind,
      dir: onDisk,
      rows: manifest.rows,
      bytes: 0,
      adopted: true,
    };
  }
  const aside = join(destination, `.broken-${packageDirName(row.load_id)}-${Date.now()}`);
  await rename(onDisk, aside);
  progress(
    `load ${row.load_id}: ${problem ?? 'its manifest does not follow the ledger'}; moved aside to ${aside}`,
  );
  return null;
}

/**
 * Writes what is new since the destination's last complete package (or everything, `full`) as
 * one package. Returns the packages written or adopted, none when nothing is new.
 */
export async function exportPackages(sql: postgres.Sql, options: ExportOptions): Promise<PackageWritten[]> {
  const destination = resolve(options.to);
  const progress = options.progress ?? (() => {});
  const gzip = options.format === 'ndjson' && options.gzip === true;
  if (options.gzip && options.format !== 'ndjson')
    throw new ExportUsage('--gzip applies to --format ndjson only');
  const tables = tablesOf(options.tables);
  await mkdir(destination, { recursive: true });
  const parquet = lazyParquet();
  // Bad input is refused before anything is claimed: the folder's last package fixes its format
  // and tables (checked again once claimed, in case another export wrote one meanwhile).
  const [last] = await sql<LedgerRow[]>`
    select ${ledgerColumns(sql)} from exports where destination = ${destination} and state = 'complete'
    order by load_no desc limit 1`;
  refuseMismatch(destination, last ?? null, options, tables);
  const written: PackageWritten[] = [];
  try {
    for (;;) {
      const { row, previous } = await claim(
        sql,
        destination,
        options.leaseMs ?? 6 * 3600_000,
        options.wait ?? true,
        progress,
      );
      try {
        await sweep(destination);
        const adopted = await adoptLeftover(sql, destination, row, previous, progress);
        if (adopted) {
          written.push(adopted);
          continue;
        }
        refuseMismatch(destination, previous, options, tables);
        const emptied =
          previous !== null && !(await readdir(destination)).some((name) => name.startsWith('load_id='));
        if (emptied && !options.full)
          progress(`${destination} holds no package: writing a full one (load ${row.load_id})`);
        const result = await sql.begin('isolation level repeatable read read only', async (tx) => {
          // The transaction's snapshot, taken by its first statement: the generation is read in it.
          const [cut] = await tx<SnapshotCut[]>`select pg_current_snapshot()::text as hi, now() as now`;
          const generation = await rebuildGeneration(tx);
          // A folder that holds no package (new, or emptied) starts again with a full package.
          const full = options.full === true || !previous || previous.generation !== generation || emptied;
          const lo = full ? SNAPSHOT_ZERO : previous.to_snapshot;
          const hi = cut?.hi ?? SNAPSHOT_ZERO;
          if (!(await anyRows(tx, tables, lo, hi))) return null;
          const plan: Plan = {
            loadNo: row.load_no,
            loadId: row.load_id,
            previousLoadId: previous?.load_id ?? null,
            kind: full ? 'full' : 'incremental',
            format: options.format,
            gzip,
            tables,
            lo,
            hi,
            createdAt: (cut?.now ?? new Date()).toISOString(),
          };
          progress(`load ${plan.loadId} (${plan.kind}, ${plan.format}): writing to ${destination}`);
          const out = await writePackage(tx, destination, plan, parquet.get, progress, undefined, sql);
          return { plan, generation, ...out };
        });
        if (!result) {
          await release(sql, row);
          return written;
        }
        await complete(sql, row, result.plan, result.manifest, result.generation);
        written.push({
          loadNo: row.load_no,
          loadId: row.load_id,
          kind: result.plan.kind,
          dir: result.dir,
          rows: result.manifest.rows,
          bytes: Object.values(result.manifest.tables).reduce((n, f) => n + f.bytes, 0),
        });
        return written;
      } catch (err) {
        await release(sql, row).catch(() => {});
        throw err;
      }
    }
  } finally {
    parquet.close();
  }
}

/**
 * Writes packages `from`..`to` of a destination again, from the ledger's ranges. A package still
 * in the folder is compared: identical, it is left; different, it is left and reported. A missing
 * one is written in place.
 */
export async function replayPackages(
  sql: postgres.Sql,
  options: { to: string; from: number; through: number; progress?: (line: string) => void },
): Promise<PackageWritten[]> {
  const destination = resolve(options.to);
  const progress = options.progress ?? (() => {});
  const rows = await sql<LedgerRow[]>`
    select ${ledgerColumns(sql)} from exports
    where destination = ${destination} and state = 'complete' and load_no between ${options.from} and ${options.through}
    order by load_no`;
  if (rows.length === 0)
    throw new ExportUsage(
      `${destination} has no complete packages numbered ${options.from}..${options.through}`,
    );
  const missing: number[] = [];
  for (let n = options.from; n <= options.through; n++)
    if (!rows.some((r) => r.load_no === n)) missing.push(n);
  if (missing.length > 0)
    throw new ExportUsage(
      `${destination} has no complete package ${missing.join(', ')}: replay a range of the packages it has (daybook status names the last)`,
    );
  const generation = await rebuildGeneration(sql);
  const stale = rows.find((r) => r.generation !== generation);
  if (stale)
    throw new ExportUsage(
      `load ${stale.load_id} was written before a rebuild wrote the history again: it cannot be written again; export a --full package instead`,
    );
  await mkdir(destination, { recursive: true });
  const parquet = lazyParquet();
  const out: PackageWritten[] = [];
  const differing: string[] = [];
  try {
    for (const r of rows) {
      const m = r.manifest as Manifest;
      const plan: Plan = {
        loadNo: r.load_no,
        loadId: r.load_id,
        previousLoadId: r.previous_load_id,
        kind: r.kind,
        format: r.format,
        gzip: m.compression === 'gzip',
        tables: tablesOf(r.tables),
        lo: r.from_snapshot,
        hi: r.to_snapshot,
        createdAt: m.created_at,
      };
      const target = join(destination, packageDirName(r.load_id));
      const exists = existsSync(target);
      const scratch = join(
        destination,
        `.tmp-replay-${packageDirName(r.load_id)}-${process.pid}-${randomBytes(4).toString('hex')}`,
      );
      const { manifest } = await sql.begin('isolation level repeatable read read only', (tx) =>
        writePackage(tx, destination, plan, parquet.get, () => {}, exists ? scratch : target, sql),
      );
      // The ledger's manifest is jsonb: its keys come back in jsonb's order, not as written.
      const same = isDeepStrictEqual(manifest, m);
      if (exists) {
        // The package in place must be whole too: a damaged one is repaired from the fresh copy.
        const onDisk = await verifyPackage(target);
        const whole = onDisk.problem === null && isDeepStrictEqual(onDisk.manifest, m);
        if (!whole && same) {
          const aside = join(destination, `.broken-${packageDirName(r.load_id)}-${Date.now()}`);
          await rename(target, aside);
          await rename(scratch, target);
          await fsyncPath(destination);
          progress(
            `load ${r.load_id}: the package in place was damaged (${onDisk.problem ?? 'its manifest differs'}): moved aside to ${aside}, written again byte for byte as recorded`,
          );
        } else {
          await rm(scratch, { recursive: true, force: true });
          if (!same || !whole) differing.push(r.load_id);
          progress(
            `load ${r.load_id}: ${same && whole ? 'identical to the package in place' : 'DIFFERS from the package in place (left as it was)'}`,
          );
        }
      } else {
        if (!same) differing.push(r.load_id);
        progress(
          `load ${r.load_id}: written again${same ? ', byte for byte as recorded' : ', but it DIFFERS from its recorded manifest'}`,
        );
      }
      out.push({
        loadNo: r.load_no,
        loadId: r.load_id,
        kind: r.kind,
        dir: target,
        rows: manifest.rows,
        bytes: 0,
        identical: same,
      });
    }
  } finally {
    parquet.close();
  }
  if (differing.length > 0)
    throw new Error(
      `load ${differing.join(', ')} came out different from what was written first: rows they hold changed since (a run or a presumed credit settled later); the packages in place were kept`,
    );
  return out;
}

/** Where a package's cut is: the transaction snapshot, and the time it was taken. A computed shape. */
interface SnapshotCut {
  hi: string;
  now: Date;
}

/** The last complete package of every destination, for `daybook status`. */
export async function lastExports(
  sql: Sql,
): Promise<
  { destination: string; load_id: string; kind: string; format: string; rows: number; completed_at: Date }[]
> {
  return sql`
    select distinct on (destination) destination, load_id, kind, format, rows::int as rows, completed_at
    from exports where state = 'complete' order by destination, load_no desc`;
}

/** When the latest complete package of a destination was finished (Unix time): a computed shape. */
export interface LastExported {
  destination: string;
  at: number;
}

/**
 * The latest complete package of each destination folder, when it was finished: the
 * destinations one at a time by the (destination, load_no) key, then the newest complete package
 * of each, backwards along the same key.
 */
export async function lastExportedAt(sql: Sql): Promise<LastExported[]> {
  return sql<LastExported[]>`
        with recursive d as (
          select min(destination) as dest from exports
          union all
          select (select min(destination) from exports where destination > d.dest) from d where d.dest is not null
        )
        select d.dest as destination, extract(epoch from e.completed_at)::float8 as at
        from d cross join lateral (
          select completed_at from exports where destination = d.dest and state = 'complete'
          order by load_no desc limit 1) e
        where d.dest is not null`;
}

/** A complete package as `daybook demo` lists it: its id, kind, rows and how many tables it holds. */
export type PackageLine = Pick<DriverRow<typeof exportsTable>, 'load_id' | 'kind'> & {
  /** `rows` as an int (`::int`). */
  rows: number;
  /** How many tables its manifest lists. */
  tables: number;
};

/** The complete packages of `destination`, in the order a loader applies them. */
export async function completePackages(sql: Sql, destination: string): Promise<PackageLine[]> {
  return sql<PackageLine[]>`
    select load_id, kind, rows::int as rows,
           (select count(*) from jsonb_object_keys(manifest->'tables'))::int as tables
    from exports where destination = ${destination} and state = 'complete' order by load_no`;
}
