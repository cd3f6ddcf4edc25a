/**
 * The simulator's deterministic world of enterprises. The initial state is generated from the
 * seed; each daily refresh (a cycle after the epoch) changes a deterministic ~2% of enterprises.
 * The state at a cycle is the initial state plus every refresh up to it, so it does not depend
 * on the order in which cycles are asked for. Records are deeply frozen: callers cannot
 * corrupt the world.
 *
 * Records follow docs/registry.md: the name fits the enterprise type (分公司 after the head office's
 * name, 合伙企业（有限合伙）, 专业合作社, 个人独资 forms), the USCC and registration number carry
 * the division code of the registering authority named in REGORG, in the province of PROVINCE
 * and the city or district of OPLOC; industry fields match the name's industry word and the
 * scope; shareholders are natural persons (no PID key), enterprises of the world (their PID) or
 * organisations and enterprises outside the world (no PID).
 */
import { addDays, daysBetween } from '../time/cycles.ts';
import { dayOf, shiftDate, termEnd } from './calendar.ts';
import { makeRegno, makeUscc } from './codes.ts';
import { type Rng, rngFor } from './rng.ts';
import type { SimClearingMember, SimEnterprise, SimPerson, SimShareholder } from './types.ts';
import {
  ACTIVE_STATUSES,
  BRANCH_HEAD,
  BUILDINGS,
  CANCEL_REASONS,
  CAPITAL_AMOUNTS,
  type City,
  COOPERATIVE_POSITIONS,
  COOPERATIVE_WORDS,
  type District,
  DOMESTIC_CAPITAL_UNITS,
  ENT_TYPE_TEXT,
  ENT_TYPE_WEIGHTS,
  FOREIGN_BRANDS,
  FOREIGN_CAPITAL_UNITS,
  FOREIGN_COMPANY_FORMS,
  FOREIGN_COMPANY_STEMS,
  FOREIGN_COMPANY_WORDS,
  FOREIGN_ENTERPRISE_TYPE,
  FOREIGN_PERSONS,
  GENERAL_SCOPE,
  GIVEN_CHARS,
  HMT_COMPANY_FORMS,
  INACTIVE_STATUSES,
  INDUSTRIES,
  type Industry,
  MANAGING_PARTNER,
  ORGANISATION_SHAREHOLDERS,
  PARTNERSHIP_WORDS,
  PROVINCES,
  type Province,
  REVOKE_REASONS,
  ROADS,
  SCOPE_APPROVAL_TAIL,
  SCOPE_GENERAL_TAIL,
  SOLE_FORMS,
  SOLE_INVESTOR,
  SURNAMES,
  TRADE_CHARS,
  TRADE_WORDS,
} from './vocab.ts';

/** The default expected share of the whole world changed by each daily refresh. */
export const DAILY_CHANGE_RATE = 0.02;

/**
 * How unevenly firms change. Each firm's base hazard is a lognormal draw (sigma LOG_SD) times
 * factors of its profile, so most firms change a few times a year and a minority (distressed,
 * large, listed, young firms) far more often; the profile predicts the rate, the noise dominates
 * within a profile. Registries behave so: yearly filings and capital moves of a quiet SME against
 * the weekly changes of a listed group or a firm in liquidation.
 */
const LOG_SD = 1.5;
/** A change raises the hazard by 1 + A·e^(−days/τ): a change is often followed by others. */
const BURST = { ordinary: { amplitude: 3, tau: 7 }, high: { amplitude: 12, tau: 12 } } as const;
/** No firm changes with a higher daily probability than this. */
const MAX_DAILY_PROBABILITY = 0.9;
const BAD_STATUS_TEXT = /吊销|注销|清算|停业|撤销/;

/** One refresh's change of one firm: what the ground truth says. */
export interface WorldChange {
  pid: string;
  /** The mutations applied. */
  kinds: string[];
  /** The top-level record fields whose value differs after the refresh, sorted. */
  fields: string[];
  /**
   * high: the status moved to a bad value, a liquidation opened or a revocation date appeared;
   * medium: name, legal representative, shareholders, capital decrease; low: anything else
   * (the severities daybook's change log gives them).
   */
  severity: 'high' | 'medium' | 'low';
  /**
   * The enterprises whose shareholders list this one (by PID) after the refresh: who a related
   * party's change reaches first. Sorted.
   */
  holders: string[];
}

/** The statuses a test may give an enterprise on a day of its choosing (`EnterpriseWorld.schedule`). */
export const SCHEDULABLE_STATUSES = [
  '注销',
  '吊销，未注销',
  '吊销，已注销',
  '清算',
  '停业',
  '存续',
  '在业',
] as const;
export type SchedulableStatus = (typeof SCHEDULABLE_STATUSES)[number];

/** One link of a shareholding chain: the enterprise, and what it is called now. */
export interface ChainLink {
  pid: string;
  name: string;
  uscc: string;
}

/** Statuses after which a registry record no longer changes. */
const TERMINAL_STATUSES: ReadonlySet<string> = new Set(['注销', '吊销，已注销', '撤销', '迁出']);
/** Statuses with a revocation date and reason. */
const REVOKED_STATUSES: ReadonlySet<string> = new Set(['吊销，未注销', '吊销，已注销', '撤销']);
const BAD_STATUSES: ReadonlySet<string> = new Set(INACTIVE_STATUSES.map(([s]) => s));

/** How an enterprise type shapes its name, officers and shareholders. */
type Kind =
  | 'company'
  | 'joint-stock'
  | 'branch'
  | 'collective'
  | 'partnership'
  | 'sole'
  | 'foreign'
  | 'hmt'
  | 'cooperative';

function kindOf(typeCode: string): Kind {
  if (typeCode === '9100') return 'cooperative';
  if (typeCode.startsWith('2')) return 'branch';
  if (typeCode.startsWith('12')) return 'joint-stock';
  if (typeCode === '4531' || typeCode === '4533') return 'partnership';
  if (typeCode === '4540') return 'sole';
  if (typeCode === '3200') return 'collective';
  if (typeCode.startsWith('5')) return 'foreign';
  if (typeCode.startsWith('6')) return 'hmt';
  return 'company';
}

/** Head-office type codes a branch type may belong to. */
const BRANCH_PARENTS: Readonly<Record<string, readonly string[]>> = {
  '2130': ['1130', '1151', '1100'],
  '2190': ['1190', '1152', '1153', '1110', '1140', '1100'],
  '2222': ['1222', '1212'],
};
/** The type a branch becomes when the world holds no possible head office (tiny worlds). */
const BRANCH_FALLBACK: Readonly<Record<string, string>> = { '2130': '1130', '2190': '1190', '2222': '1222' };

/** Where an enterprise is registered and located. */
interface Place {
  province: Province;
  city: City;
  district: District;
  /** Division code of the registering authority: district, city or province level. */
  division: string;
  regOrg: string;
}

/**
 * What stays fixed about an enterprise for the world's lifetime (refreshes never move it to
 * another district or industry), kept beside the records so mutations can stay consistent.
 */
interface Profile {
  pid: string;
  kind: Kind;
  typeCode: string;
  place: Place;
  industry: Industry;
  /** The industry word used in names (also in former names and renames). */
  word: string;
  esDate: string;
  /** Index of the head office, for branches. */
  parent?: number;
  /** What follows the head office's name in a branch's name: 南山分公司. */
  branchSuffix?: string;
  /** The cooperative's produce, for its scope. */
  produce?: string;
  /** Liquidation members written as raw registry data does: ligpriSign 1/2, names maybe in spans. */
  rawClearing: 'no' | 'codes' | 'codes-and-spans';
}

function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object' && !Object.isFrozen(o)) {
    Object.freeze(o);
    for (const v of Object.values(o)) deepFreeze(v);
  }
  return o;
}

function iso(date: string): string {
  return `${date}T00:00:00.000Z`;
}

/** A Chinese personal name; common surnames (the head of the list) come up more often. */
function personName(rng: Rng): string {
  const surname = SURNAMES[Math.floor(rng.next() ** 2 * SURNAMES.length)] as string;
  return surname + rng.pick(GIVEN_CHARS) + (rng.chance(0.7) ? rng.pick(GIVEN_CHARS) : '');
}

/**
 * A name not yet in `taken`, from `make` (told how many tries came before, so it can grow the
 * trade name); gives up after a while and returns the last try.
 */
function distinctName(
  rng: Rng,
  taken: ReadonlySet<string>,
  make: (rng: Rng, attempt: number) => string,
): string {
  let name = make(rng, 0);
  for (let k = 1; k < 20 && taken.has(name); k++) name = make(rng, k);
  return name;
}

const PROVINCE_WEIGHTS = PROVINCES.map((p) => [p, p.weight] as const);
const INDUSTRY_WEIGHTS = INDUSTRIES.map((x) => [x, x.weight] as const);
/** Industries a partnership's name word comes from. */
const PARTNERSHIP_INDUSTRIES = INDUSTRIES.filter((x) => PARTNERSHIP_WORDS.some((w) => x.words.includes(w)));

/** A district's name without its 区/县/市 suffix, as branch names use it: 南山, 浦东. */
function districtShort(d: District): string {
  return d.name.replace(/(新区|区|县|市)$/, '') || d.name;
}

/** County-level cities and counties are named on their own (昆山市), districts after their city. */
function countyLevel(d: District): boolean {
  return /[市县]$/.test(d.name);
}

/** The authority that registers a firm of `kind` in a district, with its division code. */
function placeIn(rng: Rng, province: Province, city: City, district: District, kind: Kind): Place {
  const upper = kind === 'foreign' || kind === 'hmt' || kind === 'joint-stock' ? 0.25 : 0.03;
  const r = rng.next();
  if (r < upper || (province.municipality && r < upper + 0.2)) {
    return {
      province,
      city,
      district,
      division: `${province.code}0000`,
      regOrg: `${province.name}市场监督管理局`,
    };
  }
  if (r < upper + 0.3 && !province.municipality) {
    return { province, city, district, division: city.code, regOrg: `${city.name}市市场监督管理局` };
  }
  const regOrg = province.municipality
    ? `${province.name}${district.name}市场监督管理局`
    : countyLevel(district)
      ? `${district.name}市场监督管理局`
      : `${city.name}市${district.name}市场监督管理局`;
  return { province, city, district, division: district.code, regOrg };
}

function randomPlace(rng: Rng, kind: Kind): Place {
  const province = rng.weighted(PROVINCE_WEIGHTS);
  // The provincial capital (listed first) is where most firms are.
  const city = rng.chance(0.5) ? (province.cities[0] as City) : rng.pick(province.cities);
  return placeIn(rng, province, city, rng.pick(city.districts), kind);
}

/** The place part of an address or a sole proprietorship's name: 深圳市南山区, 昆山市. */
function localityOf(p: Place): string {
  if (p.district.code === p.city.code) return `${p.city.name}市`;
  if (!p.province.municipality && countyLevel(p.district)) return p.district.name;
  return `${p.city.name}市${p.district.name}`;
}

function addressOf(rng: Rng, p: Place): string {
  const province = !p.province.municipality && rng.chance(0.4) ? p.province.name : '';
  const number = `${rng.pick(ROADS)}${rng.int(1, 1999)}号`;
  const r = rng.next();
  const unit =
    r < 0.4
      ? `${rng.pick(BUILDINGS)}${rng.int(1, 32)}楼${rng.int(1, 32)}${String(rng.int(1, 20)).padStart(2, '0')}室`
      : r < 0.6
        ? `${rng.int(1, 20)}栋${rng.int(101, 2999)}室`
        : r < 0.7
          ? `${rng.pick(BUILDINGS)}${String.fromCharCode(65 + rng.int(0, 3))}座${rng.int(101, 2999)}`
          : '';
  return `${province}${localityOf(p)}${number}${unit}`;
}

function tradeName(rng: Rng, attempt: number): string {
  return (
    rng.pick(TRADE_WORDS) +
    (attempt >= 3 ? rng.pick(TRADE_CHARS) : '') +
    (attempt >= 8 ? rng.pick(TRADE_CHARS) : '')
  );
}

/** A candidate name for a non-branch enterprise, in the form its type takes. */
function nameFor(rng: Rng, p: Profile, attempt: number): string {
  const { province, city } = p.place;
  const trade = tradeName(rng, attempt);
  const word = p.word;
  switch (p.kind) {
    case 'cooperative':
      // Cooperatives are named after their county or district: 寿光市…, 成都市锦江区….
      return `${localityOf(p.place)}${trade}${word}${rng.chance(0.8) ? '专业合作社' : '农民专业合作社'}`;
    case 'partnership': {
      const place = rng.chance(0.5) ? `${city.name}市` : city.name;
      const form = rng.chance(0.25) ? '中心' : '合伙企业';
      return `${place}${trade}${word}${form}${p.typeCode === '4531' ? '（普通合伙）' : '（有限合伙）'}`;
    }
    case 'sole': {
      const form =
        p.industry.section === 'F'
          ? rng.pick(['商行', '经营部'])
          : p.industry.section === 'C' || p.industry.section === 'E'
            ? rng.pick(['经营部', '中心'])
            : rng.pick(SOLE_FORMS);
      const place = rng.chance(0.5) ? localityOf(p.place) : `${city.name}市`;
      return `${place}${trade}${word}${form}`;
    }
    case 'foreign':
    case 'hmt': {
      const brand = p.kind === 'foreign' && rng.chance(0.7) ? rng.pick(FOREIGN_BRANDS) : trade;
      const suffix = attempt >= 3 ? tradeName(rng, 0).slice(0, 1) : '';
      const r = rng.next();
      if (r < 0.45) return `${brand}${suffix}（${city.name}）${word}有限公司`;
      if (r < 0.8) return `${city.name}${brand}${suffix}${word}有限公司`;
      return `${brand}${suffix}${word}（${city.name}）有限公司`;
    }
    default: {
      const form =
        p.kind === 'joint-stock'
          ? '股份有限公司'
          : p.kind === 'collective'
            ? p.industry.section === 'C'
              ? '厂'
              : '公司'
            : rng.chance(0.04)
              ? '集团有限公司'
              : '有限公司';
      const r = rng.next();
      if (r < 0.5 || p.kind === 'collective') return `${city.name}市${trade}${word}${form}`;
      if (r < 0.75) return `${city.name}${trade}${word}${form}`;
      if (r < 0.85) return `${province.short}${trade}${word}${form}`;
      if (r < 0.96) return `${trade}${word}（${city.name}）${form}`;
      return `${trade}${word}${form}`;
    }
  }
}

/**
 * The business scope of an enterprise: phrases of its industry, in the layout of its time (the
 * 一般项目 layout since 2021, so always for a scope changed now).
 */
function scopeOf(rng: Rng, p: Profile, changedNow = false): string {
  const own = rng.sample(p.industry.scope, rng.int(2, p.industry.scope.length));
  const general = rng.chance(0.5) ? rng.sample(GENERAL_SCOPE, rng.int(1, 2)) : [];
  const items = [...own, ...general.filter((g) => !own.includes(g))];
  if (p.kind === 'cooperative') {
    const produce = p.produce ?? '农产品';
    items.unshift(
      `组织收购、销售成员生产的${produce}`,
      '组织采购、供应成员所需的生产资料',
      `引进新技术、新品种，开展与${produce}生产有关的技术培训、技术交流和信息咨询服务`,
    );
  }
  if (changedNow || p.esDate >= '2021-01-01' || rng.chance(0.3))
    return `一般项目：${items.join('；')}。${SCOPE_GENERAL_TAIL}`;
  return `${items.join('；')}。${rng.chance(0.6) ? SCOPE_APPROVAL_TAIL : ''}`;
}

/** Registered capital in 万 and its unit text, by type. Branches have none. */
function capitalFor(rng: Rng, p: Profile): [number, string] {
  const domestic = (): string => rng.weighted(DOMESTIC_CAPITAL_UNITS);
  const odd = (n: number): number => (rng.chance(0.1) ? Math.round(n * (1 + rng.next()) * 100) / 100 : n);
  switch (p.kind) {
    case 'branch':
      return [0, ''];
    case 'cooperative':
      return [
        rng.pick([5, 10, 30, 50, 100, 200, 300, 500, 1000]),
        rng.chance(0.8) ? '万人民币' : '万元人民币',
      ];
    case 'sole':
      return [rng.pick([1, 3, 5, 10, 20, 50, 100]), rng.chance(0.5) ? '万(元)' : '万人民币'];
    case 'partnership':
      return p.typeCode === '4531'
        ? [rng.pick([1, 3, 10, 50, 100]), domestic()]
        : [odd(rng.pick([100, 500, 1000, 3000, 5000, 10000, 30000, 50000, 100000])), domestic()];
    case 'collective':
      return [rng.pick([10, 20, 50, 100, 200, 500]), rng.chance(0.5) ? '万(元)' : '万人民币'];
    case 'foreign':
    case 'hmt': {
      const unit = p.kind === 'hmt' && rng.chance(0.5) ? '万港元' : rng.weighted(FOREIGN_CAPITAL_UNITS);
      return [odd(rng.pick([10, 20, 50, 100, 150, 200, 300, 500, 1000, 2000, 5000])), unit];
    }
    case 'joint-stock':
      if (p.typeCode === '1212') {
        // A listed company's capital is its share count (one yuan a share), seldom a round number.
        return [rng.int(8000, 600000) + rng.int(0, 9999) / 10000, domestic()];
      }
      return [odd(rng.pick([500, 1000, 2000, 3000, 5000, 6000, 8000, 10000, 12000])), domestic()];
    default: {
      if (p.typeCode === '1110' || p.typeCode === '1140')
        return [rng.pick([1000, 5000, 10000, 50000, 100000]), domestic()];
      const amounts =
        p.typeCode === '1151' || p.typeCode === '1130' ? CAPITAL_AMOUNTS.slice(0, -3) : CAPITAL_AMOUNTS;
      return [odd(rng.pick(amounts)), domestic()];
    }
  }
}

/** Operating period end: 9999-12-31, 长期, Long-term, a term ending the day before its anniversary, or empty. */
function operatingTo(rng: Rng, p: Profile, historyEnd: string, active: boolean): string {
  const dated = (years: number): string => termEnd(p.esDate, years);
  if (p.kind === 'partnership' && rng.chance(0.6)) return dated(rng.pick([5, 7, 10, 20, 30]));
  const kind = rng.weighted([
    ['9999-12-31', 36],
    ['date', 32],
    ['长期', 16],
    ['Long-term', 6],
    ['Perpetual', 3],
    ['', 3],
  ] as const);
  if (kind !== 'date') return kind;
  const term = rng.weighted([
    [30, 60],
    [20, 20],
    [10, 10],
    [50, 10],
  ] as const);
  const end = dated(term);
  // A live firm whose term ran out has had it extended.
  return active && end <= historyEnd ? dated(term + 20) : end;
}

function clearingFor(rng: Rng, p: Profile, n: number, leader?: string): SimClearingMember[] {
  const names = new Set<string>();
  if (leader) names.add(leader);
  while (names.size < n) names.add(personName(rng));
  return [...names].map((name, k) => clearingMember(p, name, k === 0));
}

function clearingMember(p: Profile, name: string, leader: boolean): SimClearingMember {
  if (p.rawClearing === 'no') return { liqMem: name, ligpriSign: leader ? '清算组负责人' : '清算组成员' };
  return {
    liqMem: p.rawClearing === 'codes-and-spans' ? `<span class="liq-mem">${name}</span>` : name,
    ligpriSign: leader ? '1' : '2',
  };
}

/** Branches, cooperatives and sole proprietorships do not hold shares in other firms. */
function mayInvest(kind: Kind): boolean {
  return kind !== 'branch' && kind !== 'cooperative' && kind !== 'sole';
}

/** The world's enterprises as shareholders: a PID, the current name and the INVTYPE that fits. */
interface InvestorSource {
  /** Indices of enterprises that may hold shares (no branches, cooperatives or sole proprietorships). */
  pool: readonly number[];
  pidOf(j: number): string;
  nameOf(j: number): string;
  kindOf(j: number): Kind;
  /** False for an enterprise that can no longer take up shares (cancelled, moved out). */
  canInvest(j: number): boolean;
}

function enterpriseHolder(
  rng: Rng,
  src: InvestorSource,
  self: number,
  avoid: ReadonlySet<string>,
): SimShareholder | null {
  if (src.pool.length === 0) return null;
  for (let k = 0; k < 5; k++) {
    const j = rng.pick(src.pool);
    const pid = src.pidOf(j);
    if (j === self || avoid.has(pid) || !src.canInvest(j)) continue;
    const type = src.kindOf(j) === 'partnership' ? '合伙企业' : rng.chance(0.9) ? '企业法人' : '其他投资者';
    return { PID: pid, INV: src.nameOf(j), INVTYPE: type };
  }
  return null;
}

function naturalHolder(rng: Rng, name?: string, farmer = false): SimShareholder {
  if (!name && rng.chance(0.02)) return { INV: rng.pick(FOREIGN_PERSONS), INVTYPE: '外籍自然人' };
  const type = farmer
    ? rng.chance(0.9)
      ? '农民自然人'
      : '非农民自然人'
    : rng.weighted([
        ['自然人股东', 65],
        ['非农民自然人', 32],
        ['华侨', 1],
      ] as const);
  return { INV: name ?? personName(rng), INVTYPE: type };
}

function organisationHolder(rng: Rng, p: Place): SimShareholder {
  const [org, type] = rng.pick(ORGANISATION_SHAREHOLDERS);
  const local = p.province.municipality ? p.province.name : `${p.city.name}市`;
  const name =
    org === '大学' ? `${p.city.name}${rng.pick(['理工', '科技', '工业', '师范'])}大学` : `${local}${org}`;
  return { INV: name, INVTYPE: type };
}

function foreignHolder(rng: Rng, kind: Kind): SimShareholder {
  const name =
    kind === 'hmt'
      ? `${rng.pick(TRADE_WORDS)}${rng.pick(HMT_COMPANY_FORMS)}`
      : `${rng.pick(FOREIGN_COMPANY_STEMS)} ${rng.pick(FOREIGN_COMPANY_WORDS)} ${rng.pick(FOREIGN_COMPANY_FORMS)}`;
  return { INV: name, INVTYPE: FOREIGN_ENTERPRISE_TYPE };
}

/**
 * Shareholders of a new record, shaped by its type; never empty, at most 20, no duplicates. A
 * limited partnership's general partner comes first: `generalPartner` when it is an enterprise,
 * else the person who runs it.
 */
function shareholdersFor(
  rng: Rng,
  p: Profile,
  self: number,
  legal: string,
  src: InvestorSource,
  generalPartner?: SimShareholder,
): SimShareholder[] {
  const out: SimShareholder[] = [];
  const seen = new Set<string>();
  const add = (s: SimShareholder | null): void => {
    if (!s || out.length >= 20) return;
    const key = s.PID ?? s.INV;
    if (seen.has(key)) return;
    seen.add(key);
    out.push(s);
  };
  const persons = (n: number, first?: string, farmer = false): void => {
    for (let k = 0; k < n; k++) add(naturalHolder(rng, k === 0 ? first : undefined, farmer));
  };
  const firms = (n: number): void => {
    for (let k = 0; k < n; k++) add(enterpriseHolder(rng, src, self, seen));
  };
  switch (p.typeCode) {
    case '1151':
    case '4540':
      persons(1, rng.chance(0.85) || p.kind === 'sole' ? legal : undefined);
      break;
    case '1152':
    case '1153':
      firms(1);
      break;
    case '1110':
      add(organisationHolder(rng, p.place));
      break;
    case '1140':
      add(organisationHolder(rng, p.place));
      firms(rng.int(1, 3));
      persons(rng.int(0, 2));
      break;
    case '1100':
      persons(rng.int(1, 3), rng.chance(0.6) ? legal : undefined);
      firms(rng.int(0, 2));
      break;
    case '1130': {
      const size = rng.weighted([
        ['one', 30],
        ['two', 35],
        ['three', 17],
        ['few', 12],
        ['many', 6],
      ] as const);
      const n = { one: 1, two: 2, three: 3, few: rng.int(4, 6), many: rng.int(7, 12) }[size];
      persons(n, rng.chance(0.7) ? legal : undefined);
      if (rng.chance(0.25)) firms(1);
      break;
    }
    case '1190':
      firms(rng.int(1, 3));
      persons(rng.int(0, 3));
      break;
    case '1212':
      if (rng.chance(0.5)) add(organisationHolder(rng, p.place));
      add({ INV: '香港中央结算有限公司', INVTYPE: FOREIGN_ENTERPRISE_TYPE });
      firms(rng.int(3, 8));
      persons(rng.int(5, 10), legal);
      break;
    case '1222':
      firms(rng.int(0, 4));
      persons(rng.int(2, 10), rng.chance(0.6) ? legal : undefined);
      break;
    case '3200':
      add(organisationHolder(rng, p.place));
      break;
    case '4531':
      persons(rng.int(2, 5), legal);
      break;
    case '4533':
      if (generalPartner) add(generalPartner);
      else persons(1, legal);
      persons(rng.int(2, 17));
      firms(rng.int(0, 3));
      break;
    case '5110':
    case '6110':
      add(foreignHolder(rng, p.kind));
      if (rng.chance(0.3)) add(foreignHolder(rng, p.kind));
      if (rng.chance(0.6)) firms(1);
      else persons(1);
      break;
    case '5150':
    case '6150':
      add(foreignHolder(rng, p.kind));
      break;
    case '9100':
      persons(rng.int(5, 20), legal, true);
      break;
  }
  if (out.length === 0) persons(1, legal);
  return out;
}

/** Positions an added officer may take, by kind; empty when the type has only its person in charge. */
function officerPositions(kind: Kind): readonly string[] {
  if (kind === 'cooperative') return ['理事', '监事'];
  if (kind === 'branch' || kind === 'sole' || kind === 'partnership') return [];
  if (kind === 'joint-stock') return ['董事', '监事', '总经理', '董事'];
  return ['监事', '经理', '董事', '总经理'];
}

function legalPositionFor(rng: Rng, p: Profile): string {
  switch (p.kind) {
    case 'branch':
      return BRANCH_HEAD;
    case 'sole':
      return SOLE_INVESTOR;
    case 'partnership':
      return MANAGING_PARTNER;
    case 'cooperative':
      return COOPERATIVE_POSITIONS[0] as string;
    case 'joint-stock':
      return '董事长';
    case 'collective':
      return rng.pick(['经理', '总经理']);
    default:
      return rng.weighted([
        ['执行董事', 40],
        ['执行董事兼总经理', 40],
        ['董事长', 20],
      ] as const);
  }
}

function personsFor(rng: Rng, p: Profile, legal: string, legalPosition: string): SimPerson[] {
  const persons: SimPerson[] = [{ NAME: legal, POSITION: legalPosition }];
  const names = new Set([legal]);
  const add = (position: string): void => {
    if (persons.length >= 10) return;
    const foreign = (p.kind === 'foreign' && rng.chance(0.3)) || (p.kind === 'hmt' && rng.chance(0.1));
    const name = foreign ? rng.pick(FOREIGN_PERSONS) : personName(rng);
    if (names.has(name)) return;
    names.add(name);
    persons.push({ NAME: name, POSITION: position });
  };
  switch (p.kind) {
    case 'branch':
    case 'sole':
    case 'partnership':
      break;
    case 'cooperative':
      for (let k = rng.int(0, 4); k > 0; k--) add('理事');
      add('监事');
      break;
    default:
      if (legalPosition === '董事长') {
        for (let k = rng.int(2, p.kind === 'joint-stock' ? 6 : 4); k > 0; k--) add('董事');
        for (let k = rng.int(1, p.kind === 'joint-stock' ? 2 : 1); k > 0; k--) add('监事');
        add('总经理');
      } else {
        add('监事');
        if (legalPosition === '执行董事' && rng.chance(0.6)) add('经理');
      }
  }
  return persons;
}

/** Insured employees: none for dead firms, few for small ones, thousands for listed companies. */
function participantsFor(rng: Rng, p: Profile, status: string): number {
  if (TERMINAL_STATUSES.has(status) || status.startsWith('吊销')) return 0;
  switch (p.kind) {
    case 'joint-stock':
      return p.typeCode === '1212' ? rng.int(300, 20000) : rng.int(10, 2000);
    case 'branch':
    case 'partnership':
    case 'sole':
    case 'cooperative':
      return rng.chance(0.6) ? 0 : rng.int(1, 12);
    case 'foreign':
    case 'hmt':
      return rng.int(3, 800);
    default:
      return rng.chance(0.35) ? 0 : 1 + Math.floor(rng.next() ** 3 * 500);
  }
}

/** Industry, industry word and produce of a new profile, fitting its kind. */
function industryFor(rng: Rng, kind: Kind): Pick<Profile, 'industry' | 'word' | 'produce'> {
  if (kind === 'cooperative') {
    const { word, product } = rng.pick(COOPERATIVE_WORDS);
    const industry = INDUSTRIES.find((x) => x.words.includes(word)) as Industry;
    return { industry, word, produce: product };
  }
  if (kind === 'partnership') {
    const industry = rng.pick(PARTNERSHIP_INDUSTRIES);
    return { industry, word: rng.pick(industry.words.filter((w) => PARTNERSHIP_WORDS.includes(w))) };
  }
  const industry = rng.weighted(INDUSTRY_WEIGHTS);
  return { industry, word: rng.pick(industry.words) };
}

/**
 * Establishment date: newer firms are more common. Partnerships and sole proprietorships exist
 * from their 1997 laws, limited partnerships and farmers' cooperatives from 2007.
 */
function establishedOn(rng: Rng, typeCode: string, historyEnd: string): string {
  const earliest =
    typeCode === '9100'
      ? '2007-07-01'
      : typeCode === '4533'
        ? '2007-06-01'
        : typeCode === '4531' || typeCode === '4540'
          ? '1997-08-01'
          : '1990-01-01';
  const latest = shiftDate(historyEnd, -30);
  return shiftDate(latest, -Math.floor(rng.next() ** 1.6 * (dayOf(latest) - dayOf(earliest))));
}

/** Draws each enterprise's PID, type, place, industry, establishment date and clearing style. */
function drawProfiles(seed: number, size: number, historyEnd: string): Profile[] {
  const pids = new Set<string>();
  const profiles: Profile[] = [];
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
    const typeCode = rng.weighted(ENT_TYPE_WEIGHTS);
    const kind = kindOf(typeCode);
    const rawClearing = rng.weighted([
      ['no', 80],
      ['codes', 10],
      ['codes-and-spans', 10],
    ] as const);
    profiles.push({
      pid,
      kind,
      typeCode,
      place: randomPlace(rng, kind),
      ...industryFor(rng, kind),
      esDate: establishedOn(rng, typeCode, historyEnd),
      rawClearing,
    });
  }
  return profiles;
}

/**
 * Branches need a head office of a matching type; in a world without one they become one.
 * Returns the possible head offices of a branch type (indices, ascending).
 */
function settleBranches(profiles: Profile[]): (typeCode: string) => number[] {
  const byType = new Map<string, number[]>();
  profiles.forEach((p, i) => {
    if (p.kind === 'branch') return;
    const list = byType.get(p.typeCode);
    if (list) list.push(i);
    else byType.set(p.typeCode, [i]);
  });
  const parentLists = new Map<string, number[]>();
  const parentsOf = (typeCode: string): number[] => {
    let list = parentLists.get(typeCode);
    if (!list) {
      list = (BRANCH_PARENTS[typeCode] ?? []).flatMap((t) => byType.get(t) ?? []).sort((a, b) => a - b);
      parentLists.set(typeCode, list);
    }
    return list;
  };
  for (const p of profiles) {
    if (p.kind === 'branch' && parentsOf(p.typeCode).length === 0) {
      p.typeCode = BRANCH_FALLBACK[p.typeCode] as string;
      p.kind = kindOf(p.typeCode);
    }
  }
  return parentsOf;
}

/** Names every enterprise that is not a branch, each unique; `names` collects them. */
function nameHeadOffices(seed: number, profiles: Profile[], names: Set<string>, entNames: string[]): void {
  for (let i = 0; i < profiles.length; i++) {
    const p = profiles[i] as Profile;
    if (p.kind === 'branch') continue;
    const rng = rngFor(seed, 'name', i);
    let name = nameFor(rng, p, 0);
    for (let attempt = 1; names.has(name); attempt++) name = nameFor(rng, p, attempt);
    names.add(name);
    entNames[i] = name;
  }
}

/** Gives each branch its head office, industry, place and name (the head office's name and a suffix). */
function nameBranches(
  seed: number,
  profiles: Profile[],
  parentsOf: (typeCode: string) => number[],
  historyEnd: string,
  names: Set<string>,
  entNames: string[],
): void {
  for (let i = 0; i < profiles.length; i++) {
    const p = profiles[i] as Profile;
    if (p.kind !== 'branch') continue;
    const rng = rngFor(seed, 'name', i);
    const parents = parentsOf(p.typeCode);
    const parent = rng.pick(parents);
    const head = profiles[parent] as Profile;
    p.parent = parent;
    p.industry = head.industry;
    p.word = head.word;
    if (p.esDate < head.esDate)
      p.esDate = shiftDate(head.esDate, Math.floor((dayOf(historyEnd) - dayOf(head.esDate)) * rng.next()));
    if (rng.chance(0.5)) {
      // A branch in the head office's own city, in another district.
      const { province, city } = head.place;
      p.place = placeIn(rng, province, city, rng.pick(city.districts), p.kind);
    }
    const sameCity = p.place.city === head.place.city;
    const suffixes = [
      sameCity ? `${districtShort(p.place.district)}分公司` : `${p.place.city.name}分公司`,
      `${p.place.city.name}${districtShort(p.place.district)}分公司`,
      ...['第一', '第二', '第三', '第四', '第五'].map((n) => `${p.place.city.name}${n}分公司`),
      `${p.place.city.name}${districtShort(p.place.district)}${rng.pick(ROADS)}分公司`,
    ];
    const base = entNames[parent] as string;
    const suffix = suffixes.find((s) => !names.has(base + s)) ?? `${p.place.city.name}${i}分公司`;
    p.branchSuffix = suffix;
    entNames[i] = base + suffix;
    names.add(base + suffix);
  }
}

/** Former names, unique against all names, so a former name finds its own enterprise. */
function formerNamesFor(seed: number, profiles: Profile[], names: Set<string>, entNames: string[]): string[] {
  const formerNames: string[] = new Array(profiles.length).fill('');
  for (let i = 0; i < profiles.length; i++) {
    const p = profiles[i] as Profile;
    const rng = rngFor(seed, 'former-name', i);
    if (p.kind === 'branch' || p.esDate > '2023-06-30' || !rng.chance(0.15)) continue;
    const current = entNames[i] as string;
    const converted = current.replace(/股份有限公司$/, '有限公司');
    const former =
      p.kind === 'joint-stock' && rng.chance(0.5) && !names.has(converted)
        ? converted
        : distinctName(rng, names, (r, attempt) => nameFor(r, p, attempt));
    if (names.has(former)) continue;
    names.add(former);
    formerNames[i] = former;
  }
  return formerNames;
}

/** What drawing one record needs besides its own profile: the named world around it. */
interface Draft {
  seed: number;
  historyEnd: string;
  profiles: readonly Profile[];
  entNames: readonly string[];
  formerNames: readonly string[];
  /** Investment or management companies, which may be a limited partnership's general partner. */
  gpPool: readonly number[];
  source: (indices: readonly number[]) => InvestorSource;
  investors: InvestorSource;
}

/** Draws the first-day record of enterprise `i`: status, dates, people, holders and the rest. */
function recordFor(d: Draft, p: Profile, i: number): SimEnterprise {
  const { historyEnd, profiles, entNames, gpPool, source, investors } = d;
  const rng = rngFor(d.seed, 'detail', i);
  const active = rng.chance(0.85);
  const status = active ? rng.weighted(ACTIVE_STATUSES) : rng.weighted(INACTIVE_STATUSES);
  const revoked = REVOKED_STATUSES.has(status);
  const span = Math.max(0, dayOf(historyEnd) - dayOf(p.esDate));
  const revokeDate = revoked
    ? shiftDate(p.esDate, Math.min(span, 180 + rng.int(0, Math.max(0, span - 180))))
    : '';
  let apprDate = shiftDate(p.esDate, Math.floor(span * (1 - rng.next() ** 2)));
  if (revokeDate && apprDate < revokeDate) apprDate = revokeDate;

  let legal = personName(rng);
  const legalPosition = legalPositionFor(rng, p);
  if (p.kind === 'foreign' && rng.chance(0.3)) legal = rng.pick(FOREIGN_PERSONS);
  let persons = personsFor(rng, p, legal, legalPosition);
  let shareholders: SimShareholder[];
  if (p.kind === 'branch') {
    const parent = p.parent as number;
    shareholders = [
      { PID: (profiles[parent] as Profile).pid, INV: entNames[parent] as string, INVTYPE: '企业法人' },
    ];
  } else if (p.typeCode === '4533' && gpPool.length > 1 && rng.chance(0.6)) {
    // The general partner is an investment or management company; it runs the partnership.
    const gp = enterpriseHolder(rng, source(gpPool), i, new Set()) ?? undefined;
    shareholders = shareholdersFor(rng, p, i, legal, investors, gp);
    if (gp) {
      legal = gp.INV;
      persons = [
        { NAME: legal, POSITION: MANAGING_PARTNER },
        { NAME: personName(rng), POSITION: `${MANAGING_PARTNER}委派代表` },
      ];
    }
  } else {
    shareholders = shareholdersFor(rng, p, i, legal, investors);
  }
  const clearing =
    status === '清算' ||
    (status === '注销' && rng.chance(0.6)) ||
    (status === '吊销，已注销' && rng.chance(0.4));
  const [regCap, regCapCur] = capitalFor(rng, p);
  const legalDesc =
    p.kind === 'partnership'
      ? MANAGING_PARTNER
      : p.kind === 'branch'
        ? BRANCH_HEAD
        : p.kind === 'sole'
          ? SOLE_INVESTOR
          : '法定代表人';
  const era = p.esDate >= '2016-01-01' ? 'new' : p.esDate >= '2015-10-01' ? 'either' : 'old';
  return {
    PID: p.pid,
    ENTNAME: entNames[i] as string,
    HISTORYNAME: d.formerNames[i] as string,
    IS_LISTED: p.typeCode === '1212' ? 1 : 0,
    LEGALPERSON: legal,
    LEGALPERSONDESC: legalDesc,
    ESDATE: iso(p.esDate),
    SCONFORM: p.kind !== 'branch' && rng.chance(0.7) ? '货币' : '',
    REGNO: makeRegno(rng, p.place.division),
    UNCID: makeUscc(rng, p.place.division, p.kind === 'cooperative' ? 3 : 1, era),
    ENTTYPECODE: p.typeCode,
    ENTTYPE: ENT_TYPE_TEXT[p.typeCode] as string,
    REGCAP: regCap,
    REGCAPCUR: regCapCur,
    PROVINCE: p.place.province.code,
    OPFROM: iso(p.esDate),
    OPTO: operatingTo(rng, p, historyEnd, !BAD_STATUSES.has(status)),
    REGORG: p.place.regOrg,
    APPRDATE: iso(apprDate),
    REVOKEDATE: revokeDate,
    REVOKEREASON: revoked ? rng.pick(status === '撤销' ? CANCEL_REASONS : REVOKE_REASONS) : '',
    ENTSTATUS: status,
    OPLOC: addressOf(rng, p.place),
    OPSCOPE: scopeOf(rng, p),
    PERSONS: persons,
    BE_INVEST: shareholders,
    participants: participantsFor(rng, p, status),
    INDUSTRYPHY: p.industry.section,
    INDUSTRYBIG: p.industry.big,
    industry_middle: p.industry.middle,
    CLEARINGINFO: clearing
      ? clearingFor(rng, p, rng.int(1, 5), p.kind !== 'partnership' && rng.chance(0.5) ? legal : undefined)
      : [],
  };
}

/** A pure function of (seed, size, epoch): the world on its first day, with each record's profile. */
function generate(
  seed: number,
  size: number,
  epoch: string,
): { records: SimEnterprise[]; profiles: Profile[]; investorPool: number[] } {
  const historyEnd = shiftDate(epoch, -1);
  const profiles = drawProfiles(seed, size, historyEnd);
  const parentsOf = settleBranches(profiles);
  const names = new Set<string>();
  const entNames: string[] = new Array(size).fill('');
  nameHeadOffices(seed, profiles, names, entNames);
  nameBranches(seed, profiles, parentsOf, historyEnd, names, entNames);
  const formerNames = formerNamesFor(seed, profiles, names, entNames);

  const pool = profiles.flatMap((p, i) => (mayInvest(p.kind) ? [i] : []));
  const gpPool = pool.filter((j) => {
    const p = profiles[j] as Profile;
    return p.kind === 'company' && (p.industry.bigCode === '67' || p.industry.bigCode === '72');
  });
  const source = (indices: readonly number[]): InvestorSource => ({
    pool: indices,
    pidOf: (j) => (profiles[j] as Profile).pid,
    nameOf: (j) => entNames[j] as string,
    kindOf: (j) => (profiles[j] as Profile).kind,
    canInvest: () => true,
  });
  const draft: Draft = {
    seed,
    historyEnd,
    profiles,
    entNames,
    formerNames,
    gpPool,
    source,
    investors: source(pool),
  };
  const records = profiles.map((p, i) => recordFor(draft, p, i));
  return { records, profiles, investorPool: pool };
}

/** What a mutation may look at besides the record it changes. */
interface MutationContext {
  rng: Rng;
  profile: Profile;
  /** The world before this refresh's changes to this record. */
  world: readonly SimEnterprise[];
  investors: InvestorSource;
  index: number;
  names: Set<string>;
  /** The registry date of this refresh's changes: the day before the cycle. */
  day: string;
}

type Mutation = (e: SimEnterprise, ctx: MutationContext) => string | null;

/** A registry change is approved on `day`: APPRDATE moves with it. */
function approved(e: SimEnterprise, ctx: MutationContext, kind: string): string {
  e.APPRDATE = iso(ctx.day);
  return kind;
}

/**
 * Moves a record to status `to` with what comes with it: a revocation date and reason, a
 * liquidation group (always for 清算, often for 注销), no insured staff once it ends.
 */
function setStatus(e: SimEnterprise, to: string, ctx: MutationContext): void {
  const { rng, profile: p } = ctx;
  e.ENTSTATUS = to;
  if (to.startsWith('吊销') && !e.REVOKEDATE) {
    e.REVOKEDATE = ctx.day;
    e.REVOKEREASON = rng.pick(REVOKE_REASONS);
  }
  if (to === '清算' && e.CLEARINGINFO.length === 0)
    e.CLEARINGINFO = clearingFor(rng, p, rng.int(1, 4), e.LEGALPERSON);
  if (to === '注销' && e.CLEARINGINFO.length === 0 && rng.chance(0.5))
    e.CLEARINGINFO = clearingFor(rng, p, rng.int(1, 3));
  if (TERMINAL_STATUSES.has(to) || to.startsWith('吊销')) e.participants = 0;
}

function setType(e: SimEnterprise, typeCode: string): void {
  e.ENTTYPECODE = typeCode;
  e.ENTTYPE = ENT_TYPE_TEXT[typeCode] as string;
}

const MUTATIONS: [string, number, Mutation][] = [
  [
    'status',
    3,
    (e, ctx) => {
      const { rng } = ctx;
      let to: string;
      if (e.ENTSTATUS === '清算') to = '注销';
      else if (e.ENTSTATUS === '停业') to = rng.chance(0.7) ? '存续' : '注销';
      else if (e.ENTSTATUS === '吊销，未注销') to = '吊销，已注销';
      else if (BAD_STATUSES.has(e.ENTSTATUS)) return null;
      else {
        // Most status changes of a live firm are relabellings between live statuses or a pause
        // (停业) it comes back from; few end it, so the world's share of dead firms grows slowly
        // (about a tenth a year, like the registry's yearly cancellations).
        to = rng.weighted([
          ['注销', 0.15],
          ['吊销，未注销', 0.1],
          ['清算', 0.1],
          ['迁出', 0.05],
          ['停业', 0.15],
          ['在业', 1],
          ['存续', 1],
          ['开业', 0.3],
        ] as const);
      }
      if (to === e.ENTSTATUS) return null;
      setStatus(e, to, ctx);
      return approved(e, ctx, 'status');
    },
  ],
  [
    'legal_representative',
    10,
    (e, ctx) => {
      const { rng, profile: p } = ctx;
      const n = personName(rng);
      if (n === e.LEGALPERSON || e.PERSONS.some((x) => x.NAME === n)) return null;
      const old = e.LEGALPERSON;
      e.LEGALPERSON = n;
      const k = e.PERSONS.findIndex((x) => x.NAME === old);
      if (k >= 0) e.PERSONS = e.PERSONS.map((x, i) => (i === k ? { NAME: n, POSITION: x.POSITION } : x));
      else e.PERSONS = [{ NAME: n, POSITION: legalPositionFor(rng, p) }, ...e.PERSONS].slice(0, 10);
      // A sole proprietorship's person in charge is its investor.
      if (p.kind === 'sole') e.BE_INVEST = [naturalHolder(rng, n)];
      return approved(e, ctx, 'legal_representative');
    },
  ],
  [
    'capital',
    10,
    (e, ctx) => {
      const { rng, profile: p } = ctx;
      if (p.kind === 'branch' || e.REGCAP <= 0) return null;
      // A listed company issues a few more shares; others raise or cut capital in round steps.
      const listed = e.ENTTYPECODE === '1212';
      const factor = listed ? 1 + rng.int(1, 30) / 100 : rng.pick([0.5, 1.2, 1.5, 2, 2, 3, 5]);
      const next = listed
        ? Math.round(e.REGCAP * factor * 10000) / 10000
        : Math.round(e.REGCAP * factor * 100) / 100;
      if (next === e.REGCAP) return null;
      e.REGCAP = next;
      return approved(e, ctx, factor < 1 ? 'capital_decrease' : 'capital_increase');
    },
  ],
  [
    'address',
    10,
    (e, ctx) => {
      const next = addressOf(ctx.rng, ctx.profile.place);
      if (next === e.OPLOC) return null;
      e.OPLOC = next;
      return approved(e, ctx, 'address');
    },
  ],
  [
    'scope',
    8,
    (e, ctx) => {
      const next = scopeOf(ctx.rng, ctx.profile, true);
      if (next === e.OPSCOPE) return null;
      e.OPSCOPE = next;
      return approved(e, ctx, 'scope');
    },
  ],
  [
    'name',
    5,
    (e, ctx) => {
      const { rng, profile: p, names } = ctx;
      let next: string;
      if (p.kind === 'branch') {
        // A branch follows its head office's new name.
        const head = ctx.world[p.parent as number];
        if (!head) return null;
        next = head.ENTNAME + (p.branchSuffix ?? '分公司');
      } else {
        next = distinctName(rng, names, (r, attempt) => nameFor(r, p, attempt));
      }
      if (next === e.ENTNAME || names.has(next)) return null;
      // The old name stays taken as the former name; the older former name is forgotten.
      if (e.HISTORYNAME) names.delete(e.HISTORYNAME);
      names.add(next);
      e.HISTORYNAME = e.ENTNAME;
      e.ENTNAME = next;
      return approved(e, ctx, 'name');
    },
  ],
  [
    'persons',
    12,
    (e, ctx) => {
      const { rng, profile: p } = ctx;
      const positions = officerPositions(p.kind);
      if (positions.length === 0) return null;
      const kind = e.PERSONS.length <= 1 ? 'add' : rng.pick(['add', 'remove', 'position']);
      if (kind === 'add') {
        if (e.PERSONS.length >= 10) return null;
        const n = personName(rng);
        if (e.PERSONS.some((x) => x.NAME === n)) return null;
        e.PERSONS = [...e.PERSONS, { NAME: n, POSITION: rng.pick(positions) }];
        return approved(e, ctx, 'person_added');
      }
      // The legal representative (first) stays; others leave or change position.
      const k = rng.int(1, e.PERSONS.length - 1);
      if (kind === 'remove') {
        e.PERSONS = e.PERSONS.filter((_, i) => i !== k);
        return approved(e, ctx, 'person_removed');
      }
      const current = (e.PERSONS[k] as SimPerson).POSITION;
      const choices = positions.filter((x) => x !== current);
      if (choices.length === 0) return null;
      const pos = rng.pick(choices);
      e.PERSONS = e.PERSONS.map((x, i) => (i === k ? { NAME: x.NAME, POSITION: pos } : x));
      return approved(e, ctx, 'person_position');
    },
  ],
  [
    'shareholders',
    12,
    (e, ctx) => {
      const { rng, profile: p } = ctx;
      const holders = e.BE_INVEST;
      const avoid = new Set(holders.map((s) => s.PID ?? s.INV));
      const newcomer = (): SimShareholder | null =>
        p.kind === 'cooperative'
          ? naturalHolder(rng, undefined, true)
          : rng.chance(0.3)
            ? enterpriseHolder(rng, ctx.investors, ctx.index, avoid)
            : naturalHolder(rng);
      switch (e.ENTTYPECODE) {
        case '1151': {
          // A second investor makes a one-person company one with several natural-person investors.
          const s = naturalHolder(rng);
          if (avoid.has(s.INV)) return null;
          e.BE_INVEST = [...holders, s];
          setType(e, '1130');
          return approved(e, ctx, 'shareholder_added');
        }
        case '1152':
        case '1153': {
          // The sole corporate owner sells to another enterprise.
          const s = enterpriseHolder(rng, ctx.investors, ctx.index, avoid);
          if (!s) return null;
          e.BE_INVEST = [s];
          return approved(e, ctx, 'shareholder_replaced');
        }
        case '1110':
        case '3200':
        case '4540':
        case '5150':
        case '6150':
          return null;
      }
      if (p.kind === 'branch') return null;
      // Founding holders that define the type (a partnership's general partner, the foreign
      // investor of a joint venture, a state owner) stay; others come and go.
      const fixed =
        p.kind === 'partnership' || p.kind === 'foreign' || p.kind === 'hmt' || e.ENTTYPECODE === '1140'
          ? 1
          : 0;
      const minimum = p.kind === 'cooperative' ? 5 : p.typeCode === '4531' ? 2 : 1;
      const kind = rng.pick(['add', 'remove', 'type']);
      if (kind === 'add' || holders.length <= Math.max(minimum, fixed)) {
        if (holders.length >= 20) return null;
        const s = newcomer();
        if (!s || avoid.has(s.PID ?? s.INV)) return null;
        e.BE_INVEST = [...holders, s];
        return approved(e, ctx, 'shareholder_added');
      }
      if (kind === 'remove') {
        const k = rng.int(fixed, holders.length - 1);
        e.BE_INVEST = holders.filter((_, i) => i !== k);
        return approved(e, ctx, 'shareholder_removed');
      }
      // A natural person re-registered under another natural-person type, or an enterprise's
      // type corrected between 企业法人 and 其他投资者.
      const k = rng.int(0, holders.length - 1);
      const s = holders[k] as SimShareholder;
      const swap: Readonly<Record<string, string>> = {
        自然人股东: '非农民自然人',
        非农民自然人: '自然人股东',
        农民自然人: '非农民自然人',
        企业法人: '其他投资者',
        其他投资者: '企业法人',
      };
      const t = swap[s.INVTYPE];
      if (!t) return null;
      e.BE_INVEST = holders.map((x, i) => (i === k ? { ...x, INVTYPE: t } : x));
      return approved(e, ctx, 'shareholder_type');
    },
  ],
  [
    'liquidation',
    2,
    (e, ctx) => {
      const { rng, profile: p } = ctx;
      if (e.ENTSTATUS === '清算') {
        if (e.CLEARINGINFO.length >= 8) return null;
        const n = personName(rng);
        if (e.CLEARINGINFO.some((c) => c.liqMem.includes(n))) return null;
        e.CLEARINGINFO = [...e.CLEARINGINFO, clearingMember(p, n, false)];
        return approved(e, ctx, 'liquidation_members');
      }
      // Most draws find no liquidation to extend; few live firms start one on a given day.
      if (BAD_STATUSES.has(e.ENTSTATUS) || !rng.chance(0.05)) return null;
      e.ENTSTATUS = '清算';
      e.CLEARINGINFO = clearingFor(
        rng,
        p,
        rng.int(1, 4),
        p.kind === 'partnership' ? undefined : e.LEGALPERSON,
      );
      return approved(e, ctx, 'liquidation_opened');
    },
  ],
  [
    'employees',
    10,
    (e, ctx) => {
      if (TERMINAL_STATUSES.has(e.ENTSTATUS) || e.ENTSTATUS.startsWith('吊销')) return null;
      const delta = ctx.rng.int(
        -Math.min(20, e.participants),
        Math.max(5, Math.round(e.participants * 0.05)),
      );
      if (delta === 0) return null;
      e.participants += delta;
      return 'insured_employees';
    },
  ],
  [
    'listing',
    1,
    (e, ctx) => {
      if (e.ENTTYPECODE === '1222') {
        setType(e, '1212');
        e.IS_LISTED = 1;
      } else if (e.ENTTYPECODE === '1212' && ctx.rng.chance(0.2)) {
        setType(e, '1222');
        e.IS_LISTED = 0;
      } else return null;
      return approved(e, ctx, 'listing');
    },
  ],
  [
    'operating_period',
    3,
    (e, ctx) => {
      const { rng } = ctx;
      let next: string;
      if (/^\d{4}-\d{2}-\d{2}$/.test(e.OPTO) && e.OPTO !== '9999-12-31') {
        // A dated term is extended, or made unlimited.
        const years = rng.pick([10, 20, 30, 0]);
        const term = Number(e.OPTO.slice(0, 4)) - Number(e.ESDATE.slice(0, 4));
        next = years === 0 ? rng.pick(['9999-12-31', '长期']) : termEnd(e.ESDATE, term + years);
      } else if (e.OPTO === '') next = '长期';
      else return null;
      e.OPTO = next;
      return approved(e, ctx, 'operating_period');
    },
  ],
];

const MUTATION_WEIGHTS = MUTATIONS.map((x) => [x, x[1]] as const);
const STATUS_MUTATION = MUTATIONS.find(([name]) => name === 'status') as [string, number, Mutation];

/**
 * The factor that turns hazards into daily probabilities whose sum is `expected` (the configured
 * share of the world), with no probability above MAX_DAILY_PROBABILITY: the mass a capped firm
 * cannot take goes to the others.
 */
function shareScale(hazard: Float64Array, total: number, expected: number): number {
  if (total <= 0 || expected <= 0) return 0;
  let scale = expected / total;
  for (let round = 0; round < 20; round++) {
    let capped = 0;
    let free = 0;
    for (const h of hazard) {
      if (h * scale >= MAX_DAILY_PROBABILITY) capped += MAX_DAILY_PROBABILITY;
      else free += h;
    }
    if (free <= 0) return scale;
    const next = Math.max(0, expected - capped) / free;
    if (Math.abs(next - scale) <= 1e-9 * scale) return next;
    scale = next;
  }
  return scale;
}

/** A standard normal draw (Box–Muller) from the world's generator. */
function normal(rng: Rng): number {
  const u = Math.max(1e-12, rng.next());
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng.next());
}

/**
 * A firm's base hazard: lognormal noise times what its profile says. Drawn from the firm's own
 * stream, so adding firms to a world never moves another firm's rate.
 */
function baseHazard(seed: number, e: SimEnterprise, p: Profile, epoch: string): number {
  const rng = rngFor(seed, 'hazard', e.PID);
  let f = Math.exp(LOG_SD * normal(rng));
  // Status: a firm in distress or winding up changes far more (liquidation members, revocation,
  // cancellation follow one another); a paused one somewhat more.
  if (e.ENTSTATUS === '清算') f *= 6;
  else if (e.ENTSTATUS === '吊销，未注销') f *= 4;
  else if (e.ENTSTATUS === '停业') f *= 3;
  // Type: joint-stock companies and groups file more; branches, sole proprietorships,
  // partnerships and cooperatives less.
  if (p.kind === 'joint-stock') f *= 2;
  else if (p.kind === 'branch') f *= 0.5;
  else if (p.kind === 'sole' || p.kind === 'cooperative') f *= 0.4;
  else if (p.kind === 'partnership') f *= 0.7;
  if (e.IS_LISTED === 1) f *= 3;
  // Size: every tenfold of registered capital (10,000 yuan units) about 1.4 times as often.
  if (e.REGCAP > 0) f *= Math.min(4, Math.max(0.5, 1.4 ** Math.log10(e.REGCAP / 100)));
  // Age: firms under two years settle in (addresses, scope, officers); old ones change less.
  const years = daysBetween(p.esDate, epoch) / 365.25;
  if (years < 2) f *= 1.8;
  else if (years > 15) f *= 0.7;
  return f;
}

/**
 * The last approval date (APPRDATE) of each live firm before the epoch, drawn at its own rate:
 * in a registry the date of the latest approved change is as recent as the firm is busy (the
 * time back to the last event of a steady process of rate λ is exponential with mean 1/λ), never
 * before its establishment or its revocation. A firm with no change since it was established
 * keeps its establishment date.
 */
function approvalsAtRate(
  seed: number,
  records: SimEnterprise[],
  base: Float64Array,
  share: number,
  epoch: string,
): void {
  const hazard = new Float64Array(records.length);
  let live = 0;
  for (let i = 0; i < records.length; i++) {
    if (TERMINAL_STATUSES.has((records[i] as SimEnterprise).ENTSTATUS)) continue;
    hazard[i] = base[i] as number;
    live += hazard[i] as number;
  }
  const scale = shareScale(hazard, live, share * records.length);
  const lastDay = addDays(epoch, -1);
  for (let i = 0; i < records.length; i++) {
    const e = records[i] as SimEnterprise;
    const p = Math.min(MAX_DAILY_PROBABILITY, (hazard[i] as number) * scale);
    if (p <= 0) continue;
    const rng = rngFor(seed, 'approval', e.PID);
    const back = Math.floor(-Math.log(Math.max(1e-12, rng.next())) / -Math.log1p(-p));
    // Dates are written as the registry writes them (ISO midnight UTC); compare the days.
    const established = e.ESDATE.slice(0, 10);
    const revoked = e.REVOKEDATE.slice(0, 10);
    let appr = addDays(lastDay, -Math.min(back, 36_500));
    if (appr < established) appr = established;
    if (revoked && appr < revoked) appr = revoked;
    if (appr > lastDay) appr = lastDay;
    e.APPRDATE = iso(appr);
  }
}

/** Order-insensitive comparable form of a record field (child lists compare as sets). */
function comparableField(v: unknown): string {
  if (Array.isArray(v)) return JSON.stringify(v.map((x) => JSON.stringify(x)).sort());
  return JSON.stringify(v ?? null);
}

/** The top-level fields whose value differs between two states of a record, sorted. */
function differingFields(a: SimEnterprise, b: SimEnterprise): string[] {
  const ra = a as unknown as Record<string, unknown>;
  const rb = b as unknown as Record<string, unknown>;
  const keys = new Set([...Object.keys(ra), ...Object.keys(rb)]);
  return [...keys].filter((k) => comparableField(ra[k]) !== comparableField(rb[k])).sort();
}

/** The severity daybook's change log gives the change from `a` to `b` (its highest). */
function severityOfChange(a: SimEnterprise, b: SimEnterprise): WorldChange['severity'] {
  if (a.ENTSTATUS !== b.ENTSTATUS && BAD_STATUS_TEXT.test(b.ENTSTATUS)) return 'high';
  if (a.CLEARINGINFO.length === 0 && b.CLEARINGINFO.length > 0) return 'high';
  if (!a.REVOKEDATE && b.REVOKEDATE) return 'high';
  if (a.ENTNAME !== b.ENTNAME || a.HISTORYNAME !== b.HISTORYNAME || a.LEGALPERSON !== b.LEGALPERSON)
    return 'medium';
  if (comparableField(a.BE_INVEST) !== comparableField(b.BE_INVEST)) return 'medium';
  if (b.REGCAP < a.REGCAP) return 'medium';
  return 'low';
}

/** A deep, mutable copy of a record, for a mutation to work on. */
function thaw(e: SimEnterprise): SimEnterprise {
  return structuredClone(e) as SimEnterprise;
}

/**
 * People who sit in several companies, on purpose: in about one company in four that another
 * enterprise of the world holds, one key person who is not its legal representative is the
 * holder's legal representative (a parent's chief on its subsidiary's board). Its own stream of
 * draws, so everything else is as the seed made it.
 */
function seatPeople(seed: number, records: SimEnterprise[]): void {
  const rng = rngFor(seed, 'seat', 0);
  const at = new Map(records.map((e, i) => [e.PID, i]));
  for (let i = 0; i < records.length; i++) {
    const e = records[i] as SimEnterprise;
    const held = e.BE_INVEST.find((s) => s.PID !== undefined && s.PID !== '' && at.has(s.PID));
    if (!held || !rng.chance(0.25)) continue;
    const chief = (records[at.get(held.PID as string) as number] as SimEnterprise).LEGALPERSON;
    const k = e.PERSONS.findIndex((p) => p.NAME !== e.LEGALPERSON);
    if (!chief || k < 0 || chief === e.LEGALPERSON || e.PERSONS.some((p) => p.NAME === chief)) continue;
    records[i] = { ...e, PERSONS: e.PERSONS.map((p, j) => (j === k ? { ...p, NAME: chief } : p)) };
  }
}

export class EnterpriseWorld {
  readonly seed: number;
  readonly epoch: string;
  private readonly initial: readonly SimEnterprise[];
  private readonly profiles: readonly Profile[];
  private readonly investors: InvestorSource;
  private current: SimEnterprise[];
  private currentCycle: string;
  private index = new Map<string, number>();
  private names = new Set<string>();
  private readonly changeLog = new Map<string, WorldChange[]>();
  /** The expected share of the whole world changed by each refresh. */
  readonly changeShare: number;
  /** Each firm's base hazard (relative; scaled to the share at each refresh). */
  private readonly base: Float64Array;
  /** The day number (days since the epoch) of each firm's last change, and its burst. */
  private lastChangeDay: Float64Array;
  private burstAmplitude: Float64Array;
  private burstTau: Float64Array;
  /** The daily change probabilities the last refresh drew at, by index (`drawnRates`); null at the epoch. */
  private drawn: Float64Array | null = null;
  /** Statuses set by `schedule`, by cycle: applied after that refresh's own changes. */
  private readonly scheduled = new Map<string, Map<string, SchedulableStatus>>();

  constructor(opts: { seed: number; size: number; epoch?: string; changeShare?: number }) {
    this.seed = opts.seed;
    this.epoch = opts.epoch ?? '2026-01-01';
    const share = opts.changeShare ?? DAILY_CHANGE_RATE;
    if (!(share >= 0 && share <= 0.5))
      throw new RangeError(`changeShare must be from 0 to 0.5, got ${share}`);
    this.changeShare = share;
    const { records, profiles, investorPool } = generate(opts.seed, opts.size, this.epoch);
    seatPeople(opts.seed, records);
    this.base = Float64Array.from(records, (e, i) =>
      baseHazard(opts.seed, e, profiles[i] as Profile, this.epoch),
    );
    approvalsAtRate(opts.seed, records, this.base, share, this.epoch);
    this.initial = records.map(deepFreeze);
    this.profiles = profiles;
    this.lastChangeDay = new Float64Array(records.length).fill(Number.NEGATIVE_INFINITY);
    this.burstAmplitude = new Float64Array(records.length);
    this.burstTau = new Float64Array(records.length).fill(1);
    this.investors = {
      pool: investorPool,
      pidOf: (j) => (profiles[j] as Profile).pid,
      nameOf: (j) => (this.current[j] as SimEnterprise).ENTNAME,
      kindOf: (j) => (profiles[j] as Profile).kind,
      canInvest: (j) => !TERMINAL_STATUSES.has((this.current[j] as SimEnterprise).ENTSTATUS),
    };
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
      this.drawn = null;
      this.lastChangeDay.fill(Number.NEGATIVE_INFINITY);
      this.burstAmplitude.fill(0);
      this.burstTau.fill(1);
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

  /**
   * Each firm's true base daily change probability at the current cycle, without bursts: the
   * share of the world times its hazard over the live firms' (0 once it can no longer change).
   * What an oracle planner knows and a real one must estimate.
   */
  rates(): Map<string, number> {
    const n = this.current.length;
    const hazard = new Float64Array(n);
    let live = 0;
    for (let i = 0; i < n; i++) {
      if (TERMINAL_STATUSES.has((this.current[i] as SimEnterprise).ENTSTATUS)) continue;
      hazard[i] = this.base[i] as number;
      live += hazard[i] as number;
    }
    const scale = shareScale(hazard, live, this.changeShare * n);
    const out = new Map<string, number>();
    for (let i = 0; i < n; i++)
      out.set(
        (this.current[i] as SimEnterprise).PID,
        Math.min(MAX_DAILY_PROBABILITY, (hazard[i] as number) * scale),
      );
    return out;
  }

  /**
   * Each firm's daily change probability as the refresh of the current cycle drew its changes:
   * its base times its burst after a recent change, scaled as that refresh scaled them (0 once it
   * can no longer change). What an oracle told each day's rates knows; `rates()` leaves the
   * bursts out. At the epoch, before any refresh: `rates()`.
   */
  drawnRates(): Map<string, number> {
    const drawn = this.drawn;
    if (drawn === null) return this.rates();
    return new Map(this.current.map((e, i) => [e.PID, drawn[i] as number]));
  }

  /** One firm's entry of `rates()` (0 for an unknown PID). */
  rateOf(pid: string): number {
    return this.rates().get(pid) ?? 0;
  }

  /**
   * Gives enterprise `pid` status `to` in the refresh of `cycle` (after the refresh's own changes,
   * with what the status brings: a revocation date, a liquidation group), so a test knows the day.
   * A cycle already past is replayed: the world and its change log are as if it had been
   * scheduled from the start. An enterprise already ended (注销, 迁出 …) by then stays as it is.
   */
  schedule(pid: string, cycle: string, to: SchedulableStatus): void {
    if (!this.index.has(pid)) throw new RangeError(`no enterprise has PID ${pid}`);
    if (!(SCHEDULABLE_STATUSES as readonly string[]).includes(to))
      throw new RangeError(`status must be one of ${SCHEDULABLE_STATUSES.join(', ')}; got ${to}`);
    if (daysBetween(this.epoch, cycle) <= 0)
      throw new RangeError(`cycle ${cycle} is not after the world's first day ${this.epoch}`);
    const day = this.scheduled.get(cycle) ?? new Map<string, SchedulableStatus>();
    day.set(pid, to);
    this.scheduled.set(cycle, day);
    if (daysBetween(cycle, this.currentCycle) >= 0) {
      const here = this.currentCycle;
      for (const c of [...this.changeLog.keys()]) if (daysBetween(cycle, c) >= 0) this.changeLog.delete(c);
      this.at(this.epoch);
      this.at(here);
    }
  }

  /**
   * Shareholding chains of `length` enterprises (2 to 4), at the current cycle: each one listed
   * (by PID) among the shareholders of the one before it, all distinct and all operating (no
   * status among the inactive ones: 注销, 吊销, 清算, 停业 …). The first
   * `limit`, in the world's order.
   */
  chains(length: number, limit: number): ChainLink[][] {
    const out: ChainLink[][] = [];
    const live = (i: number | undefined): i is number =>
      i !== undefined && !BAD_STATUSES.has((this.current[i] as SimEnterprise).ENTSTATUS);
    const link = (i: number): ChainLink => {
      const e = this.current[i] as SimEnterprise;
      return { pid: e.PID, name: e.ENTNAME, uscc: e.UNCID };
    };
    const extend = (path: number[]): void => {
      if (out.length >= limit) return;
      if (path.length === length) {
        out.push(path.map(link));
        return;
      }
      const last = this.current[path[path.length - 1] as number] as SimEnterprise;
      for (const s of last.BE_INVEST) {
        const j = s.PID === undefined ? undefined : this.index.get(s.PID);
        if (live(j) && !path.includes(j)) extend([...path, j]);
      }
    };
    for (let i = 0; i < this.current.length && out.length < limit; i++) if (live(i)) extend([i]);
    return out;
  }

  /**
   * People who sit in several companies, at the current cycle: each name that is the legal
   * representative or a key person of two companies or more, with where and as what, the names in
   * most companies first (then by name), the first `limit`. The world seats some on purpose (a
   * holder's legal representative among the key persons of a company it holds); others share a
   * common name by chance. The upstream gives no person id, so both look the same to a client.
   */
  sharedPeople(limit: number): { name: string; seats: { pid: string; role: string }[] }[] {
    const seats = new Map<string, { pid: string; role: string }[]>();
    const seat = (name: string, pid: string, role: string) => {
      if (!name) return;
      const list = seats.get(name) ?? [];
      if (!list.some((s) => s.pid === pid)) list.push({ pid, role });
      seats.set(name, list);
    };
    for (const e of this.current) {
      seat(e.LEGALPERSON, e.PID, e.LEGALPERSONDESC || '法定代表人');
      for (const p of e.PERSONS) seat(p.NAME, e.PID, p.POSITION);
    }
    return [...seats]
      .filter(([, s]) => s.length > 1)
      .sort(([a, x], [b, y]) => y.length - x.length || a.localeCompare(b))
      .slice(0, Math.max(0, limit))
      .map(([name, s]) => ({ name, seats: s }));
  }

  /** What the refresh of `cycle` changed (computed by replaying up to it, world state kept). */
  changesIn(cycle: string): WorldChange[] {
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
    this.names = new Set(
      this.current.flatMap((e) => (e.HISTORYNAME ? [e.ENTNAME, e.HISTORYNAME] : [e.ENTNAME])),
    );
  }

  private refresh(cycle: string): void {
    const rng = rngFor(this.seed, 'refresh', cycle);
    const day = addDays(cycle, -1);
    const dayNo = daysBetween(this.epoch, cycle);
    // Each live firm's hazard: its base times its burst; scaled so that the expected number of
    // firms changed is the configured share of the whole world (terminal firms never change, so
    // the live ones change a little more often as the world ages).
    const n = this.current.length;
    const hazard = new Float64Array(n);
    let live = 0;
    for (let i = 0; i < n; i++) {
      if (TERMINAL_STATUSES.has((this.current[i] as SimEnterprise).ENTSTATUS)) continue;
      const since = dayNo - (this.lastChangeDay[i] as number);
      const burst = 1 + (this.burstAmplitude[i] as number) * Math.exp(-since / (this.burstTau[i] as number));
      hazard[i] = (this.base[i] as number) * burst;
      live += hazard[i] as number;
    }
    const scale = shareScale(hazard, live, this.changeShare * n);
    const log: WorldChange[] = [];
    const startOf = new Map<number, SimEnterprise>();
    const drawn = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const p = Math.min(MAX_DAILY_PROBABILITY, (hazard[i] as number) * scale);
      drawn[i] = p;
      if (!rng.chance(p)) continue;
      const before = this.current[i] as SimEnterprise;
      if (TERMINAL_STATUSES.has(before.ENTSTATUS)) continue;
      const e = thaw(before);
      const ctx = this.contextFor('mutate', cycle, i, day);
      const kinds: string[] = [];
      const applied = new Set<string>();
      // One to three changes, each mutation at most once; mutations that do not apply to this
      // record are drawn again. A paused or liquidating firm most often moves on (resumes or
      // closes) when it changes at all.
      const wanted = ctx.rng.int(1, 3);
      const pending = (e.ENTSTATUS === '停业' || e.ENTSTATUS === '清算') && ctx.rng.chance(0.5);
      for (let draws = 0; kinds.length < wanted && draws < wanted + 5; draws++) {
        const [name, , mutate] =
          draws === 0 && pending ? STATUS_MUTATION : ctx.rng.weighted(MUTATION_WEIGHTS);
        if (applied.has(name)) continue;
        const kind = mutate(e, ctx);
        if (!kind) continue;
        applied.add(name);
        kinds.push(kind);
        if (TERMINAL_STATUSES.has(e.ENTSTATUS)) break;
      }
      if (kinds.length === 0) continue;
      const fields = differingFields(before, e);
      if (fields.length === 0) continue;
      this.current[i] = deepFreeze(e);
      const severity = severityOfChange(before, e);
      const burst = severity === 'high' ? BURST.high : BURST.ordinary;
      this.lastChangeDay[i] = dayNo;
      this.burstAmplitude[i] = burst.amplitude;
      this.burstTau[i] = burst.tau;
      log.push({ pid: e.PID, kinds, fields, severity, holders: [] });
      startOf.set(i, before);
    }
    this.drawn = drawn;
    this.applyScheduled(cycle, day, dayNo, log, startOf);
    const holders = this.holdersOf(new Set(log.map((c) => c.pid)));
    for (const c of log) c.holders = holders.get(c.pid) ?? [];
    this.changeLog.set(cycle, log);
  }

  /** The statuses scheduled for `cycle`, over what the refresh changed already (`startOf`: records before it). */
  private applyScheduled(
    cycle: string,
    day: string,
    dayNo: number,
    log: WorldChange[],
    startOf: Map<number, SimEnterprise>,
  ): void {
    for (const [pid, to] of this.scheduled.get(cycle) ?? []) {
      const i = this.index.get(pid);
      if (i === undefined) continue;
      const now = this.current[i] as SimEnterprise;
      if (TERMINAL_STATUSES.has(now.ENTSTATUS) || now.ENTSTATUS === to) continue;
      const before = startOf.get(i) ?? now;
      const e = thaw(now);
      const ctx = this.contextFor('scheduled', cycle, i, day);
      setStatus(e, to, ctx);
      approved(e, ctx, 'status');
      this.current[i] = deepFreeze(e);
      this.lastChangeDay[i] = dayNo;
      this.burstAmplitude[i] = BURST.high.amplitude;
      this.burstTau[i] = BURST.high.tau;
      const entry: WorldChange = {
        pid,
        kinds: ['scheduled status'],
        fields: differingFields(before, e),
        severity: severityOfChange(before, e),
        holders: [],
      };
      const k = log.findIndex((c) => c.pid === pid);
      if (k < 0) log.push(entry);
      else log[k] = { ...entry, kinds: [...(log[k] as WorldChange).kinds, 'scheduled status'] };
    }
  }

  /** What a change to record `i` in the refresh of `cycle` draws on (its random stream by `label`). */
  private contextFor(label: string, cycle: string, i: number, day: string): MutationContext {
    return {
      rng: rngFor(this.seed, label, cycle, i),
      profile: this.profiles[i] as Profile,
      world: this.current,
      investors: this.investors,
      index: i,
      names: this.names,
      day,
    };
  }

  /** For each PID of `pids`, the enterprises listing it among their shareholders now (sorted). */
  private holdersOf(pids: ReadonlySet<string>): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (const e of this.current)
      for (const s of e.BE_INVEST) {
        if (s.PID === undefined || !pids.has(s.PID)) continue;
        const list = out.get(s.PID) ?? [];
        if (!list.includes(e.PID)) list.push(e.PID);
        out.set(s.PID, list);
      }
    for (const list of out.values()) list.sort();
    return out;
  }
}
