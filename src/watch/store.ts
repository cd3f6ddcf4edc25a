/** Watchlist reads and writes: the enterprises daybook re-queries every cycle. */
import type { Sql } from '../db/connect.ts';
import type { DriverRow, NonNull } from '../db/rows.ts';
import type { enterpriseVersions, watchlist } from '../db/schema.ts';
import { RELATED_PRIORITY } from './csv.ts';
import { keywordKey } from './keyword.ts';
import { type MatchLevel, matchLevel } from './match.ts';

export { RELATED_PRIORITY };

/**
 * A watch entry as listed: its own columns, with what its latest successful refresh resolved to
 * (from its enterprise's current version) and the estimate read per month.
 */
export interface WatchRow
  extends Pick<
    DriverRow<typeof watchlist>,
    | 'keyword'
    | 'priority'
    | 'active'
    | 'pid'
    | 'added_at'
    | 'last_refreshed_at'
    | 'last_outcome'
    | 'last_error'
    | 'pin_uscc'
    | 'resolution_mismatch'
    | 'due_at'
    | 'direct'
    | 'shareholder_depth'
  > {
  id: number;
  /** Read `::text`. */
  last_cycle: string | null;
  /** The unified social credit code the keyword must resolve to, if any. */
  expected_uscc: string | null;
  /** The name and code of the enterprise the latest successful refresh resolved to. */
  resolved_name: string | null;
  resolved_uscc: string | null;
  /** How the keyword matched it (src/watch/match.ts); null before the first successful refresh. */
  match: MatchLevel | null;
  /** Estimated changes per month (src/plan/estimate.ts); null before the first successful refresh. */
  changes_per_month: number | null;
  /**
   * Why a shareholder is watched: the keywords of the watched companies whose chains reach it
   * (src/watch/related.ts), comma-separated; null for an entry no chain reaches.
   */
  watched_through: string | null;
}

/** A watch entry as `listWatches` reads it, before its id is a number and its match is known. */
type ListedWatch = Omit<WatchRow, 'id' | 'match'> &
  Pick<DriverRow<typeof watchlist>, 'id'> & {
    /** `history_name` of the current version (left joined: null when none is held). */
    resolved_history_name: DriverRow<typeof enterpriseVersions>['history_name'];
  };

/** An entry `addWatches` wrote, with whether it was active (a computed shape: `was_active`). */
type UpsertedWatch = Pick<DriverRow<typeof watchlist>, 'id' | 'keyword_key'> & {
  /** Whether the entry was watched by the user before (`active and direct`); null for a new one. */
  was_active: boolean | null;
};

/** A computed shape: how many of some keywords are watched already (`count(*)::int`). */
interface WatchedCount {
  existing: number;
}

/** A computed shape: how many entries are active, and how many there are (`count(*)::int`). */
interface WatchCounts {
  active: number;
  total: number;
}

/**
 * A computed shape: the code and PID an answer must carry, from its refusal if it was refused
 * before (`resolution_mismatches`), else from the entry (`coalesce`, `expectedOf`).
 */
interface ExpectedOfAnswer {
  uscc: string | null;
  pid: string | null;
}

/** An entry that may already watch a shareholder: by its PID, expected PID or keyword key. */
type ShareholderEntry = Pick<
  DriverRow<typeof watchlist>,
  'id' | 'pid' | 'expected_pid' | 'keyword_key' | 'active'
>;

/** An entry just written to watch a shareholder, with the expected PID it was written with. */
type NewShareholderEntry = NonNull<
  Pick<DriverRow<typeof watchlist>, 'id' | 'expected_pid' | 'keyword'>,
  'expected_pid'
>;

export interface NewWatch {
  keyword: string;
  priority: number;
  /** The code the keyword must resolve to (valid and normalized: src/watch/uscc.ts). */
  uscc?: string | null;
  /** Without `uscc`: pin the code of the next successful refresh. */
  pin?: boolean;
  /** Levels of its enterprise shareholders to watch with it (0 to 3); unset keeps the entry's. */
  shareholders?: number;
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
 * `updatePriority`; one removed earlier is watched again with the given priority. A code given
 * becomes the entry's expected code (also on an entry already watched, whose mismatch flag it
 * clears when it changes); none leaves the entry's code as it was. `pin` is never undone here.
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
  const rows = await sql<UpsertedWatch[]>`
    with input as (
      select * from unnest(
        ${values.map((v) => v.keyword)}::text[],
        ${keys}::text[],
        ${values.map((v) => v.priority)}::int[],
        ${values.map((v) => v.uscc ?? null)}::text[],
        ${values.map((v) => String(v.pin === true))}::text[]::boolean[],
        ${values.map((v) => (v.shareholders === undefined ? null : String(v.shareholders)))}::text[]::smallint[]
      ) as t(keyword, keyword_key, priority, uscc, pin_uscc, shareholder_depth)
    ),
    prior as (
      -- An entry watched only as a shareholder is not the user's yet: watching it is adding it.
      select w.keyword_key, w.active and w.direct as active from watchlist w join input using (keyword_key)
    ),
    upserted as (
      insert into watchlist (keyword, keyword_key, priority, uscc, pin_uscc, shareholder_depth)
      select keyword, keyword_key, priority, uscc, pin_uscc, coalesce(shareholder_depth, 0) from input
      on conflict (keyword_key) do update set
        active = true,
        direct = true,
        -- Watched again, or watched now by the user where it was a shareholder's entry: added
        -- today, as a new one would be (a top-up of today's plan looks for entries added after it).
        added_at = case when watchlist.active and watchlist.direct then watchlist.added_at else now() end,
        priority = case
          when watchlist.active and watchlist.direct and not ${options.updatePriority === true}::boolean then watchlist.priority
          else excluded.priority
        end,
        shareholder_depth = coalesce(
          (select i.shareholder_depth from input i where i.keyword_key = excluded.keyword_key),
          watchlist.shareholder_depth),
        uscc = coalesce(excluded.uscc, watchlist.uscc),
        pin_uscc = watchlist.pin_uscc or excluded.pin_uscc,
        resolution_mismatch = case
          when excluded.uscc is not null and excluded.uscc is distinct from watchlist.uscc then null
          else watchlist.resolution_mismatch
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

/**
 * Watches each keyword not in the watchlist yet; one already there, removed or not, is left
 * exactly as it is (unlike `addWatches`, which watches a removed one again). For a first
 * watchlist, as the demo writes it.
 */
export async function addNewWatches(
  sql: Sql,
  entries: readonly { keyword: string; priority: number }[],
): Promise<void> {
  if (entries.length === 0) return;
  const rows = entries.map((e) => ({
    keyword: e.keyword,
    keyword_key: keywordKey(e.keyword),
    priority: e.priority,
  }));
  await sql`insert into watchlist ${sql(rows)} on conflict (keyword_key) do nothing`;
}

/** What `addWatches` would do with `entries`, read without writing (nor taking ids). */
export async function previewWatches(
  sql: Sql,
  entries: readonly NewWatch[],
): Promise<{ added: number; existing: number }> {
  const keys = [...new Set(entries.map((e) => keywordKey(e.keyword)))];
  if (keys.length === 0) return { added: 0, existing: 0 };
  const [row] = await sql<WatchedCount[]>`
    select count(*)::int as existing from watchlist where keyword_key = any(${keys}::text[]) and active`;
  const existing = row?.existing ?? 0;
  return { added: keys.length - existing, existing };
}

/**
 * Watch entries, active ones only unless `all`; highest priority first, then oldest; the first
 * `limit` of them when given. Each with what its latest successful refresh resolved to (the
 * current version of that PID) and how well the keyword matched it.
 */
export async function listWatches(
  sql: Sql,
  options: { all?: boolean; limit?: number } = {},
): Promise<WatchRow[]> {
  const rows = await sql<ListedWatch[]>`
    select w.id, w.keyword, w.priority, w.active, w.pid, w.added_at, w.last_refreshed_at,
      w.last_cycle::text as last_cycle, w.last_outcome, w.last_error, w.uscc as expected_uscc, w.pin_uscc,
      v.ent_name as resolved_name, v.uncid as resolved_uscc, v.history_name as resolved_history_name,
      w.resolution_mismatch, round((w.change_rate * 30.44)::numeric, 3)::float8 as changes_per_month, w.due_at,
      w.direct, w.shareholder_depth,
      (select string_agg(distinct root.keyword, ', ') from watch_relations r join watchlist root on root.id = r.root_id
        where r.entry_id = w.id) as watched_through
    from watchlist w
    left join analytics.enterprise_current v on v.pid = w.pid
    ${options.all ? sql`` : sql`where w.active`}
    order by w.priority desc, w.id
    ${options.limit === undefined ? sql`` : sql`limit ${options.limit}`}`;
  return rows.map(({ resolved_history_name, ...r }) => ({
    ...r,
    id: Number(r.id),
    match:
      r.resolved_name === null
        ? null
        : matchLevel(r.keyword, {
            entName: r.resolved_name,
            historyName: resolved_history_name,
            uncid: r.resolved_uscc,
          }),
  }));
}

/**
 * What an answer about entry `watchId` must carry (a code, a PID): what was expected when this
 * answer was refused before (a retry decides as the first attempt did), else the entry's.
 */
export async function expectedOf(
  sql: Sql,
  watchId: number,
  rawResponseId: number,
): Promise<ExpectedOfAnswer> {
  const [row] = await sql<ExpectedOfAnswer[]>`
    select coalesce(m.expected_uscc, case when m.raw_response_id is null then w.uscc end) as uscc,
           coalesce(m.expected_pid, case when m.raw_response_id is null then w.expected_pid end) as pid
    from (select 1) one
    left join published.refused_answers m on m.raw_response_id = ${rawResponseId}
    left join watchlist w on w.id = ${watchId}`;
  return { uscc: row?.uscc ?? null, pid: row?.pid ?? null };
}

/** Flags an entry whose answer was refused: `watch list` shows what it resolved to instead. */
export async function flagResolutionMismatch(sql: Sql, watchId: number, flag: string): Promise<void> {
  await sql`update watchlist set resolution_mismatch = ${flag} where id = ${watchId}`;
}

/**
 * An answer of the entry was accepted: the mismatch flag goes, and a pinned entry without a code
 * takes the answer's (when it carries one).
 */
export async function noteAcceptedResolution(sql: Sql, watchId: number, uscc: string | null): Promise<void> {
  await sql`
    update watchlist set
      uscc = case when uscc is null and pin_uscc then ${uscc} else uscc end,
      resolution_mismatch = null
    where id = ${watchId} and (resolution_mismatch is not null or (uscc is null and pin_uscc and ${uscc}::text is not null))`;
}

/**
 * Stops watching the entries whose keyword key matches `nameOrPid`, or that resolved to it as
 * a PID. Rows are set inactive, never deleted: `cycle_fetches` rows reference them (with an
 * on-delete cascade that would erase the cycle history) and past outcomes stay readable.
 * Returns how many entries were deactivated.
 */
export async function removeWatch(sql: Sql, nameOrPid: string): Promise<number> {
  const rows = await sql`
    update watchlist w set
      -- One a watched company still holds stays, as its shareholder (src/watch/related.ts).
      active = exists (select 1 from watch_relations r where r.entry_id = w.id),
      direct = false,
      shareholder_depth = 0,
      priority = case when exists (select 1 from watch_relations r where r.entry_id = w.id)
                      then ${RELATED_PRIORITY} else w.priority end
    where active and direct and (keyword_key = ${keywordKey(nameOrPid)} or pid = ${nameOrPid.trim()})
    returning id`;
  return rows.length;
}

/** A shareholder to watch (src/watch/related.ts): its PID, and the name its holder's record gives. */
export interface ShareholderToWatch {
  pid: string;
  keyword: string;
  keywordKey: string;
}

/**
 * Watches shareholders, each by the entry that already expects or resolved to its PID, else by
 * the entry of its name (when that one has not resolved to another PID), else by a new entry
 * expecting the PID. An entry watched anew this way is the user's no longer (`direct` false) and
 * plans at RELATED_PRIORITY; an active entry is left as it is. A name watched for another PID is
 * a conflict: two companies cannot share an entry.
 */
export async function watchShareholders(
  tx: Sql,
  items: readonly ShareholderToWatch[],
): Promise<{
  entries: { pid: string; id: number }[];
  watched: { id: number; keyword: string; pid: string }[];
  conflicts: { name: string; pid: string; entryId: number }[];
}> {
  const out = {
    entries: [] as { pid: string; id: number }[],
    watched: [] as { id: number; keyword: string; pid: string }[],
    conflicts: [] as { name: string; pid: string; entryId: number }[],
  };
  if (items.length === 0) return out;
  const pids = items.map((i) => i.pid);
  const keys = items.map((i) => i.keywordKey);
  const found = await tx<ShareholderEntry[]>`
    select id, pid, expected_pid, keyword_key, active from watchlist
    where pid = any(${pids}::text[]) or expected_pid = any(${pids}::text[]) or keyword_key = any(${keys}::text[])
    order by active desc, direct desc, id`;
  const reactivate: number[] = [];
  const fresh: ShareholderToWatch[] = [];
  for (const item of items) {
    const byPid = found.find((f) => f.pid === item.pid || f.expected_pid === item.pid);
    const byName = found.find((f) => f.keyword_key === item.keywordKey);
    const entry =
      byPid ?? (byName && (byName.pid ?? byName.expected_pid ?? item.pid) === item.pid ? byName : undefined);
    if (!entry && byName) {
      out.conflicts.push({ name: item.keyword, pid: item.pid, entryId: Number(byName.id) });
      continue;
    }
    if (!entry) {
      fresh.push(item);
      continue;
    }
    out.entries.push({ pid: item.pid, id: Number(entry.id) });
    if (!entry.active) {
      reactivate.push(Number(entry.id));
      out.watched.push({ id: Number(entry.id), keyword: item.keyword, pid: item.pid });
    }
  }
  if (reactivate.length > 0)
    await tx`
      update watchlist set active = true, direct = false, shareholder_depth = 0, priority = ${RELATED_PRIORITY},
        expected_pid = coalesce(expected_pid, pid), added_at = now()
      where id = any(${reactivate.map(String)}::bigint[])`;
  if (fresh.length > 0) {
    const rows = await tx<NewShareholderEntry[]>`
      insert into watchlist ${tx(
        fresh.map((f) => ({
          keyword: f.keyword,
          keyword_key: f.keywordKey,
          priority: RELATED_PRIORITY,
          direct: false,
          expected_pid: f.pid,
        })),
      )}
      on conflict (keyword_key) do nothing
      returning id, expected_pid, keyword`;
    for (const r of rows) {
      out.entries.push({ pid: r.expected_pid, id: Number(r.id) });
      out.watched.push({ id: Number(r.id), keyword: r.keyword, pid: r.expected_pid });
    }
  }
  return out;
}

/**
 * Stops watching the entries watched only as shareholders that no chain reaches any more
 * (src/watch/related.ts); their history stays. Returns how many.
 */
export async function unwatchUnreached(tx: Sql): Promise<number> {
  const rows = await tx`
    update watchlist w set active = false
    where active and not direct and not exists (select 1 from watch_relations r where r.entry_id = w.id)
    returning id`;
  return rows.length;
}

/** How many entries are watched, and how many rows exist including removed ones. */
export async function countWatches(sql: Sql): Promise<{ active: number; total: number }> {
  const [row] = await sql<WatchCounts[]>`
    select (count(*) filter (where active))::int as active, count(*)::int as total from watchlist`;
  return { active: row?.active ?? 0, total: row?.total ?? 0 };
}

/** A successful refresh of the entry in `cycle`: the PID it resolved to, and when. */
export async function noteRefreshed(
  tx: Sql,
  watchId: number,
  done: { pid: string; refreshedAt: Date; cycle: string },
): Promise<void> {
  await tx`update watchlist set pid = ${done.pid}, last_refreshed_at = ${done.refreshedAt}, refreshed_cycle = ${done.cycle}, last_cycle = ${done.cycle},
             last_outcome = 'success', last_error = null where id = ${watchId}`;
}

/**
 * A failed attempt on the entry, kept where users see it. `restUntil`, when given, moves its due
 * time (an entry resting after a permanent error). Returns the entry's keyword.
 */
export async function noteFailure(
  tx: Sql,
  watchId: number,
  failure: { code: string; error: string; cycle: string; restUntil?: Date | null },
): Promise<string | undefined> {
  const [entry] = await tx<Pick<DriverRow<typeof watchlist>, 'keyword'>[]>`
      update watchlist set last_outcome = ${failure.code}, last_error = ${failure.error},
               last_cycle = ${failure.cycle}, due_at = coalesce(${failure.restUntil ?? null}::timestamptz, due_at)
      where id = ${watchId} returning keyword`;
  return entry?.keyword;
}

/** What the planner estimates of one entry after a refresh (src/plan/store.ts computes it). */
export interface EntryEstimate {
  id: number;
  history: unknown;
  rate: number;
  weight: number;
  cohort: string | null;
  boost: number;
  /** The next due time, ISO. */
  due: string;
}

/** Stores the planner's estimates of many entries at once: one statement. */
export async function setEstimates(tx: Sql, updates: readonly EntryEstimate[]): Promise<void> {
  if (updates.length === 0) return;
  await tx`
    update watchlist w set change_history = u.history, change_rate = u.rate, change_weight = u.weight,
      change_cohort = u.cohort, boost_left = u.boost, due_at = u.due
    from jsonb_to_recordset(${tx.json(updates as never)}) as u(id bigint, history jsonb, rate float8, weight float8,
      cohort text, boost smallint, due timestamptz)
    where w.id = u.id`;
}

/** An entry's estimate and due time as a plan stores them again (src/plan/store.ts replanEntries). */
export interface EntryReplan {
  id: number;
  rate: number;
  /** The next due time, ISO. */
  due: string;
}

/** Stores the plans of many entries at once: one statement. */
export async function setPlans(tx: Sql, plans: readonly EntryReplan[]): Promise<void> {
  if (plans.length === 0) return;
  await tx`
    update watchlist w set change_rate = u.rate, due_at = u.due
    from jsonb_to_recordset(${tx.json(plans as never)}) as u(id bigint, rate float8, due timestamptz)
    where w.id = u.id`;
}

/** An entry's credit code, as lists show it: a computed shape of `watchlist`. */
export interface EntryCode {
  id: number;
  /** The code of the company it resolved to (analytics.enterprise_current), else the one it expects. */
  uscc: string | null;
}

/** The credit code of each entry of `ids`: of the company it resolved to, else the one it expects. */
export async function entryCodes(sql: Sql, ids: number[]): Promise<EntryCode[]> {
  return sql<EntryCode[]>`
        select w.id::int as id, coalesce(c.uncid, w.uscc) as uscc
        from watchlist w left join analytics.enterprise_current c on c.pid = w.pid
        where w.id = any(${ids}::bigint[])`;
}

/**
 * What the planner learned of an entry, as `daybook demo` shows it: changes per month, and the
 * refresh intervals behind it. A computed shape of `watchlist` (a type alias: it prints as a
 * plain record).
 */
export type LearnedRate = {
  keyword: string;
  priority: number;
  changes_per_month: string;
  intervals: number;
  changed: number;
};

/** The `limit` entries with the highest change rates the planner learned. */
export async function learnedRates(sql: Sql, limit: number): Promise<LearnedRate[]> {
  return sql<LearnedRate[]>`
    select keyword, priority, round((change_rate * 30.44)::numeric, 2)::text as changes_per_month,
           (change_history->>'n')::float8::int as intervals,
           (change_history->>'changes')::float8::int as changed
    from watchlist where change_rate is not null order by change_rate desc, id limit ${limit}`;
}
