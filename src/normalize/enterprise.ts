/**
 * Enterprise record (metadata.content) → one typed row plus its children. Pure.
 *
 * Decisions a reader needs:
 * - Date-only fields (ESDATE, OPFROM, APPRDATE, REVOKEDATE, OPTO) become YYYY-MM-DD. A plain date
 *   or a zone-less datetime gives the calendar date as written. A datetime WITH a zone (Z or
 *   ±HH:MM) is an instant and gives its Beijing calendar date, because registry dates are
 *   Beijing dates: 2008-05-12T00:00:00.000Z → 2008-05-12, and 2008-05-11T16:00:00.000Z
 *   (Beijing midnight written in UTC) → 2008-05-12 as well.
 * - Date placeholders 0000-00-00, 1899-12-30 and 1900-01-01 (with or without a time) mean "no
 *   date": the date is null and the original stays in `<x>Text`.
 * - OPTO: perpetual (9999-12-31 or 长期 / 永久 / 无固定期限 / Long-term / Perpetual / Permanent /
 *   Indefinite, case-insensitive, also inside longer text like 长期有效) → operatingTo null,
 *   operatingPerpetual true. Placeholders, empty and unparseable text → operatingTo null,
 *   operatingPerpetual false. operatingToText always keeps the original.
 * - Registered capital: the number comes from REGCAP (or, when REGCAP has none, from a number
 *   written inside REGCAPCUR); unit and currency from REGCAPCUR, else from words inside a REGCAP
 *   string. 元 alone means CNY. capitalAmount = regCap × unit (万 ×10^4, 亿 ×10^8, 元 or
 *   currency-without-unit ×1), computed on decimal strings, so there is no float noise.
 * - Children are kept as sent: a person, shareholder or clearing member is kept whatever its text
 *   holds, markup included (markup is data; it is made inert where it is shown). A child is
 *   dropped only when it holds nothing at all: every field, documented or not, absent, null,
 *   empty or whitespace. A person or clearing member kept without a name has the name ''.
 * - A clearing member's name has the HTML that registries wrap around it stripped and its
 *   entities decoded (`<span>王&nbsp;五</span>` → `王 五`), unless that leaves nothing: a name that
 *   is only markup (`<img src=x onerror=alert(1)>`) is kept as sent.
 * - `inLiquidation` comes from the record, not from the members that survive: a CLEARINGINFO
 *   with any entry, even one with nothing readable in it, is an open liquidation.
 * - Exact duplicate children (same name, position/type/PID and extra) are kept once.
 */
import { shanghaiDate } from '../time/cycles.ts';
import { decimalOf, ExactNumber, numberFits } from '../upstream/json.ts';
import { EnterpriseRecord } from '../upstream/schemas.ts';
import { canonicalJson, cleanText, extraOf, instantOf, parseTimestampParts } from './text.ts';
import type {
  CapitalUnit,
  JsonObject,
  JsonValue,
  NormalizedClearingMember,
  NormalizedEnterprise,
  NormalizedPerson,
  NormalizedShareholder,
} from './types.ts';

/** The documented top-level fields of an enterprise record (the schema's keys); everything else goes to `extra`. */
export const DOCUMENTED_ENTERPRISE_FIELDS: ReadonlySet<string> = new Set(Object.keys(EnterpriseRecord.shape));

const PERSON_FIELDS: ReadonlySet<string> = new Set(['NAME', 'POSITION']);
const SHAREHOLDER_FIELDS: ReadonlySet<string> = new Set(['PID', 'INV', 'INVTYPE']);
const CLEARING_FIELDS: ReadonlySet<string> = new Set(['liqMem', 'ligpriSign']);

/** Dates that registries write when they have none. */
export const DATE_PLACEHOLDERS: readonly string[] = ['0000-00-00', '1899-12-30', '1900-01-01'];

/** Words (case-insensitive, matched anywhere in OPTO) that mean the operating period never ends. */
export const PERPETUAL_PATTERN =
  /长期|永久|无固定期限|不约定期限|long[\s_-]*term|perpetual|permanent|indefinite/i;

/** ligpriSign codes of raw registry data. */
export const LIQUIDATION_ROLES: Readonly<Record<string, string>> = {
  '1': '清算组负责人',
  '2': '清算组成员',
};

/** Currency names and codes → ISO 4217; the longest name is tried first. */
export const CURRENCY_NAMES: Readonly<Record<string, string>> = {
  人民币: 'CNY',
  美元: 'USD',
  港元: 'HKD',
  港币: 'HKD',
  欧元: 'EUR',
  日元: 'JPY',
  英镑: 'GBP',
  澳元: 'AUD',
  澳大利亚元: 'AUD',
  加元: 'CAD',
  加拿大元: 'CAD',
  新加坡元: 'SGD',
  瑞士法郎: 'CHF',
  新台币: 'TWD',
  台币: 'TWD',
  澳门元: 'MOP',
  韩元: 'KRW',
  卢布: 'RUB',
  CNY: 'CNY',
  RMB: 'CNY',
  USD: 'USD',
  HKD: 'HKD',
  EUR: 'EUR',
  JPY: 'JPY',
  GBP: 'GBP',
  AUD: 'AUD',
  CAD: 'CAD',
  SGD: 'SGD',
  CHF: 'CHF',
  TWD: 'TWD',
  MOP: 'MOP',
  KRW: 'KRW',
};

const CURRENCY_KEYS = Object.keys(CURRENCY_NAMES).sort((a, b) => b.length - a.length);
const UNIT_SCALE: Readonly<Record<CapitalUnit, number>> = { 亿: 8, 万: 4, 元: 0 };

/** Normalizes one enterprise record; never throws on the variants the schema accepts. */
export function normalizeEnterprise(record: EnterpriseRecord): NormalizedEnterprise {
  const es = readDate(record.ESDATE);
  const opFrom = readDate(record.OPFROM);
  const appr = readDate(record.APPRDATE);
  const revoke = readDate(record.REVOKEDATE);
  const listed = readListed(record.IS_LISTED);
  const province = readProvince(record.PROVINCE);
  const capital = readCapital(record.REGCAP, record.REGCAPCUR);
  const opTo = readOperatingTo(record.OPTO);
  const participants = cleanText(record.participants);

  return {
    pid: record.PID.trim(),
    entName: record.ENTNAME.trim(),
    historyName: cleanText(record.HISTORYNAME),
    isListed: listed.value,
    isListedText: listed.text,
    legalPerson: cleanText(record.LEGALPERSON),
    legalPersonDesc: cleanText(record.LEGALPERSONDESC),
    esDate: es.date,
    esDateText: es.text,
    sconForm: cleanText(record.SCONFORM),
    regNo: cleanText(record.REGNO),
    uncid: cleanText(record.UNCID),
    entTypeCode: cleanText(record.ENTTYPECODE),
    entType: cleanText(record.ENTTYPE),
    ...capital,
    province: province.value,
    provinceText: province.text,
    opFrom: opFrom.date,
    opFromText: opFrom.text,
    ...opTo,
    regOrg: cleanText(record.REGORG),
    apprDate: appr.date,
    apprDateText: appr.text,
    revokeDate: revoke.date,
    revokeDateText: revoke.text,
    revokeReason: cleanText(record.REVOKEREASON),
    entStatus: cleanText(record.ENTSTATUS),
    opLoc: cleanText(record.OPLOC),
    opScope: cleanText(record.OPSCOPE),
    participants,
    participantsCount:
      participants !== null && /^[+-]?\d+$/.test(participants) ? toInt32(participants) : null,
    industryPhy: cleanText(record.INDUSTRYPHY),
    industryBig: cleanText(record.INDUSTRYBIG),
    industryMiddle: cleanText(record.industry_middle),
    extra: extraOf(record, DOCUMENTED_ENTERPRISE_FIELDS),
    persons: personsOf(record.PERSONS),
    shareholders: shareholdersOf(record.BE_INVEST),
    clearingMembers: clearingMembersOf(record.CLEARINGINFO),
    inLiquidation: (record.CLEARINGINFO ?? []).length > 0,
  };
}

/** PERSONS: every person that holds anything, as sent; exact repeats once. */
function personsOf(list: EnterpriseRecord['PERSONS']): NormalizedPerson[] {
  return childrenOf(list, (p) => ({
    name: cleanText(p.NAME) ?? '',
    position: cleanText(p.POSITION),
    extra: extraOf(p, PERSON_FIELDS),
  }));
}

/** BE_INVEST: every shareholder that holds anything (a name, a type, a PID or another field). */
function shareholdersOf(list: EnterpriseRecord['BE_INVEST']): NormalizedShareholder[] {
  return childrenOf(list, (s) => ({
    name: cleanText(s.INV),
    type: cleanText(s.INVTYPE),
    pid: cleanText(s.PID),
    extra: extraOf(s, SHAREHOLDER_FIELDS),
  }));
}

/**
 * CLEARINGINFO: every member that holds anything, its name as `memberName` reads it. An entry
 * with nothing in it is no member, but still makes the liquidation open (`inLiquidation`).
 */
function clearingMembersOf(list: EnterpriseRecord['CLEARINGINFO']): NormalizedClearingMember[] {
  return childrenOf(list, (c) => ({
    name: memberName(c.liqMem) ?? '',
    position: liquidationRole(c.ligpriSign),
    extra: extraOf(c, CLEARING_FIELDS),
  }));
}

/**
 * The children of a list, each as `read` makes it, those that hold anything (a name none was sent
 * for is '', as blank as none), the first of those equal in every field.
 */
function childrenOf<C, T extends JsonObject>(
  list: readonly C[] | null | undefined,
  read: (child: C) => T,
): T[] {
  const seen = new Set<string>();
  return (list ?? [])
    .map((child) => read(child))
    .filter((item) => {
      const k = canonicalJson(item);
      if (isBlank(item) || seen.has(k)) return false;
      seen.add(k);
      return true;
    });
}

/**
 * A clearing member's name: the text sent, trimmed, with the HTML around it stripped; the text as
 * sent when stripping leaves nothing (a name that is only markup is data, not nothing). Null only
 * when nothing was sent.
 */
export function memberName(v: unknown): string | null {
  const sent = cleanText(v);
  if (sent === null) return null;
  return cleanText(stripHtml(sent)) ?? sent;
}

/**
 * Whether a JSON value holds nothing: null, text that is empty or only whitespace, or an array or
 * object of such values. A number or boolean (0, false included) is something. A child is dropped
 * only when it is blank: all its fields, documented or not.
 */
export function isBlank(v: JsonValue | undefined): boolean {
  if (v === null || v === undefined) return true;
  if (typeof v === 'string') return v.trim() === '';
  if (typeof v !== 'object' || v instanceof ExactNumber) return false;
  return Object.values(v).every(isBlank);
}

/** Removes HTML tags and decodes the common entities, collapsing the whitespace they leave. */
export function stripHtml(s: string): string {
  return s
    .replace(/<[^>]*>/g, ' ')
    .replace(/&(nbsp|amp|lt|gt|quot|apos|#39|#\d+|#x[0-9a-f]+);/gi, (_m, e: string) => decodeEntity(e))
    .replace(/\s+/g, ' ')
    .trim();
}

function decodeEntity(e: string): string {
  const lower = e.toLowerCase();
  const named: Record<string, string> = { nbsp: ' ', amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
  const hit = named[lower];
  if (hit !== undefined) return hit;
  const code = lower.startsWith('#x')
    ? Number.parseInt(lower.slice(2), 16)
    : Number.parseInt(lower.slice(1), 10);
  return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : '';
}

function liquidationRole(v: unknown): string | null {
  const t = cleanText(v);
  if (t === null) return null;
  return LIQUIDATION_ROLES[t] ?? t;
}

/** A date-only field: YYYY-MM-DD when readable, else the original text. */
function readDate(v: unknown): { date: string | null; text: string | null } {
  const text = cleanText(v);
  if (text === null) return { date: null, text: null };
  const date = registryDate(text);
  return date === null ? { date: null, text } : { date, text: null };
}

/** The calendar date of `text` per the module rules; null for placeholders and unreadable text. */
export function registryDate(text: string): string | null {
  const cleaned = text.trim().replace(/^(\d{4})年(\d{1,2})月(\d{1,2})日$/, '$1-$2-$3');
  if (isPlaceholderDate(cleaned)) return null;
  const parts = parseTimestampParts(cleaned);
  if (parts === null) return null;
  if (parts.offsetMinutes !== null) return shanghaiDate(instantOf(parts));
  return `${String(parts.year).padStart(4, '0')}-${String(parts.month).padStart(2, '0')}-${String(parts.day).padStart(2, '0')}`;
}

/** True when `text` starts with one of DATE_PLACEHOLDERS (a time may follow). */
export function isPlaceholderDate(text: string): boolean {
  const t = text.trim();
  return DATE_PLACEHOLDERS.some((p) => t === p || (t.startsWith(p) && /^[T ]/.test(t.slice(p.length))));
}

function readOperatingTo(v: unknown): {
  operatingTo: string | null;
  operatingPerpetual: boolean;
  operatingToText: string | null;
} {
  const text = cleanText(v);
  if (text === null) return { operatingTo: null, operatingPerpetual: false, operatingToText: null };
  const date = registryDate(text);
  const perpetual = PERPETUAL_PATTERN.test(text) || date === '9999-12-31' || text.startsWith('9999-12-31');
  return { operatingTo: perpetual ? null : date, operatingPerpetual: perpetual, operatingToText: text };
}

function readListed(v: unknown): { value: boolean | null; text: string | null } {
  if (typeof v === 'boolean') return { value: v, text: null };
  const text = cleanText(v);
  if (text === null) return { value: null, text: null };
  const lower = text.toLowerCase();
  if (['1', 'true', 'yes', 'y', '是'].includes(lower)) return { value: true, text: null };
  if (['0', 'false', 'no', 'n', '否'].includes(lower)) return { value: false, text: null };
  return { value: null, text };
}

/**
 * PROVINCE: the two-digit province code (GB/T 2260). A six-digit division code (`310115`) gives
 * its province (31) and keeps its own text; anything else unreadable is kept as text only.
 */
function readProvince(v: unknown): { value: number | null; text: string | null } {
  const text = cleanText(v);
  if (text === null) return { value: null, text: null };
  if (/^\d{6}$/.test(text)) return { value: Number(text.slice(0, 2)), text };
  const n = /^\d{1,4}$/.test(text) ? Number(text) : null;
  return n === null ? { value: null, text } : { value: n, text: null };
}

/** A whole number the integer column holds (32 bits), else null: the text is kept beside it. */
function toInt32(s: string): number | null {
  const n = Number(s);
  return Number.isSafeInteger(n) && n >= -2_147_483_648 && n <= 2_147_483_647 ? n : null;
}

type CapitalFields = Pick<
  NormalizedEnterprise,
  'regCap' | 'regCapText' | 'capitalText' | 'capitalUnit' | 'capitalCurrency' | 'capitalAmount'
>;

function readCapital(
  regCapRaw: number | ExactNumber | string | null | undefined,
  curRaw: unknown,
): CapitalFields {
  const regCapText = cleanText(regCapRaw);
  const capitalText = cleanText(curRaw);
  let regCap: string | null = null;
  if (typeof regCapRaw === 'number') regCap = numberToDecimal(regCapRaw);
  // Every digit as sent (a double would round 30 digits); storable() nulled what fits no column.
  else if (regCapRaw instanceof ExactNumber)
    regCap = numberFits(regCapRaw.text) ? decimalOf(regCapRaw.text) : null;
  else if (regCapText !== null) regCap = firstDecimal(regCapText);
  if (regCap === null && capitalText !== null) regCap = firstDecimal(capitalText);

  const fromCur = capitalText === null ? { unit: null, currency: null } : capitalWords(capitalText);
  const fromCap =
    typeof regCapRaw === 'string' && regCapText !== null
      ? capitalWords(regCapText)
      : { unit: null, currency: null };
  const capitalUnit = fromCur.unit ?? fromCap.unit;
  const capitalCurrency = fromCur.currency ?? fromCap.currency;
  const capitalAmount =
    regCap !== null && (capitalUnit !== null || capitalCurrency !== null)
      ? shiftDecimal(regCap, capitalUnit === null ? 0 : UNIT_SCALE[capitalUnit])
      : null;
  return { regCap, regCapText, capitalText, capitalUnit, capitalCurrency, capitalAmount };
}

/** Unit and currency written in a capital text such as 万元人民币, 300万(元), 人民币 2000.00 万元整. */
export function capitalWords(text: string): { unit: CapitalUnit | null; currency: string | null } {
  let rest = text;
  let currency: string | null = null;
  for (const key of CURRENCY_KEYS) {
    const isCode = /^[A-Z]+$/.test(key);
    const re = isCode ? new RegExp(`(?<![A-Za-z])${key}(?![A-Za-z])`, 'i') : new RegExp(key);
    if (re.test(rest)) {
      currency = CURRENCY_NAMES[key] ?? null;
      rest = rest.replace(re, ' ');
      break;
    }
  }
  let unit: CapitalUnit | null = null;
  if (rest.includes('亿')) unit = '亿';
  else if (rest.includes('万')) unit = '万';
  else if (rest.includes('元')) unit = '元';
  if (currency === null && rest.includes('元')) currency = 'CNY';
  return { unit, currency };
}

/**
 * The first decimal number written in `text` ('1,000' → '1000', '300.000000' → '300', '1.5E+3' →
 * '1500'), canonical; null when there is none, or when its exponent puts it beyond any column
 * ('1e400'): never a rounded or truncated value.
 */
export function firstDecimal(text: string): string | null {
  const m = /([-+]?\d+(?:\.\d+)?)(?:[eE]([-+]?\d+)(?![\d.]))?/.exec(
    text.replace(/(\d)[,，](?=\d{3})/g, '$1'),
  );
  if (m === null) return null;
  if (m[2] === undefined) return canonicalDecimal(m[1] as string);
  const token = `${(m[1] as string).replace(/^\+/, '')}e${m[2]}`;
  return numberFits(token) ? decimalOf(token) : null;
}

/** A finite number as a canonical decimal string, expanding exponent notation exactly. */
export function numberToDecimal(n: number): string | null {
  if (!Number.isFinite(n)) return null;
  const s = String(n);
  const m = /^(-?)(\d+)(?:\.(\d+))?e([+-]\d+)$/i.exec(s);
  if (m === null) return canonicalDecimal(s);
  return shiftDecimal(canonicalDecimal(`${m[1]}${m[2]}.${m[3] ?? ''}`.replace(/\.$/, '')), Number(m[4]));
}

/** `dec` × 10^places, exactly, on decimal strings. */
export function shiftDecimal(dec: string, places: number): string {
  const neg = dec.startsWith('-');
  const body = neg ? dec.slice(1) : dec;
  const [int = '0', frac = ''] = body.split('.');
  const digits = int + frac;
  const scale = frac.length - places;
  let out: string;
  if (scale <= 0) out = digits + '0'.repeat(-scale);
  else {
    const padded = digits.padStart(scale + 1, '0');
    out = `${padded.slice(0, padded.length - scale)}.${padded.slice(padded.length - scale)}`;
  }
  return canonicalDecimal(neg ? `-${out}` : out);
}

/** Strips a leading +, leading zeros and trailing fraction zeros; -0 becomes 0. */
function canonicalDecimal(s: string): string {
  const neg = s.startsWith('-');
  const body = s.replace(/^[+-]/, '');
  const [intRaw = '0', fracRaw = ''] = body.split('.');
  const int = intRaw.replace(/^0+(?=\d)/, '') || '0';
  const frac = fracRaw.replace(/0+$/, '');
  const out = frac === '' ? int : `${int}.${frac}`;
  return neg && out !== '0' ? `-${out}` : out;
}
