/**
 * Watching by credit code against the simulator over HTTP: an answer naming an enterprise with
 * another unified social credit code than its entry expects is landed and booked, never merged
 * into history, fails the entry for the cycle (not bought again), is an event in
 * analytics.enterprise_events and a flag in `watch list`; a matching code merges as usual;
 * `--pin` takes the first code and catches a later resolution elsewhere; `daybook rebuild`
 * refuses the same answers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rebuild } from '../../src/history/rebuild.ts';
import type { RunningSimulator } from '../../src/sim/server.ts';
import type { SimEnterprise } from '../../src/sim/types.ts';
import type { WatchRow } from '../../src/watch/store.ts';
import { type CliResult, runDaybook } from '../support/cli.ts';
import { type CliSim, cliAgainstSim } from '../support/cli-sim.ts';
import type { TestDatabase } from '../support/db.ts';
import { runCyclesInline } from '../support/inline.ts';
import { UNTHROTTLED } from '../support/sim.ts';
import { viewRows } from '../support/views.ts';

const [C1, C2, C3] = ['2026-11-20', '2026-11-21', '2026-11-22'] as const;

/** The analytics views the rebuild below must leave as they were. */
const VIEWS = [
  'enterprise_current',
  'enterprise_history',
  'enterprise_changes',
  'enterprise_events',
  'credit_usage',
];

describe('an answer about another company than the expected credit code', { timeout: 240_000 }, () => {
  let t: TestDatabase;
  let sim: RunningSimulator;
  let dbSim: CliSim;
  /** The short keyword, the company it partially matches, and the one the user meant. */
  let short: string;
  let found: SimEnterprise;
  let meant: SimEnterprise;
  /** Watched by full name with its right code. */
  let right: SimEnterprise;
  /** Watched by full name with --pin, then made to resolve to `elsewhere`. */
  let pinned: SimEnterprise;
  let elsewhere: SimEnterprise;
  /** Watched by a short keyword without a code, and by a former name. */
  let loose: string;
  let renamed: SimEnterprise;

  const daybook = (...args: string[]): Promise<CliResult> =>
    runDaybook(args, { DATABASE_URL: t.url, LOG_LEVEL: 'silent' });
  const resolveVia = async (keyword: string, pid: string | null) => {
    const res = await fetch(`${sim.url}/_sim/resolve`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ keyword, pid }),
    });
    expect(res.status).toBe(200);
  };
  const fetchOf = async (keyword: string, cycle: string) =>
    (
      await t.sql<{ status: string; error_code: string | null; error_message: string | null }[]>`
        select f.status, f.error_code, f.error_message from cycle_fetches f join watchlist w on w.id = f.watch_id
        where w.keyword = ${keyword} and f.cycle = ${cycle}`
    )[0];
  const listed = async (): Promise<Map<string, WatchRow>> => {
    const r = await daybook('watch', 'list', '--json');
    expect(r.code).toBe(0);
    return new Map((JSON.parse(r.stdout) as WatchRow[]).map((w) => [w.keyword, w]));
  };
  const historyOf = async (pid: string) =>
    (
      await t.sql<{ versions: number; changes: number; enterprises: number }[]>`
        select (select count(*)::int from enterprise_versions where pid = ${pid}) as versions,
               (select count(*)::int from enterprise_changes where pid = ${pid}) as changes,
               (select count(*)::int from enterprises where pid = ${pid}) as enterprises`
    )[0];

  beforeAll(async () => {
    dbSim = await cliAgainstSim({ enterprises: 300, rateLimits: UNTHROTTLED });
    ({ t, sim } = dbSim);
    const world = sim.sim.world();
    world.at(C1);
    const all = world.all();
    // A two-character keyword the model matches to one company while the user meant another
    // whose name holds it too.
    for (const e of all) {
      const k = [...e.ENTNAME].slice(2, 4).join('');
      const hit = world.match(k);
      const other = all.find((x) => x.PID !== hit?.PID && x.ENTNAME.includes(k));
      if (hit && other) {
        short = k;
        found = hit;
        meant = other;
        break;
      }
    }
    const taken = new Set([found.PID, meant.PID]);
    const free = (pred: (e: SimEnterprise) => boolean = () => true) => {
      const e = all.find((x) => !taken.has(x.PID) && pred(x));
      if (!e) throw new Error('the world is too small for this test');
      taken.add(e.PID);
      return e;
    };
    right = free();
    pinned = free();
    elsewhere = free();
    renamed = free((e) => e.HISTORYNAME !== '' && world.match(e.HISTORYNAME)?.PID === e.PID);
    // A three-character keyword that resolves to a company no other entry names.
    const partial = all.find((e) => {
      const k = [...e.ENTNAME].slice(2, 5).join('');
      const hit = world.match(k);
      return hit !== undefined && !taken.has(hit.PID) && hit.ENTNAME !== k;
    });
    if (!partial) throw new Error('no loose keyword in this world');
    loose = [...partial.ENTNAME].slice(2, 5).join('');

    for (const args of [
      [short, '--uscc', meant.UNCID],
      [right.ENTNAME, '--uscc', right.UNCID.toLowerCase()],
      [pinned.ENTNAME, '--pin'],
      [loose],
      [renamed.HISTORYNAME],
    ]) {
      const r = await daybook('watch', 'add', ...args);
      expect(r.code, r.stderr).toBe(0);
    }
    await runCyclesInline(t, sim, [C1]);
  });
  afterAll(async () => {
    await dbSim?.close();
  });

  it('the short keyword resolved to another company than its code: the answer is landed and its credits booked', async () => {
    const raws = await t.sql<
      { id: string; outcome: string; uncid: string; credits: number; status: string }[]
    >`
      select r.id, r.outcome, r.body_json#>>'{metadata,content,UNCID}' as uncid, l.credits, l.status
      from raw_answers r join credit_ledger l on l.raw_response_id = r.id
      where r.params->>'ent_name' = ${short} and r.cycle = ${C1}`;
    expect(raws).toEqual([
      { id: expect.any(String), outcome: 'success', uncid: found.UNCID, credits: 3, status: 'booked' },
    ]);
    const [run] = await t.sql<{ outcome: string; error_code: string; credits: number }[]>`
      select outcome, error_code, credits from runs where kind = 'enterprise' and entity = ${short} and cycle = ${C1}`;
    expect(run).toEqual({ outcome: 'failed', error_code: 'resolution_mismatch', credits: 3 });
  });

  it('writes no version, change or resolution for the other company', async () => {
    expect(await historyOf(found.PID)).toEqual({ versions: 0, changes: 0, enterprises: 0 });
    expect(await t.sql`select 1 from keyword_resolutions where keyword = ${short}`).toHaveLength(0);
  });

  it('fails the entry for the cycle with resolution_mismatch, naming both codes and the name found', async () => {
    const f = await fetchOf(short, C1);
    expect(f).toMatchObject({ status: 'failed', error_code: 'resolution_mismatch' });
    expect(f?.error_message).toContain(found.UNCID);
    expect(f?.error_message).toContain(meant.UNCID);
    expect(f?.error_message).toContain(found.ENTNAME);
  });

  it('a second run of the same cycle does not buy it again', async () => {
    const billed = sim.sim.counters.billedQueries;
    await runCyclesInline(t, sim, [C1]);
    expect(sim.sim.counters.billedQueries).toBe(billed);
    expect((await fetchOf(short, C1))?.status).toBe('failed');
    const [n] = await t.sql<{ n: number }[]>`
      select count(*)::int as n from raw_answers where params->>'ent_name' = ${short} and cycle = ${C1}`;
    expect(n?.n).toBe(1);
  });

  it('is a resolution_mismatch event in analytics.enterprise_events', async () => {
    const events = await t.sql<{ pid: string; cycle: string; keyword: string; detail: string }[]>`
      select pid, cycle::text as cycle, keyword, detail from analytics.enterprise_events
      where kind = 'resolution_mismatch'`;
    expect(events).toEqual([
      {
        pid: found.PID,
        cycle: C1,
        keyword: short,
        detail: `expected UNCID ${meant.UNCID}; the answer names ${found.ENTNAME} (UNCID ${found.UNCID})`,
      },
    ]);
    // In the outbox too, named after the company found (no version of it is kept).
    const outbox = await t.sql<{ pid: string; name: string; severity: string }[]>`
      select pid, name, severity from analytics.events where type = 'company.resolution.mismatch'`;
    expect(outbox).toEqual([{ pid: found.PID, name: found.ENTNAME, severity: 'high' }]);
  });

  it('watch list flags the entry with the name and code found, beside the code expected', async () => {
    const row = (await listed()).get(short);
    expect(row).toMatchObject({
      expected_uscc: meant.UNCID,
      last_outcome: 'resolution_mismatch',
      resolved_name: null,
      match: null,
    });
    expect(row?.resolution_mismatch).toContain(found.ENTNAME);
    expect(row?.resolution_mismatch).toContain(found.UNCID);
    const table = await daybook('watch', 'list');
    expect(table.stdout).toContain(`${found.UNCID} ${[...found.ENTNAME].slice(0, 10).join('')}`);
  });

  it('a matching code merges normally, and the keyword matched exactly', async () => {
    expect((await fetchOf(right.ENTNAME, C1))?.status).toBe('succeeded');
    expect(await historyOf(right.PID)).toMatchObject({ versions: 1, enterprises: 1 });
    expect((await listed()).get(right.ENTNAME)).toMatchObject({
      expected_uscc: right.UNCID,
      resolved_name: right.ENTNAME,
      resolved_uscc: right.UNCID,
      match: 'exact',
      resolution_mismatch: null,
    });
  });

  it('watch list says how loose keywords matched: partial, former_name', async () => {
    const rows = await listed();
    expect(rows.get(loose)).toMatchObject({ match: 'partial', expected_uscc: null });
    expect(rows.get(renamed.HISTORYNAME)).toMatchObject({
      match: 'former_name',
      resolved_name: renamed.ENTNAME,
      resolved_uscc: renamed.UNCID,
    });
  });

  it('--pin takes the code of the first resolution, then catches a later one elsewhere', async () => {
    expect((await listed()).get(pinned.ENTNAME)).toMatchObject({
      expected_uscc: pinned.UNCID,
      match: 'exact',
    });

    // The model comes to name another company for this keyword.
    await resolveVia(pinned.ENTNAME, elsewhere.PID);
    const billed = sim.sim.counters.billedQueries;
    await runCyclesInline(t, sim, [C2]);
    expect(sim.sim.counters.billedQueries).toBeGreaterThan(billed);
    const f = await fetchOf(pinned.ENTNAME, C2);
    expect(f).toMatchObject({ status: 'failed', error_code: 'resolution_mismatch' });
    expect(f?.error_message).toContain(elsewhere.UNCID);
    expect(await historyOf(elsewhere.PID)).toEqual({ versions: 0, changes: 0, enterprises: 0 });
    const [resolution] = await t.sql<{ pid: string }[]>`
      select pid from keyword_resolutions where keyword = ${pinned.ENTNAME}`;
    expect(resolution?.pid).toBe(pinned.PID);
    const row = (await listed()).get(pinned.ENTNAME);
    expect(row).toMatchObject({ expected_uscc: pinned.UNCID, pid: pinned.PID });
    expect(row?.resolution_mismatch).toContain(elsewhere.ENTNAME);

    // Back to the right company: merged again, the flag gone.
    await resolveVia(pinned.ENTNAME, null);
    await runCyclesInline(t, sim, [C3]);
    expect((await fetchOf(pinned.ENTNAME, C3))?.status).toBe('succeeded');
    expect((await listed()).get(pinned.ENTNAME)).toMatchObject({
      expected_uscc: pinned.UNCID,
      resolution_mismatch: null,
      last_outcome: 'success',
    });
  });

  it('rebuild gives the same history, refusing the mismatched answers again', async () => {
    const snapshot = () => viewRows(t.sql, VIEWS);
    // The short keyword's answers (one a cycle) and the pinned one's of the second cycle.
    const [refused] = await t.sql<{ n: number }[]>`select count(*)::int as n from resolution_mismatches`;
    expect(refused?.n).toBeGreaterThanOrEqual(2);
    const before = await snapshot();
    const summary = await rebuild(t.sql, { batchSize: 3 });
    expect(summary.mismatched).toBe(refused?.n);
    const after = await snapshot();
    for (const view of VIEWS) expect(after[view], view).toEqual(before[view]);
    expect(await historyOf(found.PID)).toEqual({ versions: 0, changes: 0, enterprises: 0 });
    expect(await historyOf(elsewhere.PID)).toEqual({ versions: 0, changes: 0, enterprises: 0 });
  });
});
