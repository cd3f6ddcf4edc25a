import { describe, expect, it } from 'vitest';
import { isValidRegno, isValidUscc, makeUscc, usccCheckChar } from '../../src/sim/codes.ts';
import { EnterpriseWorld } from '../../src/sim/enterprises.ts';
import { Rng } from '../../src/sim/rng.ts';
import type { SimEnterprise } from '../../src/sim/types.ts';
import { INDUSTRIES, PROVINCES, SOLE_FORMS } from '../../src/sim/vocab.ts';
import { addDays } from '../../src/time/cycles.ts';

// Value sets of docs/registry.md.
const STATUSES = [
  '存续（在营、开业、在册）',
  '在营（开业）企业',
  '存续',
  '在业',
  '开业',
  '吊销',
  '吊销，未注销',
  '吊销，已注销',
  '注销',
  '撤销',
  '迁入',
  '迁出',
  '停业',
  '清算',
];
const NATURAL_TYPES = ['自然人股东', '非农民自然人', '农民自然人', '外籍自然人', '华侨'];
const ENTERPRISE_TYPES = ['企业法人', '合伙企业', '其他投资者'];
const ORGANISATION_TYPES = ['事业法人', '社团法人', '机关法人'];
const FOREIGN_ENTERPRISE = '外国(地区)企业';
const LIQUIDATION_POSITIONS = ['清算组负责人', '清算组成员', '1', '2'];
const FOREIGN_UNITS = ['万美元', '万港元', '万人民币'];
const isForeign = (e: SimEnterprise): boolean => /^[56]/.test(e.ENTTYPECODE);
const isBranch = (e: SimEnterprise): boolean => e.ENTTYPECODE.startsWith('2');

describe('registry codes', () => {
  it("accepts docs/registry.md's valid examples", () => {
    for (const c of ['91110000600037341L', '91310115342050446K', '9152000071430580XT'])
      expect(isValidUscc(c)).toBe(true);
    for (const c of ['310141000157096', '370902601053030']) expect(isValidRegno(c)).toBe(true);
  });
  it('rejects a code with a wrong check character or a letter outside the set', () => {
    expect(isValidUscc('91110000600037341M')).toBe(false);
    expect(isValidUscc('9111000060003734IL')).toBe(false);
    expect(isValidRegno('310141000157097')).toBe(false);
  });
  it('makes cooperative codes (category 3) and reform-era organisation codes starting MA', () => {
    const rng = new Rng(4);
    for (let i = 0; i < 200; i++) {
      const coop = makeUscc(rng, '370783', 3, 'old');
      expect(isValidUscc(coop)).toBe(true);
      expect(coop.slice(0, 8)).toBe('93370783');
      expect(coop.slice(8, 10)).toMatch(/^\d\d$/);
      const reform = makeUscc(rng, '440300', 1, 'new');
      expect(isValidUscc(reform)).toBe(true);
      expect(reform.slice(0, 10)).toBe('91440300MA');
    }
  });
  it('makes valid codes whose characters 3-8 are the division', () => {
    const rng = new Rng(3);
    for (let i = 0; i < 500; i++) {
      const c = makeUscc(rng, '310115');
      expect(isValidUscc(c)).toBe(true);
      expect(c.slice(2, 8)).toBe('310115');
      expect(usccCheckChar(c.slice(0, 17))).toBe(c[17]);
    }
  });
});

describe('the enterprise world', () => {
  const world = new EnterpriseWorld({ seed: 1, size: 2000 });

  it('has unique PIDs and names, valid codes and the documented value sets', () => {
    const all = world.all();
    expect(new Set(all.map((e) => e.PID)).size).toBe(2000);
    expect(new Set(all.map((e) => e.ENTNAME)).size).toBe(2000);
    for (const e of all) {
      expect(isValidUscc(e.UNCID)).toBe(true);
      expect(isValidRegno(e.REGNO)).toBe(true);
      expect(e.UNCID.slice(2, 4)).toBe(String(e.PROVINCE));
      expect(e.PERSONS.length).toBeGreaterThanOrEqual(1);
      expect(e.PERSONS.length).toBeLessThanOrEqual(10);
      expect(e.BE_INVEST.length).toBeGreaterThanOrEqual(1);
      expect(e.BE_INVEST.length).toBeLessThanOrEqual(20);
      expect(e.ESDATE).toMatch(/^\d{4}-\d{2}-\d{2}T00:00:00\.000Z$/);
      expect([0, 1]).toContain(e.IS_LISTED);
    }
    const optos = new Set(
      all.map((e) => (/^\d{4}-/.test(e.OPTO) ? (e.OPTO === '9999-12-31' ? 'perpetual' : 'date') : e.OPTO)),
    );
    expect([...optos]).toEqual(expect.arrayContaining(['perpetual', 'date', '长期']));
    const statuses = new Set(all.map((e) => e.ENTSTATUS));
    expect([...statuses]).toEqual(expect.arrayContaining(['存续', '在业', '注销']));
  });

  it('enterprise shareholders carry a PID of the same world; natural persons carry no PID key', () => {
    const pids = new Set(world.all().map((e) => e.PID));
    let enterprises = 0;
    for (const e of world.all()) {
      for (const s of e.BE_INVEST) {
        if ('PID' in s) {
          enterprises++;
          expect(pids.has(s.PID as string)).toBe(true);
          expect(s.PID).not.toBe(e.PID);
        } else expect([...NATURAL_TYPES, ...ORGANISATION_TYPES, FOREIGN_ENTERPRISE]).toContain(s.INVTYPE);
      }
    }
    expect(enterprises).toBeGreaterThan(100);
  });

  it('liquidating companies have clearing members; active ones mostly none', () => {
    const liquidating = world.all().filter((e) => e.ENTSTATUS === '清算');
    expect(liquidating.length).toBeGreaterThan(0);
    for (const e of liquidating) expect(e.CLEARINGINFO.length).toBeGreaterThan(0);
  });

  it('each daily refresh changes about 2% of enterprises and leaves the rest identical', () => {
    const w = new EnterpriseWorld({ seed: 5, size: 2000 });
    let before = w.all().map((e) => JSON.stringify(e));
    let cycle = w.cycle;
    for (let day = 0; day < 5; day++) {
      cycle = addDays(cycle, 1);
      w.at(cycle);
      const after = w.all().map((e) => JSON.stringify(e));
      const changed = after.filter((e, i) => e !== before[i]).length;
      expect(changed).toBeGreaterThanOrEqual(20);
      expect(changed).toBeLessThanOrEqual(60);
      expect(w.changesIn(cycle).length).toBe(changed);
      before = after;
    }
  });

  it('is deterministic: the same seed gives the same state at a cycle whatever order it is reached in', () => {
    const a = new EnterpriseWorld({ seed: 9, size: 300 });
    a.at('2026-03-01');
    const b = new EnterpriseWorld({ seed: 9, size: 300 });
    for (let d = '2026-01-01'; d <= '2026-03-01'; d = addDays(d, 7)) b.at(d);
    b.at('2026-05-01');
    b.at('2026-03-01');
    expect(JSON.stringify(b.all())).toBe(JSON.stringify(a.all()));
    const c = new EnterpriseWorld({ seed: 10, size: 300 });
    expect(c.all()[0]?.ENTNAME).not.toBe(new EnterpriseWorld({ seed: 9, size: 300 }).all()[0]?.ENTNAME);
  });

  it('records are frozen, so callers cannot corrupt the world', () => {
    const e = world.all()[0];
    expect(() => {
      (e as { ENTNAME: string }).ENTNAME = 'x';
    }).toThrow();
  });

  it('matches by exact name, former name and best partial match, and finds nothing for nonsense', () => {
    const e = world.all().find((x) => x.HISTORYNAME !== '');
    if (!e) throw new Error('no enterprise with a former name');
    expect(world.match(e.ENTNAME)?.PID).toBe(e.PID);
    expect(world.match(e.HISTORYNAME)?.ENTNAME).toBeDefined();
    expect(world.match(e.ENTNAME.slice(0, e.ENTNAME.length - 2))?.ENTNAME).toContain(e.ENTNAME.slice(0, 4));
    expect(world.match('Zzyzx Qwv Nothing')).toBeUndefined();
  });
});

/** The registering authority a division code names, from the GB/T 2260 table of the world. */
function authorityOf(
  division: string,
): { province: string; city?: string; districts?: string[]; district?: string } | undefined {
  const province = PROVINCES.find((p) => String(p.code) === division.slice(0, 2));
  if (!province) return undefined;
  if (division.endsWith('0000')) return { province: province.name };
  for (const city of province.cities) {
    if (city.code === division)
      return { province: province.name, city: city.name, districts: city.districts.map((d) => d.name) };
    const district = city.districts.find((d) => d.code === division);
    if (district) return { province: province.name, city: city.name, district: district.name };
  }
  return undefined;
}

/** Checks every record of a world against docs/registry.md; `initial` adds what holds before any refresh. */
function checkRealism(all: readonly SimEnterprise[], initial: boolean): void {
  const byPid = new Map(all.map((e) => [e.PID, e]));
  const names = new Set(all.map((e) => e.ENTNAME));
  for (const e of all) {
    const where = `${e.PID} ${e.ENTNAME}`;
    // Codes: valid, category 3 exactly for cooperatives, the authority's division everywhere.
    expect(isValidUscc(e.UNCID), where).toBe(true);
    expect(isValidRegno(e.REGNO), where).toBe(true);
    expect(e.UNCID.slice(0, 2), where).toBe(e.ENTTYPECODE === '9100' ? '93' : '91');
    const division = e.UNCID.slice(2, 8);
    expect(e.REGNO.slice(0, 6), where).toBe(division);
    expect(division.slice(0, 2), where).toBe(String(e.PROVINCE));
    const authority = authorityOf(division);
    expect(authority, where).toBeDefined();
    if (authority?.district) {
      expect(e.REGORG, where).toContain(authority.district);
      expect(e.OPLOC, where).toContain(authority.district);
    } else if (authority?.city) {
      expect(e.REGORG, where).toBe(`${authority.city}市市场监督管理局`);
      // An address in a county-level city may name that city only: 浙江省瑞安市…
      const places = [authority.city, ...(authority.districts ?? [])];
      expect(
        places.some((p) => e.OPLOC.includes(p)),
        where,
      ).toBe(true);
    } else expect(e.REGORG, where).toBe(`${authority?.province}市场监督管理局`);
    expect(e.REGORG, where).toMatch(/市场监督管理局$/);
    if (e.UNCID.slice(8, 10) === 'MA') expect(e.ESDATE >= '2015-10-01', where).toBe(true);

    // Names fit the type.
    expect(e.ENTNAME.endsWith('分公司'), where).toBe(isBranch(e));
    if (e.ENTTYPECODE === '4533') expect(e.ENTNAME, where).toMatch(/(合伙企业|中心)（有限合伙）$/);
    if (e.ENTTYPECODE === '4531') expect(e.ENTNAME, where).toMatch(/（普通合伙）$/);
    if (e.ENTTYPECODE === '9100') expect(e.ENTNAME, where).toMatch(/专业合作社$/);
    if (e.ENTTYPECODE === '4540')
      expect(
        SOLE_FORMS.some((f) => e.ENTNAME.endsWith(f)),
        where,
      ).toBe(true);
    if (e.ENTTYPECODE.startsWith('12')) expect(e.ENTNAME, where).toMatch(/股份有限公司$/);
    if (/^(11|5|6)/.test(e.ENTTYPECODE)) expect(e.ENTNAME, where).toMatch(/有限公司$/);
    expect(e.HISTORYNAME === '' || !names.has(e.HISTORYNAME), where).toBe(true);
    expect(e.LEGALPERSONDESC, where).toBe(
      isBranch(e)
        ? '负责人'
        : /^453/.test(e.ENTTYPECODE)
          ? '执行事务合伙人'
          : e.ENTTYPECODE === '4540'
            ? '投资人'
            : '法定代表人',
    );

    // Capital: foreign-invested firms in their units, domestic ones never in foreign currency.
    if (isForeign(e)) expect(FOREIGN_UNITS, where).toContain(e.REGCAPCUR);
    else expect(e.REGCAPCUR, where).not.toMatch(/美元|港元|欧元/);
    expect(e.REGCAP, where).toBeGreaterThanOrEqual(0);
    if (isBranch(e)) expect(e.REGCAP, where).toBe(0);
    else expect(e.REGCAP, where).toBeGreaterThan(0);

    // Status, revocation and liquidation.
    expect(STATUSES, where).toContain(e.ENTSTATUS);
    const revoked = e.ENTSTATUS.startsWith('吊销') || e.ENTSTATUS === '撤销';
    expect(e.REVOKEDATE !== '', where).toBe(revoked);
    expect(e.REVOKEREASON !== '', where).toBe(revoked);
    if (revoked) expect(e.REVOKEDATE >= e.ESDATE.slice(0, 10), where).toBe(true);
    if (e.CLEARINGINFO.length > 0) expect(['清算', '注销', '吊销，已注销'], where).toContain(e.ENTSTATUS);
    if (e.ENTSTATUS === '清算') expect(e.CLEARINGINFO.length, where).toBeGreaterThan(0);
    for (const c of e.CLEARINGINFO) {
      expect(LIQUIDATION_POSITIONS, where).toContain(c.ligpriSign);
      expect(c.liqMem.replace(/<span[^>]*>(.+)<\/span>/, '$1'), where).toMatch(/^[^<>]+$/);
    }
    if (['注销', '吊销，已注销', '撤销', '迁出'].includes(e.ENTSTATUS)) expect(e.participants, where).toBe(0);
    expect(Number.isInteger(e.participants) && e.participants >= 0, where).toBe(true);

    // Dates.
    expect(e.APPRDATE >= e.ESDATE, where).toBe(true);
    expect(e.OPFROM, where).toBe(e.ESDATE);
    if (e.ENTTYPECODE === '9100') expect(e.ESDATE >= '2007-07-01', where).toBe(true);
    if (/^\d{4}-\d{2}-\d{2}$/.test(e.OPTO) && e.OPTO !== '9999-12-31') {
      // A term ends the day before an anniversary of the establishment.
      const anniversary = addDays(e.OPTO, 1);
      const es = e.ESDATE.slice(5, 10);
      expect(anniversary.slice(5) === es || (es === '02-29' && anniversary.slice(5) === '03-01'), where).toBe(
        true,
      );
    } else expect(['9999-12-31', '长期', 'Long-term', 'Perpetual', ''], where).toContain(e.OPTO);

    // Officers and shareholders.
    expect(e.PERSONS.length, where).toBeGreaterThanOrEqual(1);
    expect(e.PERSONS.length, where).toBeLessThanOrEqual(10);
    expect(e.BE_INVEST.length, where).toBeGreaterThanOrEqual(1);
    expect(e.BE_INVEST.length, where).toBeLessThanOrEqual(20);
    expect(new Set(e.BE_INVEST.map((s) => s.PID ?? s.INV)).size, where).toBe(e.BE_INVEST.length);
    for (const s of e.BE_INVEST) {
      if (NATURAL_TYPES.includes(s.INVTYPE)) expect('PID' in s, where).toBe(false);
      else if ('PID' in s) {
        expect(ENTERPRISE_TYPES, where).toContain(s.INVTYPE);
        const holder = byPid.get(s.PID as string);
        expect(holder, where).toBeDefined();
        expect(s.PID, where).not.toBe(e.PID);
        if (holder) expect(isBranch(holder), where).toBe(false);
      } else expect([...ORGANISATION_TYPES, FOREIGN_ENTERPRISE], where).toContain(s.INVTYPE);
    }
    if (e.ENTTYPECODE === '9100') expect(e.BE_INVEST.length, where).toBeGreaterThanOrEqual(5);
    if (isBranch(e)) {
      expect(e.BE_INVEST.length, where).toBe(1);
      expect(e.BE_INVEST[0]?.PID, where).toBeDefined();
      // Before any renaming, a branch is named after its head office.
      if (initial)
        expect(e.ENTNAME.startsWith(byPid.get(e.BE_INVEST[0]?.PID as string)?.ENTNAME ?? '?'), where).toBe(
          true,
        );
    }
    if (isForeign(e) && initial)
      expect(
        e.BE_INVEST.some((s) => s.INVTYPE === FOREIGN_ENTERPRISE && !('PID' in s)),
        where,
      ).toBe(true);

    // Industry: a GB/T 4754 entry whose word is in the name and whose phrases are in the scope.
    const industry = INDUSTRIES.find(
      (x) => x.section === e.INDUSTRYPHY && x.big === e.INDUSTRYBIG && x.middle === e.industry_middle,
    );
    expect(industry, where).toBeDefined();
    expect(
      industry?.words.some((w) => e.ENTNAME.includes(w)),
      where,
    ).toBe(true);
    expect(
      industry?.scope.some((phrase) => e.OPSCOPE.includes(phrase)),
      where,
    ).toBe(true);
  }
}

describe('the realism of the world (docs/registry.md)', () => {
  const world = new EnterpriseWorld({ seed: 7, size: 5000 });
  const all = world.all();

  it('every record holds together: codes, authority, name, capital, status, people, industry', () => {
    checkRealism(all, true);
  });

  it('still holds together after three months of daily refreshes', () => {
    const later = new EnterpriseWorld({ seed: 7, size: 5000 });
    later.at('2026-04-01');
    const changed = later.all().filter((e, i) => JSON.stringify(e) !== JSON.stringify(all[i]));
    expect(changed.length).toBeGreaterThan(1000);
    checkRealism(later.all(), false);
    // Firms close, get revoked or start liquidating, but the world does not die out: the share
    // of firms in a bad status grows by a few points a quarter at most.
    const bad = (es: readonly SimEnterprise[]) =>
      es.filter((e) => ['注销', '吊销', '清算', '停业', '撤销', '迁出'].some((w) => e.ENTSTATUS.includes(w)))
        .length;
    expect(bad(later.all())).toBeGreaterThan(bad(all));
    expect(bad(later.all()) - bad(all)).toBeLessThan(0.05 * all.length);
  });

  it('spreads firms over all 31 provinces and many districts', () => {
    expect(new Set(all.map((e) => e.PROVINCE)).size).toBe(31);
    expect(new Set(all.map((e) => e.UNCID.slice(2, 8))).size).toBeGreaterThan(200);
    const levels = new Set(
      all.map((e) =>
        e.UNCID.slice(4, 8) === '0000' ? 'province' : e.UNCID.slice(6, 8) === '00' ? 'city' : 'district',
      ),
    );
    expect([...levels].sort()).toEqual(['city', 'district', 'province']);
  });

  it('has every kind of enterprise, each in its own name form', () => {
    const types = new Set(all.map((e) => e.ENTTYPECODE));
    for (const t of [
      '1130',
      '1151',
      '1212',
      '1222',
      '2130',
      '3200',
      '4531',
      '4533',
      '4540',
      '5110',
      '5150',
      '6150',
      '9100',
    ])
      expect(types).toContain(t);
    expect(
      all.filter((e) => e.ENTTYPECODE === '4533').some((e) => e.ENTNAME.endsWith('合伙企业（有限合伙）')),
    ).toBe(true);
    expect(all.filter((e) => e.UNCID.startsWith('93')).length).toBeGreaterThan(20);
  });

  it('writes capital of foreign-invested firms in US or Hong Kong dollars', () => {
    const units = new Set(all.filter(isForeign).map((e) => e.REGCAPCUR));
    expect([...units]).toEqual(expect.arrayContaining(['万美元', '万港元']));
    expect(new Set(all.filter((e) => !isForeign(e)).map((e) => e.REGCAPCUR))).toEqual(
      new Set(['万人民币', '万元人民币', '万(元)', '']),
    );
  });

  it('has operating periods in every documented form', () => {
    const forms = new Set(
      all.map((e) => (/^\d{4}-/.test(e.OPTO) && e.OPTO !== '9999-12-31' ? 'date' : e.OPTO)),
    );
    expect([...forms]).toEqual(expect.arrayContaining(['9999-12-31', '长期', 'Long-term', '', 'date']));
    const dated = all.filter((e) => /^\d{4}-/.test(e.OPTO) && e.OPTO !== '9999-12-31');
    const thirty = dated.filter(
      (e) => Number(addDays(e.OPTO, 1).slice(0, 4)) - Number(e.ESDATE.slice(0, 4)) === 30,
    );
    expect(thirty.length).toBeGreaterThan(dated.length / 3);
  });

  it('writes liquidation members as the API documents them and, sometimes, as raw registry data', () => {
    const members = all.flatMap((e) => e.CLEARINGINFO);
    const signs = new Set(members.map((c) => c.ligpriSign));
    expect([...signs].sort()).toEqual(['1', '2', '清算组成员', '清算组负责人']);
    expect(members.some((c) => /^<span[^>]*>.+<\/span>$/.test(c.liqMem))).toBe(true);
    expect(members.filter((c) => c.liqMem.startsWith('<')).length).toBeLessThan(members.length / 4);
  });

  it('has shareholders of every kind: natural persons, enterprises of the world, organisations, foreign firms', () => {
    const holders = all.flatMap((e) => e.BE_INVEST);
    expect(holders.filter((s) => NATURAL_TYPES.includes(s.INVTYPE)).length).toBeGreaterThan(1000);
    expect(holders.filter((s) => 'PID' in s).length).toBeGreaterThan(500);
    expect(holders.filter((s) => ORGANISATION_TYPES.includes(s.INVTYPE)).length).toBeGreaterThan(20);
    expect(holders.filter((s) => s.INVTYPE === FOREIGN_ENTERPRISE).length).toBeGreaterThan(20);
    expect(new Set(all.map((e) => e.ENTSTATUS)).size).toBeGreaterThanOrEqual(10);
  });
});
