/**
 * The operator's gauges on /metrics, the ones the alert rules (ops/prometheus/) and the dashboard
 * (ops/grafana/) are built on: where the latest cycle stands against its deadline and its credit
 * budget, and why it is paused, its credits confirmed and unconfirmed; the shared rate limiter;
 * the last export of each destination; failing webhook endpoints; the workers listening on each
 * queue. Like the other gauges they are read when scraped, from a few rows found by an index (the
 * latest cycle's budget row, claims and ledger rows, the rate limiter's rows, the export ledger's
 * latest rows) and from Redis; nothing is scanned.
 */
import type postgres from 'postgres';
import type { Registry } from 'prom-client';
import { failingSubscriptions } from '../delivery/store.ts';
import { cycleCompletedAt } from '../events/digest.ts';
import { lastExportedAt } from '../export/package.ts';
import { type LedgerCredits, latestBudget, ledgerCredits } from '../purchase/credits.ts';
import { claimCounts, FETCH_STATUSES } from '../purchase/fetches.ts';
import { limiterState } from '../purchase/limiter.ts';
import { addDays, cycleStart } from '../time/cycles.ts';
import { gaugesOn, type SetSeries } from './gauges.ts';
import { QUEUE_NAMES, type QueueKind, type Queues } from './queues.ts';

/** The states of a cycle's claim (cycle_fetches), each reported, 0 included. */
export const CLAIM_STATES = FETCH_STATUSES;

/** Why a cycle is paused, as `daybook_cycle_paused{cause}` says. */
export const PAUSE_CAUSES = ['credits', 'refusing', 'retry_after', 'other'] as const;
export type PauseCause = (typeof PAUSE_CAUSES)[number];

/**
 * The cause of a pause, read from the reason the pausing step wrote: `insufficient_credits` (the
 * account has no credits), the upstream refusing call after call (a daily cap), or asking to wait
 * longer than daybook waits (Retry-After). Anything else (a reason written by an older version)
 * is `other`.
 */
export function pauseCause(reason: string | null): PauseCause {
  const r = reason ?? '';
  if (r.startsWith('insufficient_credits')) return 'credits';
  if (/refused \d+ calls in a row/.test(r)) return 'refusing';
  if (r.includes('Retry-After')) return 'retry_after';
  return 'other';
}

/** When a cycle should be complete: the next cycle's 03:00 Beijing refresh, which plans over it. */
export function cycleDeadline(cycle: string): Date {
  return cycleStart(addDays(cycle, 1));
}

export interface OperatorMetricsOptions {
  /** The configured calls per minute of each upstream operation (DAYBOOK_ENTERPRISE_RATE …). */
  rateLimits?: Readonly<Record<string, number>>;
}

interface CycleState {
  cycle: string;
  budget: number;
  reserved: number;
  spent: number;
  paused: boolean;
  pausedReason: string | null;
  entries: Map<string, number>;
  completedAt: Date | null;
  /** The cycle's ledger: confirmed and unconfirmed credits, unpriced product calls. */
  ledger: LedgerCredits;
}

/** The latest cycle (the newest budget row, made by its plan): budget, claims, completion. */
async function readLatestCycle(sql: postgres.Sql): Promise<CycleState | null> {
  const b = await latestBudget(sql);
  if (!b) return null;
  // One cycle's claims, by the (cycle, status) index: as many rows as the cycle planned.
  const claims = await claimCounts(sql, b.cycle);
  return {
    cycle: b.cycle,
    budget: b.budget,
    reserved: b.reserved,
    spent: b.spent,
    paused: b.paused,
    pausedReason: b.paused_reason,
    entries: new Map(claims.map((c) => [c.status, c.n])),
    completedAt: await cycleCompletedAt(sql, b.cycle),
    // One cycle's ledger rows, by the (cycle, …) index: one per call the cycle made.
    ledger: await ledgerCredits(sql, b.cycle),
  };
}

/**
 * The latest cycle read once per scrape: prom-client collects each gauge on its own, and the
 * cycle gauges must agree with one another.
 */
function sharedRead<T>(read: () => Promise<T>, ttlMs = 1000): () => Promise<T> {
  let last: { at: number; value: Promise<T> } | null = null;
  return () => {
    const now = Date.now();
    if (!last || now - last.at > ttlMs) {
      const value = read();
      last = { at: now, value };
      // A failed read is not reused: the next scrape asks again.
      value.catch(() => {
        last = null;
      });
    }
    return last.value;
  };
}

const seconds = (d: Date) => d.getTime() / 1000;

/**
 * The latest cycle: when it started and must end, its claims, credits, pause and completion.
 * Every series carries the cycle's date in `cycle`, and has no sample before the first plan (a
 * gauge without labels would read 0 then, and 0 is a time long past).
 */
function registerCycleGauges(registry: Registry, sql: postgres.Sql): void {
  const latest = sharedRead(() => readLatestCycle(sql));
  const registered = gaugesOn(registry);
  const gauge = (
    name: string,
    help: string,
    labelNames: string[],
    put: (set: SetSeries, c: CycleState) => void,
  ) =>
    registered(name, help, ['cycle', ...labelNames], async (set) => {
      const c = await latest();
      if (c) put((labels, value) => set({ cycle: c.cycle, ...labels }, value), c);
    });
  gauge(
    'daybook_cycle_start_timestamp_seconds',
    'When the latest cycle began: the 03:00 Beijing refresh of its date (Unix time).',
    [],
    (set, c) => set({}, seconds(cycleStart(c.cycle))),
  );
  gauge(
    'daybook_cycle_deadline_timestamp_seconds',
    'When the latest cycle should be complete: the next cycle’s 03:00 Beijing refresh (Unix time).',
    [],
    (set, c) => set({}, seconds(cycleDeadline(c.cycle))),
  );
  gauge(
    'daybook_cycle_completed',
    'Whether the latest cycle is complete (its cycle.completed event is written): 1 or 0.',
    [],
    (set, c) => set({}, c.completedAt ? 1 : 0),
  );
  gauge(
    'daybook_cycle_completed_timestamp_seconds',
    'When the latest cycle completed (Unix time); no sample while it is not complete.',
    [],
    (set, c) => {
      if (c.completedAt) set({}, seconds(c.completedAt));
    },
  );
  gauge(
    'daybook_cycle_entries',
    'Watch entries of the latest cycle by claim status (cycle_fetches); entries the plan did not reach have no claim and are not counted.',
    ['status'],
    (set, c) => {
      for (const status of CLAIM_STATES) set({ status }, c.entries.get(status) ?? 0);
    },
  );
  gauge(
    'daybook_cycle_paused',
    'Whether enterprise work of the latest cycle is paused, by cause: credits (insufficient_credits), refusing (the upstream refused call after call), retry_after (asked to wait too long), other.',
    ['cause'],
    (set, c) => {
      const cause = c.paused ? pauseCause(c.pausedReason) : null;
      for (const k of PAUSE_CAUSES) set({ cause: k }, k === cause ? 1 : 0);
    },
  );
  gauge(
    'daybook_cycle_credits',
    'Credits of the latest cycle: its budget, spent (billed) and reserved (calls in flight).',
    ['kind'],
    (set, c) => {
      set({ kind: 'budget' }, c.budget);
      set({ kind: 'spent' }, c.spent);
      set({ kind: 'reserved' }, c.reserved);
    },
  );
  gauge(
    'daybook_cycle_credits_confirmed',
    'Credits of the latest cycle the upstream answered and billed (ledger status booked).',
    [],
    (set, c) => set({}, c.ledger.confirmed),
  );
  gauge(
    'daybook_cycle_credits_unconfirmed',
    'Credits of the latest cycle counted as spent that no answer confirmed, as they may have been billed: calls sent and never answered (ledger status unconfirmed) and calls cut off by a process that died (presumed).',
    [],
    (set, c) => set({}, c.ledger.unconfirmed),
  );
  gauge(
    'daybook_cycle_calls_unconfirmed',
    'Calls of the latest cycle behind daybook_cycle_credits_unconfirmed (ledger status unconfirmed or presumed).',
    [],
    (set, c) => set({}, c.ledger.unconfirmedCalls),
  );
  gauge(
    'daybook_cycle_product_calls_unpriced',
    'Product calls of the latest cycle booked without an amount (no documented price): counted here, in no credit sum.',
    [],
    (set, c) => set({}, c.ledger.unpricedCalls),
  );
  gauge(
    'daybook_cycle_credits_left',
    'Credits of the latest cycle’s budget neither spent nor reserved.',
    [],
    (set, c) => set({}, c.budget - c.spent - c.reserved),
  );
}

/** The shared rate limiter (rate_limits, one row per operation): use, limit, refusals, block. */
function registerRateGauges(registry: Registry, sql: postgres.Sql, options: OperatorMetricsOptions): void {
  const gauge = gaugesOn(registry);
  const rows = sharedRead(() => limiterState(sql));
  const perRow = (
    name: string,
    help: string,
    value: (r: Awaited<ReturnType<typeof rows>>[number]) => number,
  ) =>
    gauge(name, help, ['operation'], async (set) => {
      for (const r of await rows()) set({ operation: r.operation }, value(r));
    });
  perRow(
    'daybook_rate_limit_calls_last_minute',
    'Upstream calls admitted by the shared rate limiter in the last 60 seconds, by operation.',
    (r) => r.calls,
  );
  perRow(
    'daybook_rate_limit_refusals_in_a_row',
    'Rate-limit refusals in a row, by any process, by operation; an answer resets it, 30 pause the cycle.',
    (r) => r.refusals,
  );
  perRow(
    'daybook_rate_limit_blocked_seconds',
    'Seconds until the operation may call again after a refusal (0: not blocked).',
    (r) => r.blocked,
  );
  gauge(
    'daybook_rate_limit_per_minute',
    'The configured calls per minute of each upstream operation (DAYBOOK_ENTERPRISE_RATE, DAYBOOK_PRODUCT_RATE).',
    ['operation'],
    (set) => {
      for (const [operation, limit] of Object.entries(options.rateLimits ?? {})) set({ operation }, limit);
    },
  );
}

/** Exports, webhook endpoints failing, and the workers listening on each queue. */
function registerOutputGauges(registry: Registry, sql: postgres.Sql, queues: Queues): void {
  const gauge = gaugesOn(registry);
  gauge(
    'daybook_export_last_timestamp_seconds',
    'When the latest complete export package of each destination folder was finished (Unix time).',
    ['destination'],
    async (set) => {
      for (const r of await lastExportedAt(sql)) set({ destination: r.destination }, r.at);
    },
  );
  // Subscriptions are few (one per endpoint), the failing ones fewer.
  const failing = sharedRead(() => failingSubscriptions(sql));
  gauge(
    'daybook_webhook_failing_endpoints',
    'Active webhook, chat and mail subscriptions whose latest delivery attempt failed.',
    [],
    async (set) => {
      set({}, (await failing()).length);
    },
  );
  gauge(
    'daybook_webhook_failing_since_timestamp_seconds',
    'Since when each failing active subscription (by its id in `daybook subscribe list`) has failed every attempt (Unix time).',
    ['subscription'],
    async (set) => {
      for (const r of await failing()) set({ subscription: r.id }, r.since);
    },
  );
  gauge(
    'daybook_workers',
    'Worker connections listening on each BullMQ queue, by queue (from Redis CLIENT LIST).',
    ['queue'],
    async (set) => {
      for (const queue of Object.keys(QUEUE_NAMES) as QueueKind[])
        set({ queue }, await queues[queue].getWorkersCount());
    },
  );
}

/** Registers the operator's gauges on `registry` (see the module's comment). */
export function registerOperatorGauges(
  registry: Registry,
  sql: postgres.Sql,
  queues: Queues,
  options: OperatorMetricsOptions = {},
): void {
  registerCycleGauges(registry, sql);
  registerRateGauges(registry, sql, options);
  registerOutputGauges(registry, sql, queues);
}
