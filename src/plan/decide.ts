/**
 * The plan of a cycle, read and written: what the planner decides from (the head of the plan
 * order, this cycle's settled work, the credits left), and the plan's transaction, which holds a
 * per-cycle lock so that two plans of a cycle, or a plan and a `daybook resume`, never
 * interleave. The decisions themselves are written as claims by the purchase
 * (src/purchase/fetches.ts); the plan job (jobs/plan.ts) runs this and enqueues what it selected.
 */
import type postgres from 'postgres';
import type { Config } from '../config/config.ts';
import { inTransaction, type Sql } from '../db/connect.ts';
import type { DriverRow, Recast } from '../db/rows.ts';
import type { cycleFetches, watchlist } from '../db/schema.ts';
import { latestRunWith } from '../landing/runs.ts';
import { budgetOf, ensureCycleBudget } from '../purchase/credits.ts';
import { claimsOwingCredits, deferralMessage, fetchesInFlight, recordPlan } from '../purchase/fetches.ts';
import { productCreditsOwed } from '../purchase/products.ts';
import { cycleStart, nextRefresh } from '../time/cycles.ts';
import {
  capacityOf,
  owedThrough,
  type Plan,
  type PlanInput,
  type PlanLimits,
  planCycle,
  type WatchCandidate,
} from './planner.ts';

/** The kind of the runs a plan records (the plan job's name). */
export const PLAN_RUN_KIND = 'plan';

/** What reading a plan needs. */
export interface PlanReader {
  sql: Sql;
  config: Config;
  now: () => Date;
}

/** A watch entry as the plan job reads it from Postgres (its dates read `::text`). */
export type CandidateRow = Recast<
  Pick<
    DriverRow<typeof watchlist>,
    | 'id'
    | 'keyword'
    | 'priority'
    | 'pid'
    | 'last_refreshed_at'
    | 'refreshed_cycle'
    | 'last_outcome'
    | 'last_cycle'
    | 'added_at'
    | 'due_at'
  >,
  'refreshed_cycle' | 'last_cycle',
  string
>;

/** A count of rows: a computed shape. */
interface Count {
  n: number;
}

/** A watch entry's id, as the driver reads it (int8: a string). */
type WatchId = Pick<DriverRow<typeof watchlist>, 'id'>;

/** A claim's watch entry, as the driver reads it (int8: a string). */
type ClaimWatchId = Pick<DriverRow<typeof cycleFetches>, 'watch_id'>;

/** A claim the cycle's plan counts as done or under way, with its entry's state. */
type DoneClaim = Pick<DriverRow<typeof cycleFetches>, 'watch_id' | 'pid'> &
  Pick<DriverRow<typeof watchlist>, 'active'>;

/** A watch entry as the pure planner takes it. */
export function candidateOf(c: CandidateRow): WatchCandidate {
  return {
    id: Number(c.id),
    keyword: c.keyword,
    priority: c.priority,
    pid: c.pid,
    lastRefreshedAt: c.last_refreshed_at,
    refreshedCycle: c.refreshed_cycle,
    lastOutcome: c.last_outcome,
    lastCycle: c.last_cycle,
    addedAt: c.added_at,
    dueAt: c.due_at,
  };
}

/** The transaction-scoped lock one cycle's planning holds (works through any pooler). */
async function lockCyclePlan(tx: Sql, cycle: string): Promise<void> {
  await tx`select pg_advisory_xact_lock(hashtext('daybook:plan'), hashtext(${cycle}))`;
}

export interface PlanDecision {
  input: PlanInput;
  plan: Plan;
  /** Reads of the head it took (more than one when the planner skipped most of the first head). */
  reads: number;
  /** Time spent reading from Postgres and in the pure planner, ms. */
  readMs: number;
  planMs: number;
}

/**
 * Reads the head of the plan order and plans over it; when the planner skipped so much of the
 * head that the capacity is not filled, reads a longer head (by the share it could select), until
 * the capacity is filled or every active entry was read.
 */
export async function decidePlan(deps: PlanReader, cycle: string): Promise<PlanDecision> {
  let readMs = 0;
  let planMs = 0;
  let head: number | undefined;
  for (let reads = 1; ; reads++) {
    let t = performance.now();
    const input = await readPlanInput(deps, cycle, head);
    readMs += performance.now() - t;
    t = performance.now();
    const plan = planCycle(input);
    planMs += performance.now() - t;
    if (plan.complete) return { input, plan, reads, readMs, planMs };
    head = longerHead(input.candidates.length, plan.capacity.limit, plan.selected.length);
  }
}

/**
 * How many entries to read for a capacity: those it can take, the done ones, and a margin for
 * skips (reading a few hundred rows more costs about a millisecond; reading again costs a count).
 */
export function headSize(limit: number, done: number): number {
  return limit + done + Math.max(100, Math.ceil(limit / 2));
}

/** The next head when `read` entries gave only `selected` of `limit`: by the yield seen, 1.5 to 4 times longer. */
export function longerHead(read: number, limit: number, selected: number): number {
  const factor = Math.min(4, Math.max(1.5, (1.25 * limit) / Math.max(1, selected)));
  return Math.max(100, Math.ceil(read * factor));
}

/**
 * Reads what the planner decides from: the head of the active watch entries in plan order
 * (`head` entries; by default enough for the cycle's capacity), how many active entries follow
 * it, this cycle's settled work, and the credits left. One snapshot.
 */
export async function readPlanInput(deps: PlanReader, cycle: string, head?: number): Promise<PlanInput> {
  const { sql, config } = deps;
  if ('begin' in sql) await ensureCycleBudget(sql, cycle, config.DAYBOOK_CREDIT_BUDGET);
  const now = deps.now();
  const cycleEnd = nextRefresh(cycleStart(cycle)).getTime();
  // One snapshot: its own read-only transaction, or the plan's (which holds the cycle's lock).
  return inTransaction(
    sql,
    async (tx) => {
      const budget = await budgetOf(tx, cycle);
      // Entries a buyer holds (or left to retry) that have no credits reserved yet will reserve
      // them: the credits left are what remains after those (a top-up plans beside them).
      const claimed = await claimsOwingCredits(tx, cycle);
      // Priced product calls spend from the same budget: the cycle's pulls not made yet keep theirs.
      const owed =
        claimed * config.DAYBOOK_CREDITS_PER_QUERY +
        (await productCreditsOwed(
          tx,
          cycle,
          config.DAYBOOK_PRODUCT_CREDITS ?? null,
          config.DAYBOOK_PRODUCT_LOOKBACK_DAYS,
        ));
      const limits: PlanLimits = {
        creditsPerQuery: config.DAYBOOK_CREDITS_PER_QUERY,
        // No budget row yet (a read-only plan, as `plan explain`): the one the plan would open.
        creditBudget: budget
          ? Math.max(0, budget.budget - budget.spent - budget.reserved - owed)
          : Math.max(0, config.DAYBOOK_CREDIT_BUDGET - owed),
        rateLimitPerMinute: config.DAYBOOK_ENTERPRISE_RATE,
        relatedShare: config.DAYBOOK_RELATED_SHARE,
        // A late plan (or a past cycle run by hand) still gets at least an hour of window.
        windowMinutes: Math.max(60, Math.floor((cycleEnd - now.getTime()) / 60_000)),
      };
      const done = await tx<DoneClaim[]>`
      select f.watch_id, f.pid, w.active from published.cycle_claims f join published.watch_entries w on w.id = f.watch_id
      where f.cycle = ${cycle} and f.status in ('succeeded', 'duplicate', 'failed', 'fetching', 'retrying')`;
      const [active] = await tx<Count[]>`select count(*)::int as n from published.watch_entries where active`;
      const total = active?.n ?? 0;
      const size = Math.min(total, head ?? headSize(capacityOf(limits, total).limit, done.length));
      // The order of watchlist_due_order_idx, which makes this an index scan that stops at `size`.
      const candidates = await tx<
        CandidateRow[]
      >`select id, keyword, priority, pid, last_refreshed_at, refreshed_cycle::text, last_outcome, last_cycle::text, added_at, due_at
      from published.watch_entries where active
      order by priority desc, due_at asc nulls first, id
      limit ${size}`;
      // Within a priority, entries owed a refresh by the staleness bound come before the others by
      // due time. Every entry of a higher priority than the head's last is in the head; of that
      // last priority, the owed ones past the head are read apart (watchlist_owed_idx), so
      // the planner sees every owed entry that could come before the head's end.
      const last = candidates.at(-1);
      if (last && candidates.length === size && size < total) {
        const seen = new Set(candidates.map((c) => c.id));
        const owed = await tx<
          CandidateRow[]
        >`select id, keyword, priority, pid, last_refreshed_at, refreshed_cycle::text, last_outcome, last_cycle::text, added_at, due_at
          from published.watch_entries where active and priority = ${last.priority}
            and refreshed_cycle <= ${owedThrough(cycle, config.DAYBOOK_MAX_STALENESS_DAYS)}
          order by priority desc, refreshed_cycle asc, id
          limit ${size}`;
        candidates.push(...owed.filter((c) => !seen.has(c.id)));
      }
      const doneWatchIds = new Set(done.map((d) => Number(d.watch_id)));
      // The active entries after the head that are still to do (done ones are not deferred).
      const doneActive = done.filter((d) => d.active).length;
      const doneInHead = candidates.filter((c) => doneWatchIds.has(Number(c.id))).length;
      const beyond = Math.max(0, total - candidates.length - (doneActive - doneInHead));
      return {
        cycle,
        ...limits,
        maxStalenessDays: config.DAYBOOK_MAX_STALENESS_DAYS,
        candidates: candidates.map(candidateOf),
        beyond,
        doneWatchIds,
        donePids: new Set(done.flatMap((d) => (d.pid ? [d.pid] : []))),
      };
    },
    'isolation level repeatable read read only',
  );
}

/** The latest successful plan of a cycle (its own plan or a top-up), and how many it had. */
export interface LatestPlan {
  /** When it started (the database's clock). */
  startedAt: Date;
  /** The highest watch id when it planned; null for a plan recorded before top-ups existed. */
  highWater: number | null;
  /** The constraint that bound it: the reason of the entries it did not reach. */
  reason: string;
  /** Successful plans of the cycle: its own plan, its top-ups and resumes. */
  plans: number;
  /** When the cycle's first plan started. */
  firstStartedAt: Date;
}

/** A value of a run's counts as `->>` reads it: text, or null. */
const textOf = (v: unknown): string | null =>
  v === undefined || v === null ? null : typeof v === 'string' ? v : JSON.stringify(v);

/** The latest successful plan of `cycle`, or null when it was never planned. */
export async function latestPlan(sql: Sql, cycle: string): Promise<LatestPlan | null> {
  const run = await latestRunWith(sql, PLAN_RUN_KIND, cycle, 'deferredReason');
  if (!run) return null;
  const highWater = run.counts.highWater;
  return {
    startedAt: run.startedAt,
    highWater: textOf(highWater) === null ? null : Number(highWater),
    reason: textOf(run.counts.deferredReason) as string,
    plans: run.runs,
    firstStartedAt: run.firstStartedAt,
  };
}

/** How many entries came after a plan, and the highest id among them (int8: text): a computed shape. */
interface NewEntries {
  n: number;
  last: string;
}

/**
 * The entries no plan of the cycle has seen (over the watchlist as `w`): above the plan's
 * high-water mark, or added after it started (an entry watched again keeps its id, and is added
 * again: `watch add` sets its `added_at`). Two index ranges, the key's and `added_at`'s.
 */
function unseenByPlan(sql: Sql, plan: LatestPlan) {
  return plan.highWater === null
    ? sql`w.added_at > ${plan.startedAt}`
    : sql`(w.id > ${plan.highWater} or w.added_at > ${plan.startedAt})`;
}

/**
 * Active entries that came after the plan (`unseenByPlan`) and have no row in the cycle: what no
 * plan of it has seen. Index ranges: cheap enough to ask every minute.
 */
export async function newSincePlan(
  sql: Sql,
  cycle: string,
  plan: LatestPlan,
): Promise<{ entries: number; last: number }> {
  const after = unseenByPlan(sql, plan);
  const [row] = await sql<NewEntries[]>`
    select count(*)::int as n, coalesce(max(w.id), 0)::bigint as last
    from published.watch_entries w
    where ${after} and w.active
      and not exists (select 1 from published.cycle_claims f where f.cycle = ${cycle} and f.watch_id = w.id)`;
  return { entries: row?.n ?? 0, last: Number(row?.last ?? 0) };
}

/**
 * The cycle's plan, decided as the plan job would decide it now, recording nothing: one
 * repeatable-read snapshot, read only (it opens no budget row either). With the selected entries
 * that have a `planned` row already.
 */
export async function planPreview(
  reader: PlanReader & { sql: postgres.Sql },
  cycle: string,
): Promise<PlanDecision & { plannedBefore: Set<number> }> {
  return reader.sql.begin('isolation level repeatable read read only', async (tx) => {
    const decision = await decidePlan({ ...reader, sql: tx }, cycle);
    const rows = await tx<ClaimWatchId[]>`
      select watch_id from published.cycle_claims
      where cycle = ${cycle} and status = 'planned'
        and watch_id = any(${decision.plan.selected.map((e) => e.id)}::bigint[])`;
    return { ...decision, plannedBefore: new Set(rows.map((r) => Number(r.watch_id))) };
  }) as Promise<PlanDecision & { plannedBefore: Set<number> }>;
}

/** How many deferred claims give one reason: a computed shape. */
interface ReasonCount {
  reason: string | null;
  n: number;
}

/** The entries without a row in the cycle, counted by what the plan made of them: a computed shape. */
interface UnseenCounts {
  seen: number;
  unseen: number;
  due: number;
  skipped: number;
}

/** An entry without a row in the cycle, and whether the plan saw it. */
type UnplannedEntry = Pick<DriverRow<typeof watchlist>, 'id' | 'keyword' | 'added_at'> & { unseen: boolean };

export interface DeferredEntries {
  /** Every deferred entry of the cycle: rows deferred by a worker or a re-plan, and entries the plan did not reach. */
  total: number;
  byReason: Record<string, number>;
  /** The first `limit`, in plan order: rows first, then entries without a row. */
  first: { watch_id: number; keyword: string; reason: string | null; detail: string | null }[];
}

/** The detail of an entry added after the plan of its cycle that the next top-up plans. */
export const ADDED_DUE_DETAIL =
  'added after the plan of this cycle, due in it: the next top-up plans it (daybook enqueue; the scheduler within a minute; inline: daybook run)';

/** What an entry added after the plan of its cycle waits for, by the constraint that holds it. */
export function addedWaitDetail(reason: string): string {
  const what: Record<string, string> = {
    credit_budget: 'credits: the budget of this cycle is spent or planned',
    rate_window: 'room in the rate limit: the rest of this cycle is taken',
    max_entries: 'room under the cap on entries per cycle',
    related_share: "room in the shareholders' share of the cycle (DAYBOOK_RELATED_SHARE)",
  };
  return `added after the plan of this cycle: waits for ${what[reason] ?? reason.replaceAll('_', ' ')}`;
}

/**
 * The deferred entries of a cycle. A `deferred` row was written by a worker (insufficient credits,
 * a paused cycle) or by a re-plan. An active entry without a row in a cycle whose plan ran:
 *
 * - not reached by it (the latest plan run's `deferredReason`);
 * - added after the cycle's first plan and not reached by a later one (a top-up): it waits for
 *   what bound that plan;
 * - added after the latest plan (`added_after_plan`, src/plan/topup.ts): no plan has seen it. With
 *   `reader`, the cycle's plan is previewed as a top-up would decide it now: an entry it selects
 *   is due and waits for that top-up (`added_after_plan`); one it defers waits for the credit
 *   budget or the rate window (that reason); one it skips, for the skip's reason.
 */
export async function deferredEntries(
  sql: Sql,
  cycle: string,
  limit = 20,
  reader?: Omit<PlanReader, 'sql'>,
): Promise<DeferredEntries> {
  const explicit = await sql<ReasonCount[]>`
    select error_code as reason, count(*)::int as n from published.cycle_claims
    where cycle = ${cycle} and status = 'deferred' group by error_code order by error_code`;
  const first = await sql<DeferredEntries['first']>`
    select f.watch_id::int as watch_id, w.keyword, f.error_code as reason, f.error_message as detail
    from published.cycle_claims f join published.watch_entries w on w.id = f.watch_id
    where f.cycle = ${cycle} and f.status = 'deferred'
    order by w.priority desc, w.due_at asc nulls first, w.id limit ${limit}`;
  const byReason: Record<string, number> = {};
  for (const e of explicit) byReason[e.reason ?? 'unknown'] = (byReason[e.reason ?? 'unknown'] ?? 0) + e.n;
  const plan = await latestPlan(sql, cycle);
  if (plan) {
    const unplanned = await unplannedEntries(sql, cycle, plan, limit - first.length, reader);
    for (const [reason, n] of Object.entries(unplanned.byReason))
      byReason[reason] = (byReason[reason] ?? 0) + n;
    first.push(...unplanned.first);
  }
  return { total: Object.values(byReason).reduce((a, b) => a + b, 0), byReason, first };
}

/**
 * The active entries of a planned cycle without a row (`deferredEntries`), counted by reason, and
 * the first `limit` in plan order. No plan has seen those above the latest plan's high-water mark:
 * with `reader`, what a top-up would do with them now says why they wait.
 */
async function unplannedEntries(
  sql: Sql,
  cycle: string,
  plan: LatestPlan,
  limit: number,
  reader?: Omit<PlanReader, 'sql'>,
): Promise<Pick<DeferredEntries, 'byReason' | 'first'>> {
  const unseen = unseenByPlan(sql, plan);
  const withoutRow = sql`w.active
    and not exists (select 1 from published.cycle_claims f where f.cycle = ${cycle} and f.watch_id = w.id)`;
  // What the next top-up would do with the entries no plan has seen: plan them (due), skip them
  // (the skip's reason), or leave them for the constraint that binds (waitReason).
  let due: Set<number> | null = null;
  const skipped = new Map<number, { reason: string; detail: string }>();
  let waitReason = plan.reason;
  if (reader && 'begin' in sql && (await newSincePlan(sql, cycle, plan)).entries > 0) {
    const preview = await planPreview({ ...reader, sql }, cycle);
    due = new Set(preview.plan.selected.map((e) => e.id).filter((id) => !preview.plannedBefore.has(id)));
    for (const k of preview.plan.skipped)
      skipped.set(k.entry.id, {
        reason: k.reason,
        detail: `added after the plan of this cycle: ${k.detail ?? k.reason.replaceAll('_', ' ')}`,
      });
    waitReason = preview.plan.deferReason;
  }
  const classify = (e: {
    id: number;
    unseen: boolean;
    added_at: Date;
  }): { reason: string; detail: string } => {
    if (e.unseen) {
      if (due === null || due.has(e.id)) return { reason: 'added_after_plan', detail: ADDED_DUE_DETAIL };
      return skipped.get(e.id) ?? { reason: waitReason, detail: addedWaitDetail(waitReason) };
    }
    if (e.added_at > plan.firstStartedAt)
      return { reason: plan.reason, detail: addedWaitDetail(plan.reason) };
    return { reason: plan.reason, detail: `${deferralMessage(plan.reason)} (not reached)` };
  };
  const byReason: Record<string, number> = {};
  const add = (reason: string, n: number) => {
    if (n > 0) byReason[reason] = (byReason[reason] ?? 0) + n;
  };
  // One scan of the entries without a row; the skipped ones (a handful of the head) apart.
  const skips = [...skipped.keys()];
  const [c] = await sql<UnseenCounts[]>`
    select count(*) filter (where not (${unseen}))::int as seen,
           count(*) filter (where ${unseen})::int as unseen,
           count(*) filter (where ${unseen} and w.id = any(${[...(due ?? [])]}::bigint[]))::int as due,
           count(*) filter (where ${unseen} and w.id = any(${skips}::bigint[]))::int as skipped
    from published.watch_entries w where ${withoutRow}`;
  add(plan.reason, c?.seen ?? 0);
  if (due === null) add('added_after_plan', c?.unseen ?? 0);
  else {
    add('added_after_plan', c?.due ?? 0);
    add(waitReason, (c?.unseen ?? 0) - (c?.due ?? 0) - (c?.skipped ?? 0));
    if (c?.skipped) {
      const rows = await sql<WatchId[]>`
        select w.id from published.watch_entries w where w.id = any(${skips}::bigint[]) and ${unseen} and ${withoutRow}`;
      for (const r of rows) add(skipped.get(Number(r.id))?.reason ?? waitReason, 1);
    }
  }
  if (limit <= 0 || Object.keys(byReason).length === 0) return { byReason, first: [] };
  // The first in plan order (watchlist_due_order_idx), classified here.
  const rows = await sql<UnplannedEntry[]>`
    select w.id, w.keyword, w.added_at, (${unseen}) as unseen from published.watch_entries w
    where ${withoutRow}
    order by w.priority desc, w.due_at asc nulls first, w.id limit ${limit}`;
  return {
    byReason,
    first: rows.map((r) => ({
      watch_id: Number(r.id),
      keyword: r.keyword,
      ...classify({ ...r, id: Number(r.id) }),
    })),
  };
}

/**
 * Decides the cycle's plan and records it, in one transaction under the cycle's lock.
 * `beforePlan` runs first there (a resume plans its deferred rows again). Returns the plan, what
 * it was decided from, and the entries already in flight: their jobs are enqueued again too, so
 * a job lost with a Redis that kept nothing is brought back instead of stranded.
 */
export async function planLocked(
  deps: PlanReader & { sql: postgres.Sql },
  cycle: string,
  beforePlan?: (tx: Sql) => Promise<void>,
): Promise<LockedPlan> {
  return deps.sql.begin(async (tx) => {
    await lockCyclePlan(tx, cycle);
    await beforePlan?.(tx);
    // The watchlist's high-water mark as this plan saw it: an entry above it came after the plan
    // (src/plan/topup.ts looks there for what a top-up would plan).
    const [mark] = await tx<
      WatchId[]
    >`select coalesce(max(id), 0)::bigint as id from published.watch_entries`;
    const decision = await decidePlan({ ...deps, sql: tx }, cycle);
    const selected = decision.plan.selected.map((e) => e.id);
    const before = await tx<ClaimWatchId[]>`
      select watch_id from published.cycle_claims
      where cycle = ${cycle} and status = 'planned' and watch_id = any(${selected}::bigint[])`;
    const planned = new Set(before.map((r) => Number(r.watch_id)));
    await recordPlan(tx, decision.plan);
    return {
      ...decision,
      inFlight: await fetchesInFlight(tx, cycle),
      newlyPlanned: selected.filter((id) => !planned.has(id)),
      highWater: Number(mark?.id ?? 0),
    };
  }) as Promise<LockedPlan>;
}

/** A plan as recorded under the cycle's lock. */
export interface LockedPlan extends PlanDecision {
  /** Entries a buyer took and did not settle (their jobs are enqueued again). */
  inFlight: number[];
  /** The selected entries that were not planned before this plan (no row, or a deferred or skipped one). */
  newlyPlanned: number[];
  /** The highest watch id when it planned. */
  highWater: number;
}
