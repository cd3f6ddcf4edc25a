/**
 * The plan job over a watchlist in Postgres: it reads only the head of the plan order, yet selects
 * what planning every entry would select; it writes rows only for what it decided, and the
 * entries it did not reach are deferred without a row, counted and listed by `daybook status`,
 * and taken by `daybook resume` within the credits it adds.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processPlan } from '../../jobs/plan.ts';
import { type Config, loadConfig } from '../../src/config/config.ts';
import { createLogger } from '../../src/log/log.ts';
import { type CandidateRow, candidateOf, decidePlan, deferredEntries } from '../../src/plan/decide.ts';
import { type Plan, planCycle } from '../../src/plan/planner.ts';
import { resumeCycle } from '../../src/purchase/credits.ts';
import { keyPattern, Queues } from '../../src/runtime/queues.ts';
import { addDays, cycleOf } from '../../src/time/cycles.ts';
import { runDaybook } from '../support/cli.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';

const ENTRIES = 5000;

describe('the plan job over a large watchlist', { timeout: 120_000 }, () => {
  let db: TestDatabase;
  let config: Config;
  const now = new Date();
  const cycle = cycleOf(now);
  const prefix = `dbt-${randomBytes(4).toString('hex')}`;
  const enqueued: number[] = [];
  const deps = () => ({
    sql: db.sql,
    config,
    now: () => now,
    log: createLogger({ level: 'silent' }),
    enqueue: {
      async enterprises(_cycle: string, ids: readonly number[]) {
        enqueued.push(...ids);
        return ids.length;
      },
    },
  });

  /** What the planner decides when handed every active entry, as the plan job did before. */
  async function planOverEverything(): Promise<Plan> {
    const { input } = await decidePlan(deps(), cycle);
    const rows = await db.sql<
      CandidateRow[]
    >`select id, keyword, priority, pid, last_refreshed_at, last_outcome, last_cycle::text, added_at, due_at
      from watchlist where active`;
    const candidates = rows.map(candidateOf);
    return planCycle({ ...input, candidates, beyond: 0 });
  }

  const rowsByStatus = async () => {
    const rows = await db.sql<{ status: string; n: number }[]>`
      select status, count(*)::int as n from cycle_fetches where cycle = ${cycle} group by status`;
    return Object.fromEntries(rows.map((r) => [r.status, r.n]));
  };
  const withoutRow = async () => {
    const [r] = await db.sql<{ n: number }[]>`
      select count(*)::int as n from watchlist w where w.active
        and not exists (select 1 from cycle_fetches f where f.cycle = ${cycle} and f.watch_id = w.id)`;
    return r?.n ?? -1;
  };

  beforeAll(async () => {
    db = await freshDatabase();
    config = loadConfig(
      {
        DATABASE_URL: db.url,
        DAYBOOK_REDIS_PREFIX: prefix,
        DAYBOOK_CREDIT_BUDGET: '900',
        DAYBOOK_ENTERPRISE_RATE: '100000',
        LOG_LEVEL: 'silent',
      },
      '/nonexistent/.env',
    );
    // 3 priorities; a tenth never refreshed (half of those not_found, most of them within the
    // last week); the rest refreshed before, every PID shared by about three entries of the same
    // priority refreshed about the same time: the head of the order is full of skips.
    await db.sql`
      insert into watchlist (keyword, keyword_key, priority, pid, added_at, last_refreshed_at, last_cycle, last_outcome)
      select k, k, g % 3,
        case when g % 10 <> 0 then 'PID' || (g % 1500) end,
        ${now}::timestamptz - interval '90 days',
        case when g % 10 <> 0 then ${now}::timestamptz - ((g % 1500) * 6 + g % 5) * interval '1 minute' end,
        case when g % 10 <> 0 or g % 20 = 0 then ${cycle}::date - 1 - (g % 9) end,
        case when g % 20 = 0 then 'not_found' when g % 10 <> 0 then 'success' end
      from generate_series(1, ${ENTRIES}::int) g, lateral (select '计划测试企业' || g || '有限公司' as k) n`;
    // Due as entries refreshed before the change-rate planner are (migration 0014): at their last
    // refresh, or when added if only ever attempted; never attempted ones are never fetched.
    await db.sql`update watchlist set due_at = coalesce(last_refreshed_at, added_at)
                 where last_refreshed_at is not null or last_outcome is not null`;
  });

  afterAll(async () => {
    const redis = new Redis({ host: '127.0.0.1', port: 6379, lazyConnect: true });
    await redis.connect().catch(() => {});
    const keys = await redis.keys(keyPattern(prefix)).catch(() => [] as string[]);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
    await db?.drop();
  });

  it('reads only the head, selects what planning every entry selects, and writes rows only for its decisions', async () => {
    const full = await planOverEverything();
    const decision = await decidePlan(deps(), cycle);
    expect(decision.input.candidates.length).toBeLessThan(ENTRIES / 3);
    expect(decision.plan.selected.map((e) => e.id)).toEqual(full.selected.map((e) => e.id));
    expect(full.selected).toHaveLength(300);
    const skips = (reason: string) => decision.plan.skipped.filter((s) => s.reason === reason).length;
    expect(skips('duplicate_pid')).toBeGreaterThan(50);
    expect(skips('permanent_error_recent')).toBeGreaterThan(20);
    // The first head (capacity + a margin) had too many skips: a longer one was read.
    expect(decision.reads).toBe(2);

    const report = await processPlan(deps(), { cycle }, 'plan-test');
    expect(enqueued.sort((a, b) => a - b)).toEqual(full.selected.map((e) => e.id).sort((a, b) => a - b));
    const skipped = decision.plan.skipped.length;
    // No row per deferred entry: planned and skipped rows only.
    expect(await rowsByStatus()).toEqual({ planned: 300, skipped });
    const reasons = await db.sql<{ error_code: string; n: number }[]>`
      select error_code, count(*)::int as n from cycle_fetches where cycle = ${cycle} and status = 'skipped'
      group by error_code order by error_code`;
    expect(reasons.map((r) => r.error_code)).toEqual(
      [...new Set(decision.plan.skipped.map((s) => s.reason))].sort(),
    );
    expect(report.counts).toMatchObject({ selected: 300, deferred: ENTRIES - 300 - skipped, skipped });
    const [run] = await db.sql<{ counts: Record<string, unknown> }[]>`
      select counts from runs where kind = 'plan' and cycle = ${cycle}`;
    expect(run?.counts.deferredReason).toBe('credit_budget');

    // The deferred entries: every active entry without a row, in plan order, with the reason.
    const deferred = await deferredEntries(db.sql, cycle, 20);
    expect(deferred.total).toBe(ENTRIES - 300 - skipped);
    expect(deferred.total).toBe(await withoutRow());
    expect(deferred.byReason).toEqual({ credit_budget: deferred.total });
    const firstDeferred = full.deferred.map((d) => d.entry.id).slice(0, 20);
    expect(deferred.first.map((d) => d.watch_id)).toEqual(firstDeferred);
    expect(deferred.first[0]).toMatchObject({
      reason: 'credit_budget',
      detail: 'deferred by the planner: credit budget (not reached)',
    });
  });

  it('a re-plan with part of the cycle done and more credits selects what planning everything selects', async () => {
    // 100 of the planned entries were fetched (spent 300 credits) and moved to the back of the order.
    const done = await db.sql<{ watch_id: string }[]>`
      update cycle_fetches f set status = 'succeeded', pid = w.pid, credits_billed = 3
      from watchlist w where w.id = f.watch_id and f.cycle = ${cycle}
        and f.watch_id in (select watch_id from cycle_fetches where cycle = ${cycle} and status = 'planned'
                           order by watch_id limit 100)
      returning f.watch_id`;
    expect(done).toHaveLength(100);
    await db.sql`update watchlist set last_refreshed_at = ${now}, due_at = ${now}
                 where id = any(${done.map((d) => d.watch_id)}::bigint[])`;
    await db.sql`update cycle_budgets set spent = 300 where cycle = ${cycle}`;
    await resumeCycle(db.sql, cycle, 600);

    const full = await planOverEverything();
    expect(full.selected).toHaveLength(400); // (900 + 600 − 300) / 3
    enqueued.length = 0;
    await processPlan(deps(), { cycle }, 'plan-test-2');
    expect(enqueued.sort((a, b) => a - b)).toEqual(full.selected.map((e) => e.id).sort((a, b) => a - b));
    const status = await rowsByStatus();
    expect(status.succeeded).toBe(100);
    expect(status.planned).toBe(400);
    expect(status.deferred ?? 0).toBe(0);
    const deferred = await deferredEntries(db.sql, cycle, 5);
    expect(deferred.total).toBe(await withoutRow());
    expect(deferred.first).toHaveLength(5);
  });

  it('a short budget re-plan turns planned rows it no longer selects into deferred rows, with the reason', async () => {
    await db.sql`update cycle_budgets set budget = 300 + 150 where cycle = ${cycle}`;
    enqueued.length = 0;
    await processPlan(deps(), { cycle }, 'plan-test-3');
    expect(enqueued).toHaveLength(50);
    const status = await rowsByStatus();
    expect(status).toMatchObject({ succeeded: 100, planned: 50, deferred: 350 });
    const deferred = await deferredEntries(db.sql, cycle, 20);
    expect(deferred.total).toBe(350 + (await withoutRow()));
    // The rows come first: they were higher in the order than the entries never reached.
    expect(deferred.first.every((d) => d.detail === 'deferred by the planner: credit budget')).toBe(true);
  });

  it('daybook status shows the count and the first 20; daybook resume plans the deferred within the added credits', async () => {
    const env = {
      DATABASE_URL: db.url,
      DAYBOOK_REDIS_PREFIX: prefix,
      DAYBOOK_CREDIT_BUDGET: '900',
      LOG_LEVEL: 'silent',
    };
    const before = await deferredEntries(db.sql, cycle, 20);
    const json = await runDaybook(['status', '--cycle', cycle, '--json', '--no-queues'], env);
    expect(json.code, json.stderr).toBe(0);
    const status = JSON.parse(json.stdout) as {
      progress: Record<string, number>;
      deferred: { keyword: string; reason: string }[];
      deferredCount: number;
    };
    expect(status.deferredCount).toBe(before.total);
    expect(status.progress).toMatchObject({ succeeded: 100, planned: 50, deferred: before.total });
    expect(status.deferred.map((d) => d.keyword)).toEqual(before.first.map((d) => d.keyword));
    const text = await runDaybook(['status', '--cycle', cycle, '--no-queues'], env);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(
      `Deferred: ${before.total.toLocaleString('en')} entries (credit budget reached: ${before.total.toLocaleString('en')} entries); the first 20:`,
    );
    expect(text.stdout.split('\n').length).toBeLessThan(60);

    // 150 more credits: the 50 planned stay planned, 50 deferred ones are taken in plan order.
    const resumed = await runDaybook(['resume', '--cycle', cycle, '--add-budget', '150'], env);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain(
      `cycle ${cycle} resumed: 100 entries planned and enqueued (50 of them deferred earlier)`,
    );
    const after = await rowsByStatus();
    expect(after).toMatchObject({ succeeded: 100, planned: 100, deferred: 300 });
    const redis = new Redis({ host: '127.0.0.1', port: 6379 });
    const queues = new Queues(redis, prefix);
    try {
      const counts = await queues.enterprise.getJobCounts('waiting', 'prioritized', 'delayed');
      expect((counts.waiting ?? 0) + (counts.prioritized ?? 0) + (counts.delayed ?? 0)).toBe(100);
      const ids = (await queues.enterprise.getJobs(['waiting', 'prioritized', 'delayed'])).map((j) => j.id);
      // Entries deferred with a row had run before: a resume round gives them new job ids.
      expect(ids.filter((id) => id?.endsWith('-r1'))).toHaveLength(50);
    } finally {
      await queues.close();
      redis.disconnect();
    }
    const next = await deferredEntries(db.sql, cycle, 20);
    expect(next.total).toBe(before.total - 50);
    // A cycle never planned has nothing deferred.
    expect((await deferredEntries(db.sql, addDays(cycle, 1))).total).toBe(0);
  });
});
