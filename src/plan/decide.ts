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
import type { watchlist } from '../db/schema.ts';
import { budgetOf, ensureCycleBudget } from '../purchase/credits.ts';
import { deferralMessage, fetchesInFlight, recordPlan } from '../purchase/fetches.ts';
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
      const limits: PlanLimits = {
        creditsPerQuery: config.DAYBOOK_CREDITS_PER_QUERY,
        // No budget row yet (a read-only plan, as `plan explain`): the one the plan would open.
        creditBudget: budget
          ? Math.max(0, budget.budget - budget.spent - budget.reserved)
          : config.DAYBOOK_CREDIT_BUDGET,
        rateLimitPerMinute: config.DAYBOOK_ENTERPRISE_RATE,
        // A late plan (or a past cycle run by hand) still gets at least an hour of window.
        windowMinutes: Math.max(60, Math.floor((cycleEnd - now.getTime()) / 60_000)),
      };
      const done = await tx<{ watch_id: string; pid: string | null; active: boolean }[]>`
      select f.watch_id, f.pid, w.active from cycle_fetches f join watchlist w on w.id = f.watch_id
      where f.cycle = ${cycle} and f.status in ('succeeded', 'duplicate', 'failed', 'fetching', 'retrying')`;
      const [active] = await tx<{ n: number }[]>`select count(*)::int as n from watchlist where active`;
      const total = active?.n ?? 0;
      const size = Math.min(total, head ?? headSize(capacityOf(limits, total).limit, done.length));
      // The order of watchlist_due_order_idx, which makes this an index scan that stops at `size`.
      const candidates = await tx<
        CandidateRow[]
      >`select id, keyword, priority, pid, last_refreshed_at, refreshed_cycle::text, last_outcome, last_cycle::text, added_at, due_at
      from watchlist where active
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
          from watchlist where active and priority = ${last.priority}
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

export interface DeferredEntries {
  /** Every deferred entry of the cycle: rows deferred by a worker or a re-plan, and entries the plan did not reach. */
  total: number;
  byReason: Record<string, number>;
  /** The first `limit`, in plan order: rows first, then entries without a row. */
  first: { watch_id: number; keyword: string; reason: string | null; detail: string | null }[];
}

/**
 * The deferred entries of a cycle. A `deferred` row was written by a worker (insufficient credits,
 * a paused cycle) or by a re-plan; an active entry without a row in a cycle whose plan ran was not
 * reached by it (the plan run's `deferredReason`), or was added after it (`added_after_plan`).
 */
export async function deferredEntries(sql: Sql, cycle: string, limit = 20): Promise<DeferredEntries> {
  const explicit = await sql<{ reason: string | null; n: number }[]>`
    select error_code as reason, count(*)::int as n from cycle_fetches
    where cycle = ${cycle} and status = 'deferred' group by error_code order by error_code`;
  const first = await sql<DeferredEntries['first']>`
    select f.watch_id::int as watch_id, w.keyword, f.error_code as reason, f.error_message as detail
    from cycle_fetches f join watchlist w on w.id = f.watch_id
    where f.cycle = ${cycle} and f.status = 'deferred'
    order by w.priority desc, w.due_at asc nulls first, w.id limit ${limit}`;
  const byReason: Record<string, number> = {};
  for (const e of explicit) byReason[e.reason ?? 'unknown'] = (byReason[e.reason ?? 'unknown'] ?? 0) + e.n;
  const [plan] = await sql<{ started_at: Date; reason: string }[]>`
    select started_at, counts->>'deferredReason' as reason from runs
    where kind = ${PLAN_RUN_KIND} and cycle = ${cycle} and outcome = 'succeeded' and counts ? 'deferredReason'
    order by started_at desc, id desc limit 1`;
  if (plan) {
    const unplanned = sql`
      from watchlist w where w.active
        and not exists (select 1 from cycle_fetches f where f.cycle = ${cycle} and f.watch_id = w.id)`;
    const [counts] = await sql<{ not_reached: number; added_after: number }[]>`
      select count(*) filter (where w.added_at <= ${plan.started_at})::int as not_reached,
             count(*) filter (where w.added_at > ${plan.started_at})::int as added_after
      ${unplanned}`;
    if (counts?.not_reached) byReason[plan.reason] = (byReason[plan.reason] ?? 0) + counts.not_reached;
    if (counts?.added_after)
      byReason.added_after_plan = (byReason.added_after_plan ?? 0) + counts.added_after;
    if (first.length < limit && (counts?.not_reached || counts?.added_after)) {
      const added = 'added after the plan of this cycle: planned in the next cycle, or by daybook resume';
      first.push(
        ...(await sql<DeferredEntries['first']>`
          select w.id::int as watch_id, w.keyword,
            case when w.added_at > ${plan.started_at} then 'added_after_plan' else ${plan.reason} end as reason,
            case when w.added_at > ${plan.started_at} then ${added}
                 else ${`${deferralMessage(plan.reason)} (not reached)`} end as detail
          ${unplanned}
          order by w.priority desc, w.due_at asc nulls first, w.id limit ${limit - first.length}`),
      );
    }
  }
  return { total: Object.values(byReason).reduce((a, b) => a + b, 0), byReason, first };
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
): Promise<PlanDecision & { inFlight: number[] }> {
  return deps.sql.begin(async (tx) => {
    await lockCyclePlan(tx, cycle);
    await beforePlan?.(tx);
    const decision = await decidePlan({ ...deps, sql: tx }, cycle);
    await recordPlan(tx, decision.plan);
    return { ...decision, inFlight: await fetchesInFlight(tx, cycle) };
  }) as Promise<PlanDecision & { inFlight: number[] }>;
}
