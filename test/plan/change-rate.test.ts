/**
 * The change-rate planner through whole pipeline cycles against the simulator over HTTP: a
 * watchlist four times larger than a cycle's budget, run for three weeks of daily cycles. New
 * entries are fetched first; every fetch leaves an estimate, a weight and a due time within the
 * staleness bound; the plan refreshes the cohort priors and the scale; no entry waits longer than
 * the bound; a high-severity change makes its firm due the next cycle (while the plan finds that
 * changes cluster); firms seen changing are
 * estimated to change more than firms seen still; and `plan explain` and `watch list` show it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statusOfCohort } from '../../src/normalize/cohort.ts';
import { isClosedStatus } from '../../src/plan/estimate.ts';
import type { RunningSimulator } from '../../src/sim/server.ts';
import { addDays, cycleStart, daysBetween } from '../../src/time/cycles.ts';
import { keywordKey } from '../../src/watch/keyword.ts';
import { runDaybook } from '../support/cli.ts';
import { type CliSim, cliAgainstSim } from '../support/cli-sim.ts';
import type { TestDatabase } from '../support/db.ts';
import { runCyclesInline } from '../support/inline.ts';
import { TEST_KEY, UNTHROTTLED } from '../support/sim.ts';

const FIRST = '2026-03-02';
const CYCLES = Array.from({ length: 21 }, (_, i) => addDays(FIRST, i));
const WATCHED = 120;
const PER_CYCLE = 30;
const MAX_STALENESS = 6;

describe('the change-rate planner over three weeks of cycles', { timeout: 300_000 }, () => {
  let t: TestDatabase;
  let sim: RunningSimulator;
  let dbSim: CliSim;
  const env = {
    DAYBOOK_CREDIT_BUDGET: String(PER_CYCLE * 3),
    DAYBOOK_MAX_STALENESS_DAYS: String(MAX_STALENESS),
    // The test reads every cycle's fetches at the end: nothing compacted meanwhile.
    DAYBOOK_BOOKKEEPING_DAYS: '0',
  };
  /** Successful fetches per cycle: cycle → watch ids. */
  const fetched = new Map<string, number[]>();
  /** Entries bought per cycle (succeeded or failed for good), and entries whose last answer was an error. */
  const attempted = new Map<string, number>();
  const resting = new Set<number>();

  beforeAll(async () => {
    dbSim = await cliAgainstSim({ enterprises: 600, rateLimits: UNTHROTTLED });
    ({ t, sim } = dbSim);
    // Watch the firms that change most in these weeks, and quiet ones besides, by their names at
    // the start (exact names resolve to those very firms).
    const world = sim.sim.world();
    const counts = new Map<string, number>();
    for (const c of CYCLES.slice(1))
      for (const x of world.changesIn(c)) counts.set(x.pid, (counts.get(x.pid) ?? 0) + 1);
    world.at(FIRST);
    const all = world.all();
    const busy = all.filter((e) => counts.has(e.PID)).slice(0, WATCHED / 2);
    const quiet = all.filter((e) => !counts.has(e.PID)).slice(0, WATCHED - busy.length);
    const picks = [...busy, ...quiet];
    await t.sql`insert into watchlist ${t.sql(picks.map((e) => ({ keyword: e.ENTNAME, keyword_key: keywordKey(e.ENTNAME) })))}`;
    await runCyclesInline(t, sim, CYCLES, () => [], env);
    const rows = await t.sql<{ cycle: string; watch_id: string }[]>`
      select cycle::text, watch_id from cycle_fetches where status = 'succeeded' order by cycle, watch_id`;
    for (const r of rows) fetched.set(r.cycle, [...(fetched.get(r.cycle) ?? []), Number(r.watch_id)]);
    const tried = await t.sql<{ cycle: string; n: number }[]>`
      select cycle::text, count(*)::int as n from cycle_fetches where status in ('succeeded', 'failed') group by 1`;
    for (const r of tried) attempted.set(r.cycle, r.n);
    // A keyword can stop matching (a renamed firm answers not_found): such entries rest a week.
    const failing = await t.sql<{ id: string }[]>`select id from watchlist where last_outcome <> 'success'`;
    for (const f of failing) resting.add(Number(f.id));
  });

  afterAll(async () => {
    await dbSim?.close();
  });

  it('fetches new entries first, then stays within the budget every cycle', async () => {
    const firstFour = new Set(CYCLES.slice(0, WATCHED / PER_CYCLE).flatMap((c) => fetched.get(c) ?? []));
    expect(firstFour.size).toBe(WATCHED);
    for (const c of CYCLES) expect((fetched.get(c) ?? []).length).toBeLessThanOrEqual(PER_CYCLE);
    // The budget is used: every cycle buys as many as it can take.
    for (const c of CYCLES) expect(attempted.get(c)).toBe(PER_CYCLE);
  });

  it('no entry waits longer than the staleness bound once fetched', () => {
    const last = new Map<number, string>();
    let worst = 0;
    for (const c of CYCLES) {
      for (const id of fetched.get(c) ?? []) last.set(id, c);
      for (const [id, l] of last) if (!resting.has(id)) worst = Math.max(worst, daysBetween(l, c));
    }
    expect(worst).toBeLessThanOrEqual(MAX_STALENESS);
  });

  it('leaves an estimate, a weight and a due time within the bound on every entry; the plan sets the scale and the cohort priors', async () => {
    const rows = await t.sql<
      {
        change_rate: number | null;
        change_weight: number;
        due_at: Date | null;
        refreshed_cycle: string;
        change_cohort: string | null;
        n: number | null;
      }[]
    >`select change_rate, change_weight, due_at, refreshed_cycle::text, change_cohort,
             (change_history->>'n')::float8 + coalesce((change_history->>'datedEvents')::float8, 0) as n
      from watchlist where last_outcome = 'success'`;
    expect(rows.length).toBeGreaterThanOrEqual(WATCHED - resting.size);
    for (const r of rows) {
      expect(r.change_rate).toBeGreaterThan(0);
      expect(r.change_weight).toBeGreaterThanOrEqual(1);
      expect(r.change_weight).toBeLessThanOrEqual(3);
      expect(r.change_cohort).toMatch(/^[^|]+\|[^|]+\|[^|]+\|[^|]+$/);
      // Due times count from the start of the refresh's cycle.
      const gap = ((r.due_at as Date).getTime() - cycleStart(r.refreshed_cycle).getTime()) / 86_400_000;
      expect(gap).toBeGreaterThanOrEqual(1 - 1e-9);
      expect(gap).toBeLessThanOrEqual(MAX_STALENESS + 1e-9);
    }
    // Three weeks within a 6-day bound: every entry has two intervals observed or more (counts
    // decay with a one-year half-life, so two intervals weigh a little under 2).
    // (A firm that closed for good meanwhile forgot its living years: left out.)
    const living = rows.filter((r) => !isClosedStatus(statusOfCohort(r.change_cohort)));
    expect(living.length).toBeGreaterThan(WATCHED / 2);
    expect(Math.min(...living.map((r) => r.n ?? 0))).toBeGreaterThanOrEqual(1.95);
    const [state] = await t.sql<{ scale: number; cycle: string; capacity: number; entries: number }[]>`
      select scale, cycle::text, capacity, entries from planner_state`;
    expect(state).toMatchObject({ cycle: CYCLES.at(-1), capacity: PER_CYCLE, entries: WATCHED });
    expect(state?.scale).toBeGreaterThan(0);
    const cohorts = await t.sql<{ cohort: string }[]>`select cohort from change_cohorts`;
    expect(cohorts.map((c) => c.cohort)).toContain('*');
    expect(cohorts.length).toBeGreaterThan(3);
  });

  it('estimates firms seen changing above firms seen still', async () => {
    const rows = await t.sql<{ rate: number; changes: number }[]>`
      select change_rate as rate,
             (change_history->>'changes')::float8 + coalesce((change_history->>'datedEvents')::float8, 0) as changes
      from watchlist where last_outcome = 'success'`;
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    // (A first fetch counts the registry's last approval as one dated change: more than one is seen.)
    const changing = rows.filter((r) => r.changes >= 2).map((r) => r.rate);
    const still = rows.filter((r) => r.changes < 1).map((r) => r.rate);
    expect(changing.length).toBeGreaterThan(5);
    expect(still.length).toBeGreaterThan(5);
    expect(mean(changing)).toBeGreaterThan(2 * mean(still));
  });

  it('a high-severity change makes its firm due the next cycle and refreshed in it, while the plan finds that changes cluster', async () => {
    // Fetches whose answer brought a high-severity change, whether the plan of their cycle had
    // learned that changes cluster (the boost is on only then: in a watchlist whose changes come
    // independently a boost spends credits for nothing), and the entry's next fetch.
    const highs = await t.sql<{ watch_id: string; cycle: string; boost: boolean }[]>`
      select distinct f.watch_id, f.cycle::text,
        coalesce((select (r.counts->>'boost')::int = 1 from runs r
                  where r.kind = 'plan' and r.cycle = f.cycle and r.outcome = 'succeeded'
                  order by r.started_at desc limit 1), false) as boost
      from cycle_fetches f
      join enterprise_changes c on c.pid = f.pid and c.cycle = f.cycle
      where f.status = 'succeeded' and c.severity = 'high' and f.cycle < ${CYCLES.at(-1) as string}
        -- A firm closed for good no longer changes: it gets no boost.
        and not exists (select 1 from enterprise_versions v where v.pid = f.pid and v.cycle = f.cycle
                         and (v.ent_status like '%已注销%' or v.ent_status in ('注销', '撤销', '迁出')))`;
    for (const h of highs.filter((x) => x.boost)) {
      const next = addDays(h.cycle, 1);
      expect(fetched.get(next) ?? [], `watch ${h.watch_id} after ${h.cycle}`).toContain(Number(h.watch_id));
    }
    // Not vacuous: the simulator's distressed firms move status in three weeks.
    expect(highs.length).toBeGreaterThan(0);
  });

  it('daybook plan explain and watch list show the estimate and the decision', async () => {
    const cliEnv = {
      DATABASE_URL: t.url,
      DAYBOOK_API_BASE_URL: sim.url,
      DAYBOOK_API_KEY: TEST_KEY,
      LOG_LEVEL: 'silent',
      ...env,
    };
    const next = addDays(CYCLES.at(-1) as string, 1);
    const top = await runDaybook(['plan', 'explain', '--cycle', next, '--top', '40', '--json'], cliEnv);
    expect(top.code, top.stderr).toBe(0);
    const entries = JSON.parse(top.stdout) as {
      watchId: number;
      pid: string;
      changesPerMonth: number;
      position: number;
      decision: { kind: string; reason?: string };
      planClass: string;
      certainty: { level: string; low: number; high: number; ownShare: number } | null;
      reason: string;
    }[];
    expect(entries).toHaveLength(40);
    // How sure each estimate is: a range around it, the share from the entry's own observations;
    // and why it stands where it does, starting from its priority and its class.
    for (const e of entries.filter((x) => x.planClass !== 'never_fetched')) {
      const c = e.certainty as NonNullable<typeof e.certainty>;
      expect(['low', 'medium', 'high']).toContain(c.level);
      expect(c.low).toBeLessThanOrEqual(e.changesPerMonth / 30.44 + 1e-12);
      expect(c.high).toBeGreaterThanOrEqual(e.changesPerMonth / 30.44 - 1e-12);
      expect(c.ownShare).toBeGreaterThanOrEqual(0);
      expect(c.ownShare).toBeLessThanOrEqual(1);
      expect(e.reason).toMatch(/^priority 0 first/);
      expect(e.reason).toContain(e.planClass === 'owed' ? 'owed a refresh' : 'ordered by due time');
    }
    expect(entries.map((e) => e.position)).toEqual(entries.map((_, i) => i + 1));
    // In plan order: the cycle's 30 selected (a resting not_found entry skipped among them), then
    // the deferred, for the credit budget.
    const kinds = entries.map((e) => e.decision.kind);
    expect(kinds.filter((k) => k === 'selected')).toHaveLength(PER_CYCLE);
    expect(kinds.lastIndexOf('selected')).toBeLessThan(kinds.indexOf('deferred'));
    expect(kinds.every((k) => k === 'selected' || k === 'deferred' || k === 'skipped')).toBe(true);
    const deferred = entries.filter((e) => e.decision.kind === 'deferred');
    expect(deferred.length).toBeGreaterThan(5);
    expect(deferred.every((e) => e.decision.reason === 'credit_budget')).toBe(true);

    const one = deferred[2] as (typeof entries)[number];
    const text = await runDaybook(['plan', 'explain', '--cycle', next, '--pid', one.pid], cliEnv);
    expect(text.code, text.stderr).toBe(0);
    for (const label of [
      'estimate',
      'certainty',
      'prior',
      'weight',
      'P(change)',
      'interval',
      'class',
      'why here',
      'decision',
    ])
      expect(text.stdout).toContain(label);
    expect(text.stdout).toContain('changes/month');
    expect(text.stdout).toMatch(/deferred: credit budget \(#\d+ in the plan order; the cycle takes 30\)/);

    const missing = await runDaybook(['plan', 'explain', '--pid', 'NO-SUCH-PID'], cliEnv);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('nothing watched matches "NO-SUCH-PID"');
    const both = await runDaybook(['plan', 'explain', '--pid', one.pid, '--top', '3'], cliEnv);
    expect(both.code).toBe(2);

    const list = await runDaybook(['watch', 'list', '--json'], cliEnv);
    expect(list.code, list.stderr).toBe(0);
    const watched = JSON.parse(list.stdout) as { changes_per_month: number | null; due_at: string | null }[];
    expect(watched.every((w) => w.changes_per_month !== null && w.changes_per_month > 0)).toBe(true);
    expect(watched.every((w) => w.due_at !== null)).toBe(true);
    const table = await runDaybook(['watch', 'list'], cliEnv);
    expect(table.stdout).toContain('changes/month');
  });
});
