/** Set-based write helpers: multi-row statements in chunks below Postgres's parameter limit. */
import type { Sql } from './connect.ts';

const MAX_PARAMS = 60_000;

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
  const rows = await sql<{ id: string }[]>`
    select nextval(pg_get_serial_sequence(${table}, 'id')) as id from generate_series(1, ${count})`;
  return rows.map((r) => Number(r.id));
}
