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
 * unknown values exactly as received, and a child's required name ('' when none was sent).
 */

import type { ExactNumber } from '../upstream/json.ts';

/** A number a double cannot hold exactly is an ExactNumber: its digits as sent. */
export type JsonPrimitive = string | number | ExactNumber | boolean | null;
export type JsonValue = JsonPrimitive | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/**
 * A key person (PERSONS[]). Children are kept as sent, markup included; one is dropped only when
 * every field of it (documented or not) is empty (see normalize/enterprise.ts).
 */
export interface NormalizedPerson {
  /** NAME; '' when the upstream sent none for a person it sent something else of. */
  name: string;
  position: string | null;
  /** Unknown fields of the person object. */
  extra: JsonObject;
}

/** A shareholder (BE_INVEST[]). */
export interface NormalizedShareholder {
  /** INV; null when the upstream sent an empty name (the shareholder is kept for its PID, type or other fields). */
  name: string | null;
  /** INVTYPE, e.g. 自然人股东, 企业法人. */
  type: string | null;
  /** The shareholder's own PID; present only for enterprise shareholders. */
  pid: string | null;
  extra: JsonObject;
}

/** A member of the liquidation group (CLEARINGINFO[]). */
export interface NormalizedClearingMember {
  /**
   * liqMem with the HTML around it stripped and entities decoded; as sent when that would leave
   * nothing (a name that is only markup); '' when none was sent for a member with a position or
   * other fields.
   */
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
  /**
   * CLEARINGINFO holds at least one entry, readable or not: the liquidation is open whatever
   * members survive normalization. Versions stored before this field existed lack it (read them
   * with `inLiquidation(e)` of history/classify.ts).
   */
  inLiquidation: boolean;
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
