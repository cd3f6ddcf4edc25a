/**
 * `npm run bench -- soak`: what a large watchlist costs over time. 20,000 watched firms of the
 * simulator's world (heterogeneous change rates, the default daily change share) go through 30
 * daily cycles (DAYBOOK_SOAK_FIRMS and DAYBOOK_SOAK_CYCLES change that; the target size is
 * 100,000, which takes 20 to 35 minutes on two cores, over the 15 the bench may take; 50,000
 * took 11.7 minutes on one day and 18.1 on another, 30,000 took 16.9 on a third), through the real
 * plan job, the real landing (`landRaw`), the real normalization and history path
 * (`applyEnterprises`, events included) and the real planner bookkeeping (`noteRefreshes`). After
 * each cycle: the database's size, table by table.
 *
 * The direct path (documented in docs/benchmarks.md, Soak): a worker buys one enterprise per job, with a dozen
 * statements around its one upstream call; 3,000,000 jobs that way take hours on two cores. Here
 * each batch of 1,000 planned entries is bought at once, by the same statements made set-based:
 * the claim (`cycle_fetches` fetching, fenced, a call noted), a run per entry, the reservation
 * and settlement of the credits (`cycle_budgets`), the answers the simulator would send (built by
 * its own code, without HTTP), landed by `landRaw`, a ledger row per call, the history, the fetch
 * completed, the watch entry's refresh noted, the runs finished. The rows are those a worker
 * writes; the fewer intermediate row versions a batch leaves are reclaimed by vacuum in a real
 * deployment anyway (each cycle ends with a plain VACUUM here, as autovacuum would run between
 * two daily cycles).
 *
 * Figures: bytes per enterprise-day, split into unchanged (what every fetch adds) and changed (what
 * a change adds on top), from the growth of each table; the timings of the queries a person and a
 * scrape run (/metrics, `status`, `changes`…) on the final database; wall time per cycle; a
 * projection to one year. The same soak runs on a copy of today's landing (each call row with its
 * own body, as before raw_bodies) for the ratio, at a tenth of the firms
 * (DAYBOOK_SOAK_BASELINE_FIRMS) to fit the machine's time.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { processPlan } from '../jobs/plan.ts';
import { loadConfig } from '../src/config/config.ts';
import type { Sql } from '../src/db/connect.ts';
import { applyEnterprises, type EnterpriseObservation } from '../src/history/enterprise-store.ts';
import { type LandingRow, landRaw } from '../src/landing/landing.ts';
import { createLogger } from '../src/log/log.ts';
import { cohortKey } from '../src/normalize/cohort.ts';
import { normalizeEnterprise } from '../src/normalize/enterprise.ts';
import { noteRefreshes } from '../src/plan/store.ts';
import { metricsRegistry } from '../src/runtime/admin.ts';
import { Queues, redisConnection } from '../src/runtime/queues.ts';
import { EnterpriseWorld, type WorldChange } from '../src/sim/enterprises.ts';
import { ENTERPRISE_REMARK, enterpriseAnswer } from '../src/sim/server.ts';
import { addDays, cycleStart } from '../src/time/cycles.ts';
import { keywordKey } from '../src/watch/keyword.ts';
import { type BenchDatabase, freshDatabase, REDIS_URL, round, since } from './support.ts';

const envInt = (name: string, fallback: number) => {
  const v = process.env[name];
  return v && /^\d+$/.test(v) ? Number(v) : fallback;
};

// Scaled down from the 100,000-firm target to fit 15 minutes on two cores (about 0.4 ms per
// fetch on a good day, 0.9 on a slow one): the bytes per enterprise-day do not depend on the
// watchlist's size.
const FIRMS = envInt('DAYBOOK_SOAK_FIRMS', 20_000);
const CYCLES = envInt('DAYBOOK_SOAK_CYCLES', 30);
const BASELINE_FIRMS = envInt('DAYBOOK_SOAK_BASELINE_FIRMS', Math.max(1, Math.round(FIRMS / 10)));
const BATCH = 1000;
const LANES = 2;
const FIRST_CYCLE = '2026-03-01';
const CREDITS = 3;
const BIN = fileURLToPath(new URL('../bin/daybook.js', import.meta.url));

/** Tables that grow only when something changed (a new body, a version and its children, changes, events). */
const PER_CHANGE = new Set([
  'raw_bodies',
  'enterprise_versions',
  'enterprise_persons',
  'enterprise_shareholders',
  'enterprise_clearing_members',
  'enterprise_changes',
  'enterprise_observations',
  'events',
  'delivery_queue',
]);

export interface CycleFigures {
  cycle: string;
  fetches: number;
  changed: number;
  seconds: number;
  planMs: number;
  databaseBytes: number;
}

export interface SoakRun {
  landing: 'deduplicated' | 'baseline';
  firms: number;
  cycles: number;
  cyclesRun: CycleFigures[];
  /**
   * The window measured: from the end of cycle `from` to the end of the last. Once the
   * bookkeeping window (DAYBOOK_BOOKKEEPING_DAYS) is full, compaction keeps it level, so the
   * window starts there when the soak is long enough (the steady state a year is made of);
   * else after the first cycle (every firm's first answer).
   */
  window: { from: string; to: string; steady: boolean };
  growthBytes: number;
  fetches: number;
  changedFetches: number;
  /** Bytes per unchanged enterprise-day: the per-fetch tables' growth over every fetch. */
  unchangedBytesPerDay: number;
  /** Bytes a changed enterprise-day adds on top (per-change tables' growth over changed fetches). */
  changedExtraBytesPerDay: number;
  /** Bytes per enterprise-day of either kind, all tables. */
  bytesPerDay: number;
  byTable: { table: string; bytesPerFetch: number; perChange: boolean }[];
  /**
   * The per-fetch tables split by relation: each table's heap (with its TOAST) and each of its
   * indexes, bytes per fetch over the window (the per-change tables are left out).
   */
  byRelation: { relation: string; table: string; bytesPerFetch: number }[];
  finalBytes: number;
  meanCycleSeconds: number;
}

export interface QueryTiming {
  query: string;
  ms: number;
  boundMs: number;
  met: boolean;
  /** What else the reader needs to read the figure. */
  note?: string;
}

export interface SoakResult {
  firms: number;
  cycles: number;
  run: SoakRun;
  baseline: SoakRun;
  /** Baseline bytes per unchanged enterprise-day over the deduplicated landing's. */
  ratio: number;
  queries: QueryTiming[];
  projection: { enterpriseDays: number; bytes: number; baselineBytes: number };
  target: string;
  met: boolean;
}

/** The body the simulator sends for `e`, as text. */
function answerOf(e: ReturnType<EnterpriseWorld['all']>[number]): string {
  return JSON.stringify(enterpriseAnswer(e, CREDITS));
}

async function sizes(sql: Sql): Promise<Map<string, number>> {
  const rows = await sql<{ table: string; bytes: string }[]>`
    select c.relname as table, pg_total_relation_size(c.oid)::text as bytes
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'public' and c.relkind in ('r', 'p')`;
  return new Map(rows.map((r) => [r.table, Number(r.bytes)]));
}

/** Each public table's heap (TOAST included) and each index, in bytes, keyed `table` / `table.index`. */
async function relationSizes(sql: Sql): Promise<Map<string, number>> {
  const rows = await sql<{ relation: string; bytes: string }[]>`
    select c.relname as relation, pg_table_size(c.oid)::text as bytes
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'public' and c.relkind in ('r', 'p')
    union all
    select t.relname || '.' || i.relname, pg_relation_size(i.oid)::text
    from pg_index x join pg_class i on i.oid = x.indexrelid join pg_class t on t.oid = x.indrelid
    join pg_namespace n on n.oid = t.relnamespace
    where n.nspname = 'public'`;
  return new Map(rows.map((r) => [r.relation, Number(r.bytes)]));
}

/**
 * Turns the database into the landing as it was before raw_bodies: the body (and the parameters)
 * on every call row with its indexes, and no compaction (DAYBOOK_BOOKKEEPING_DAYS=0).
 */
async function asBaseline(sql: Sql): Promise<void> {
  await sql.unsafe(`
    alter table raw_responses add column body_json jsonb, add column body_text text, add column body_bytes bytea,
      add column sha256 text, add column params jsonb, alter column params_id drop not null;
    drop index if exists raw_responses_landed_idx;
    create index raw_responses_op_fetched_idx on raw_responses (operation, fetched_at);
    create index raw_responses_run_idx on raw_responses (run_id)`);
}

/** Today's landing of a batch: one row per call, with its body. */
async function landBaseline(
  sql: Sql,
  rows: readonly LandingRow[],
): Promise<{ id: number; landedAt: Date }[]> {
  const landed = await sql<{ id: string; landed_at: Date }[]>`
    insert into raw_responses (run_id, cycle, operation, params, http_status, body_json, sha256, outcome, fetched_at, duration_ms)
    select run_id, cycle, 'enterprise-search', params::jsonb, 200, body::jsonb, sha, 'success', fetched_at, 150
    from unnest(${rows.map((r) => r.runId)}::bigint[], ${rows.map((r) => r.cycle)}::date[],
                ${rows.map((r) => JSON.stringify(r.params))}::text[], ${rows.map((r) => r.bodyText)}::text[],
                ${rows.map((r) =>
                  createHash('sha256')
                    .update(r.bodyText ?? '')
                    .digest('hex'),
                )}::text[],
                ${rows.map((r) => r.fetchedAt.toISOString())}::timestamptz[]) with ordinality
           as u(run_id, cycle, params, body, sha, fetched_at, n)
    order by n returning id, landed_at`;
  return landed.map((l) => ({ id: Number(l.id), landedAt: l.landed_at })).sort((a, b) => a.id - b.id);
}

interface Entry {
  watchId: number;
  keyword: string;
  pid: string;
}

/** Buys one batch of planned entries the way a worker buys each (see the header). */
async function buyBatch(
  db: BenchDatabase,
  world: EnterpriseWorld,
  cycle: string,
  batch: readonly Entry[],
  changes: Map<string, WorldChange>,
  baseline: boolean,
  lane: number,
): Promise<void> {
  const ids = batch.map((e) => e.watchId);
  const n = batch.length;
  await db.sql.begin(async (tx) => {
    await tx`
      update cycle_fetches set status = 'fetching', holder = ${`soak:${process.pid}:${lane}`},
        lease_until = now() + interval '5 minutes', fence = fence + 1, attempts = attempts + 1,
        call_fence = fence + 1, call_started_at = now(), credits_reserved = ${CREDITS}, updated_at = now()
      where cycle = ${cycle} and watch_id = any(${ids}::bigint[])`;
    await tx`update cycle_budgets set reserved = reserved + ${CREDITS * n} where cycle = ${cycle}`;
    const runs = await tx<{ id: string }[]>`
      insert into runs (kind, cycle, entity, job_id)
      select 'enterprise', ${cycle}, k, 'enterprise:' || ${cycle} || ':' || w || ':0'
      from unnest(${batch.map((e) => e.keyword)}::text[], ${ids}::bigint[]) with ordinality as u(k, w, i)
      order by i returning id`;
    const runIds = runs.map((r) => Number(r.id)).sort((a, b) => a - b);
    const fetchedAt = new Date();
    const records = batch.map((e) => world.byPid(e.pid) as ReturnType<EnterpriseWorld['all']>[number]);
    const rows: LandingRow[] = batch.map((e, i) => ({
      runId: runIds[i] ?? null,
      cycle,
      operation: 'enterprise-search',
      params: { ent_name: e.keyword },
      httpStatus: 200,
      bodyText: answerOf(records[i] as ReturnType<EnterpriseWorld['all']>[number]),
      outcome: 'success',
      fetchedAt,
      durationMs: 150,
    }));
    const landed = baseline ? await landBaseline(tx, rows) : await landRaw(tx, rows);
    await tx`
      insert into ledger_entries (cycle, subject_id, credits, run_id, raw_response_id, billed_at, status, watch_id,
                                  call_fence)
      select ${cycle}, daybook_ledger_subject('enterprise-search', p, k, ${ENTERPRISE_REMARK}), ${CREDITS}, r, raw, l,
             'booked', w,
             (select fence from cycle_fetches where cycle = ${cycle} and watch_id = w)
      from unnest(${batch.map((e) => e.pid)}::text[], ${batch.map((e) => e.keyword)}::text[], ${runIds}::bigint[],
                  ${landed.map((l) => l.id)}::bigint[], ${landed.map((l) => l.landedAt.toISOString())}::timestamptz[],
                  ${ids}::bigint[]) as u(p, k, r, raw, l, w)`;
    await tx`update cycle_budgets set reserved = reserved - ${CREDITS * n}, spent = spent + ${CREDITS * n}
             where cycle = ${cycle}`;
    const observations: EnterpriseObservation[] = batch.map((e, i) => ({
      normalized: normalizeEnterprise(records[i] as never),
      fetchedAt: (landed[i] as { landedAt: Date }).landedAt,
      rawResponseId: (landed[i] as { id: number }).id,
      cycle,
      keyword: e.keyword,
    }));
    await applyEnterprises(tx, observations);
    await tx`
      update cycle_fetches f set status = 'succeeded', pid = u.p, raw_response_id = u.raw, holder = null,
        lease_until = null, call_fence = null, call_started_at = null, credits_reserved = 0,
        credits_billed = credits_billed + ${CREDITS}, error_code = null, error_message = null, updated_at = now()
      from unnest(${ids}::bigint[], ${batch.map((e) => e.pid)}::text[], ${landed.map((l) => l.id)}::bigint[]) as u(w, p, raw)
      where f.cycle = ${cycle} and f.watch_id = u.w`;
    await noteRefreshes(
      tx,
      cycle,
      batch.map((e, i) => {
        const c = changes.get(e.pid);
        const normalized = observations[i]?.normalized as EnterpriseObservation['normalized'];
        return {
          watchId: e.watchId,
          seen: {
            refreshedAt: (landed[i] as { landedAt: Date }).landedAt,
            changed: c !== undefined,
            severity: c?.severity ?? null,
            cohort: cohortKey(normalized),
            usable: true,
            approval: normalized.apprDate,
            established: normalized.esDate,
          },
        };
      }),
      30,
    );
    await tx`
      update watchlist set pid = u.p, last_refreshed_at = ${fetchedAt}, refreshed_cycle = ${cycle},
        last_cycle = ${cycle}, last_outcome = 'success', last_error = null
      from unnest(${ids}::bigint[], ${batch.map((e) => e.pid)}::text[]) as u(w, p) where watchlist.id = u.w`;
    await tx`
      update runs set finished_at = now(), outcome = 'succeeded', credits = ${CREDITS},
        counts = jsonb_build_object('changes', 0, 'versions', 0)
      where id = any(${runIds}::bigint[])`;
  });
}

async function soak(
  landing: SoakRun['landing'],
  firms: number,
  cycles: number,
  onCycle: (c: CycleFigures) => void,
) {
  const db = await freshDatabase(`soak_${landing}`, LANES + 2);
  try {
    return await soakOn(db, landing, firms, cycles, onCycle);
  } catch (err) {
    await db.drop();
    throw err;
  }
}

async function soakOn(
  db: BenchDatabase,
  landing: SoakRun['landing'],
  firms: number,
  cycles: number,
  onCycle: (c: CycleFigures) => void,
) {
  const baseline = landing === 'baseline';
  if (baseline) await asBaseline(db.sql);
  const world = new EnterpriseWorld({ seed: 17, size: firms, epoch: addDays(FIRST_CYCLE, -1) });
  world.at(FIRST_CYCLE);
  const initial = world.all();
  const rows = initial.map((e) => ({ keyword: e.ENTNAME, keyword_key: keywordKey(e.ENTNAME) }));
  for (let i = 0; i < rows.length; i += 5000)
    await db.sql`insert into watchlist ${db.sql(rows.slice(i, i + 5000))} on conflict (keyword_key) do nothing`;
  const watch = await db.sql<
    { id: string; keyword: string }[]
  >`select id, keyword from watchlist order by id`;
  const pidOf = new Map(initial.map((e) => [e.ENTNAME, e.PID]));
  const entries = new Map<number, Entry>(
    watch.map((w) => [
      Number(w.id),
      { watchId: Number(w.id), keyword: w.keyword, pid: pidOf.get(w.keyword) ?? '' },
    ]),
  );
  const config = loadConfig(
    {
      DATABASE_URL: db.url,
      LOG_LEVEL: 'silent',
      DAYBOOK_CREDIT_BUDGET: String(firms * CREDITS * 2),
      ...(baseline ? { DAYBOOK_BOOKKEEPING_DAYS: '0' } : {}),
    },
    '/nonexistent/.env',
  );
  const log = createLogger({ level: 'silent' });
  const out: CycleFigures[] = [];
  const sizesAfter: Map<string, number>[] = [];
  const relationsAfter: Map<string, number>[] = [];
  const perCycle: { fetches: number; changed: number }[] = [];
  const keep = config.DAYBOOK_BOOKKEEPING_DAYS;
  const startAt = keep > 0 && cycles > keep + 3 ? keep + 1 : 0;
  for (let k = 0; k < cycles; k++) {
    const cycle = addDays(FIRST_CYCLE, k);
    const t = performance.now();
    const changes = new Map(world.changesIn(cycle).map((c) => [c.pid, c]));
    world.at(cycle);
    const now = new Date(cycleStart(cycle).getTime() + 3600_000);
    const tp = performance.now();
    await processPlan(
      { sql: db.sql, config, log, now: () => now, enqueue: { enterprises: async (_c, ids) => ids.length } },
      { cycle },
      `soak-plan-${cycle}`,
    );
    const planMs = since(tp);
    const planned = await db.sql<{ watch_id: string }[]>`
      select watch_id from cycle_fetches where cycle = ${cycle} and status = 'planned' order by watch_id`;
    const todo = planned.map((p) => entries.get(Number(p.watch_id)) as Entry);
    const batches: Entry[][] = [];
    for (let i = 0; i < todo.length; i += BATCH) batches.push(todo.slice(i, i + BATCH));
    await Promise.all(
      Array.from({ length: LANES }, async (_, lane) => {
        for (let b = lane; b < batches.length; b += LANES)
          await buyBatch(db, world, cycle, batches[b] as Entry[], changes, baseline, lane);
      }),
    );
    const changed = k === 0 ? 0 : todo.filter((e) => changes.has(e.pid)).length;
    await db.sql.unsafe('vacuum');
    const s = await sizes(db.sql);
    sizesAfter.push(s);
    relationsAfter.push(await relationSizes(db.sql));
    perCycle.push({ fetches: todo.length, changed });
    const figures: CycleFigures = {
      cycle,
      fetches: todo.length,
      changed,
      seconds: round(since(t) / 1000, 1),
      planMs: round(planMs, 0),
      databaseBytes: [...s.values()].reduce((a, b) => a + b, 0),
    };
    out.push(figures);
    onCycle(figures);
  }
  const last = sizesAfter[sizesAfter.length - 1] ?? new Map<string, number>();
  const start = sizesAfter[startAt] ?? new Map<string, number>();
  const measured = perCycle.slice(startAt + 1);
  const fetches = measured.reduce((a, c) => a + c.fetches, 0);
  const changedFetches = measured.reduce((a, c) => a + c.changed, 0);
  const byTable = [...last]
    .map(([table, bytes]) => ({
      table,
      bytesPerFetch: round((bytes - (start.get(table) ?? 0)) / Math.max(1, fetches), 1),
      perChange: PER_CHANGE.has(table),
    }))
    .filter((t) => t.bytesPerFetch !== 0)
    .sort((a, b) => b.bytesPerFetch - a.bytesPerFetch);
  const lastRel = relationsAfter[relationsAfter.length - 1] ?? new Map<string, number>();
  const startRel = relationsAfter[startAt] ?? new Map<string, number>();
  const byRelation = [...lastRel]
    .map(([relation, bytes]) => ({
      relation,
      table: relation.split('.')[0] as string,
      bytesPerFetch: round((bytes - (startRel.get(relation) ?? 0)) / Math.max(1, fetches), 1),
    }))
    .filter((r) => r.bytesPerFetch !== 0 && !PER_CHANGE.has(r.table))
    .sort((a, b) => b.bytesPerFetch - a.bytesPerFetch);
  const growth = [...last].reduce((a, [t, b]) => a + b - (start.get(t) ?? 0), 0);
  const perFetch = byTable.filter((t) => !t.perChange).reduce((a, t) => a + t.bytesPerFetch, 0);
  const perChangeTotal = byTable
    .filter((t) => t.perChange)
    .reduce((a, t) => a + t.bytesPerFetch * fetches, 0);
  const run: SoakRun = {
    landing,
    firms,
    cycles,
    cyclesRun: out,
    window: { from: out[startAt]?.cycle ?? '', to: out[out.length - 1]?.cycle ?? '', steady: startAt > 0 },
    growthBytes: growth,
    fetches,
    changedFetches,
    unchangedBytesPerDay: round(perFetch, 0),
    changedExtraBytesPerDay: round(perChangeTotal / Math.max(1, changedFetches), 0),
    bytesPerDay: round(growth / Math.max(1, fetches), 0),
    byTable,
    byRelation,
    finalBytes: [...last.values()].reduce((a, b) => a + b, 0),
    meanCycleSeconds: round(out.slice(1).reduce((a, c) => a + c.seconds, 0) / Math.max(1, out.length - 1), 1),
  };
  return { db, run, entries };
}

/** Median of `n` runs of `f`, in ms, after one warm-up. */
async function timed(n: number, f: () => Promise<unknown>): Promise<number> {
  await f();
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await f();
    ms.push(since(t));
  }
  ms.sort((a, b) => a - b);
  return round(ms[Math.floor(ms.length / 2)] as number, 1);
}

/**
 * The queries' timings on the soaked database; `repeats` (when given) replaces each query's own
 * count of runs (5 or 9).
 */
async function queryTimings(
  db: BenchDatabase,
  pid: string,
  cycle: string,
  repeats?: number,
): Promise<QueryTiming[]> {
  const times = (n: number) => repeats ?? n;
  const redis = redisConnection(REDIS_URL);
  const queues = new Queues(redis, `soak-${process.pid}`);
  const out: QueryTiming[] = [];
  const add = (query: string, ms: number, boundMs: number, note?: string) =>
    out.push({ query, ms, boundMs, met: ms < boundMs, ...(note ? { note } : {}) });
  try {
    const registry = metricsRegistry(db.sql, queues);
    add('/metrics scrape', await timed(times(5), () => registry.metrics()), 250);
  } finally {
    await queues.close();
    redis.disconnect();
  }
  // The whole command as a person runs it, on the last soaked cycle (its claims, ledger and runs
  // are all there), median of 5. Node's start and the loading of the modules are most of it and do
  // not grow with the database: the same command on an empty database says how much.
  const status = (url: string) => () => {
    const r = spawnSync(process.execPath, [BIN, 'status', '--json', '--cycle', cycle], {
      env: { ...process.env, DATABASE_URL: url, REDIS_URL: 'redis://127.0.0.1:6379', LOG_LEVEL: 'silent' },
      encoding: 'utf8',
    });
    if (r.status !== 0) throw new Error(`daybook status failed: ${r.stderr}`);
    return Promise.resolve();
  };
  const empty = await freshDatabase('soak_empty', 1);
  let startMs: number;
  try {
    startMs = await timed(times(5), status(empty.url));
  } finally {
    await empty.drop();
  }
  add(
    `daybook status --cycle ${cycle} (the whole command, Node start included)`,
    await timed(times(5), status(db.url)),
    1000,
    `the same command on an empty database: ${startMs} ms`,
  );
  add(
    'daybook changes --pid P (its query)',
    await timed(
      times(9),
      () => db.sql`
        select cycle::text, detected_at, pid, current_name as name, category, field, kind, before, after, severity
        from analytics.enterprise_changes
        where severity = any(${['high', 'medium', 'low']}) and pid = ${pid}
        order by detected_at desc, change_id desc limit 100`,
    ),
    20,
  );
  add(
    'analytics.enterprise_current, one PID',
    await timed(times(9), () => db.sql`select * from analytics.enterprise_current where pid = ${pid}`),
    20,
  );
  add(
    'analytics.enterprise_history, one PID',
    await timed(times(9), () => db.sql`select * from analytics.enterprise_history where pid = ${pid}`),
    20,
  );
  return out;
}

export interface SoakOptions {
  /** Watched firms (default DAYBOOK_SOAK_FIRMS or 20,000). */
  firms?: number;
  /** Daily cycles (default DAYBOOK_SOAK_CYCLES or 30). */
  cycles?: number;
  /** Firms of the baseline soak (default DAYBOOK_SOAK_BASELINE_FIRMS or a tenth). */
  baselineFirms?: number;
  /** Runs of each timed query, instead of its own 5 or 9. */
  queryRepeats?: number;
}

export async function benchSoak(options: SoakOptions = {}): Promise<SoakResult> {
  const firms = options.firms ?? FIRMS;
  const cycles = options.cycles ?? CYCLES;
  const baselineFirms = options.baselineFirms ?? BASELINE_FIRMS;
  const say = (line: string) => process.stderr.write(`soak: ${line}\n`);
  const mib = (b: number) => `${round(b / 1024 / 1024, 1)} MiB`;
  say(
    `${firms} firms x ${cycles} cycles (deduplicated landing), then ${baselineFirms} firms on today's landing`,
  );
  const main = await soak('deduplicated', firms, cycles, (c) =>
    say(
      `${c.cycle}: ${c.fetches} fetches, ${c.changed} changed, ${c.seconds} s (plan ${c.planMs} ms), database ${mib(c.databaseBytes)}`,
    ),
  );
  let queries: QueryTiming[] = [];
  try {
    // An enterprise with changes: the queries' worst case among ordinary ones.
    const [busy] = await main.db.sql<{ pid: string }[]>`
      select pid from enterprise_changes group by pid order by count(*) desc, pid limit 1`;
    await main.db.sql.unsafe('analyze');
    queries = await queryTimings(
      main.db,
      busy?.pid ?? '',
      main.run.cyclesRun.at(-1)?.cycle ?? '',
      options.queryRepeats,
    );
    for (const q of queries)
      say(`${q.query}: ${q.ms} ms (bound ${q.boundMs} ms)${q.note ? `; ${q.note}` : ''}`);
  } finally {
    // DAYBOOK_SOAK_KEEP=1 leaves the soaked database for a look (its URL is printed).
    if (process.env.DAYBOOK_SOAK_KEEP === '1') say(`kept the soaked database: ${main.db.url}`);
    else await main.db.drop();
  }
  const base = await soak('baseline', baselineFirms, cycles, (c) =>
    say(`baseline ${c.cycle}: ${c.fetches} fetches, ${c.seconds} s, database ${mib(c.databaseBytes)}`),
  );
  await base.db.drop();
  const enterpriseDays = 100_000 * 365;
  const perDay = (r: SoakRun) =>
    (r.unchangedBytesPerDay * (r.fetches - r.changedFetches) +
      (r.unchangedBytesPerDay + r.changedExtraBytesPerDay) * r.changedFetches) /
    Math.max(1, r.fetches);
  const result: SoakResult = {
    firms,
    cycles,
    run: main.run,
    baseline: base.run,
    ratio: round(base.run.unchangedBytesPerDay / Math.max(1, main.run.unchangedBytesPerDay), 1),
    queries,
    projection: {
      enterpriseDays,
      bytes: Math.round(perDay(main.run) * enterpriseDays),
      baselineBytes: Math.round(perDay(base.run) * enterpriseDays),
    },
    target: '<= 300 bytes per unchanged enterprise-day; queries within their bounds',
    met: main.run.unchangedBytesPerDay <= 300 && queries.every((q) => q.met),
  };
  return result;
}
