/**
 * What each console page reads, one function per question, each over the `analytics` and
 * `console` views only (the reader may read nothing else). Every list is bounded; the change feed
 * and the watchlist page by keyset (the last row's key), never by OFFSET. The row shapes here are
 * rows of those views: computed shapes, written by hand once each (a view has no drizzle table).
 */
import type { DriverRow, Recast } from '../db/rows.ts';
import type { cycleBudgets } from '../db/schema.ts';
import { holderPid } from '../terms/fields.ts';
import type { ReadTx } from './reader.ts';
import { type HeldCompany, observationPid } from './values.ts';

/** The latest cycle's claims by status and error (console.cycle_fetches): a computed shape. */
export interface CycleCount {
  status: string;
  error_code: string | null;
  n: number;
}

/** A cycle's budget row, as the driver reads it (the cycle read as text). */
export type CycleBudget = Recast<DriverRow<typeof cycleBudgets>, 'cycle', string>;

/**
 * The latest cycle's credits as the ledger knows them (analytics.credit_usage): confirmed
 * (booked), unconfirmed (unconfirmed + presumed: sent, no answer known), unpriced product calls.
 */
export interface CycleLedger {
  confirmed: number;
  unconfirmed: number;
  unconfirmed_calls: number;
  unpriced_calls: number;
}

/** What the overview page shows, each part from its view: computed shapes. */
export interface Overview {
  cycle: CycleBudget | null;
  ledger: CycleLedger | null;
  counts: CycleCount[];
  credits: { day: string; credits: number; budget: number | null }[];
  rates: { operation: string; calls_in_window: number; blocked_until: Date | null; refusals: number }[];
  answers: { operation: string; outcome: string; n: number }[];
  lastExport: {
    load_no: number;
    kind: string;
    format: string;
    state: string;
    rows: number | null;
    completed_at: Date | null;
    started_at: Date;
  } | null;
  subscriptions: {
    id: number;
    format: string;
    state: string;
    failing_since: Date | null;
    disabled_reason: string | null;
  }[];
  queue: { state: string; n: number }[];
}

/** The overview: the latest cycle, credits of the 90 days up to it, rate use, exports, deliveries. */
export async function readOverview(tx: ReadTx): Promise<Overview> {
  const [cycle] = await tx<CycleBudget[]>`
    select cycle::text as cycle, budget, reserved, spent, paused_at, paused_reason
    from console.cycle_budgets order by cycle desc limit 1`;
  const counts = cycle
    ? await tx<CycleCount[]>`
        select status, error_code, count(*)::int as n from console.cycle_fetches
        where cycle = ${cycle.cycle} group by 1, 2 order by 1, 2`
    : [];
  // Summed over the cycle's operations; a null amount (an unpriced call) is in no sum.
  const [ledger] = cycle
    ? await tx<CycleLedger[]>`
        select coalesce(sum(booked_credits), 0)::int as confirmed,
               coalesce(sum(unconfirmed_credits + presumed_credits), 0)::int as unconfirmed,
               coalesce(sum(unconfirmed_queries + presumed_queries), 0)::int as unconfirmed_calls,
               (coalesce(sum(unpriced_queries) filter (where operation = 'product-listing'), 0))::int as unpriced_calls
        from analytics.credit_usage where cycle = ${cycle.cycle}`
    : [];
  // Each cycle's budget row keeps what the ledger billed for it (spent): no ledger scan.
  const credits = cycle
    ? await tx<Overview['credits']>`
        select d::date::text as day, coalesce(b.spent, 0)::int as credits, b.budget
        from generate_series(${cycle.cycle}::date - 89, ${cycle.cycle}::date, interval '1 day') d
        left join console.cycle_budgets b on b.cycle = d::date
        order by 1`
    : [];
  const rates = await tx<Overview['rates']>`
    select operation, calls_in_window, blocked_until, refusals from console.rate_limits order by 1`;
  const answers = await tx<Overview['answers']>`
    select a as operation, b as outcome, n::float8 as n from console.metric_counts
    where metric = 'upstream_requests' and n <> 0 order by 1, 2`;
  const [lastExport] = await tx<NonNullable<Overview['lastExport']>[]>`
    select load_no, kind, format, state, rows::float8 as rows, completed_at, started_at
    from console.exports order by started_at desc, id desc limit 1`;
  const subscriptions = await tx<Overview['subscriptions']>`
    select id::int as id, format, state, failing_since, disabled_reason from console.subscriptions
    order by (state = 'active' and failing_since is null), id limit 50`;
  const queue = await tx<Overview['queue']>`
    select a as state, n::float8 as n from console.metric_counts where metric = 'delivery_queue' and n <> 0 order by 1`;
  return {
    cycle: cycle ?? null,
    ledger: ledger ?? null,
    counts,
    credits,
    rates,
    answers,
    lastExport: lastExport ?? null,
    subscriptions,
    queue,
  };
}

/** A company found by a search (console.enterprise_names, analytics.enterprise_history): a computed shape. */
export interface SearchHit {
  pid: string;
  ent_name: string;
  uncid: string | null;
  matched: string;
}

/** LIKE's own characters in `s` escaped, so a user's `%` or `_` matches itself. */
function likeText(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * Companies by part of a name or former name, or by the whole credit code or PID. A code or PID is
 * found through its index; a part of a name by reading every name, with LIKE (byte matching: Chinese
 * has no case), and ILIKE only when the text holds Latin letters (its case folding is what costs).
 */
export async function searchCompanies(tx: ReadTx, q: string, limit = 50): Promise<SearchHit[]> {
  const pattern = `%${likeText(q)}%`;
  const latin = /[A-Za-z]/.test(q);
  return tx<SearchHit[]>`
    with exact as (
      select pid, null::text as matched from console.enterprise_names where uncid = upper(${q})
      union select pid, null from console.enterprise_names where pid = ${q}
    ), named as (
      -- Read only when no code or PID matched: that scan is the search's one cost.
      select pid, min(case when ent_name like ${pattern} or (${latin}::boolean and ent_name ilike ${pattern})
                      then ent_name else history_name end) as matched
      from console.enterprise_names
      where not exists (select 1 from exact)
        and (ent_name like ${pattern} or history_name like ${pattern}
          or (${latin}::boolean and (ent_name ilike ${pattern} or history_name ilike ${pattern})))
      group by pid limit ${limit}
    ), hits as (
      select pid, min(matched) as matched, bool_or(matched is null) as exact
      from (select * from exact union all select * from named) h group by pid
    )
    select c.pid, c.ent_name, c.uncid, coalesce(h.matched, c.ent_name) as matched
    from hits h
    cross join lateral (
      select v.pid, v.ent_name, v.uncid from analytics.enterprise_history v where v.pid = h.pid and v.is_current
    ) c
    order by h.exact desc, c.ent_name, c.pid
    limit ${limit}`;
}

export type Row = Record<string, unknown>;

/**
 * The companies among `pids` that daybook holds, by PID, with their current name and credit code:
 * how a shareholder or an event that names a company by PID is shown by name and code instead.
 */
export async function readHeld(tx: ReadTx, pids: Iterable<string | null>): Promise<Map<string, HeldCompany>> {
  const wanted = [...new Set([...pids].filter((p): p is string => !!p))];
  if (wanted.length === 0) return new Map();
  const rows = await tx<HeldCompany[]>`
    select pid, ent_name, uncid from analytics.enterprise_history
    where is_current and pid = any(${wanted}::text[])`;
  return new Map(rows.map((r) => [r.pid, r]));
}

/** The PIDs of the shareholders change rows name (BE_INVEST before and after). */
export function holderPids(
  rows: readonly { field?: unknown; before?: unknown; after?: unknown }[],
): (string | null)[] {
  return rows
    .filter((r) => r.field === 'BE_INVEST')
    .flatMap((r) => [holderPid(r.before as string | null), holderPid(r.after as string | null)]);
}

/** A company's page: its rows of the analytics views (computed shapes), and the companies it holds. */
export interface Company {
  current: Row;
  versions: Row[];
  changes: Row[];
  events: Row[];
  asOf: {
    version: number;
    cycle: string;
    persons: Row[];
    shareholders: Row[];
    clearing_members: Row[];
  } | null;
  watch: Row[];
  /** The companies related to this one within two hops on the day shown (analytics.related_companies). */
  related: RelatedCompany[];
  /** The companies daybook holds among those this page names by PID (shareholders, events). */
  held: Map<string, HeldCompany>;
}

/** One step of a related company's path (analytics.related_companies). */
export interface RelatedStep {
  from: string;
  to: string;
  link: 'shareholder' | 'holds' | 'same_name';
  name: string | null;
  position: string | null;
}

/** A company related to the one shown, with how it is reached. */
export interface RelatedCompany {
  related_pid: string;
  related_name: string | null;
  related_status: string | null;
  hops: number;
  link: RelatedStep['link'];
  path: RelatedStep[];
}

/** How far the company page looks for related companies. */
export const RELATED_DEPTH = 2;

/**
 * One company: its current record, every version with its changes, its events, its children as
 * of the cycle of `at` (the latest version whose cycle is on or before it; today's without one),
 * and its watch entries with the planner's estimate. Null when no company has this PID.
 */
export async function readCompany(tx: ReadTx, pid: string, at: string | null): Promise<Company | null> {
  const [current] = await tx<Row[]>`
    select pid, ent_name, history_name, uncid, reg_no, legal_person, legal_person_desc, ent_type, ent_status,
      reg_cap::text as reg_cap, capital_unit, capital_currency, capital_amount::text as capital_amount,
      capital_text, province, es_date::text as es_date, op_from::text as op_from,
      operating_to::text as operating_to, operating_perpetual, operating_to_text, reg_org,
      op_loc, op_scope, industry_phy, industry_big, presence, version, version_cycle::text as version_cycle,
      version_valid_from, first_seen_at, last_seen_at
    from analytics.enterprise_current where pid = ${pid}`;
  if (!current) return null;
  const versions = await tx<Row[]>`
    select version, valid_from, valid_to, cycle::text as cycle, ent_name, raw_response_id,
      capital_currency, capital_amount::text as capital_amount
    from analytics.enterprise_history where pid = ${pid} order by version desc`;
  const changes = await tx<Row[]>`
    select change_id, cycle::text as cycle, from_version, to_version, category, field, kind, before, after,
      detail, severity
    from analytics.enterprise_changes where pid = ${pid} order by to_version desc, change_id`;
  const events = await tx<Row[]>`
    select event_id, kind, cycle::text as cycle, keyword, detail, observed_at, raw_response_id
    from analytics.enterprise_events where pid = ${pid} order by event_id desc limit 200`;
  const [asOf] = await tx<NonNullable<Company['asOf']>[]>`
    select version, cycle::text as cycle, persons, shareholders, clearing_members
    from analytics.enterprise_history
    where pid = ${pid} and (${at}::date is null or cycle <= ${at}::date)
    order by version desc limit 1`;
  const watch = await tx<Row[]>`
    select id, keyword, change_rate, due_at, last_refreshed_at, refreshed_cycle::text as refreshed_cycle,
      last_outcome, last_error, uscc, pin_uscc, resolution_mismatch
    from console.watchlist where pid = ${pid} order by id`;
  const related = await tx<RelatedCompany[]>`
    select related_pid, related_name, related_status, hops, link, path
    from analytics.related_companies(${pid}, ${at}::date, ${RELATED_DEPTH})`;
  const held = await readHeld(tx, [
    ...(asOf?.shareholders ?? []).map((s) => s.pid as string | null),
    ...related.map((r) => r.related_pid),
    ...holderPids(changes),
    ...events.map((e) => observationPid(String(e.kind), e.detail as string | null)),
  ]);
  return { current, versions, changes, events, asOf: asOf ?? null, watch, related, held };
}

export interface ChangeFilter {
  severity: string | null;
  category: string | null;
  from: string | null;
  to: string | null;
  pid: string | null;
}

/** The key of a change in the feed's order (newest first): its id. */
export type ChangeCursor = number | null;

export interface ChangeRow {
  change_id: number;
  pid: string;
  current_name: string;
  /** The company's credit code now. */
  uncid: string | null;
  cycle: string;
  detected_at: Date;
  category: string;
  field: string;
  kind: string;
  before: string | null;
  after: string | null;
  detail: string | null;
  severity: string;
  to_version: number;
  /** For a REGCAP change: the currency of the version before and after, and whether their amounts are known. */
  before_currency: string | null;
  before_known: boolean | null;
  after_currency: string | null;
  after_known: boolean | null;
}

/**
 * A page of the change feed, newest first, after the cursor `before` (the last change id of the
 * page before). Changes are keyed by id, which only grows: a change written while someone pages
 * lands above the first page, never inside a page already read, so no change is shown twice or
 * skipped.
 */
export async function readChanges(
  tx: ReadTx,
  f: ChangeFilter,
  before: ChangeCursor,
  limit: number,
): Promise<ChangeRow[]> {
  return tx<ChangeRow[]>`
    select c.change_id::float8 as change_id, c.pid, c.current_name, c.cycle::text as cycle, c.detected_at,
      c.category, c.field, c.kind, c.before, c.after, c.detail, c.severity, c.to_version,
      (select v.uncid from analytics.enterprise_history v where v.pid = c.pid and v.is_current) as uncid,
      fv.capital_currency as before_currency, fv.capital_amount is not null as before_known,
      tv.capital_currency as after_currency, tv.capital_amount is not null as after_known
    from analytics.enterprise_changes c
    -- A capital amount is shown in its version's currency: read only for those rows.
    left join lateral (
      select h.capital_currency, h.capital_amount from analytics.enterprise_history h
      where c.field = 'REGCAP' and h.pid = c.pid and h.version = c.from_version
    ) fv on true
    left join lateral (
      select h.capital_currency, h.capital_amount from analytics.enterprise_history h
      where c.field = 'REGCAP' and h.pid = c.pid and h.version = c.to_version
    ) tv on true
    where (${before}::bigint is null or c.change_id < ${before}::bigint)
      and (${f.severity}::text is null or c.severity = ${f.severity}::text)
      and (${f.category}::text is null or c.category = ${f.category}::text)
      and (${f.from}::date is null or c.cycle >= ${f.from}::date)
      and (${f.to}::date is null or c.cycle <= ${f.to}::date)
      -- A company by its PID or its credit code (any of its versions had it).
      and (${f.pid}::text is null or c.pid = any(array(
        select ${f.pid}::text
        union select n.pid from console.enterprise_names n where n.uncid = upper(${f.pid}::text))))
    -- The view's own column, not the float8 shown: the order is the primary key's index.
    order by c.change_id desc
    limit ${limit}`;
}

/** A watch entry as the console lists it (console.watchlist): a computed shape. */
export interface WatchRow {
  id: number;
  keyword: string;
  priority: number;
  active: boolean;
  pid: string | null;
  ent_name: string | null;
  last_refreshed_at: Date | null;
  days_stale: number | null;
  change_rate: number | null;
  due_at: Date | null;
  last_outcome: string | null;
  last_error: string | null;
  last_cycle: string | null;
  uscc: string | null;
  pin_uscc: boolean;
  resolution_mismatch: string | null;
}

/** A page of the watchlist in id order, after the id `after`. */
export async function readWatchlist(tx: ReadTx, after: number, limit: number): Promise<WatchRow[]> {
  return tx<WatchRow[]>`
    select w.id::float8 as id, w.keyword, w.priority, w.active, w.pid,
      (select v.ent_name from analytics.enterprise_history v where v.pid = w.pid and v.is_current) as ent_name,
      w.last_refreshed_at,
      floor(extract(epoch from now() - w.last_refreshed_at) / 86400)::int as days_stale,
      w.change_rate, w.due_at, w.last_outcome, w.last_error, w.last_cycle::text as last_cycle,
      w.uscc, w.pin_uscc, w.resolution_mismatch
    from console.watchlist w
    where w.id > ${after}
    order by w.id
    limit ${limit}`;
}

/** A product of one day's list (console.product_pulls): a computed shape. */
export interface TrendingRow {
  position: number;
  product_id: string;
  name: string;
  tagline: string | null;
  votes_count: number | null;
  comments_count: number | null;
  fetched_at: Date;
}

/** A day with a pulled list: a row of the `console.product_pulls` view, a computed shape. */
interface ListDay {
  d: string;
}

/** The days with a pulled list, newest first (at most `limit`). */
export async function listDates(tx: ReadTx, limit = 60): Promise<string[]> {
  const rows = await tx<ListDay[]>`
    select distinct list_date::text as d from console.product_pulls order by 1 desc limit ${limit}`;
  return rows.map((r) => r.d);
}

/** The latest pull of one day's list, in list order. */
export async function readTrending(tx: ReadTx, date: string): Promise<TrendingRow[]> {
  return tx<TrendingRow[]>`
    with latest as (
      select raw_response_id from console.product_pulls where list_date = ${date}::date
      order by fetched_at desc, raw_response_id desc limit 1
    )
    select p.position, p.product_id, c.name, c.tagline, p.votes_count, p.comments_count, p.fetched_at
    from console.product_pulls p
    join latest l on l.raw_response_id = p.raw_response_id
    join analytics.product_current c on c.product_id = p.product_id
    where p.list_date = ${date}::date
    order by p.position`;
}

export interface Product {
  current: Row;
  pulls: { list_date: string; position: number; votes_count: number | null; fetched_at: Date }[];
  comments: { body: string; created_at: Date | null; created_at_text: string | null }[];
}

/** One product: its current version, its place in every pull that listed it, its latest comments. */
export async function readProduct(tx: ReadTx, id: string): Promise<Product | null> {
  const [current] = await tx<Row[]>`
    select product_id, name, tagline, description, url, topics, latest_votes, latest_comments,
      first_list_date::text as first_list_date, version, first_seen_at, last_seen_at
    from analytics.product_current where product_id = ${id}`;
  if (!current) return null;
  const pulls = await tx<Product['pulls']>`
    select list_date::text as list_date, position, votes_count, fetched_at from console.product_pulls
    where product_id = ${id} order by fetched_at, raw_response_id limit 2000`;
  const comments = await tx<Product['comments']>`
    select body, created_at, created_at_text from console.product_comments
    where product_id = ${id} order by created_at desc nulls last, id desc limit 100`;
  return { current, pulls, comments };
}

/** A landed answer as the console shows it (console.raw_answers): a computed shape. */
export interface RawAnswer {
  id: number;
  operation: string;
  params: string;
  http_status: number | null;
  outcome: string;
  cycle: string | null;
  landed_at: Date;
  body: string | null;
  has_bytes: boolean;
}

/** One landed answer, its body as text (pretty JSON when it is JSON). */
export async function readRawAnswer(tx: ReadTx, id: number): Promise<RawAnswer | null> {
  const [r] = await tx<RawAnswer[]>`
    select id::float8 as id, operation, jsonb_pretty(params) as params, http_status, outcome, cycle::text as cycle,
      landed_at, coalesce(jsonb_pretty(body_json), body_text) as body, has_bytes
    from console.raw_answers where id = ${id}`;
  return r ?? null;
}
