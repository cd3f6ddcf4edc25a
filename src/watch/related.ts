/**
 * Shareholders watched on request (`watch add --with-shareholders N`): the enterprise shareholders
 * of a watched company, and theirs, to N levels (at most 3), are watched with it.
 *
 * Each is found by the PID its holder's record gives (`BE_INVEST[].PID`, kept as
 * `enterprise_shareholders.shareholder_pid` of the holder's current version) and watched under
 * the name that record gives, expecting that PID: an answer about another PID is kept out of
 * history (src/history/resolution.ts). A shareholder is known only once its holder was bought, so
 * the chain grows one level per refresh: `syncRelated` runs after each refresh of a company on a
 * chain, rewrites the chains (`watch_relations`, owned here) of the watched companies it reaches,
 * watches the shareholders new on them, and stops watching the entries no chain reaches any more
 * unless the user watches them directly. Their history stays.
 *
 * Entries watched this way are planned after every entry of the user's own (their priority,
 * RELATED_PRIORITY, is below anything a user can set) and within a share of the cycle
 * (DAYBOOK_RELATED_SHARE, src/plan/planner.ts).
 */
import type { Sql } from '../db/connect.ts';
import type { DriverRow } from '../db/rows.ts';
import type {
  enterpriseShareholders,
  enterprises,
  enterpriseVersions,
  watchlist,
  watchRelations,
} from '../db/schema.ts';
import type { Logger } from '../log/log.ts';
import { keywordKey } from './keyword.ts';
import { unwatchUnreached, watchShareholders } from './store.ts';

export { RELATED_PRIORITY } from './store.ts';

/** The deepest chain of shareholders a company may ask for. */
export const MAX_SHAREHOLDER_DEPTH = 3;

/** The advisory lock of the chains (ASCII 'dbrelate'): one rewrite at a time. */
const RELATED_LOCK = 7_233_174_285_380_645_989n;

/** One shareholder a watched company reaches, with the chain of holdings to it. */
export interface Reached {
  rootId: number;
  pid: string;
  name: string;
  level: number;
  pathPids: string[];
  pathNames: string[];
}

/** A watched company that asked for its shareholders: its depth, and its current name if held. */
interface Root {
  id: DriverRow<typeof watchlist>['id'];
  pid: DriverRow<typeof watchlist>['pid'];
  depth: DriverRow<typeof watchlist>['shareholder_depth'];
  /** `ent_name` of its current version (left joined: null when none is held). */
  name: DriverRow<typeof enterpriseVersions>['ent_name'] | null;
}

/** A shareholder with a PID of a company held (`holder`), from that company's current version. */
interface ShareholderLink {
  holder: DriverRow<typeof enterprises>['pid'];
  /** `shareholder_pid`, never null here (`is not null`). */
  pid: NonNullable<DriverRow<typeof enterpriseShareholders>['shareholder_pid']>;
  name: DriverRow<typeof enterpriseShareholders>['name'];
}

/** A chain to a watched entry, with the entry's PID (null while only its expected PID is known). */
type ChainRow = Pick<DriverRow<typeof watchlist>, 'pid'> &
  Pick<DriverRow<typeof watchRelations>, 'path_pids' | 'path_names'>;

/** What a rewrite of the chains did. */
export interface RelatedSync {
  /** Shareholders watched by it that were not watched before. */
  watched: { id: number; keyword: string; pid: string }[];
  /** Entries no longer watched: no chain reaches them and the user does not watch them. */
  unwatched: number;
  /** Shareholders it could not watch: their name is watched already for another PID. */
  conflicts: { name: string; pid: string; entryId: number }[];
}

/**
 * Rewrites the chains of the watched companies `rootIds` (every company that asked for its
 * shareholders when omitted) from their current versions, watches the shareholders they reach,
 * and unwatches what no chain reaches. In its own transaction unless given one.
 */
export async function syncRelated(sql: Sql, rootIds?: readonly number[]): Promise<RelatedSync> {
  const run = async (tx: Sql): Promise<RelatedSync> => {
    await tx`select pg_advisory_xact_lock(${RELATED_LOCK.toString()}::bigint)`;
    const roots = await tx<Root[]>`
      select w.id, w.pid, w.shareholder_depth as depth, v.ent_name as name
      from watchlist w
      left join analytics.enterprise_current v on v.pid = w.pid
      where w.active and w.direct and w.shareholder_depth > 0
        ${rootIds === undefined ? tx`` : tx`and w.id = any(${rootIds.map(String)}::bigint[])`}`;
    const reached: Reached[] = [];
    for (const r of roots)
      if (r.pid !== null) reached.push(...(await reachOf(tx, Number(r.id), r.pid, r.name ?? r.pid, r.depth)));
    // The shareholders, once each (the shortest chain names it), watched or found.
    const byPid = new Map<string, Reached>();
    for (const x of reached) if (!byPid.has(x.pid)) byPid.set(x.pid, x);
    const outcome = await watchShareholders(
      tx,
      [...byPid.values()].map((x) => ({ pid: x.pid, keyword: x.name, keywordKey: keywordKey(x.name) })),
    );
    const entryOf = new Map(outcome.entries.map((e) => [e.pid, e.id]));
    const rows = reached.flatMap((x) => {
      const entryId = entryOf.get(x.pid);
      return entryId === undefined
        ? []
        : [
            {
              root_id: x.rootId,
              entry_id: entryId,
              level: x.level,
              path_pids: x.pathPids,
              path_names: x.pathNames,
            },
          ];
    });
    // The rewritten roots' chains, and every chain of a root that no longer asks for any.
    await tx`
      delete from watch_relations r
      where ${rootIds === undefined ? tx`true` : tx`r.root_id = any(${rootIds.map(String)}::bigint[])`}
         or not exists (select 1 from watchlist w where w.id = r.root_id and w.active and w.direct and w.shareholder_depth > 0)`;
    if (rows.length > 0)
      await tx`
        insert into watch_relations ${tx(rows)}
        on conflict (root_id, entry_id) do nothing`;
    const unwatched = await unwatchUnreached(tx);
    return { watched: outcome.watched, unwatched, conflicts: outcome.conflicts };
  };
  return 'begin' in sql && typeof sql.begin === 'function'
    ? ((await sql.begin((tx) => run(tx))) as RelatedSync)
    : run(sql);
}

/**
 * The enterprise shareholders `pid` reaches within `depth` levels, by the current versions
 * daybook holds, breadth first: each once, by its shortest chain (ties: the holder's record order).
 */
async function reachOf(
  sql: Sql,
  rootId: number,
  pid: string,
  name: string,
  depth: number,
): Promise<Reached[]> {
  const out: Reached[] = [];
  const seen = new Set([pid]);
  let frontier: { pid: string; pathPids: string[]; pathNames: string[] }[] = [
    { pid, pathPids: [pid], pathNames: [name] },
  ];
  for (let level = 1; level <= Math.min(depth, MAX_SHAREHOLDER_DEPTH) && frontier.length > 0; level++) {
    const links = await sql<ShareholderLink[]>`
      select c.pid as holder, s.holder->>'pid' as pid, s.holder->>'name' as name
      from analytics.enterprise_current c
      cross join lateral jsonb_array_elements(c.shareholders) with ordinality as s(holder, ordinal)
      where c.pid = any(${frontier.map((f) => f.pid)}::text[]) and s.holder->>'pid' is not null
      order by c.pid, s.ordinal`;
    const at = new Map(frontier.map((f) => [f.pid, f]));
    const next: typeof frontier = [];
    for (const l of links) {
      const from = at.get(l.holder);
      const label = l.name?.trim() ?? '';
      if (!from || seen.has(l.pid) || label === '') continue;
      seen.add(l.pid);
      const step = { pid: l.pid, pathPids: [...from.pathPids, l.pid], pathNames: [...from.pathNames, label] };
      out.push({ rootId, name: label, level, ...step });
      next.push(step);
    }
    frontier = next;
  }
  return out;
}

/**
 * The watched companies whose chains lead through `pid`: the roots that reach it, and the roots
 * of the chains its own watch entry is on. A refresh of `pid` may change their chains.
 */
export async function rootsAround(sql: Sql, pid: string): Promise<number[]> {
  const rows = await sql<Pick<DriverRow<typeof watchlist>, 'id'>[]>`
    select w.id from watchlist w
    where w.pid = ${pid} and w.active and w.direct and w.shareholder_depth > 0
    union
    select r.root_id from watch_relations r join watchlist w on w.id = r.entry_id
    join watchlist root on root.id = r.root_id
    where w.pid = ${pid} and r.level < root.shareholder_depth`;
  return rows.map((r) => Number(r.id));
}

/** One watched company a related company's change reaches, with the chain from it. */
export interface Holder {
  /** The watched company's PID (the event's). */
  pid: string;
  /** The chain from the holder to the related company, both included. */
  pathPids: string[];
  pathNames: string[];
}

/**
 * The watched companies a change of `pid` concerns: every company on a chain that leads to it
 * (the root and each holder between), each once, by its shortest chain to `pid`.
 */
export async function holdersOf(sql: Sql, pids: readonly string[]): Promise<Map<string, Holder[]>> {
  const out = new Map<string, Holder[]>();
  if (pids.length === 0) return out;
  const rows = await sql<ChainRow[]>`
    select w.pid, r.path_pids, r.path_names
    from watch_relations r join watchlist w on w.id = r.entry_id
    where w.pid = any(${pids as string[]}::text[]) or w.expected_pid = any(${pids as string[]}::text[])
    order by r.level`;
  for (const r of rows) {
    const target = r.path_pids.at(-1) as string;
    const list = out.get(target) ?? [];
    for (let i = 0; i < r.path_pids.length - 1; i++) {
      const holder = r.path_pids[i] as string;
      const chain = r.path_pids.slice(i);
      const existing = list.find((h) => h.pid === holder);
      if (existing && existing.pathPids.length <= chain.length) continue;
      const h = { pid: holder, pathPids: chain, pathNames: r.path_names.slice(i) };
      if (existing) list.splice(list.indexOf(existing), 1, h);
      else list.push(h);
    }
    out.set(target, list);
  }
  return out;
}

/**
 * The chains of shareholders through `pid` (src/watch/related.ts), rewritten from its new
 * version: shareholders new on them are watched (and planned by a top-up), those gone are not.
 * A failure here is logged, not the entry's: the next refresh on the chain rewrites it.
 */
export async function followShareholders(sql: Sql, log: Logger, pid: string): Promise<void> {
  try {
    const roots = await rootsAround(sql, pid);
    if (roots.length === 0) return;
    const r = await syncRelated(sql, roots);
    if (r.watched.length > 0 || r.unwatched > 0 || r.conflicts.length > 0)
      log.info(
        { pid, watched: r.watched.length, unwatched: r.unwatched, conflicts: r.conflicts.length },
        `shareholders of ${pid}: ${r.watched.length} watched anew, ${r.unwatched} no longer held`,
      );
  } catch (err) {
    log.warn(
      { pid, err: err instanceof Error ? err.message : String(err) },
      'could not follow the shareholders',
    );
  }
}
