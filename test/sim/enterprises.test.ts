import { describe, expect, it } from 'vitest';
import { isValidRegno, isValidUscc, makeUscc, usccCheckChar } from '../../src/sim/codes.ts';
import { EnterpriseWorld } from '../../src/sim/enterprises.ts';
import { Rng } from '../../src/sim/rng.ts';
import { addDays } from '../../src/time/cycles.ts';

describe('registry codes', () => {
  it("accepts DOMAIN.md's valid examples", () => {
    for (const c of ['91110000600037341L', '91310115342050446K', '9152000071430580XT'])
      expect(isValidUscc(c)).toBe(true);
    for (const c of ['310141000157096', '370902601053030']) expect(isValidRegno(c)).toBe(true);
  });
  it('rejects a code with a wrong check character or a letter outside the set', () => {
    expect(isValidUscc('91110000600037341M')).toBe(false);
    expect(isValidUscc('9111000060003734IL')).toBe(false);
    expect(isValidRegno('310141000157097')).toBe(false);
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
        } else expect(['自然人股东', '非农民自然人', '外籍自然人', '华侨']).toContain(s.INVTYPE);
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
