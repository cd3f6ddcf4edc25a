/** Watchlist reads and writes: the enterprises daybook re-queries every cycle. */
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

export interface NewWatch {
  keyword: string;
  priority: number;
}

/** What became of one distinct keyword: a new row, a removed row watched again, or one already watched. */
export interface AddedWatch {
  id: number;
  keyword: string;
  status: 'added' | 'reactivated' | 'existing';
}

export interface AddResult {
  /** Distinct keywords now watched that were not before (new rows and reactivated ones). */
  added: number;
  /** Distinct keywords that were already watched. */
  existing: number;
  /** The watch id of each input entry, in input order. */
  ids: number[];
  /** One per distinct keyword key, in first-seen order. */
  watches: AddedWatch[];
}

/**
 * Adds entries in one statement. Entries with the same keyword key are one entry (the first
 * spelling wins). One already watched is reported as existing and keeps its priority unless
 * `updatePriority`; one removed earlier is watched again with the given priority.
 */
export async function addWatches(
  sql: Sql,
  entries: readonly NewWatch[],
  options: { updatePriority?: boolean } = {},
): Promise<AddResult> {
  const distinct = new Map<string, NewWatch>();
  for (const e of entries) {
    const key = keywordKey(e.keyword);
    if (!distinct.has(key)) distinct.set(key, e);
  }
  if (distinct.size === 0) return { added: 0, existing: 0, ids: [], watches: [] };
  const keys = [...distinct.keys()];
  const values = [...distinct.values()];
  // unnest keeps the statement at three parameters whatever the number of rows, and the CTE
  // `prior` sees the table as it was before the insert, which tells new from reactivated.
  const rows = await sql<{ id: string; keyword_key: string; was_active: boolean | null }[]>`
    with input as (
      select * from unnest(
        ${values.map((v) => v.keyword)}::text[],
        ${keys}::text[],
        ${values.map((v) => v.priority)}::int[]
      ) as t(keyword, keyword_key, priority)
    ),
    prior as (
      select w.keyword_key, w.active from watchlist w join input using (keyword_key)
    ),
    upserted as (
      insert into watchlist (keyword, keyword_key, priority)
      select keyword, keyword_key, priority from input
      on conflict (keyword_key) do update set
        active = true,
        priority = case
          when watchlist.active and not ${options.updatePriority === true}::boolean then watchlist.priority
          else excluded.priority
        end
      returning id, keyword_key
    )
    select u.id, u.keyword_key, p.active as was_active
    from upserted u left join prior p using (keyword_key)`;
  const byKey = new Map(rows.map((r) => [r.keyword_key, r]));
  const watches = keys.map((key): AddedWatch => {
    const row = byKey.get(key);
    if (!row) throw new Error(`addWatches: no row came back for keyword key "${key}"`);
    const status = row.was_active === null ? 'added' : row.was_active ? 'existing' : 'reactivated';
    return { id: Number(row.id), keyword: distinct.get(key)?.keyword ?? key, status };
  });
  const idOf = new Map(keys.map((k, i) => [k, (watches[i] as AddedWatch).id]));
  const existing = watches.filter((w) => w.status === 'existing').length;
  return {
    added: watches.length - existing,
    existing,
    ids: entries.map((e) => idOf.get(keywordKey(e.keyword)) as number),
    watches,
  };
}

/** Watch entries, active ones only unless `all`; highest priority first, then oldest. */
export async function listWatches(sql: Sql, options: { all?: boolean } = {}): Promise<WatchRow[]> {
  const rows = await sql<(Omit<WatchRow, 'id'> & { id: string })[]>`
    select id, keyword, priority, active, pid, added_at, last_refreshed_at, last_cycle::text as last_cycle,
      last_outcome, last_error
    from watchlist ${options.all ? sql`` : sql`where active`}
    order by priority desc, id`;
  return rows.map((r) => ({ ...r, id: Number(r.id) }));
}

/**
 * Stops watching the entries whose keyword key matches `nameOrPid`, or that resolved to it as
 * a PID. Rows are set inactive, never deleted: `cycle_fetches` rows reference them (with an
 * on-delete cascade that would erase the cycle history) and past outcomes stay readable.
 * Returns how many entries were deactivated.
 */
export async function removeWatch(sql: Sql, nameOrPid: string): Promise<number> {
  const rows = await sql`
    update watchlist set active = false
    where active and (keyword_key = ${keywordKey(nameOrPid)} or pid = ${nameOrPid.trim()})
    returning id`;
  return rows.length;
}

/** How many entries are watched, and how many rows exist including removed ones. */
export async function countWatches(sql: Sql): Promise<{ active: number; total: number }> {
  const [row] = await sql<{ active: number; total: number }[]>`
    select (count(*) filter (where active))::int as active, count(*)::int as total from watchlist`;
  return { active: row?.active ?? 0, total: row?.total ?? 0 };
}
