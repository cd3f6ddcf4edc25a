/**
 * Risk from related companies, end to end: A is held by B, which is held by C (a chain of the
 * simulator's world), and A is watched with `daybook watch add … --with-shareholders 2`. The
 * first cycle buys A, then B and C as each refresh finds them (top-ups of the same cycle). C
 * becomes 注销 on a known day (the simulator's schedule). On that cycle, events on B (a direct
 * shareholder) and on A (through B) name the chain, and a Feishu receiver gets them in Chinese,
 * in words; the next cycle repeats nothing. Removing A stops watching B and C and keeps their
 * history. The simulator's change log is the truth of who holds whom.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEvents } from '../../src/events/feed.ts';
import type { RunningSimulator } from '../../src/sim/server.ts';
import { addDays } from '../../src/time/cycles.ts';
import { type VendorReceiver, vendorReceiver } from '../delivery/support/vendors.ts';
import { waitFor } from '../faults/support/processes.ts';
import { runDaybook } from '../support/cli.ts';
import { type CliSim, cliAgainstSim } from '../support/cli-sim.ts';
import type { TestDatabase } from '../support/db.ts';
import { humanProblems } from '../support/human.ts';
import { runCyclesInline } from '../support/inline.ts';
import { UNTHROTTLED } from '../support/sim.ts';

const FIRST = '2026-11-10';
const CYCLES = [0, 1, 2, 3].map((d) => addDays(FIRST, d));
/** The cycle C becomes 注销 in. */
const STRUCK = CYCLES[2] as string;
const SIGNING = 'SECrelated-signing-0042';

describe('risk from a shareholder’s shareholder', { timeout: 300_000 }, () => {
  let dbSim: CliSim;
  let t: TestDatabase;
  let sim: RunningSimulator;
  let feishu: VendorReceiver;
  beforeAll(async () => {
    dbSim = await cliAgainstSim({ enterprises: 400, rateLimits: UNTHROTTLED });
    ({ t, sim } = dbSim);
    feishu = await vendorReceiver('feishu', { secret: SIGNING });
  });
  afterAll(async () => {
    await feishu?.close();
    await dbSim?.close();
  });

  it('watches the chain, writes the events on B and A with the path, delivers them in Chinese, once', async () => {
    const world = sim.sim.world();
    world.at(FIRST);
    // A chain whose links hold over the cycles (no shareholder change of A or B on the way).
    const moved = new Set(
      CYCLES.slice(1).flatMap((c) =>
        world
          .changesIn(c)
          .filter((x) => x.fields.includes('BE_INVEST') || x.fields.includes('ENTSTATUS'))
          .map((x) => x.pid),
      ),
    );
    world.at(FIRST);
    const chain = world.chains(3, 50).find((ch) => ch.every((l) => !moved.has(l.pid)));
    if (!chain) throw new Error('no steady shareholding chain of three in the simulated world');
    const [a, b, c] = chain as [(typeof chain)[0], (typeof chain)[0], (typeof chain)[0]];
    world.schedule(c.pid, STRUCK, '注销');
    const env = { ...dbSim.env, DAYBOOK_PUBLIC_URL: 'https://daybook.example' };

    const add = await runDaybook(['watch', 'add', a.name, '--with-shareholders', '2'], env);
    expect(add.code, add.stderr).toBe(0);
    expect(add.stdout).toMatch(/with shareholders to 2 levels: 0 watched now/);
    const sub = await runDaybook(
      ['subscribe', 'add', feishu.url, '--format', 'feishu', '--signing-secret', SIGNING, '--allow-private'],
      env,
    );
    expect(sub.code, sub.stderr).toBe(0);

    // The first cycle buys A, then its enterprise shareholders (B among them) and theirs (C
    // among them) as the refreshes find them, every one bought in the cycle.
    await runCyclesInline(t, sim, CYCLES.slice(0, 1));
    const watched = await t.sql<{ pid: string | null; direct: boolean; priority: number; bought: boolean }[]>`
      select w.pid, w.direct, w.priority,
        exists (select 1 from cycle_fetches f where f.watch_id = w.id and f.cycle = ${FIRST} and f.status = 'succeeded') as bought
      from watchlist w where active order by id`;
    expect(watched[0]).toMatchObject({ pid: a.pid, direct: true, priority: 0, bought: true });
    expect(watched.map((w) => w.pid)).toEqual(expect.arrayContaining([b.pid, c.pid]));
    for (const w of watched.slice(1))
      expect(w).toMatchObject({ direct: false, priority: -1001, bought: true });
    // Each shareholder the records name by PID, to two levels (the world's truth).
    const truthA = world.byPid(a.pid)?.BE_INVEST.flatMap((s) => (s.PID ? [s.PID] : [])) ?? [];
    const truthB = truthA.flatMap(
      (p) => world.byPid(p)?.BE_INVEST.flatMap((s) => (s.PID ? [s.PID] : [])) ?? [],
    );
    expect(new Set(watched.slice(1).map((w) => w.pid))).toEqual(
      new Set([...truthA, ...truthB].filter((p) => p !== a.pid)),
    );
    const chains = await t.sql<{ level: number; path_pids: string[] }[]>`
      select level, path_pids from watch_relations order by level`;
    expect(chains).toEqual(
      expect.arrayContaining([
        { level: 1, path_pids: [a.pid, b.pid] },
        { level: 2, path_pids: [a.pid, b.pid, c.pid] },
      ]),
    );
    const list = await runDaybook(['watch', 'list', '--json'], env);
    const listed = JSON.parse(list.stdout) as {
      pid: string;
      priority: number | null;
      watched_through: string | null;
    }[];
    expect(listed.find((w) => w.pid === c.pid)).toMatchObject({ priority: null, watched_through: a.name });
    expect(listed.find((w) => w.pid === a.pid)).toMatchObject({ priority: 0, watched_through: null });
    // The list as CSV imports back as A alone: its shareholders come back through it.
    const csv = await runDaybook(['watch', 'list', '--csv'], env);
    expect(csv.code, csv.stderr).toBe(0);
    const file = join(mkdtempSync(join(tmpdir(), 'related-')), 'list.csv');
    writeFileSync(file, csv.stdout);
    const back = await runDaybook(['watch', 'import', file, '--dry-run', '--json'], env);
    expect(back.code, back.stderr).toBe(0);
    expect(JSON.parse(back.stdout)).toMatchObject({
      imported: 0,
      alreadyWatched: 1,
      shareholderRows: watched.length - 1,
    });
    expect(back.stderr).toContain(
      `${c.name} is not imported as an entry: it is watched only as a shareholder`,
    );

    const [{ after } = { after: 0 }] = await t.sql<{ after: number }[]>`
      select coalesce(max(seq), 0)::int as after from events`;
    await runCyclesInline(t, sim, CYCLES.slice(1, 3));
    // The simulator's truth: C became 注销 on that day, and B holds it.
    const truth = world.changesIn(STRUCK).find((x) => x.pid === c.pid);
    expect(truth?.holders).toContain(b.pid);

    const events = (await readEvents(t.sql, { after, limit: 10_000 })).filter((e) =>
      e.type.startsWith('related.'),
    );
    const status = events.filter(
      (e) => e.type === 'related.status.changed' && (e.data.related as { pid: string }).pid === c.pid,
    );
    expect(status.map((e) => [e.pid, e.cycle, e.severity, e.data.hops])).toEqual(
      expect.arrayContaining([
        [b.pid, STRUCK, 'high', 1],
        [a.pid, STRUCK, 'medium', 2],
      ]),
    );
    expect(status).toHaveLength(2);
    const onA = status.find((e) => e.pid === a.pid);
    expect(onA?.data.path).toEqual([
      { pid: a.pid, name: a.name },
      { pid: b.pid, name: b.name },
      { pid: c.pid, name: c.name },
    ]);
    expect(onA?.data.related).toMatchObject({ pid: c.pid, name: c.name, uscc: c.uscc });
    expect(onA?.data.change).toMatchObject({ field: 'ENTSTATUS', current: '注销', detail: 'to_bad' });
    // Dated by C's change (its APPRDATE), not by the holder's own record.
    const [cChange] = await t.sql<{ effective_date: string | null }[]>`
      select effective_date::text from events where pid = ${c.pid} and type = 'company.status.changed' and cycle = ${STRUCK}`;
    const [cVersion] = await t.sql<{ appr_date: string | null }[]>`
      select v.appr_date::text from enterprise_versions v join enterprises e on e.current_version_id = v.id
      where e.pid = ${c.pid}`;
    expect(cChange?.effective_date).toBe(cVersion?.appr_date);
    for (const e of status) expect(e.effective_date).toBe(cVersion?.appr_date ?? null);

    // Delivered to Feishu, in Chinese: B's message and A's, each naming C and the way it holds them.
    await waitFor(
      'every delivery made',
      async () => {
        const r = await runDaybook(['deliver', '--json'], env);
        expect(r.code, r.stderr).toBe(0);
        const [left] = await t.sql<{ n: number }[]>`
          select count(*)::int as n from delivery_queue where state <> 'succeeded'`;
        return left?.n === 0;
      },
      120_000,
      500,
    );
    const all = feishu.accepted().map((g) => g.text);
    // The cycle's digest names them too, each under its holder.
    const digest = all.filter((x) => x.includes(`每日摘要 · 周期 ${STRUCK}`));
    expect(digest, all.map((x) => x.split('\n')[0]).join('\n')).toHaveLength(1);
    expect(digest[0]).toContain(`持股路径：${c.name} → ${b.name} → ${a.name}`);
    expect(digest[0]).toContain(`股东 ${c.name}`);
    const texts = all.filter((x) => !x.includes('每日摘要'));
    const toB = texts.filter(
      (x) => x.includes(`股东 ${c.name}（统一社会信用代码 ${c.uscc}）`) && x.includes('直接股东'),
    );
    const toA = texts.filter((x) => x.includes(`持股路径：${c.name} → ${b.name} → ${a.name}`));
    expect(toB, texts.join('\n---\n')).toHaveLength(1);
    expect(toA, texts.join('\n---\n')).toHaveLength(1);
    for (const x of [...toB, ...toA]) {
      expect(x).toMatch(/股东登记状态异常/);
      expect(x).toMatch(/→ 注销/);
      expect(humanProblems(x, { lang: 'zh', quoted: [a.name, b.name, c.name, c.uscc] }), x).toEqual([]);
    }
    const bodyOfA = feishu.accepted().find((g) => g.text === toA[0])?.body;
    expect(bodyOfA).toContain(`https://daybook.example/ui/companies/${a.pid}`);

    // The next cycle repeats nothing.
    const [{ before } = { before: 0 }] = await t.sql<{ before: number }[]>`
      select coalesce(max(seq), 0)::int as before from events`;
    await runCyclesInline(t, sim, CYCLES.slice(3));
    const again = (await readEvents(t.sql, { after: before, limit: 10_000 })).filter((e) =>
      e.type.startsWith('related.'),
    );
    expect(again).toEqual([]);

    // Removing A stops watching B and C (from the next plan), and keeps their history.
    const rm = await runDaybook(['watch', 'remove', a.name], env);
    expect(rm.code, rm.stderr).toBe(0);
    expect(rm.stdout).toContain(`and ${watched.length - 1} shareholders watched through it`);
    const [{ active } = { active: -1 }] = await t.sql<{ active: number }[]>`
      select count(*)::int as active from watchlist where active`;
    expect(active).toBe(0);
    const [{ versions } = { versions: 0 }] = await t.sql<{ versions: number }[]>`
      select count(*)::int as versions from enterprise_versions where pid = ${c.pid}`;
    expect(versions).toBe(2);
  });

  it('reads --with-shareholders before or after the names, and refuses a depth past 3 with nothing written', async () => {
    const env = dbSim.env;
    const [before] = await t.sql<{ n: number }[]>`select count(*)::int as n from watchlist`;
    const deep = await runDaybook(['watch', 'add', '某某科技有限公司', '--with-shareholders', '4'], env);
    expect(deep.code).toBe(2);
    expect(deep.stderr).toMatch(/--with-shareholders must be from 0 to 3 levels, got 4; nothing was added/);
    const [after] = await t.sql<{ n: number }[]>`select count(*)::int as n from watchlist`;
    expect(after?.n).toBe(before?.n);
    // The flag right before a name takes no name for its depth: the name is watched, at depth 1.
    const first = await runDaybook(
      ['watch', 'add', '--with-shareholders', '某某科技有限公司', '另一家有限公司'],
      env,
    );
    expect(first.code, first.stderr).toBe(0);
    const rows = await t.sql<{ keyword: string; shareholder_depth: number }[]>`
      select keyword, shareholder_depth from watchlist where keyword in ('某某科技有限公司', '另一家有限公司') order by keyword`;
    expect(rows).toEqual([
      { keyword: '另一家有限公司', shareholder_depth: 1 },
      { keyword: '某某科技有限公司', shareholder_depth: 1 },
    ]);
    // 0 stops following them.
    const stop = await runDaybook(['watch', 'add', '某某科技有限公司', '--with-shareholders', '0'], env);
    expect(stop.code, stop.stderr).toBe(0);
    expect(stop.stdout).toMatch(/shareholders no longer followed/);
  });
});
