/**
 * The one SCD type 2 writer for versioned entities (enterprises, products). A batch's new versions
 * are written in a few statements whatever its size: ids are reserved for all of them at once,
 * each entity's stored current version is closed where a new one follows it, and versions
 * superseded inside the batch are inserted already closed. Deciding which observations make a new
 * version (hashes, staleness) stays with each store.
 */
import { insertRows, reserveIds } from '../db/bulk.ts';
import type { Sql } from '../db/connect.ts';

/** A versions table and the column that names its entity. */
export interface VersionTable {
  table: string;
  keyColumn: string;
}

/** One new version of entity `key`, valid from `validFrom`. Writes of one entity come in time order. */
export interface VersionWrite {
  key: string;
  version: number;
  hash: string;
  validFrom: Date;
}

export interface WrittenVersions {
  /** The new versions' ids, in the order of the writes. */
  ids: number[];
  /** Each write's predecessor: the entity's previous write in the batch, else its stored current version. */
  previousIds: (number | null)[];
  /** Each entity's current version after the batch: its last write, else the stored one. */
  currentIds: Map<string, number | null>;
}

/**
 * Writes `writes` as new versions into `target`. `stored` holds every entity's current version
 * before the batch (null when it has none); `columns` gives a write's own columns, besides the
 * SCD2 ones (id, key, version, valid_from, valid_to, is_current, content_hash).
 */
export async function writeVersions<W extends VersionWrite>(
  sql: Sql,
  target: VersionTable,
  stored: ReadonlyMap<string, number | null>,
  writes: readonly W[],
  columns: (write: W, id: number) => Record<string, unknown>,
): Promise<WrittenVersions> {
  const ids = await reserveIds(sql, target.table, writes.length);
  const currentIds = new Map(stored);
  const previousIds = writes.map((w, i) => {
    const previous = currentIds.get(w.key) ?? null;
    currentIds.set(w.key, ids[i] as number);
    return previous;
  });
  // The version that follows each superseded one starts when it ends.
  const closedAt = new Map<number, Date>();
  for (const [i, w] of writes.entries()) {
    const previous = previousIds[i];
    if (previous !== null && previous !== undefined) closedAt.set(previous, w.validFrom);
  }
  await closeStored(sql, target.table, closedAt, new Set(ids));
  const rows = writes.map((w, i) => {
    const id = ids[i] as number;
    const validTo = closedAt.get(id) ?? null;
    return {
      id,
      [target.keyColumn]: w.key,
      version: w.version,
      valid_from: w.validFrom,
      valid_to: validTo,
      is_current: validTo === null,
      content_hash: w.hash,
      ...columns(w, id),
    };
  });
  await insertRows(sql, target.table, rows);
  return { ids, previousIds, currentIds };
}

/** Closes the stored versions a write of this batch supersedes (those written in it go in closed). */
async function closeStored(
  sql: Sql,
  table: string,
  closedAt: ReadonlyMap<number, Date>,
  written: ReadonlySet<number>,
): Promise<void> {
  const closeRows = [...closedAt.entries()]
    .filter(([id]) => !written.has(id))
    .map(([id, at]) => [id, at.toISOString()] as [number, string]);
  if (closeRows.length === 0) return;
  await sql`
    update ${sql(table)} v set valid_to = u.valid_to::timestamptz, is_current = false
    from (values ${sql(closeRows)}) as u(id, valid_to)
    where v.id = u.id::bigint`;
}

/**
 * Inserts the rows one child table holds for each new version: `rowsOf` gives a write's rows,
 * and each is stamped with the id `writeVersions` gave that write (`ids[i]` for `writes[i]`).
 */
export async function insertChildRows<W>(
  sql: Sql,
  table: string,
  writes: readonly W[],
  ids: readonly number[],
  rowsOf: (write: W) => Record<string, unknown>[],
): Promise<void> {
  const rows = writes.flatMap((w, i) => rowsOf(w).map((r) => ({ version_id: ids[i] as number, ...r })));
  await insertRows(sql, table, rows);
}

/**
 * The rows that point each entity of a batch at its current version: its key, the version id
 * and when it was seen last, then whatever `more` adds (values for `from (values …)`).
 */
export function pointerRows<S extends { lastSeenAt: Date }>(
  state: ReadonlyMap<string, S>,
  currentIds: ReadonlyMap<string, number | null>,
  more: (s: S) => string[] = () => [],
): string[][] {
  return [...state.entries()].map(([key, cur]) => [
    key,
    String(currentIds.get(key)),
    cur.lastSeenAt.toISOString(),
    ...more(cur),
  ]);
}
