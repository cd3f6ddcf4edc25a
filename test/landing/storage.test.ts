/**
 * A landing that does not grow with unchanged answers, bookkeeping that is compacted, counts that
 * /metrics reads without scanning.
 *
 * Cycles run inline against the simulator over HTTP; the watchlist is mostly firms that do not
 * change, so most answers repeat the day before's body.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compactBookkeeping } from '../../jobs/compact.ts';
import { rebuild } from '../../src/history/rebuild.ts';
import { landRaw, RAW_REFERENCES } from '../../src/landing/landing.ts';
import type { RunningSimulator } from '../../src/sim/server.ts';
import { addDays } from '../../src/time/cycles.ts';
import { runDaybook } from '../support/cli.ts';
import { type CliSim, cliAgainstSim } from '../support/cli-sim.ts';
import type { TestDatabase } from '../support/db.ts';
import { runCyclesInline, watchChanging } from '../support/inline.ts';
import { UNTHROTTLED } from '../support/sim.ts';

const FIRST = '2026-11-02';
const CYCLES = Array.from({ length: 8 }, (_, i) => addDays(FIRST, i));
const KEEP = 3;

describe('the landing and the bookkeeping over eight cycles', { timeout: 300_000 }, () => {
  let t: TestDatabase;
  let sim: RunningSimulator;
  let dbSim: CliSim;
  let watched = 0;
  const env = { DAYBOOK_BOOKKEEPING_DAYS: String(KEEP) };

  beforeAll(async () => {
    dbSim = await cliAgainstSim({ enterprises: 300, rateLimits: UNTHROTTLED });
    ({ t, sim } = dbSim);
    await watchChanging(t, sim, CYCLES, 40);
    watched = (await t.sql<{ n: number }[]>`select count(*)::int as n from watchlist`)[0]?.n ?? 0;
    await runCyclesInline(t, sim, CYCLES, () => [], env);
  });

  afterAll(async () => {
    await dbSim?.close();
  });

  it('stores each distinct body once: a call row per answer, a body per distinct answer', async () => {
    const [r] = await t.sql<{ calls: number; bodies: number; distinct: number; orphans: number }[]>`
      select (select count(*)::int from raw_responses where operation = 'enterprise-search' and outcome = 'success') as calls,
             (select count(*)::int from raw_bodies) as bodies,
             (select count(distinct body_id)::int from raw_responses) as distinct,
             (select count(*)::int from raw_bodies b where not exists (select 1 from raw_responses r where r.body_id = b.id)) as orphans`;
    expect(r?.calls).toBeGreaterThanOrEqual(watched * CYCLES.length);
    // Every body is some call's; far fewer bodies than calls (most firms answered the same each day).
    expect(r?.orphans).toBe(0);
    expect(r?.bodies).toBe(r?.distinct);
    expect(r?.bodies ?? 0).toBeLessThan((r?.calls ?? 0) / 3);
    // A body and the answers that share it are the same bytes: the hash of each call's body is its key.
    const [mismatch] = await t.sql<{ n: number }[]>`
      select count(*)::int as n from raw_answers a join raw_bodies b on b.id = a.body_id
      where a.sha256 <> encode(sha256(convert_to(coalesce(a.body_text, a.body_json::text), 'UTF8')), 'hex')
        and a.body_bytes is null and a.body_text is not null`;
    expect(mismatch?.n).toBe(0);
    // An unchanged firm: one body for all its calls.
    const [quiet] = await t.sql<{ calls: number; bodies: number }[]>`
      select count(*)::int as calls, count(distinct body_id)::int as bodies from raw_answers
      where params->>'ent_name' = (
        select w.keyword from watchlist w join enterprise_versions v on v.pid = w.pid
        group by w.keyword having count(*) = 1 order by w.keyword limit 1)`;
    expect(quiet?.calls).toBe(CYCLES.length);
    expect(quiet?.bodies).toBe(1);
  });

  it('lands the same body from many connections at once as one body row, every call its own row', async () => {
    const text = JSON.stringify({
      status: 'error',
      error: { code: 'rate_limit_exceeded', message: 'slow down' },
    });
    const row = (i: number) => ({
      runId: null,
      cycle: CYCLES[0] as string,
      operation: 'enterprise-search' as const,
      params: { ent_name: `并发测试${i}` },
      httpStatus: 429,
      bodyText: text,
      outcome: 'rate_limit_exceeded',
      fetchedAt: new Date(),
      durationMs: 5,
    });
    const landed = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        i % 2 === 0 ? landRaw(t.sql, [row(i)]) : t.sql.begin((tx) => landRaw(tx, [row(i), row(i + 100)])),
      ),
    );
    const ids = landed.flat().map((l) => l.id);
    expect(new Set(ids).size).toBe(36);
    const [r] = await t.sql<{ bodies: number; calls: number }[]>`
      select count(distinct body_id)::int as bodies, count(*)::int as calls from raw_responses
      where id = any(${ids}::bigint[])`;
    expect(r).toEqual({ bodies: 1, calls: 36 });
  });

  it('compacts the bookkeeping of cycles older than DAYBOOK_BOOKKEEPING_DAYS, keeping the landing, the ledger and the history', async () => {
    const last = CYCLES[CYCLES.length - 1] as string;
    const before = addDays(last, -KEEP);
    const [r] = await t.sql<{ old: number; kept: number; cycles: number }[]>`
      select count(*) filter (where cycle < ${before})::int as old,
             count(*) filter (where cycle >= ${before})::int as kept,
             count(distinct cycle)::int as cycles
      from cycle_fetches`;
    expect(r?.old).toBe(0);
    expect(r?.kept).toBeGreaterThan(0);
    // Runs: the old enterprise runs are in the summaries, one per cycle, kind and outcome.
    const [runs] = await t.sql<{ old: number }[]>`
      select count(*)::int as old from runs where kind = 'enterprise' and cycle < ${before} and outcome = 'succeeded'`;
    expect(runs?.old).toBe(0);
    const summaries = await t.sql<{ cycle: string; runs: number; credits: number }[]>`
      select cycle::text, runs, credits::int from run_summaries where kind = 'enterprise' and outcome = 'succeeded' order by cycle`;
    expect(summaries.map((s) => s.cycle)).toEqual(CYCLES.filter((c) => c < before));
    // The ledger of those cycles is whole: one booked row per call, and the summaries' credits agree.
    for (const s of summaries) {
      const [l] = await t.sql<{ n: number; credits: number }[]>`
        select count(*)::int as n, coalesce(sum(credits), 0)::int as credits from credit_ledger
        where cycle = ${s.cycle} and status = 'booked'`;
      expect(l?.n).toBe(s.runs);
      expect(l?.credits).toBe(s.credits);
    }
    // Their booked enterprise entries are in their compacted form, each once, and none is left
    // among the entries of running cycles; the running cycles' entries are not compacted.
    const [ledger] = await t.sql<
      { live: number; compacted: number; recent: number; ids: number; rows: number }[]
    >`
      select (select count(*)::int from ledger_entries
              where cycle < ${before} and status = 'booked' and watch_id is not null) as live,
             (select count(*)::int from ledger_compacted where cycle < ${before}) as compacted,
             (select count(*)::int from ledger_compacted where cycle >= ${before}) as recent,
             (select count(distinct id)::int from credit_ledger) as ids,
             (select count(*)::int from credit_ledger) as rows`;
    expect(ledger?.live).toBe(0);
    expect(ledger?.compacted).toBe(summaries.reduce((n, s) => n + s.runs, 0));
    expect(ledger?.recent).toBe(0);
    expect(ledger?.ids).toBe(ledger?.rows);
    // Calls keep their run ids, and every call of every cycle is still landed.
    const [calls] = await t.sql<{ n: number; cycles: number }[]>`
      select count(*)::int as n, count(distinct cycle)::int as cycles from raw_responses
      where operation = 'enterprise-search' and run_id is not null`;
    expect(calls?.cycles).toBe(CYCLES.length);
    // Sightings: the latest of every enterprise stays.
    const [s] = await t.sql<{ missing: number }[]>`
      select count(*)::int as missing from enterprises e
      where not exists (select 1 from enterprise_sightings s where s.pid = e.pid and s.last_seen_at = e.last_seen_at)`;
    expect(s?.missing).toBe(0);
    const [older] = await t.sql<{ n: number; firms: number }[]>`
      select count(*)::int as n, count(distinct pid)::int as firms from enterprise_sightings`;
    expect(older?.n).toBeLessThan((older?.firms ?? 0) * CYCLES.length);
  });

  it('is idempotent, and daybook compact says what it did (as JSON too)', async () => {
    const last = CYCLES[CYCLES.length - 1] as string;
    const again = await compactBookkeeping(t.sql, last, KEEP);
    expect(again).toMatchObject({ cycleFetches: 0, runs: 0, sightings: 0 });
    const cli = await runDaybook(['compact', '--keep-days', '1', '--cycle', last, '--json'], {
      DATABASE_URL: t.url,
      LOG_LEVEL: 'silent',
    });
    expect(cli.code, cli.stderr).toBe(0);
    const summary = JSON.parse(cli.stdout) as { before: string; cycleFetches: number; runs: number };
    expect(summary.before).toBe(addDays(last, -1));
    expect(summary.cycleFetches).toBeGreaterThan(0);
    const bad = await runDaybook(['compact', '--keep-days', '0'], {
      DATABASE_URL: t.url,
      LOG_LEVEL: 'silent',
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--keep-days/);
  });

  it('keeps the /metrics counts equal to the tables they count, through a rebuild', async () => {
    const check = async () => {
      const counted = await t.sql<{ metric: string; a: string; b: string; n: number }[]>`
        select metric, a, b, sum(n)::int as n from metric_counts group by 1, 2, 3 having sum(n) <> 0 order by 1, 2, 3`;
      const actual = await t.sql<{ metric: string; a: string; b: string; n: number }[]>`
        select * from (
          select 'changes' as metric, severity as a, '' as b, count(*)::int as n from enterprise_changes group by 2
          union all select 'credits', cycle::text, '', sum(credits)::int from credit_ledger group by 2 having sum(credits) <> 0
          union all select 'upstream_requests', operation, outcome, count(*)::int from raw_responses group by 2, 3
          union all select 'versions', 'enterprise', '', count(*)::int from enterprise_versions having count(*) > 0
          union all select 'versions', 'product', '', count(*)::int from product_versions having count(*) > 0
        ) x order by 1, 2, 3`;
      expect(counted.filter((c) => !['delivery_queue', 'webhook_attempts'].includes(c.metric))).toEqual(
        actual,
      );
    };
    await check();
    await rebuild(t.sql, { batchSize: 200 });
    await check();
  });
  // Last: /metrics counts the calls made, which retention does not take back.
  it('drops old error answers nothing points to, with the bodies only they held, and nothing else', async () => {
    // Every column that points at a landed call is one retention checks.
    const fks = await t.sql<{ table: string; column: string }[]>`
      select c.conrelid::regclass::text as table, a.attname as column
      from pg_constraint c join pg_attribute a on a.attrelid = c.conrelid and a.attnum = any(c.conkey)
      where c.contype = 'f' and c.confrelid = 'raw_responses'::regclass`;
    for (const fk of fks) expect(RAW_REFERENCES).toContainEqual([fk.table, fk.column]);

    const error = (cycle: string, i: number, text: string, outcome: string, status: number) => ({
      runId: null,
      cycle,
      operation: 'enterprise-search' as const,
      params: { ent_name: `保留测试${i}` },
      httpStatus: status,
      bodyText: text,
      outcome,
      fetchedAt: new Date(),
      durationMs: 5,
    });
    const limited = JSON.stringify({
      status: 'error',
      error: { code: 'rate_limit_exceeded', message: 'too many' },
    });
    const old = CYCLES[0] as string;
    const recent = CYCLES[CYCLES.length - 1] as string;
    const landed = await landRaw(t.sql, [
      error(old, 1, limited, 'rate_limit_exceeded', 429),
      error(old, 2, limited, 'rate_limit_exceeded', 429),
      error(old, 3, '<html>502 Bad Gateway (retention test)</html>', 'server_error', 502),
      error(old, 4, '<html>503 kept: pointed to (retention test)</html>', 'server_error', 503),
      error(recent, 5, limited, 'rate_limit_exceeded', 429),
    ]);
    const ids = landed.map((l) => l.id);
    // The fourth is pointed to (a keyword's resolution names it): it stays.
    await t.sql`insert into keyword_resolutions (keyword, pid, raw_response_id, resolved_at)
                values ('保留测试4', 'pid-retention', ${ids[3] as number}, now())`;
    const bodies = await t.sql<{ id: string; body_id: string }[]>`
      select id, body_id from raw_responses where id = any(${ids}::bigint[]) order by id`;
    const before = await t.sql<
      { n: number }[]
    >`select count(*)::int as n from raw_responses where outcome = 'success'`;

    const s = await compactBookkeeping(t.sql, recent, KEEP, 2);
    expect(s.errorCalls).toBeGreaterThanOrEqual(3);
    const left = await t.sql<
      { id: string }[]
    >`select id from raw_responses where id = any(${ids}::bigint[]) order by id`;
    expect(left.map((l) => Number(l.id))).toEqual([ids[3], ids[4]]);
    // The 502 page's body went with its only call; the rate-limit body stays (a recent call holds it).
    const kept = await t.sql<{ id: string }[]>`
      select id from raw_bodies where id = any(${bodies.map((b) => b.body_id)}::bigint[]) order by id`;
    const bodyOf = (k: number) => bodies[k]?.body_id as string;
    expect(kept.map((k) => k.id).sort()).toEqual([bodyOf(0), bodyOf(3)].sort());
    const after = await t.sql<
      { n: number }[]
    >`select count(*)::int as n from raw_responses where outcome = 'success'`;
    expect(after).toEqual(before);
    await t.sql`delete from keyword_resolutions where keyword = '保留测试4'`;
  });
});
