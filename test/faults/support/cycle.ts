/**
 * One cycle as the fault tests run it: a database of its own, a simulator with a fixed world and
 * clock, a Redis prefix, the watch entries, and the read-backs the tests compare (the analytics
 * views without the columns that legitimately differ between two runs, the fetch statuses, the
 * ledger and the simulator's billing).
 */
import { randomBytes } from 'node:crypto';
import type postgres from 'postgres';
import { expect } from 'vitest';
import { Queues, redisConnection } from '../../../src/runtime/queues.ts';
import type { RunningSimulator } from '../../../src/sim/server.ts';
import { cycleOf } from '../../../src/time/cycles.ts';
import { keywordKey } from '../../../src/watch/keyword.ts';
import { freshDatabase, type TestDatabase } from '../../support/db.ts';
import { removeQueues } from '../../support/queues.ts';
import { startTestSim, TEST_KEY } from '../../support/sim.ts';

/** Jobs each worker of a fault cycle runs at once: the upstream calls a killed one may leave in flight. */
export const WORKER_CONCURRENCY = 4;

/** Every simulator of these tests: the same seed, world and clock, so two runs see the same answers. */
export const SIM_START = new Date('2026-11-20T04:00:00Z');

export interface FaultCycle {
  db: TestDatabase;
  sim: RunningSimulator;
  prefix: string;
  cycle: string;
  watchIds: number[];
  redisUrl: string;
  queues: Queues;
  /** The environment of a `daybook worker` child for this cycle. */
  env(extra?: Record<string, string>): Record<string, string>;
  /** Puts the cycle's plan on the queue, as the scheduler would. */
  enqueuePlan(): Promise<void>;
  close(): Promise<void>;
}

export async function startFaultCycle(options: {
  entries: number;
  redisUrl?: string;
  /** A Redis Cluster's seed nodes (REDIS_CLUSTER_NODES), instead of `redisUrl`. */
  clusterNodes?: string;
  env?: Record<string, string>;
  /** The simulator's enterprise requests per minute (default: no limit to speak of). */
  simRate?: number;
}): Promise<FaultCycle> {
  const db = await freshDatabase();
  const sim = await startTestSim({
    enterprises: 1000,
    startAt: SIM_START,
    rateLimits: { 'enterprise-search': options.simRate ?? 100_000, 'product-listing': 100_000 },
  });
  const prefix = `dbf-${randomBytes(4).toString('hex')}`;
  const names = sim.sim
    .world()
    .all()
    .slice(0, options.entries)
    .map((e) => e.ENTNAME);
  const rows = names.map((keyword) => ({ keyword, keyword_key: keywordKey(keyword) }));
  const ids = await db.sql<{ id: string }[]>`insert into watchlist ${db.sql(rows)} returning id`;
  const redisUrl = options.redisUrl ?? 'redis://127.0.0.1:6379';
  const target = { REDIS_URL: redisUrl, REDIS_CLUSTER_NODES: options.clusterNodes };
  const redis = redisConnection(target);
  // The test's own connection reconnects by itself when a test stops Redis: no noise meanwhile.
  redis.on('error', () => {});
  const queues = new Queues(redis, prefix);
  for (const q of queues.all()) q.on('error', () => {});
  const cycle = cycleOf(sim.sim.now());
  return {
    db,
    sim,
    prefix,
    cycle,
    redisUrl,
    queues,
    watchIds: ids.map((r) => Number(r.id)),
    env(extra = {}) {
      return {
        DATABASE_URL: db.url,
        REDIS_URL: redisUrl,
        ...(options.clusterNodes ? { REDIS_CLUSTER_NODES: options.clusterNodes } : {}),
        DAYBOOK_REDIS_PREFIX: prefix,
        DAYBOOK_API_BASE_URL: sim.url,
        DAYBOOK_API_KEY: TEST_KEY,
        DAYBOOK_ENTERPRISE_RATE: '6000',
        DAYBOOK_CREDIT_BUDGET: '100000',
        DAYBOOK_HTTP_TIMEOUT_MS: '5000',
        DAYBOOK_WORKER_CONCURRENCY: String(WORKER_CONCURRENCY),
        LOG_LEVEL: 'info',
        ...options.env,
        ...extra,
      };
    },
    async enqueuePlan() {
      await queues.addPlan({ cycle });
    },
    async close() {
      await removeQueues(queues, prefix, options.clusterNodes ? undefined : redis);
      redis.disconnect();
      await sim.close();
      await db.drop();
    },
  };
}

/** Watch entries of the cycle by fetch status. */
export async function statuses(sql: postgres.Sql, cycle: string): Promise<Record<string, number>> {
  const rows = await sql<{ status: string; n: number }[]>`
    select status, count(*)::int as n from cycle_fetches where cycle = ${cycle} group by status`;
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

/** True when every watch entry has a row for the cycle and none is still pending. */
export async function settled(sql: postgres.Sql, cycle: string, entries: number): Promise<boolean> {
  const [r] = await sql<{ all: number; pending: number }[]>`
    select count(*)::int as all,
           count(*) filter (where status in ('planned', 'fetching', 'retrying'))::int as pending
    from cycle_fetches where cycle = ${cycle}`;
  return r !== undefined && r.all === entries && r.pending === 0;
}

/** The booked ledger of the cycle: billed queries and credits. */
export async function ledgerOf(sql: postgres.Sql, cycle: string): Promise<{ n: number; credits: number }> {
  const [r] = await sql<{ n: number; credits: number }[]>`
    select count(*)::int as n, coalesce(sum(credits), 0)::int as credits from credit_ledger
    where cycle = ${cycle} and status = 'booked'`;
  return r ?? { n: 0, credits: 0 };
}

export interface LedgerCheck {
  booked: { n: number; credits: number };
  presumed: { n: number; credits: number };
  /** Calls sent and never answered (a timeout, a reset): they may have been billed. */
  unconfirmed: { n: number; credits: number };
  billed: { n: number; credits: number };
}

/**
 * The ledger of the cycle against what the simulator billed (the test's simulator serves one
 * cycle): every billed credit is booked, or presumed for a call whose process died after sending
 * it, or unconfirmed for a call sent and never answered; nothing is booked that was not billed;
 * the budget spent is the ledger. `maxPresumed`: calls the test may have cut off (one per kill);
 * 0 means the booked ledger equals the billing exactly.
 */
export async function expectLedgerMatchesBilling(
  sql: postgres.Sql,
  cycle: string,
  sim: RunningSimulator,
  maxPresumed = 0,
): Promise<LedgerCheck> {
  // Unpriced product calls (credits null) are left out: the simulator bills product calls nothing
  // unless given a cost, and then they are priced (test/faults/products-billed.test.ts).
  const rows = await sql<{ status: string; n: number; credits: number }[]>`
    select status, count(*)::int as n, coalesce(sum(credits), 0)::int as credits from credit_ledger
    where cycle = ${cycle} and credits is not null group by status`;
  const of = (status: string) => {
    const r = rows.find((x) => x.status === status);
    return { n: r?.n ?? 0, credits: r?.credits ?? 0 };
  };
  const check: LedgerCheck = {
    booked: of('booked'),
    presumed: of('presumed'),
    unconfirmed: of('unconfirmed'),
    billed: { n: sim.sim.counters.billedQueries, credits: sim.sim.counters.creditsBilled },
  };
  expect(check.booked.credits, 'booked credits were all billed').toBeLessThanOrEqual(check.billed.credits);
  expect(check.booked.n).toBeLessThanOrEqual(check.billed.n);
  expect(
    check.booked.credits + check.presumed.credits + check.unconfirmed.credits,
    'billed credits are all booked, presumed or unconfirmed',
  ).toBeGreaterThanOrEqual(check.billed.credits);
  expect(check.presumed.n).toBeLessThanOrEqual(maxPresumed);
  if (maxPresumed === 0) expect(check.booked).toEqual(check.billed);
  const [budget] = await sql<{ spent: number; reserved: number }[]>`
    select spent, reserved from cycle_budgets where cycle = ${cycle}`;
  expect(budget).toEqual({
    spent: check.booked.credits + check.presumed.credits + check.unconfirmed.credits,
    reserved: 0,
  });
  return check;
}

/**
 * The analytics views, each with the columns that legitimately differ between two runs of the
 * same cycle left out: surrogate ids, raw response ids, and wall-clock times.
 */
const VIEWS: { view: string; omit: string[]; order: string }[] = [
  {
    view: 'enterprise_current',
    omit: ['version_valid_from', 'first_seen_at', 'last_seen_at', 'raw_response_id'],
    order: 'pid',
  },
  {
    view: 'enterprise_history',
    omit: ['valid_from', 'valid_to', 'raw_response_id'],
    order: 'pid, version',
  },
  {
    view: 'enterprise_changes',
    omit: ['change_id', 'detected_at', 'raw_response_id'],
    order: 'pid, cycle, category, field, kind, before, after',
  },
  {
    view: 'enterprise_events',
    omit: ['event_id', 'observed_at', 'raw_response_id'],
    order: 'pid, kind, cycle, keyword',
  },
  // Presumed credits differ when a process died mid-call, unconfirmed ones when a call timed out
  // on a loaded machine; expectLedgerMatchesBilling checks them.
  {
    view: 'credit_usage',
    omit: [
      'first_billed_at',
      'last_billed_at',
      'credits',
      'presumed_credits',
      'presumed_queries',
      'unconfirmed_credits',
      'unconfirmed_queries',
    ],
    order: 'cycle, operation',
  },
];

export type Snapshot = Record<string, Record<string, unknown>[]>;

export async function analyticsSnapshot(sql: postgres.Sql): Promise<Snapshot> {
  const out: Snapshot = {};
  for (const { view, omit, order } of VIEWS) {
    const rows = await sql.unsafe(`select * from analytics.${view} order by ${order}`);
    out[view] = rows.map((row) => Object.fromEntries(Object.entries(row).filter(([k]) => !omit.includes(k))));
  }
  // The outbox: the same events, none lost or doubled, in the same order per company. Event ids
  // are random, so the digest's links to them are left out.
  out.events = [
    ...(await sql`
      select type, severity, pid, name, company_sequence, cycle::text as cycle, effective_date::text as effective_date,
             case when type = 'digest.daily' then jsonb_set(data, '{companies}', (
               select coalesce(jsonb_agg(jsonb_set(c, '{changes}', (
                 select coalesce(jsonb_agg(x - 'event_id'), '[]'::jsonb) from jsonb_array_elements(c->'changes') x))), '[]'::jsonb)
               from jsonb_array_elements(data->'companies') c))
             -- Credits differ when a killed process left a call presumed billed (checked by the ledger test).
             when type = 'cycle.completed' then data - 'credits'
             else data end as data
      from analytics.events order by pid nulls first, company_sequence, type, cycle`),
  ];
  // Runs are a log of executions: a crash adds runs that never finished. What each job finally
  // did must be the same.
  out.runs = [
    ...(await sql`
      select kind, cycle, list_date, entity, outcome, credits from analytics.runs
      where outcome = 'succeeded' order by kind, entity`),
  ];
  return out;
}

/**
 * Where two snapshots differ, view by view: the rows one has more of than the other (compared as
 * JSON, at most `most` per view), so that a failing run says what was lost or doubled.
 */
export function snapshotDiff(expected: Snapshot, actual: Snapshot, most = 5): string[] {
  const out: string[] = [];
  for (const view of new Set([...Object.keys(expected), ...Object.keys(actual)])) {
    const left = new Map<string, number>();
    for (const row of expected[view] ?? []) {
      const k = JSON.stringify(row);
      left.set(k, (left.get(k) ?? 0) + 1);
    }
    const extra: string[] = [];
    for (const row of actual[view] ?? []) {
      const k = JSON.stringify(row);
      const n = left.get(k) ?? 0;
      if (n > 0) left.set(k, n - 1);
      else extra.push(k);
    }
    const missing = [...left].flatMap(([k, n]) => Array.from({ length: n }, () => k));
    for (const k of extra.slice(0, most)) out.push(`${view}: extra ${k.slice(0, 400)}`);
    for (const k of missing.slice(0, most)) out.push(`${view}: missing ${k.slice(0, 400)}`);
  }
  return out;
}

/** One line docs/faults.md can quote, printed by each test. */
export function figures(test: string, values: Record<string, string | number>): void {
  console.log(
    `[faults] ${test}: ${Object.entries(values)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
  );
}
