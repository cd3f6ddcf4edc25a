/**
 * Row types produced by the normalizers, and the small value conventions every normalizer shares
 * (JSON values for `extra`, trimmed text, ISO timestamps).
 * Field names are camelCase and map 1:1 to snake_case columns (`capitalAmount` → capital_amount).
 *
 * Two conventions for keeping the original upstream text:
 * - `<x>Text` beside a parsed date, IS_LISTED or PROVINCE holds the trimmed original only when it
 *   produced no value (unparseable, or a placeholder such as 0000-00-00); it is null otherwise.
 * - `regCapText`, `capitalText` and `operatingToText` always hold the original (trimmed) text.
 * Every string is trimmed and an empty string becomes null, except inside `extra`, which keeps
 * unknown values exactly as received.
 */

export type JsonPrimitive = string | number | boolean | null;
export type JsonValue = JsonPrimitive | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** Converts a JSON-parsed value to a JsonValue: undefined object members are dropped, non-finite numbers become null. */
export function toJsonValue(v: unknown): JsonValue {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'bigint') return v.toString();
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? null : v.toISOString();
  if (Array.isArray(v)) return v.map(toJsonValue);
  if (typeof v === 'object') {
    const out: JsonObject = {};
    for (const [k, val] of Object.entries(v)) {
      if (val !== undefined) out[k] = toJsonValue(val);
    }
    return out;
  }
  return null;
}

/** JSON text with object keys sorted at every level, so equal content gives equal text. */
export function canonicalJson(v: JsonValue): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  const keys = Object.keys(v).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(v[k] ?? null)}`).join(',')}}`;
}

/** A trimmed string, or null for null, undefined and empty text; numbers and booleans via String(), objects as canonical JSON. */
export function cleanText(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string') {
    const t = v.trim();
    return t === '' ? null : t;
  }
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return canonicalJson(toJsonValue(v));
}

/** The members of `obj` whose keys are not in `known`, as received. */
export function extraOf(obj: Record<string, unknown>, known: ReadonlySet<string>): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(obj)) {
    if (!known.has(k) && v !== undefined) out[k] = toJsonValue(v);
  }
  return out;
}

/** Parts of an ISO-like date or datetime; `offsetMinutes` is null when no zone was written. */
export interface TimestampParts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
  hasTime: boolean;
  offsetMinutes: number | null;
}

const TIMESTAMP_RE =
  /^(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?:[T ](\d{1,2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

/**
 * Reads `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM[:SS[.fff…]]` with an optional `Z` or ±HH[:MM] zone
 * (a space may replace the T; / or . may separate the date). Null for anything else, including
 * impossible calendar dates and times.
 */
export function parseTimestampParts(text: string): TimestampParts | null {
  const m = TIMESTAMP_RE.exec(text.trim());
  if (!m) return null;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  const hour = m[4] === undefined ? 0 : Number(m[4]);
  const minute = m[5] === undefined ? 0 : Number(m[5]);
  const second = m[6] === undefined ? 0 : Number(m[6]);
  const millisecond = m[7] === undefined ? 0 : Number(m[7].padEnd(3, '0').slice(0, 3));
  const probe = new Date(Date.UTC(year, month - 1, day));
  probe.setUTCFullYear(year);
  if (probe.getUTCFullYear() !== year || probe.getUTCMonth() !== month - 1 || probe.getUTCDate() !== day) {
    return null;
  }
  if (hour > 23 || minute > 59 || second > 59) return null;
  let offsetMinutes: number | null = null;
  const zone = m[8];
  if (zone !== undefined) {
    if (zone.toUpperCase() === 'Z') offsetMinutes = 0;
    else {
      const digits = zone.slice(1).replace(':', '');
      const oh = Number(digits.slice(0, 2));
      const om = digits.length > 2 ? Number(digits.slice(2, 4)) : 0;
      if (oh > 18 || om > 59) return null;
      offsetMinutes = (zone.startsWith('-') ? -1 : 1) * (oh * 60 + om);
    }
  }
  return { year, month, day, hour, minute, second, millisecond, hasTime: m[4] !== undefined, offsetMinutes };
}

/** The instant of `p`, reading a zone-less value as UTC. */
export function instantOf(p: TimestampParts): Date {
  const d = new Date(Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second, p.millisecond));
  d.setUTCFullYear(p.year);
  return new Date(d.getTime() - (p.offsetMinutes ?? 0) * 60_000);
}

/** A key person (PERSONS[]). */
export interface NormalizedPerson {
  name: string;
  position: string | null;
  /** Unknown fields of the person object. */
  extra: JsonObject;
}

/** A shareholder (BE_INVEST[]). */
export interface NormalizedShareholder {
  /** INV; null only when the upstream sent an empty name for a shareholder that has a PID. */
  name: string | null;
  /** INVTYPE, e.g. 自然人股东, 企业法人. */
  type: string | null;
  /** The shareholder's own PID; present only for enterprise shareholders. */
  pid: string | null;
  extra: JsonObject;
}

/** A member of the liquidation group (CLEARINGINFO[]). */
export interface NormalizedClearingMember {
  /** liqMem with HTML tags stripped and entities decoded. */
  name: string;
  /** ligpriSign: 1 → 清算组负责人, 2 → 清算组成员, any other text kept as sent. */
  position: string | null;
  extra: JsonObject;
}

/** Currency unit of registered capital. 万 = ×10,000, 亿 = ×100,000,000, 元 = ×1. */
export type CapitalUnit = '万' | '亿' | '元';

/** One enterprise record (metadata.content), version-independent. */
export interface NormalizedEnterprise {
  pid: string;
  /** ENTNAME */
  entName: string;
  /** HISTORYNAME: former name. */
  historyName: string | null;
  /** IS_LISTED from 0/1, '0'/'1', true/false (also yes/no, 是/否). */
  isListed: boolean | null;
  isListedText: string | null;
  legalPerson: string | null;
  /** LEGALPERSONDESC: kind of person in charge. */
  legalPersonDesc: string | null;
  /** ESDATE, establishment date as YYYY-MM-DD (Beijing calendar date, see normalize/enterprise.ts). */
  esDate: string | null;
  esDateText: string | null;
  /** SCONFORM, undocumented type, kept as text. */
  sconForm: string | null;
  regNo: string | null;
  uncid: string | null;
  /** ENTTYPECODE, undocumented type, kept as text. */
  entTypeCode: string | null;
  entType: string | null;
  /** REGCAP as a canonical decimal string for a numeric column ('300.000000' → '300'), in `capitalUnit`. */
  regCap: string | null;
  /** REGCAP exactly as sent (a number is written with String()). */
  regCapText: string | null;
  /** REGCAPCUR exactly as sent, e.g. 万人民币. */
  capitalText: string | null;
  /** Unit found in REGCAPCUR (or in a REGCAP string); null when none is written. */
  capitalUnit: CapitalUnit | null;
  /** ISO 4217 code (CNY, USD, HKD, EUR, JPY, …); null when the currency is not recognised. */
  capitalCurrency: string | null;
  /** Registered capital in whole currency units (regCap × unit), exact decimal string; null when regCap or both unit and currency are unknown. */
  capitalAmount: string | null;
  /** PROVINCE, GB/T 2260 two-digit code. */
  province: number | null;
  provinceText: string | null;
  /** OPFROM as YYYY-MM-DD. */
  opFrom: string | null;
  opFromText: string | null;
  /** OPTO as YYYY-MM-DD; null when perpetual, a placeholder, empty or unparseable. */
  operatingTo: string | null;
  /** True for 9999-12-31, 长期, 永久, 无固定期限, Long-term, Perpetual, Permanent …. */
  operatingPerpetual: boolean;
  /** OPTO exactly as sent (trimmed). */
  operatingToText: string | null;
  /** REGORG: registration authority. */
  regOrg: string | null;
  /** APPRDATE as YYYY-MM-DD. */
  apprDate: string | null;
  apprDateText: string | null;
  /** REVOKEDATE as YYYY-MM-DD; the upstream's empty string means not revoked. */
  revokeDate: string | null;
  revokeDateText: string | null;
  /** REVOKEREASON, undocumented type, kept as text. */
  revokeReason: string | null;
  /** ENTSTATUS, operating status text (存续, 吊销, In Business …). */
  entStatus: string | null;
  /** OPLOC: address. */
  opLoc: string | null;
  /** OPSCOPE: business scope. */
  opScope: string | null;
  /** participants (insured employees), undocumented type, kept as text. */
  participants: string | null;
  /** participants as an integer when it is one (12 or '12'); derived, not part of the content hash. */
  participantsCount: number | null;
  /** INDUSTRYPHY: GB/T 4754 section letter. */
  industryPhy: string | null;
  /** INDUSTRYBIG: industry class. */
  industryBig: string | null;
  /** industry_middle, undocumented type, kept as text. */
  industryMiddle: string | null;
  /** Top-level fields not in the documented list, as received. `{}` when none. */
  extra: JsonObject;
  persons: NormalizedPerson[];
  shareholders: NormalizedShareholder[];
  clearingMembers: NormalizedClearingMember[];
}

/** A media item of a product; `position` is 1-based in the order received. */
export interface NormalizedMedia {
  position: number;
  url: string;
  /** image, video, interactive_demo, … */
  type: string | null;
  videoUrl: string | null;
  extra: JsonObject;
}

/** A product link (product_links[]); `position` is 1-based in the order received. */
export interface NormalizedLink {
  position: number;
  url: string;
  /** Chrome, Website, … */
  type: string | null;
  extra: JsonObject;
}

export interface NormalizedThumbnail {
  url: string;
  type: string | null;
  extra: JsonObject;
}

/** A comment; comments are deduplicated across pulls by `dedupKey`. */
export interface NormalizedComment {
  /** Trimmed body; line breaks and markup inside are kept. */
  body: string;
  /** ISO 8601 UTC (toISOString form); null when unparseable. */
  createdAt: string | null;
  createdAtText: string | null;
  /** sha256 hex of productId + '\n' + (createdAt ?? original text) + '\n' + body. */
  dedupKey: string;
  extra: JsonObject;
}

/** One product object. Times are ISO 8601 UTC strings (the upstream's zone-less times are read as UTC). */
export interface NormalizedProduct {
  /** product_id, numeric string: the product's stable key. */
  productId: string;
  /** id, the upstream record UUID. */
  id: string;
  name: string;
  tagline: string | null;
  description: string | null;
  url: string | null;
  createdAt: string | null;
  createdAtText: string | null;
  /** Null when not featured. */
  featuredAt: string | null;
  featuredAtText: string | null;
  updatedAt: string | null;
  updatedAtText: string | null;
  /** Volatile: lives in trending snapshots, not in the content hash. */
  votesCount: number | null;
  /** Volatile: lives in trending snapshots, not in the content hash. */
  commentsCount: number | null;
  /** Trimmed, empty dropped, duplicates removed, first-seen order. */
  topics: string[];
  media: NormalizedMedia[];
  links: NormalizedLink[];
  thumbnail: NormalizedThumbnail | null;
  comments: NormalizedComment[];
  extra: JsonObject;
}

/** One product's place in one pull of a day's trending list. */
export interface NormalizedTrendingSnapshot {
  /** The list's date, YYYY-MM-DD (a US Pacific day). */
  listDate: string;
  /** 1-based position in the list as returned. */
  position: number;
  productId: string;
  votesCount: number | null;
  commentsCount: number | null;
  /** ISO 8601 UTC instant of the pull. */
  fetchedAt: string;
}

export interface NormalizedProductList {
  products: NormalizedProduct[];
  snapshots: NormalizedTrendingSnapshot[];
}
