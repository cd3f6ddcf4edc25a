/** Watchlist reads and writes. */
import type { Sql } from '../db/connect.ts';
import { keywordKey } from './keyword.ts';

export interface WatchRow {
  id: number;
  keyword: string;
  priority: number;
  active: boolean;
  pid: string | null;
  added_at: Date;
  last_refreshed_at: Date | null;
  last_cycle: string | null;
  last_outcome: string | null;
  last_error: string | null;
}

/**
 * Adds entries in one statement; ones already watched (the same keyword key) are counted as
 * existing and made active again, their priority changed only with `updatePriority`.
 */
export async function addWatches(
  sql: Sql,
  entries: readonly { keyword: string; priority: number }[],
  options: { updatePriority?: boolean } = {},
): Promise<{ added: number; existing: number }> {
  if (entries.length === 0) return { added: 0, existing: 0 };
  const rows = entries.map((e) => ({
    keyword: e.keyword,
    keyword_key: keywordKey(e.keyword),
    priority: e.priority,
  }));
  let added = 0;
  for (let i = 0; i < rows.length; i += 5000) {
    const part = rows.slice(i, i + 5000);
    const inserted = await sql<{ inserted: boolean }[]>`
      insert into watchlist ${sql(part)}
      on conflict (keyword_key) do update set active = true
        ${options.updatePriority ? sql`, priority = excluded.priority` : sql``}
      returning (xmax = 0) as inserted`;
    added += inserted.filter((r) => r.inserted).length;
  }
  return { added, existing: entries.length - added };
}

export async function listWatches(sql: Sql, options: { all?: boolean } = {}): Promise<WatchRow[]> {
  const rows = await sql<(Omit<WatchRow, 'id'> & { id: string })[]>`
    select id, keyword, priority, active, pid, added_at, last_refreshed_at, last_cycle::text, last_outcome, last_error
    from watchlist ${options.all ? sql`` : sql`where active`}
    order by priority desc, id`;
  return rows.map((r) => ({ ...r, id: Number(r.id) }));
}

/**
 * Stops watching entries matching a keyword (by its key) or a resolved PID. The rows stay,
 * inactive, so cycle history keeps pointing at them. Returns how many were deactivated.
 */
export async function removeWatch(sql: Sql, nameOrPid: string): Promise<number> {
  const rows = await sql`
    update watchlist set active = false
    where active and (keyword_key = ${keywordKey(nameOrPid)} or pid = ${nameOrPid.trim()})
    returning id`;
  return rows.length;
}
