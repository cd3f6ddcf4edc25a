/**
 * The simulator's deterministic world of enterprises. The initial state is generated from the
 * seed; each daily refresh (a cycle after the epoch) changes a deterministic ~2% of enterprises.
 * The state at a cycle is the initial state plus every refresh up to it, so it does not depend
 * on the order in which cycles are asked for. Records are deeply frozen: callers cannot
 * corrupt the world.
 */
import { addDays, daysBetween } from '../time/cycles.ts';
import { makeRegno, makeUscc } from './codes.ts';
import { type Rng, rngFor } from './rng.ts';
import type { SimEnterprise, SimPerson, SimShareholder } from './types.ts';
import {
  BAD_STATUSES,
  CAPITAL_AMOUNTS,
  CAPITAL_UNITS,
  ENT_TYPES,
  ENTERPRISE_SHAREHOLDER_TYPES,
  formFor,
  GIVEN,
  GOOD_STATUSES,
  INDUSTRIES,
  NATURAL_SHAREHOLDER_TYPES,
  POSITIONS,
  PROVINCES,
  REVOKE_REASONS,
  ROADS,
  SCOPE_TAIL,
  SURNAMES,
  TRADE_CHARS,
} from './vocab.ts';

/** Share of enterprises changed by each daily refresh. */
export const DAILY_CHANGE_RATE = 0.02;

const BAD_WORDS = ['注销', '吊销', '清算', '停业', '撤销', '迁出'];

function isBad(status: string): boolean {
  return BAD_WORDS.some((w) => status.includes(w));
}

function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object' && !Object.isFrozen(o)) {
    Object.freeze(o);
    for (const v of Object.values(o)) deepFreeze(v);
  }
  return o;
}

function personName(rng: Rng): string {
  return rng.pick(SURNAMES) + rng.pick(GIVEN) + (rng.chance(0.6) ? rng.pick(GIVEN) : '');
}

function isoDate(year: number, month: number, day: number): string {
  return `${year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

function iso(date: string): string {
  return `${date}T00:00:00.000Z`;
}

function scopeOf(rng: Rng, phrases: string[]): string {
  const picked = rng.sample(phrases, rng.int(2, phrases.length));
  return `${picked.join('；')}。${rng.chance(0.5) ? SCOPE_TAIL : ''}`;
}

function addressOf(rng: Rng, province: number): string {
  const p = PROVINCES[province] as (typeof PROVINCES)[number];
  const city = p.name === '深圳' || p.name === '杭州' || p.name === '苏州' ? `${p.name}市` : `${p.name}市`;
  return `${city}${rng.pick(p.districts)}${rng.pick(ROADS)}${rng.int(1, 999)}号${rng.chance(0.5) ? `${rng.int(1, 30)}楼${rng.int(101, 2999)}室` : ''}`;
}

interface Skeleton {
  pid: string;
  name: string;
  province: number;
  division: string;
  industry: (typeof INDUSTRIES)[number];
  typeCode: string;
  typeText: string;
}

/** A pure function of (seed, size): the world on its first day. */
function generate(seed: number, size: number): SimEnterprise[] {
  const provinceWeights = Object.entries(PROVINCES).map(([code, p]) => [Number(code), p.weight] as const);
  const names = new Set<string>();
  const pids = new Set<string>();
  const skeletons: Skeleton[] = [];
  for (let i = 0; i < size; i++) {
    const rng = rngFor(seed, 'enterprise', i);
    let pid = '';
    do {
      pid = Array.from({ length: 4 }, () =>
        Math.floor(rng.next() * 0x1_0000_0000)
          .toString(16)
          .padStart(8, '0'),
      ).join('');
    } while (pids.has(pid));
    pids.add(pid);
    const province = rng.weighted(provinceWeights);
    const p = PROVINCES[province] as (typeof PROVINCES)[number];
    const industry = rng.pick(INDUSTRIES);
    const [typeCode, typeText] = rng.weighted(ENT_TYPES.map(([c, t, w]) => [[c, t] as const, w] as const));
    const form = formFor(typeCode);
    let name = '';
    for (let attempt = 0; ; attempt++) {
      const trade = Array.from({ length: rng.int(2, attempt > 5 ? 4 : 3) }, () => rng.pick(TRADE_CHARS)).join(
        '',
      );
      const city = rng.chance(0.7) ? p.name + (rng.chance(0.5) ? '市' : '') : '';
      name = `${city}${trade}${industry.word}${form}`;
      if (!names.has(name)) break;
    }
    names.add(name);
    skeletons.push({ pid, name, province, division: rng.pick(p.divisions), industry, typeCode, typeText });
  }

  return skeletons.map((s, i) => {
    const rng = rngFor(seed, 'detail', i);
    const year = rng.int(1990, 2025);
    const esDate = isoDate(year, rng.int(1, 12), rng.int(1, 28));
    const optoKind = rng.weighted([
      ['perpetual', 40],
      ['date', 35],
      ['长期', 15],
      ['words', 10],
    ] as const);
    const term = rng.pick([20, 30]);
    const opto =
      optoKind === 'perpetual'
        ? '9999-12-31'
        : optoKind === 'date'
          ? addDays(isoDate(year + term, Number(esDate.slice(5, 7)), Number(esDate.slice(8, 10))), -1)
          : optoKind === '长期'
            ? '长期'
            : rng.pick(['Long-term', 'Perpetual']);
    const status = rng.chance(0.85) ? rng.weighted(GOOD_STATUSES) : rng.weighted(BAD_STATUSES);
    const revoked = status.includes('吊销') || status === '撤销';
    const legal = personName(rng);
    const persons: SimPerson[] = [
      { NAME: legal, POSITION: rng.pick(['执行董事', '执行董事兼总经理', '董事长']) },
    ];
    const nPersons = rng.int(1, 10);
    while (persons.length < nPersons) {
      const n = personName(rng);
      if (!persons.some((x) => x.NAME === n)) persons.push({ NAME: n, POSITION: rng.pick(POSITIONS) });
    }
    const shareholders: SimShareholder[] = [];
    const nShare = rng.int(1, 20);
    for (let k = 0; k < nShare; k++) {
      if (size > 1 && rng.chance(0.25)) {
        let j = rng.int(0, size - 1);
        if (j === i) j = (j + 1) % size;
        const other = skeletons[j] as Skeleton;
        if (shareholders.some((x) => x.PID === other.pid)) continue;
        shareholders.push({
          PID: other.pid,
          INV: other.name,
          INVTYPE: rng.pick(ENTERPRISE_SHAREHOLDER_TYPES),
        });
      } else {
        const n = k === 0 ? legal : personName(rng);
        if (shareholders.some((x) => x.INV === n)) continue;
        shareholders.push({ INV: n, INVTYPE: rng.pick(NATURAL_SHAREHOLDER_TYPES) });
      }
    }
    const liquidating = status === '清算' || (status.startsWith('注销') && rng.chance(0.7));
    const listed = s.typeCode === '1212' ? 1 : rng.chance(0.005) ? 1 : 0;
    const e: SimEnterprise = {
      PID: s.pid,
      ENTNAME: s.name,
      HISTORYNAME: '',
      IS_LISTED: listed as 0 | 1,
      LEGALPERSON: legal,
      LEGALPERSONDESC: s.typeCode.startsWith('45')
        ? '执行事务合伙人'
        : s.typeCode.startsWith('2')
          ? '负责人'
          : '法定代表人',
      ESDATE: iso(esDate),
      SCONFORM: rng.chance(0.7) ? '货币' : '',
      REGNO: makeRegno(rng, s.division),
      UNCID: makeUscc(rng, s.division),
      ENTTYPECODE: s.typeCode,
      ENTTYPE: s.typeText,
      REGCAP: rng.pick(CAPITAL_AMOUNTS),
      REGCAPCUR: rng.weighted(CAPITAL_UNITS),
      PROVINCE: s.province,
      OPFROM: iso(esDate),
      OPTO: opto,
      REGORG: `${(PROVINCES[s.province] as (typeof PROVINCES)[number]).name}市市场监督管理局`,
      APPRDATE: iso(isoDate(rng.int(Math.max(year, 2015), 2025), rng.int(1, 12), rng.int(1, 28))),
      REVOKEDATE: revoked ? isoDate(rng.int(Math.max(year, 2010), 2025), rng.int(1, 12), rng.int(1, 28)) : '',
      REVOKEREASON: revoked ? rng.pick(REVOKE_REASONS) : '',
      ENTSTATUS: status,
      OPLOC: addressOf(rng, s.province),
      OPSCOPE: scopeOf(rng, s.industry.scope),
      PERSONS: persons,
      BE_INVEST: shareholders,
      participants: Math.floor(rng.next() ** 3 * 5000),
      INDUSTRYPHY: s.industry.section,
      INDUSTRYBIG: s.industry.big,
      industry_middle: s.industry.middle,
      CLEARINGINFO: liquidating
        ? Array.from({ length: rng.int(1, 5) }, (_, k) => ({
            liqMem: personName(rng),
            ligpriSign: rng.chance(0.15) ? String(k === 0 ? 1 : 2) : k === 0 ? '清算组负责人' : '清算组成员',
          }))
        : [],
    };
    if (rng.chance(0.15)) {
      e.HISTORYNAME = `${(PROVINCES[s.province] as (typeof PROVINCES)[number]).name}${rng.pick(TRADE_CHARS)}${rng.pick(TRADE_CHARS)}${s.industry.word}有限公司`;
    }
    return e;
  });
}

type Mutation = (
  e: SimEnterprise,
  rng: Rng,
  world: readonly SimEnterprise[],
  names: Set<string>,
) => string | null;

const MUTATIONS: [string, number, Mutation][] = [
  [
    'status',
    10,
    (e, rng) => {
      if (isBad(e.ENTSTATUS)) {
        if (!e.ENTSTATUS.includes('已注销') && rng.chance(0.5)) {
          e.ENTSTATUS = '注销';
          return 'status';
        }
        return null;
      }
      const to = rng.weighted([
        ['注销', 3],
        ['吊销，未注销', 3],
        ['清算', 2],
        ['停业', 1],
        ['在业', 3],
        ['存续', 3],
      ] as const);
      if (to === e.ENTSTATUS) return null;
      e.ENTSTATUS = to;
      if (to.includes('吊销')) {
        e.REVOKEDATE = '2026-11-01';
        e.REVOKEREASON = rng.pick(REVOKE_REASONS);
      }
      if (to === '清算' && e.CLEARINGINFO.length === 0) {
        e.CLEARINGINFO = Array.from({ length: rng.int(1, 4) }, (_, k) => ({
          liqMem: personName(rng),
          ligpriSign: k === 0 ? '清算组负责人' : '清算组成员',
        }));
      }
      return 'status';
    },
  ],
  [
    'legal_representative',
    10,
    (e, rng) => {
      const n = personName(rng);
      e.LEGALPERSON = n;
      if (!e.PERSONS.some((p) => p.NAME === n))
        e.PERSONS = [{ NAME: n, POSITION: '执行董事' }, ...e.PERSONS].slice(0, 10);
      return 'legal_representative';
    },
  ],
  [
    'capital',
    10,
    (e, rng) => {
      const factor = rng.pick([0.5, 2, 3, 1.5, 10]);
      e.REGCAP = Math.round(e.REGCAP * factor * 100) / 100;
      return factor < 1 ? 'capital_decrease' : 'capital_increase';
    },
  ],
  [
    'address',
    10,
    (e, rng) => {
      e.OPLOC = addressOf(rng, e.PROVINCE);
      return 'address';
    },
  ],
  [
    'scope',
    8,
    (e, rng) => {
      const ind = INDUSTRIES.find((x) => x.section === e.INDUSTRYPHY) ?? rng.pick(INDUSTRIES);
      e.OPSCOPE = scopeOf(rng, [...ind.scope, ...rng.pick(INDUSTRIES).scope]);
      return 'scope';
    },
  ],
  [
    'name',
    5,
    (e, rng, _world, names) => {
      const form = formFor(e.ENTTYPECODE);
      for (let attempt = 0; attempt < 10; attempt++) {
        const word = INDUSTRIES.find((x) => e.ENTNAME.includes(x.word))?.word ?? '';
        const next = `${e.ENTNAME.slice(0, 2)}${rng.pick(TRADE_CHARS)}${rng.pick(TRADE_CHARS)}${word}${form}`;
        if (!names.has(next)) {
          names.delete(e.ENTNAME);
          names.add(next);
          e.HISTORYNAME = e.ENTNAME;
          e.ENTNAME = next;
          return 'name';
        }
      }
      return null;
    },
  ],
  [
    'persons',
    12,
    (e, rng) => {
      const kind = rng.pick(['add', 'remove', 'position']);
      if (kind === 'add' && e.PERSONS.length < 10) {
        const n = personName(rng);
        if (e.PERSONS.some((p) => p.NAME === n)) return null;
        e.PERSONS = [...e.PERSONS, { NAME: n, POSITION: rng.pick(POSITIONS) }];
        return 'person_added';
      }
      if (kind === 'remove' && e.PERSONS.length > 1) {
        const k = rng.int(1, e.PERSONS.length - 1);
        e.PERSONS = e.PERSONS.filter((_, i) => i !== k);
        return 'person_removed';
      }
      const k = rng.int(0, e.PERSONS.length - 1);
      const p = e.PERSONS[k] as SimPerson;
      const pos = rng.pick(POSITIONS.filter((x) => x !== p.POSITION));
      e.PERSONS = e.PERSONS.map((x, i) => (i === k ? { ...x, POSITION: pos } : x));
      return 'person_position';
    },
  ],
  [
    'shareholders',
    12,
    (e, rng, world) => {
      const kind = rng.pick(['add', 'remove', 'type']);
      if (kind === 'add' && e.BE_INVEST.length < 20) {
        if (rng.chance(0.3) && world.length > 1) {
          const other = rng.pick(world);
          if (other.PID === e.PID || e.BE_INVEST.some((s) => s.PID === other.PID)) return null;
          e.BE_INVEST = [
            ...e.BE_INVEST,
            { PID: other.PID, INV: other.ENTNAME, INVTYPE: rng.pick(ENTERPRISE_SHAREHOLDER_TYPES) },
          ];
        } else {
          const n = personName(rng);
          if (e.BE_INVEST.some((s) => s.INV === n)) return null;
          e.BE_INVEST = [...e.BE_INVEST, { INV: n, INVTYPE: rng.pick(NATURAL_SHAREHOLDER_TYPES) }];
        }
        return 'shareholder_added';
      }
      if (kind === 'remove' && e.BE_INVEST.length > 1) {
        const k = rng.int(0, e.BE_INVEST.length - 1);
        e.BE_INVEST = e.BE_INVEST.filter((_, i) => i !== k);
        return 'shareholder_removed';
      }
      const k = rng.int(0, e.BE_INVEST.length - 1);
      const s = e.BE_INVEST[k] as SimShareholder;
      const types = s.PID ? ENTERPRISE_SHAREHOLDER_TYPES : NATURAL_SHAREHOLDER_TYPES;
      const t = rng.pick(types.filter((x) => x !== s.INVTYPE));
      e.BE_INVEST = e.BE_INVEST.map((x, i) => (i === k ? { ...x, INVTYPE: t } : x));
      return 'shareholder_type';
    },
  ],
  [
    'liquidation',
    4,
    (e, rng) => {
      if (e.CLEARINGINFO.length === 0) {
        e.ENTSTATUS = '清算';
        e.CLEARINGINFO = Array.from({ length: rng.int(1, 4) }, (_, k) => ({
          liqMem: personName(rng),
          ligpriSign: k === 0 ? '清算组负责人' : '清算组成员',
        }));
        return 'liquidation_opened';
      }
      e.CLEARINGINFO = [...e.CLEARINGINFO, { liqMem: personName(rng), ligpriSign: '清算组成员' }];
      return 'liquidation_members';
    },
  ],
  [
    'employees',
    10,
    (e, rng) => {
      e.participants = Math.max(0, e.participants + rng.int(-20, 40));
      return 'insured_employees';
    },
  ],
  [
    'listing',
    1,
    (e) => {
      e.IS_LISTED = e.IS_LISTED === 1 ? 0 : 1;
      return 'listing';
    },
  ],
  [
    'operating_period',
    3,
    (e, rng) => {
      e.OPTO = e.OPTO === '9999-12-31' ? rng.pick(['长期', '2046-05-11']) : '9999-12-31';
      return 'operating_period';
    },
  ],
];

/** A deep, mutable copy of a record, for a mutation to work on. */
function thaw(e: SimEnterprise): SimEnterprise {
  return structuredClone(e) as SimEnterprise;
}

export class EnterpriseWorld {
  readonly seed: number;
  readonly epoch: string;
  private readonly initial: readonly SimEnterprise[];
  private current: SimEnterprise[];
  private currentCycle: string;
  private index = new Map<string, number>();
  private names = new Set<string>();
  private readonly changeLog = new Map<string, { pid: string; kinds: string[] }[]>();

  constructor(opts: { seed: number; size: number; epoch?: string }) {
    this.seed = opts.seed;
    this.epoch = opts.epoch ?? '2026-01-01';
    this.initial = generate(opts.seed, opts.size).map(deepFreeze);
    this.current = [...this.initial];
    this.currentCycle = this.epoch;
    this.reindex();
  }

  get size(): number {
    return this.initial.length;
  }

  get cycle(): string {
    return this.currentCycle;
  }

  /** Moves the world to `cycle`: the state after every refresh from the epoch up to it. */
  at(cycle: string): void {
    const target = daysBetween(this.epoch, cycle) < 0 ? this.epoch : cycle;
    if (target === this.currentCycle) return;
    if (daysBetween(this.currentCycle, target) < 0) {
      this.current = [...this.initial];
      this.currentCycle = this.epoch;
      this.reindex();
    }
    while (this.currentCycle !== target) {
      this.currentCycle = addDays(this.currentCycle, 1);
      this.refresh(this.currentCycle);
    }
  }

  all(): readonly SimEnterprise[] {
    return this.current.slice();
  }

  byPid(pid: string): SimEnterprise | undefined {
    const i = this.index.get(pid);
    return i === undefined ? undefined : this.current[i];
  }

  /** What the refresh of `cycle` changed (computed by replaying up to it, world state kept). */
  changesIn(cycle: string): { pid: string; kinds: string[] }[] {
    const cached = this.changeLog.get(cycle);
    if (cached) return cached;
    if (daysBetween(this.epoch, cycle) <= 0) return [];
    const here = this.currentCycle;
    this.at(cycle);
    const result = this.changeLog.get(cycle) ?? [];
    this.at(here);
    return result;
  }

  /**
   * Model-like matching: exact name, then exact former name, then the best partial match
   * (a name containing the keyword, or sharing most of its characters); undefined when nothing
   * is close.
   */
  match(keyword: string): SimEnterprise | undefined {
    const k = keyword.trim();
    const exact = this.current.find((e) => e.ENTNAME === k);
    if (exact) return exact;
    const former = this.current.find((e) => e.HISTORYNAME !== '' && e.HISTORYNAME === k);
    if (former) return former;
    if ([...k].length < 2) return undefined;
    const containing = this.current.filter((e) => e.ENTNAME.includes(k));
    if (containing.length > 0) {
      return containing.reduce((best, e) => (e.ENTNAME.length < best.ENTNAME.length ? e : best));
    }
    const chars = new Set(k);
    let best: SimEnterprise | undefined;
    let bestScore = 0;
    for (const e of this.current) {
      let hit = 0;
      for (const ch of chars) if (e.ENTNAME.includes(ch)) hit++;
      const score = hit / chars.size;
      if (score > bestScore || (score === bestScore && best && e.ENTNAME.length < best.ENTNAME.length)) {
        best = e;
        bestScore = score;
      }
    }
    return bestScore >= 0.8 ? best : undefined;
  }

  private reindex(): void {
    this.index = new Map(this.current.map((e, i) => [e.PID, i]));
    this.names = new Set(this.current.map((e) => e.ENTNAME));
  }

  private refresh(cycle: string): void {
    const rng = rngFor(this.seed, 'refresh', cycle);
    const log: { pid: string; kinds: string[] }[] = [];
    for (let i = 0; i < this.current.length; i++) {
      if (!rng.chance(DAILY_CHANGE_RATE)) continue;
      const e = thaw(this.current[i] as SimEnterprise);
      const mrng = rngFor(this.seed, 'mutate', cycle, i);
      const kinds: string[] = [];
      for (let m = mrng.int(1, 3); m > 0; m--) {
        const [, , mutate] = mrng.weighted(MUTATIONS.map((x) => [x, x[1]] as const));
        const kind = mutate(e, mrng, this.current, this.names);
        if (kind) kinds.push(kind);
      }
      if (kinds.length === 0 || JSON.stringify(e) === JSON.stringify(this.current[i])) continue;
      this.current[i] = deepFreeze(e);
      log.push({ pid: e.PID, kinds });
    }
    this.changeLog.set(cycle, log);
  }
}
