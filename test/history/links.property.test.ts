/**
 * `analytics.enterprise_links` as of any day equals the links of that day's versions, as a
 * property. Random histories of three companies (answers on random days, some on the same day)
 * whose shareholders, persons, legal representative and clearing members are drawn from small
 * pools, so links come, go and come back, and names repeat across companies, are ingested into
 * Postgres through the pipeline's own ingest. Then, for every day from before the first answer to
 * after the last:
 * - the spans of `enterprise_links` holding on that day are exactly the links of the version of
 *   that day (the latest version whose cycle is on or before it), one span per link;
 * - `analytics.related_companies(…, as_of => day)` at depth 1 is exactly the companies one hop away
 *   in those versions: its shareholders with a PID, its holders, and companies with a person of the
 *   same name.
 * The expected side is read from the tables with plain joins, not through the view. The runs are
 * a fixed budget of work, not of time.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestEnterpriseSuccess } from '../../src/history/ingest.ts';
import { addDays } from '../../src/time/cycles.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';
import { enterpriseAnswer } from '../support/records.ts';

const RUNS = 40;
const EPOCH = '2026-03-01';
const COMPANIES = ['A', 'B', 'C'] as const;

const personName = fc.constantFrom('张三', '李四', '王五', '<b>赵六</b>');
const position = fc.constantFrom('执行董事', '监事', '经理');
/** Shareholders: the other companies (by PID), a company daybook does not hold, persons, an organisation. */
const shareholder = fc.oneof(
  fc.record({ target: fc.constantFrom(0, 1, 2, 3), INVTYPE: fc.constantFrom('企业法人', '合伙企业') }),
  fc.record({ INV: personName, INVTYPE: fc.constantFrom('自然人股东', '非农民自然人') }),
  fc.constant({ INV: '某市国有资产监督管理委员会', INVTYPE: '机关法人' }),
);
const answerOf = fc.record({
  company: fc.constantFrom(0, 1, 2),
  /** Days after the previous answer (0: the same day). */
  gap: fc.constantFrom(0, 1, 1, 2, 3),
  LEGALPERSON: fc.oneof(personName, fc.constant('')),
  PERSONS: fc.array(fc.record({ NAME: personName, POSITION: position }), { maxLength: 3 }),
  BE_INVEST: fc.array(shareholder, { maxLength: 3 }),
  CLEARINGINFO: fc.array(fc.record({ liqMem: personName, ligpriSign: fc.constantFrom('1', '2') }), {
    maxLength: 2,
  }),
});

type Link = {
  relation: string;
  related_pid: string | null;
  related_name: string | null;
  position: string | null;
};
const key = (l: Link) => JSON.stringify([l.relation, l.related_pid, l.related_name, l.position]);

describe('analytics.enterprise_links as of a day', { timeout: 600_000 }, () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await freshDatabase();
  });
  afterAll(() => t?.drop());

  /** The links of the version of `day` of `pid`, from the tables. */
  const expectedLinks = (pid: string, day: string) => t.sql<Link[]>`
    with v as (
      select id, legal_person, legal_person_desc from enterprise_versions
      where pid = ${pid} and cycle <= ${day}::date order by version desc limit 1
    )
    select distinct * from (
      select 'shareholder' as relation, s.shareholder_pid as related_pid, s.name as related_name, s.type as position
      from v join enterprise_shareholders s on s.version_id = v.id
      union all
      select 'legal_representative', null, v.legal_person, v.legal_person_desc from v where v.legal_person <> ''
      union all
      select 'personnel', null, p.name, p.position from v join enterprise_persons p on p.version_id = v.id
      union all
      select 'clearing_member', null, c.name, c.position from v join enterprise_clearing_members c on c.version_id = v.id
    ) x`;

  it('equals the links of that day’s versions, one span per link, and related_companies reads them', async () => {
    let run = 0;
    let clock = Date.parse('2026-03-01T00:00:00Z');
    await fc.assert(
      fc.asyncProperty(fc.array(answerOf, { minLength: 1, maxLength: 10 }), async (answers) => {
        run += 1;
        const pids = [...COMPANIES.map((c) => `r${run}-${c}`), `r${run}-X`];
        const pidOf = (i: number) => pids[i] as string;
        let cycle = EPOCH;
        for (const a of answers) {
          cycle = addDays(cycle, a.gap);
          const pid = pidOf(a.company);
          // Names carry the run, so that no two runs share a person.
          const named = (name: string) => (name === '' ? name : `${name}${run}`);
          const record = {
            PID: pid,
            ENTNAME: `${pid} 有限公司`,
            LEGALPERSON: named(a.LEGALPERSON),
            PERSONS: a.PERSONS.map((p) => ({ ...p, NAME: named(p.NAME) })),
            BE_INVEST: a.BE_INVEST.map((s) =>
              'target' in s
                ? { PID: pidOf(s.target), INV: `${pidOf(s.target)} 有限公司`, INVTYPE: s.INVTYPE }
                : { ...s, INV: named(s.INV) },
            ),
            CLEARINGINFO: a.CLEARINGINFO.map((c) => ({ ...c, liqMem: named(c.liqMem) })),
          };
          clock += 60_000;
          await ingestEnterpriseSuccess(t.sql, enterpriseAnswer(record, new Date(clock)), record.ENTNAME, {
            runId: null,
            cycle,
          });
        }
        const held = pids.slice(0, 3);
        for (let day = addDays(EPOCH, -1); day <= addDays(cycle, 1); day = addDays(day, 1)) {
          const expected = new Map<string, Link[]>();
          for (const pid of held) {
            const want = await expectedLinks(pid, day);
            expected.set(pid, want);
            const got = await t.sql<Link[]>`
              select relation, related_pid, related_name, position from analytics.enterprise_links
              where pid = ${pid} and valid_from_cycle <= ${day}::date
                and (valid_to_cycle is null or valid_to_cycle > ${day}::date)`;
            expect(got.map(key).sort(), `${pid} on ${day}`).toEqual(want.map(key).sort());
          }
          // One hop from each company, from the same expected links.
          for (const pid of held) {
            const mine = expected.get(pid) ?? [];
            const want = new Set<string>();
            for (const l of mine) if (l.related_pid && l.related_pid !== pid) want.add(l.related_pid);
            for (const other of held) {
              if (other === pid) continue;
              const theirs = expected.get(other) ?? [];
              if (theirs.some((l) => l.related_pid === pid)) want.add(other);
              const person = (l: Link) =>
                l.relation !== 'shareholder' || (l.related_pid === null && /自然人/.test(l.position ?? ''));
              const mineP = new Set(mine.filter(person).map((l) => l.related_name));
              if (theirs.some((l) => person(l) && mineP.has(l.related_name))) want.add(other);
            }
            const got = await t.sql<{ related_pid: string; hops: number }[]>`
              select related_pid, hops from analytics.related_companies(${pid}, ${day}::date, 1)`;
            expect(got.every((r) => r.hops === 1)).toBe(true);
            expect(got.map((r) => r.related_pid).sort(), `related to ${pid} on ${day}`).toEqual(
              [...want].sort(),
            );
          }
        }
      }),
      { numRuns: RUNS },
    );
  });
});
