/** Set-based write helpers: multi-row statements in chunks below Postgres's parameter limit. */
import type { Sql } from './connect.ts';

const MAX_PARAMS = 60_000;

/** A computed shape: an id drawn from a bigserial's sequence (`nextval`, an int8: a string). */
interface DrawnId {
  id: string;
}

/** Inserts `rows` (objects with the same keys) into `table` in as few statements as fit. */
export async function insertRows(
  sql: Sql,
  table: string,
  rows: readonly Record<string, unknown>[],
): Promise<void> {
  if (rows.length === 0) return;
  const width = Object.keys(rows[0] as object).length || 1;
  const chunk = Math.max(1, Math.floor(MAX_PARAMS / width));
  for (let i = 0; i < rows.length; i += chunk) {
    const part = rows.slice(i, i + chunk) as Record<string, unknown>[];
    // biome-ignore lint/suspicious/noExplicitAny: postgres.js types the helper per row shape
    await sql`insert into ${sql(table)} ${sql(part as any)}`;
  }
}

/** `count` fresh ids from a table's bigserial sequence, so parents and children go in one pass. */
export async function reserveIds(sql: Sql, table: string, count: number): Promise<number[]> {
  if (count === 0) return [];
  const rows = await sql<DrawnId[]>`
    select nextval(pg_get_serial_sequence(${table}, 'id')) as id from generate_series(1, ${count})`;
  return rows.map((r) => Number(r.id));
}

/** Empties `tables` in one statement, restarting their ids (a rebuild writes them all again). */
export async function truncateTables(sql: Sql, tables: readonly string[]): Promise<void> {
  await sql`truncate ${sql(tables as string[])} restart identity`;
}

/**
 * Deletes the rows of `table` up to id `upToId` that a later row of the same `key` superseded
 * (sightings: the latest of each key stays). Returns how many went.
 */
export async function deleteSuperseded(
  sql: Sql,
  table: string,
  key: string,
  upToId: string,
): Promise<number> {
  const gone = await sql`
    delete from ${sql(table)} s using (
      select id, row_number() over (partition by ${sql(key)} order by id desc) as newer
      from ${sql(table)}) o
    where s.id = o.id and o.newer > 1 and s.id <= ${upToId}::bigint`;
  return gone.count;
}
