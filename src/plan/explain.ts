/**
 * `daybook plan explain`: for a watch entry, its change-rate estimate, the parts of its score, and
 * why the plan of a cycle chose or deferred it. Read-only: it plans the cycle as the plan job
 * would (the same read of the head of the plan order, the same pure planner) without recording
 * anything.
 */

import type { Config } from '../config/config.ts';
import { inTransaction, type Sql } from '../db/connect.ts';
import type { DriverRow } from '../db/rows.ts';
import type { cycleFetches, watchlist } from '../db/schema.ts';
import { daysBetween } from '../time/cycles.ts';
import { type CandidateRow, candidateOf, decidePlan } from './decide.ts';
import {
  entryEvidence,
  equalOf,
  intervalDays,
  isApart,
  type PlannerModel,
  plannedWeight,
  shortTermRate,
} from './due.ts';
import { estimateShift, weightOf } from './estimate.ts';
import {
  type ChangeHistory,
  datedExposure,
  historyOf,
  isWaking,
  type RatePrior,
  SILENT_INTERVALS,
} from './model.ts';
import { type Plan, type PlanClass, planClassOf, planOrder, type WatchCandidate } from './planner.ts';
import { hasIntervals } from './spread.ts';
import { plannerState, priorOf } from './store.ts';

/** Days in a month, for "changes per month". */
export const DAYS_PER_MONTH = 30.44;

export type Decision =
  | { kind: 'selected' }
  | { kind: 'deferred'; reason: string }
  | { kind: 'skipped'; reason: string; detail?: string }
  | { kind: 'done'; status: string }
  | { kind: 'inactive' };

export interface Explanation {
  watchId: number;
  keyword: string;
  pid: string | null;
  priority: number;
  cycle: string;
  /** Estimated changes per day, and per month; null before the first fetch. */
  rate: number | null;
  changesPerMonth: number | null;
  /** Undated intervals (changed or not), and changes the registry dated (APPRDATE) with the quiet days after them. */
  observations: { intervals: number; changed: number; days: number; datedChanges: number; datedDays: number };
  prior: RatePrior;
  cohort: string | null;
  weight: number;
  boostLeft: number;
  lastRefreshedAt: Date | null;
  /** The cycle of the last successful refresh. */
  refreshedCycle: string | null;
  /** Days since the last refresh, at the cycle's start. */
  ageDays: number | null;
  /** 1 − e^(−λ·age): the chance it changed since its last refresh. */
  changeProbability: number | null;
  /** weight × changeProbability. */
  expectedValue: number | null;
  scale: number | null;
  intervalDays: number | null;
  dueAt: Date | null;
  planClass: PlanClass;
  /** How sure the estimate is (null before the first fetch). */
  certainty: Certainty | null;
  /** Why the entry stands where it does in the order, in a sentence. */
  reason: string;
  /**
   * The entry is planned apart (its intervals changed far more often than the watchlist's:
   * PlannerModel.apartRate), and the entry has just woken (a change after a silence: `isWaking`).
   */
  apart: boolean;
  waking: boolean;
  /**
   * Its estimate is read through the clusters the watchlist's rates fall in (PlannerModel.spread,
   * src/plan/spread.ts), not its cohort's single prior.
   */
  clustered: boolean;
  /** What the last plan learned from the whole watchlist. */
  model: PlannerModel;
  /** Its place in the plan order (1 = first), and how many entries the cycle takes. */
  position: number;
  capacity: number;
  decision: Decision;
}

/**
 * How sure an estimate is: the Gamma posterior of the rate (the prior's pseudo-changes and days
 * plus the entry's own), as a 90% range, and the share of it that the entry's own observations
 * make (the rest is its cohort's prior).
 */
export interface Certainty {
  /** 'low', 'medium' or 'high': the 90% range spans more than 10×, 3× to 10×, or under 3×. */
  level: 'low' | 'medium' | 'high';
  low: number;
  high: number;
  /** Days of the entry's own observation (intervals and registry dates), and the prior's pseudo-days. */
  ownDays: number;
  priorDays: number;
  ownShare: number;
}

/** The 5% and 95% points of Gamma(shape, rate) (Wilson–Hilferty). */
function gammaRange(shape: number, rate: number): [number, number] {
  const a = Math.max(1e-3, shape);
  const at = (z: number) => {
    const c = 1 - 1 / (9 * a) + z * Math.sqrt(1 / (9 * a));
    return (a * Math.max(0, c) ** 3) / rate;
  };
  return [at(-1.645), at(1.645)];
}

/** How sure the estimate `rate` of history `h` under `prior` is. */
export function certaintyOf(
  h: ChangeHistory,
  prior: RatePrior,
  rate: number,
  datedWeight: number,
): Certainty {
  const [datedEvents, datedDays] = datedExposure(h, datedWeight);
  const ownDays = h.days + datedDays;
  const priorDays = Math.max(0, prior.strength);
  // Changes the intervals most likely held, as in the cohorts' pooled rates.
  const changes = h.n > 0 ? -h.n * Math.log1p(-Math.min(h.changes / h.n, 1 - 1 / (2 * h.n + 2))) : 0;
  const shape = prior.rate * priorDays + changes + datedEvents;
  const days = priorDays + ownDays;
  const [low, high] = days > 0 && shape > 0 ? gammaRange(shape, days) : [0, Number.POSITIVE_INFINITY];
  const spread = low > 0 ? high / low : Number.POSITIVE_INFINITY;
  return {
    level: spread > 10 ? 'low' : spread > 3 ? 'medium' : 'high',
    low: Math.min(low, rate),
    high: Math.max(high, rate),
    ownDays,
    priorDays,
    ownShare: days > 0 ? ownDays / days : 0,
  };
}

/** The interval an entry is planned at (one day while boosted), or null before its first fetch. */
function plannedInterval(
  rate: number | null,
  weight: number,
  boostLeft: number,
  history: ChangeHistory,
  model: PlannerModel,
  scale: number | null,
  config: Pick<Config, 'DAYBOOK_MAX_STALENESS_DAYS'>,
): number | null {
  if (rate === null) return null;
  if (boostLeft > 0) return 1;
  return intervalDays(
    shortTermRate(rate, history, model),
    plannedWeight(weight, model, history),
    scale ?? Number.POSITIVE_INFINITY,
    Math.min(config.DAYBOOK_MAX_STALENESS_DAYS, model.tailDays),
  );
}

/** Why an entry stands where it does in the plan order. */
export function reasonOf(e: {
  planClass: PlanClass;
  priority: number;
  rate: number | null;
  boostLeft: number;
  /** How likely its last intervals showed a change of habits (`estimateShift`). */
  shift?: number;
  /** Its estimate is read through the watchlist's clusters of rates (src/plan/spread.ts), not its cohort's Gamma prior. */
  clustered?: boolean;
  intervalDays: number | null;
  history: ChangeHistory;
  model: PlannerModel;
  ageDays: number | null;
  maxStalenessDays: number;
}): string {
  const m = e.model;
  const head = `priority ${e.priority} first (higher priorities always before)`;
  if (e.planClass === 'never_fetched')
    return `${head}; never fetched: new entries come first within their priority`;
  if (e.planClass === 'owed')
    return `${head}; owed a refresh: ${e.ageDays} day(s) since the last, the staleness bound is ${e.maxStalenessDays}`;
  if (e.boostLeft > 0)
    return `${head}; due every cycle for ${e.boostLeft} more cycle(s) after a high-severity change (changes cluster in this watchlist: ×${m.hot.toFixed(2)})`;
  const parts: string[] = [];
  const apart = isApart(e.history, m);
  const others = m.outliers ?? 0;
  if (apart && e.history.all !== undefined) {
    const [n, c] = e.history.all;
    parts.push(
      `planned apart at its own rate: ${c.toFixed(0)} of its ${n.toFixed(0)} intervals ended changed${(e.history.datedEvents ?? 0) > 0 ? `, and the registry dated ${(e.history.datedEvents ?? 0).toFixed(0)} change(s) ${(e.history.datedDays ?? 0).toFixed(0)} quiet days in all before its fetches` : ''}, far more than the watchlist's rate says (${entryEvidence(e.history, m.apartRate ?? 0).toFixed(1)} nats of evidence, above ${(m.apartNats ?? 0).toFixed(1)}); it is one of ${others} such entries, and the rest are tested without them`,
    );
  } else if (m.equal >= 1)
    parts.push(
      others > 0
        ? `planned at the same interval as every other entry (round robin): without the ${others} entr${others === 1 ? 'y' : 'ies'} planned apart, which change far more often, the watchlist gives no clear evidence that its firms change at different rates`
        : 'planned at the same interval as every entry: the watchlist gives no clear evidence yet that its firms change at different rates (round robin)',
    );
  else if (e.rate !== null) {
    const vs = e.rate / Math.max(1e-9, m.rate);
    const trust = Math.min(1, Math.max(0, m.trust ?? 1));
    const why = [
      ...(m.equal > 0 ? ['the evidence that rates differ is not yet strong'] : []),
      ...(trust < 1
        ? [
            `the estimates' spread is trusted ${Math.round(trust * 100)}%: firms estimated quieter than the mean here changed more often, against the busier ones, than their estimates said (quiet firms that wake, habits that change)`,
          ]
        : []),
    ];
    const pull = equalOf(e.history, m);
    if (m.datesSplit)
      parts.push(
        "the watchlist's firms change at different rates: those whose first fetch found a recent approval in the registry have changed clearly more often since than the others, before their own intervals could show it",
      );
    if (e.clustered)
      parts.push(
        "the watchlist's firms change at rates in separate clusters (learned from every entry's intervals): its estimate is its mean over those clusters as its own intervals weigh them, not its cohort's single prior, which would put a firm it knows little of between them",
      );
    parts.push(
      `its estimate is ${vs >= 1 ? `${vs.toFixed(1)}×` : `1/${(1 / Math.max(vs, 1e-9)).toFixed(1)} of`} the watchlist's mean rate${pull > 0 ? `, pulled ${Math.round(pull * 100)}% toward the mean (${why.join('; ')})` : ''}`,
    );
  }
  const held = m.equal >= 1 && !apart;
  const wake = m.wake ?? 1;
  const wakes = !held && isWaking(e.history) && wake > 1 && wake > m.hot;
  if (wakes)
    parts.push(
      `it has just woken: its last refresh saw a change after ${SILENT_INTERVALS} quiet intervals, and firms here that leave a quiet spell go on changing: its rate counts ×${wake.toFixed(2)} for this interval`,
    );
  if ((e.shift ?? 0) >= 0.5)
    parts.push(
      `its last intervals do not fit its record: a change of its habits is ${Math.round((e.shift ?? 0) * 100)}% likely, and it is planned at what they show`,
    );
  if (!wakes && e.history.lastChanged && m.hot > 1 && !held)
    parts.push(
      `its last refresh saw a change, and changes cluster here: its rate counts ×${m.hot.toFixed(2)} for this interval`,
    );
  if (e.intervalDays !== null && e.intervalDays >= Math.min(e.maxStalenessDays, m.tailDays) - 1e-9)
    parts.push(
      e.intervalDays < e.maxStalenessDays
        ? `its interval is at the longest any entry waits (${e.intervalDays.toFixed(0)} days), which keeps the detection lag's tail near round robin's`
        : 'its interval is at the staleness bound',
    );
  return `${head}; ordered by due time: ${parts.join('; ') || 'its interval from its estimate'}`;
}

/** A watch entry as the plan reads it, and what the estimate keeps. */
type EntryRow = CandidateRow &
  Pick<
    DriverRow<typeof watchlist>,
    'active' | 'change_rate' | 'change_weight' | 'change_history' | 'change_cohort' | 'boost_left'
  >;

/** The entries `--pid` (a PID, a keyword or a watch id) names. */
export async function entriesNamed(sql: Sql, what: string): Promise<number[]> {
  const asId = /^\d+$/.test(what) ? Number(what) : null;
  const rows = await sql<Pick<DriverRow<typeof watchlist>, 'id'>[]>`
    select id from published.watch_entries
    where pid = ${what} or keyword = ${what} ${asId !== null && Number.isSafeInteger(asId) ? sql`or id = ${asId}` : sql``}
    order by active desc, priority desc, id`;
  return rows.map((r) => Number(r.id));
}

/**
 * Explains the plan of `cycle` for the given watch entries, or for the first `top` entries of the
 * plan order when `ids` is null.
 */
export async function explainPlan(
  sql: Sql,
  config: Config,
  now: () => Date,
  cycle: string,
  which: { ids: number[] } | { top: number },
): Promise<Explanation[]> {
  return inTransaction(
    sql,
    async (tx) => {
      const deps = { sql: tx, config, now };
      const { plan, input } = await decidePlan(deps, cycle);
      const order = new Map<number, number>();
      const decided = decisionsOf(plan);
      const walked = orderedIds(input.candidates, plan, config.DAYBOOK_MAX_STALENESS_DAYS);
      for (const [k, id] of walked.entries()) order.set(id, k + 1);
      const ids = 'ids' in which ? which.ids : walked.slice(0, which.top);
      const rows = ids.length
        ? await tx<EntryRow[]>`
          select id, keyword, priority, pid, active, last_refreshed_at, refreshed_cycle::text, last_outcome, last_cycle::text,
                 added_at, due_at, change_rate, change_weight, change_history, change_cohort, boost_left
          from published.watch_entries where id in ${tx(ids)}`
        : [];
      const byId = new Map(rows.map((r) => [Number(r.id), r]));
      const done = await fetchStatuses(tx, cycle, ids);
      const { scale, model } = await plannerState(tx);
      const out: Explanation[] = [];
      for (const id of ids) {
        const r = byId.get(id);
        if (!r) continue;
        const history = historyOf(r.change_history);
        const prior = await priorOf(tx, r.change_cohort, model);
        const readThrough = prior.spread !== undefined && hasIntervals(history);
        // Estimated once: the stored rate when there is one, and whether its last intervals show
        // a change of habits (for the reason).
        const estimate =
          r.last_refreshed_at === null ? null : estimateShift(history, prior, model.datedWeight, model.shift);
        const rate = estimate === null ? null : (r.change_rate ?? estimate.rate);
        const weight = r.change_weight ?? weightOf(history);
        const interval = plannedInterval(rate, weight, r.boost_left, history, model, scale, config);
        const planClass = planClassOf(candidateOf(r), cycle, config.DAYBOOK_MAX_STALENESS_DAYS);
        const age = r.refreshed_cycle === null ? null : Math.max(0, daysBetween(r.refreshed_cycle, cycle));
        const p = rate === null || age === null ? null : -Math.expm1(-rate * age);
        const candidate = candidateOf(r);
        let position = order.get(id);
        if (position === undefined) position = await positionOf(tx, candidate, input.candidates.length);
        const status = done.get(id);
        const decision: Decision = !r.active
          ? { kind: 'inactive' }
          : (decided.get(id) ??
            (status && status !== 'planned' && status !== 'deferred'
              ? { kind: 'done', status }
              : { kind: 'deferred', reason: plan.deferReason }));
        out.push({
          watchId: id,
          keyword: r.keyword,
          pid: r.pid,
          priority: r.priority,
          cycle,
          rate,
          changesPerMonth: rate === null ? null : rate * DAYS_PER_MONTH,
          observations: {
            intervals: history.n,
            changed: history.changes,
            days: history.days,
            datedChanges: history.datedEvents ?? 0,
            datedDays: history.datedDays ?? 0,
          },
          prior: {
            rate: prior.rate,
            strength: prior.strength,
            ...(prior.cohort ? { cohort: prior.cohort } : {}),
          },
          cohort: r.change_cohort,
          weight,
          boostLeft: r.boost_left,
          lastRefreshedAt: r.last_refreshed_at,
          refreshedCycle: r.refreshed_cycle,
          ageDays: age,
          changeProbability: p,
          expectedValue: p === null ? null : p * (r.change_weight ?? 1),
          scale,
          intervalDays: interval,
          dueAt: r.due_at,
          planClass,
          certainty: rate === null ? null : certaintyOf(history, prior, rate, model.datedWeight),
          reason: reasonOf({
            planClass,
            priority: r.priority,
            rate,
            shift: estimate?.shift ?? 0,
            clustered: readThrough,
            boostLeft: r.boost_left,
            intervalDays: interval,
            history,
            model,
            ageDays: age,
            maxStalenessDays: config.DAYBOOK_MAX_STALENESS_DAYS,
          }),
          apart: isApart(history, model),
          waking: isWaking(history),
          clustered: readThrough,
          model,
          position,
          capacity: plan.capacity.limit,
          decision,
        });
      }
      return out;
    },
    'isolation level repeatable read read only',
  );
}

/** What the plan decided for each entry it read. */
function decisionsOf(plan: Plan): Map<number, Decision> {
  const decided = new Map<number, Decision>();
  for (const e of plan.selected) decided.set(e.id, { kind: 'selected' });
  for (const d of plan.deferred) decided.set(d.entry.id, { kind: 'deferred', reason: d.reason });
  for (const s of plan.skipped)
    decided.set(s.entry.id, { kind: 'skipped', reason: s.reason, ...(s.detail ? { detail: s.detail } : {}) });
  return decided;
}

/** The status of each of `ids` in the cycle's fetches. */
async function fetchStatuses(sql: Sql, cycle: string, ids: readonly number[]): Promise<Map<number, string>> {
  const rows = await sql<Pick<DriverRow<typeof cycleFetches>, 'watch_id' | 'status'>[]>`
    select watch_id, status from published.cycle_claims where cycle = ${cycle} and watch_id in ${sql(ids.length ? [...ids] : [0])}`;
  return new Map(rows.map((r) => [Number(r.watch_id), r.status]));
}

/** The candidates in plan order. */
function orderedIds(candidates: readonly WatchCandidate[], plan: Plan, maxStalenessDays: number): number[] {
  const order = planOrder(candidates, plan.cycle, maxStalenessDays);
  return Array.from(order, (i) => (candidates[i] as WatchCandidate).id);
}

/** A count of rows: a computed shape. */
interface Count {
  n: number;
}

/**
 * Where an entry the plan did not read stands: 1 + the active entries before it in the order of
 * watchlist_due_order_idx (priority, due time, id; the owed ones of its priority aside).
 */
async function positionOf(tx: Sql, c: WatchCandidate, read: number): Promise<number> {
  const [r] =
    c.dueAt === null
      ? await tx<Count[]>`
          select count(*)::int as n from published.watch_entries where active and (priority > ${c.priority}
            or (priority = ${c.priority} and due_at is null and id < ${c.id}))`
      : await tx<Count[]>`
          select count(*)::int as n from published.watch_entries where active and (priority > ${c.priority}
            or (priority = ${c.priority} and (due_at is null or due_at < ${c.dueAt}
                or (due_at = ${c.dueAt} and id < ${c.id}))))`;
  return Math.max(read + 1, (r?.n ?? 0) + 1);
}
