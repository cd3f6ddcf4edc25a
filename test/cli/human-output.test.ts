/**
 * `daybook changes`, `status` and `digest` speak the analyst's language: after real cycles against
 * the simulator (a capital change, renames, shareholders that are companies daybook also watches,
 * then a cycle with format drift, a small budget and a keyword that finds nothing, then one out of
 * credits), their text reads in Chinese and in English with no field code, raw token, hex PID or
 * number without its unit; --json keeps the codes and raw values.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFaultSpec } from '../../src/sim/faults.ts';
import { ENTERPRISE_FIELDS, type Lang } from '../../src/terms/fields.ts';
import { keywordKey } from '../../src/watch/keyword.ts';
import { runDaybook } from '../support/cli.ts';
import { type CliSim, cliAgainstSim } from '../support/cli-sim.ts';
import { humanProblems } from '../support/human.ts';
import { runCyclesInline } from '../support/inline.ts';
import { TEST_KEY, UNTHROTTLED } from '../support/sim.ts';

/** Cycles with changes; then one with drift, a small budget and a keyword nobody has; then one out of credits. */
const CYCLES = ['2026-11-12', '2026-11-13', '2026-11-14', '2026-11-15'];
const ROUGH = '2026-11-16';
const BROKE = '2026-11-17';
const NOWHERE = '查无此名称的测试企业有限公司';
const LANGS: Lang[] = ['zh', 'en'];

describe('the text of changes, status and digest, in Chinese and English', { timeout: 240_000 }, () => {
  let c: CliSim;
  let env: Record<string, string>;
  /** Text from the registry (and the upstream's own messages) that the output quotes as it was. */
  let quoted: string[];
  /** A shareholder that is a company daybook watches, and its credit code. */
  let holder: { name: string; uscc: string };

  beforeAll(async () => {
    c = await cliAgainstSim({ enterprises: 300, rateLimits: UNTHROTTLED });
    env = { DATABASE_URL: c.t.url, LOG_LEVEL: 'silent' };
    const world = c.sim.sim.world();
    // The companies that change, and every company that is a shareholder of one whose
    // shareholders change: daybook then knows the holder's credit code too.
    world.at(CYCLES[0] as string);
    const watched = new Set<string>();
    const holders = new Set<string>();
    for (const [i, cycle] of CYCLES.entries()) {
      if (i === 0) continue;
      for (const x of world.changesIn(cycle)) {
        watched.add(x.pid);
        if (!x.fields.includes('BE_INVEST')) continue;
        for (const at of [CYCLES[i - 1] as string, cycle]) {
          world.at(at);
          for (const s of world.byPid(x.pid)?.BE_INVEST ?? []) if (s.PID) holders.add(s.PID);
        }
      }
    }
    world.at(CYCLES[0] as string);
    const names = [...watched, ...holders].flatMap((pid) => {
      const e = world.byPid(pid);
      return e ? [e.ENTNAME] : [];
    });
    const keywords = [...new Set(names), NOWHERE];
    await c.t
      .sql`insert into watchlist ${c.t.sql(keywords.map((k) => ({ keyword: k, keyword_key: keywordKey(k) })))}`;
    await runCyclesInline(c.t, c.sim, CYCLES);
    // The upstream drifts, and the budget takes a few entries only.
    c.sim.sim.setFaults(parseFaultSpec('drift=0.5'));
    await runCyclesInline(c.t, c.sim, [ROUGH], () => [], { DAYBOOK_CREDIT_BUDGET: '15' });
    c.sim.sim.setFaults(parseFaultSpec(''));
    // The account runs out of credits.
    c.sim.sim.setCredits(TEST_KEY, 0);
    await runCyclesInline(c.t, c.sim, [BROKE]);

    const texts = await c.t.sql<{ v: string }[]>`
      select distinct v from (
        select unnest(array[ent_name, history_name, uncid, reg_no, legal_person, op_loc, op_scope,
                            ent_status, ent_type, reg_org, industry_big, revoke_reason]) as v
        from analytics.enterprise_history
        union all
        select unnest(array[before, after]) from analytics.enterprise_changes
        where field <> all(${Object.entries(ENTERPRISE_FIELDS)
          .filter(([, s]) => !['text', 'list'].includes(s.kind))
          .map(([f]) => f)}::text[])
        union all
        select unnest(array[keyword, error_message]) from cycle_fetches f join watchlist w on w.id = f.watch_id
        union all
        select error_message from runs
        union all
        select paused_reason from cycle_budgets
        union all
        select unnest(array[field, seen, expected]) from format_drift
      ) t where v is not null and v <> ''`;
    // What the upstream said, without the frame daybook puts around it (`operation (HTTP n): code: `).
    const said = texts.flatMap(
      (r) => /^[a-z]+-[a-z]+ \(HTTP \d+\): (?:[a-z_]+: )?(.+)$/s.exec(r.v)?.slice(1, 2) ?? [],
    );
    // Longest first: a name inside a longer text is taken out with it.
    quoted = [...texts.map((r) => r.v), ...said].sort((a, b) => b.length - a.length);
    // A shareholder that is a company (parts of `name [type] PID pid`) whose code daybook knows.
    const [h] = await c.t.sql<{ name: string; uscc: string }[]>`
      select s.name, cur.uncid as uscc
      from enterprise_changes ch
      join enterprise_shareholders s on s.shareholder_pid = substring(coalesce(ch.after, ch.before) from ' PID (\\S+)')
      join analytics.enterprise_current cur on cur.pid = s.shareholder_pid
      where ch.field = 'BE_INVEST' and cur.uncid is not null
      limit 1`;
    holder = h as { name: string; uscc: string };
  });
  afterAll(() => c?.close());

  const daybook = async (...args: string[]) => {
    const r = await runDaybook(args, env);
    expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
    return r.stdout;
  };

  it('the history has what the test reads: a capital change, renames, shareholders that are companies', async () => {
    const fields = await c.t.sql<{ field: string }[]>`select distinct field from enterprise_changes`;
    expect(fields.map((f) => f.field)).toEqual(expect.arrayContaining(['REGCAP', 'ENTNAME', 'BE_INVEST']));
    expect(holder?.uscc).toBeTruthy();
  });

  for (const lang of LANGS) {
    it(`daybook changes --lang ${lang}: companies by name and credit code, items by name, values with units`, async () => {
      const text = await daybook('changes', '--lang', lang, '--limit', '100000');
      expect(humanProblems(text, { lang, quoted })).toEqual([]);
      const current = await c.t.sql<{ ent_name: string; uncid: string }[]>`
        select c.ent_name, c.uncid from analytics.enterprise_current c
        where exists (select 1 from enterprise_changes x where x.pid = c.pid)`;
      for (const e of current) expect(text).toContain(e.uncid);
      if (lang === 'zh') {
        expect(text).toMatch(/^\S.*（统一社会信用代码 [0-9A-Z]{18}）$/m);
        expect(text).toMatch(
          /^ {2}\d{4}-\d{2}-\d{2} {2}注册资本：[\d,.]+ 万\S+ → [\d,.]+ 万\S+（(增资|减资)；严重程度：[高中低]）$/m,
        );
        expect(text).toMatch(/^ {2}\d{4}-\d{2}-\d{2} {2}企业名称：\S+ → \S+（严重程度：中）$/m);
        expect(text).toContain(`${holder.name}（`);
        expect(text).toMatch(
          new RegExp(
            `股东信息：(新增|移除) ${holder.name}（[^）]*统一社会信用代码 ${holder.uscc}）（严重程度：中）`,
          ),
        );
      } else {
        expect(text).toMatch(/^\S.* \(USCC [0-9A-Z]{18}\)$/m);
        expect(text).toMatch(
          /^ {2}\d{4}-\d{2}-\d{2} {2}Registered capital: [A-Z]{3} [\d,.]+ million → [A-Z]{3} [\d,.]+ million \((increase|decrease); severity: (high|medium|low)\)$/m,
        );
        expect(text).toMatch(/^ {2}\d{4}-\d{2}-\d{2} {2}Company name: \S+ → \S+ \(severity: medium\)$/m);
        expect(text).toMatch(
          new RegExp(
            `Shareholders: (added|removed) ${holder.name} \\([^)]*USCC ${holder.uscc}\\) \\(severity: medium\\)`,
          ),
        );
      }
    });

    it(`daybook status --lang ${lang}: counts with units, reasons and states in words`, async () => {
      const text: Record<string, string> = {};
      for (const cycle of [CYCLES[0] as string, CYCLES[1] as string, ROUGH, BROKE]) {
        text[cycle] = await daybook('status', '--no-queues', '--cycle', cycle, '--lang', lang);
        expect(humanProblems(text[cycle] as string, { lang, quoted }), `${cycle}:\n${text[cycle]}`).toEqual(
          [],
        );
      }
      const [first, rough, broke] = [text[CYCLES[0] as string], text[ROUGH], text[BROKE]];
      if (lang === 'zh') {
        expect(first).toMatch(new RegExp(`^周期 ${CYCLES[0]} 失败 1 条（本周期不再重试）：$`, 'm'));
        expect(first).toMatch(new RegExp(`^${NOWHERE} +查无结果 +企业查询接口（HTTP 404）：`, 'm'));
        expect(rough).toMatch(
          /^ {2}积分：已用 [\d,]+ 积分，预留 [\d,]+ 积分，预算 [\d,]+ 积分，剩余 [\d,]+ 积分$/m,
        );
        expect(rough).toMatch(/^推迟：[\d,]+ 条（积分预算不足 [\d,]+ 条）；前 20 条：$/m);
        expect(rough).toMatch(/^监控关键词 +统一社会信用代码 +原因 +说明$/m);
        expect(rough).toMatch(/^\S+ +[0-9A-Z]{18} +积分预算不足 +计划未排到$/m);
        expect(rough).toMatch(/^格式漂移：未列明字段 \d+ 个，/m);
        expect(broke).toMatch(/；已暂停：积分不足（[\d-]+ [\d:]+，北京时间）：企业查询接口（HTTP 402）：/);
        expect(broke).toMatch(/^ {2}进度：推迟 [\d,]+ 条/m);
      } else {
        expect(first).toMatch(
          new RegExp(`^Failed in cycle ${CYCLES[0]} \\(1 entry; not retried this cycle\\):$`, 'm'),
        );
        expect(first).toMatch(new RegExp(`^${NOWHERE} +not found +company search \\(HTTP 404\\): `, 'm'));
        expect(rough).toMatch(
          /^ {2}Credits: [\d,]+ credits spent \+ [\d,]+ credits reserved of a budget of [\d,]+ credits/m,
        );
        expect(rough).toMatch(
          /^Deferred: [\d,]+ entries \(credit budget reached: [\d,]+ entries\); the first 20:$/m,
        );
        expect(rough).toMatch(/^Watch keyword +USCC +Reason +Detail$/m);
        expect(rough).toMatch(/^\S+ +[0-9A-Z]{18} +credit budget reached +not reached by the plan$/m);
        expect(rough).toMatch(/^Format drift: \d+ unknown fields, /m);
        expect(broke).toMatch(
          /; PAUSED: insufficient credits \([\d-]+ [\d:]+ Beijing time\): company search \(HTTP 402\): /,
        );
        expect(broke).toMatch(/^ {2}Progress: [\d,]+ entries deferred/m);
      }
    });

    it(`daybook digest --lang ${lang}: each company by name and credit code, then its changes`, async () => {
      const texts: string[] = [];
      for (const cycle of CYCLES.slice(1)) {
        const text = await daybook('digest', '--cycle', cycle, '--lang', lang);
        texts.push(text);
        expect(humanProblems(text, { lang, quoted }), `${cycle}:\n${text}`).toEqual([]);
        expect(text.split('\n')[0]).toBe(
          lang === 'zh' ? `每日摘要，周期 ${cycle}` : `Daily digest, cycle ${cycle}`,
        );
        const codes = await c.t.sql<{ uncid: string }[]>`
          select distinct cur.uncid from events e join analytics.enterprise_current cur on cur.pid = e.pid
          where e.cycle = ${cycle} and e.type like 'company.%' and e.type <> 'company.first_seen'`;
        expect(codes.length).toBeGreaterThan(0);
        for (const { uncid } of codes) expect(text).toContain(uncid);
      }
      const all = texts.join('\n');
      if (lang === 'zh') {
        expect(all).toMatch(
          /^ {2}注册资本：[\d,.]+ 万\S+ → [\d,.]+ 万\S+（(增资|减资)；严重程度：[高中低]）$/m,
        );
        expect(all).toMatch(/^ {2}企业名称：\S+ → \S+（严重程度：中）$/m);
        expect(all).toMatch(/^【严重程度：中】$/m);
      } else {
        expect(all).toMatch(
          /^ {2}Registered capital: [A-Z]{3} [\d,.]+ million → [A-Z]{3} [\d,.]+ million \(/m,
        );
        expect(all).toMatch(/^ {2}Company name: \S+ → \S+ \(severity: medium\)$/m);
        expect(all).toMatch(/^Medium severity$/m);
      }
    });
  }

  it('without --lang the text is in DAYBOOK_LANG, English when it is not set', async () => {
    const zh = await runDaybook(['changes', '--limit', '3'], { ...env, DAYBOOK_LANG: 'zh' });
    expect(zh.stdout).toMatch(/项变更/);
    const en = await runDaybook(['changes', '--limit', '3'], env);
    expect(en.stdout).toMatch(/^3 changes at \d+ compan/);
    const bad = await runDaybook(['status', '--lang', 'fr'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--lang must be one of zh, en; got "fr"/);
  });

  it('--json keeps the codes and the raw values', async () => {
    const lines = (await daybook('changes', '--json', '--limit', '100000', '--lang', 'en'))
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    for (const l of lines)
      expect(Object.keys(l)).toEqual([
        'cycle',
        'detected_at',
        'pid',
        'name',
        'category',
        'field',
        'kind',
        'before',
        'after',
        'severity',
      ]);
    const capital = lines.find((l) => l.field === 'REGCAP');
    expect(capital).toMatchObject({ category: 'registered_capital', kind: 'modified' });
    expect(String(capital?.before)).toMatch(/^\d+(\.\d+)?$/);
    expect(
      lines.find((l) => l.field === 'BE_INVEST' && / PID [0-9a-f]{32}/.test(`${l.before}${l.after}`)),
    ).toBeTruthy();
    const digest = JSON.parse(
      await daybook('digest', '--cycle', CYCLES[1] as string, '--json', '--lang', 'zh'),
    );
    expect(digest.markdown).toMatch(/^# daybook digest, cycle /);
    expect(digest.markdown).toMatch(/company\.\w+\.changed/);
    const status = JSON.parse(
      await daybook('status', '--no-queues', '--cycle', ROUGH, '--json', '--lang', 'zh'),
    );
    expect(status.deferredByReason).toHaveProperty('credit_budget');
    const first = JSON.parse(
      await daybook('status', '--no-queues', '--cycle', CYCLES[0] as string, '--json', '--lang', 'zh'),
    );
    expect(first.failed.enterprises).toEqual(
      expect.arrayContaining([expect.objectContaining({ keyword: NOWHERE, reason: 'not_found' })]),
    );
  });

  it('--help of each command says what --lang does', async () => {
    for (const cmd of ['changes', 'status', 'digest']) {
      const help = await daybook(cmd, '--help');
      expect(help, cmd).toMatch(
        /--lang <lang>\s+the language of the text: zh \(Chinese\) or en\s+\(English\)/,
      );
      expect(help.replace(/\s+/g, ' '), cmd).toContain(
        'default DAYBOOK_LANG, else en (--json keeps the codes and raw values)',
      );
    }
  });
});
