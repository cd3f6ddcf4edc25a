/**
 * Content hashes of normalized records: a new SCD2 version is written only when the hash changes.
 *
 * The hash is sha256 over canonical JSON (sorted keys) of the record's MEANING, not its spelling:
 * - Scalar fields enter as their comparison values (`enterpriseFieldValues`): parsed values where
 *   the upstream text was readable, the original text only where it was not. So format drift
 *   (REGCAP 300 vs '300.000000', ESDATE with or without ms, 长期 vs Long-term, 300 万 vs
 *   3000000 元) is not a change, while an unreadable value that changes is.
 * - Derived columns (participantsCount, capitalUnit, regCap once capitalAmount is known) do not
 *   enter on their own.
 * - Children are compared as sets: sorted canonically and deduplicated, so the ORDER of persons,
 *   shareholders, clearing members, topics, media and product links does not matter (their
 *   upstream order is undocumented; the stored `position` is that of the version written), and
 *   neither does an exact repeat.
 * - A CLEARINGINFO whose entries hold nothing readable still enters: an open liquidation is
 *   content even when no member of it survives (`inLiquidation`).
 * - `extra` enters whole: an unknown field that appears, disappears or changes is a change. So
 *   does a documented field that becomes null (absent and empty mean the same thing: none).
 * - Product hashes leave out the volatile votesCount, commentsCount, updatedAt and comments.
 * A version tag inside the hashed text lets a later change of these rules be told apart.
 */
import { createHash } from 'node:crypto';
import { isPlaceholderDate } from '../normalize/enterprise.ts';
import { canonicalJson } from '../normalize/text.ts';
import type {
  JsonObject,
  JsonValue,
  NormalizedClearingMember,
  NormalizedEnterprise,
  NormalizedLink,
  NormalizedMedia,
  NormalizedPerson,
  NormalizedProduct,
  NormalizedShareholder,
} from '../normalize/types.ts';

/** Bumped whenever what the hashes cover changes. */
export const CONTENT_HASH_VERSION = 1;

/** The documented scalar enterprise fields, by their upstream names. */
export const ENTERPRISE_FIELDS = [
  'PID',
  'ENTNAME',
  'HISTORYNAME',
  'IS_LISTED',
  'LEGALPERSON',
  'LEGALPERSONDESC',
  'ESDATE',
  'SCONFORM',
  'REGNO',
  'UNCID',
  'ENTTYPECODE',
  'ENTTYPE',
  'REGCAP',
  'REGCAPCUR',
  'PROVINCE',
  'OPFROM',
  'OPTO',
  'REGORG',
  'APPRDATE',
  'REVOKEDATE',
  'REVOKEREASON',
  'ENTSTATUS',
  'OPLOC',
  'OPSCOPE',
  'participants',
  'INDUSTRYPHY',
  'INDUSTRYBIG',
  'industry_middle',
] as const;
export type EnterpriseField = (typeof ENTERPRISE_FIELDS)[number];

/** The value shown for OPTO when the operating period never ends. */
export const PERPETUAL = 'perpetual';

/**
 * The comparison value of every documented scalar field: what the hash covers and what a change
 * row shows as before/after. Dates are YYYY-MM-DD (placeholders count as none), REGCAP is the
 * amount in currency units when the unit or currency is known, REGCAPCUR is the ISO currency code,
 * OPTO is a date or 'perpetual'; anything unreadable falls back to its original text.
 */
export function enterpriseFieldValues(e: NormalizedEnterprise): Record<EnterpriseField, string | null> {
  return {
    PID: e.pid,
    ENTNAME: e.entName,
    HISTORYNAME: e.historyName,
    IS_LISTED: e.isListed === null ? e.isListedText : String(e.isListed),
    LEGALPERSON: e.legalPerson,
    LEGALPERSONDESC: e.legalPersonDesc,
    ESDATE: dateValue(e.esDate, e.esDateText),
    SCONFORM: e.sconForm,
    REGNO: e.regNo,
    UNCID: e.uncid,
    ENTTYPECODE: e.entTypeCode,
    ENTTYPE: e.entType,
    REGCAP: e.capitalAmount ?? e.regCap ?? e.regCapText,
    REGCAPCUR: e.capitalCurrency ?? e.capitalText,
    // The text when there is one (unreadable, or a six-digit division code): never both null.
    PROVINCE: e.provinceText ?? (e.province === null ? null : String(e.province)),
    OPFROM: dateValue(e.opFrom, e.opFromText),
    OPTO: e.operatingPerpetual ? PERPETUAL : dateValue(e.operatingTo, e.operatingToText),
    REGORG: e.regOrg,
    APPRDATE: dateValue(e.apprDate, e.apprDateText),
    REVOKEDATE: dateValue(e.revokeDate, e.revokeDateText),
    REVOKEREASON: e.revokeReason,
    ENTSTATUS: e.entStatus,
    OPLOC: e.opLoc,
    OPSCOPE: e.opScope,
    participants: e.participants,
    INDUSTRYPHY: e.industryPhy,
    INDUSTRYBIG: e.industryBig,
    industry_middle: e.industryMiddle,
  };
}

function dateValue(date: string | null, text: string | null): string | null {
  if (date !== null) return date;
  if (text === null || isPlaceholderDate(text)) return null;
  return text;
}

/** A child as the JSON the hash and the diff compare (everything but its position). */
export function personJson(p: NormalizedPerson): JsonObject {
  return { name: p.name, position: p.position, extra: p.extra };
}

export function shareholderJson(s: NormalizedShareholder): JsonObject {
  return { name: s.name, type: s.type, pid: s.pid, extra: s.extra };
}

export function clearingMemberJson(c: NormalizedClearingMember): JsonObject {
  return { name: c.name, position: c.position, extra: c.extra };
}

export function mediaJson(m: NormalizedMedia): JsonObject {
  return { url: m.url, type: m.type, videoUrl: m.videoUrl, extra: m.extra };
}

export function linkJson(l: NormalizedLink): JsonObject {
  return { url: l.url, type: l.type, extra: l.extra };
}

/** Canonical JSON texts of `items`, sorted and deduplicated: an order-free representation of a set. */
export function sortedCanonical<T>(items: readonly T[], toJson: (item: T) => JsonValue): string[] {
  return [...new Set(items.map((item) => canonicalJson(toJson(item))))].sort();
}

/** The hashed content of an enterprise, as JSON. */
export function enterpriseHashContent(e: NormalizedEnterprise): JsonObject {
  return {
    v: CONTENT_HASH_VERSION,
    kind: 'enterprise',
    fields: enterpriseFieldValues(e),
    persons: sortedCanonical(e.persons, personJson),
    shareholders: sortedCanonical(e.shareholders, shareholderJson),
    clearingMembers: sortedCanonical(e.clearingMembers, clearingMemberJson),
    // An open liquidation without a readable member; with members it is implied, and left out
    // so that the hash of every record that has members (or no liquidation) stays as it was.
    ...(e.inLiquidation === true && e.clearingMembers.length === 0 ? { inLiquidation: true } : {}),
    extra: e.extra,
  };
}

/** The hashed content of a product, as JSON; volatile fields are left out. */
export function productHashContent(p: NormalizedProduct): JsonObject {
  return {
    v: CONTENT_HASH_VERSION,
    kind: 'product',
    productId: p.productId,
    id: p.id,
    name: p.name,
    tagline: p.tagline,
    description: p.description,
    url: p.url,
    createdAt: p.createdAt ?? p.createdAtText,
    featuredAt: p.featuredAt ?? p.featuredAtText,
    topics: [...new Set(p.topics)].sort(),
    media: sortedCanonical(p.media, mediaJson),
    links: sortedCanonical(p.links, linkJson),
    thumbnail:
      p.thumbnail === null
        ? null
        : { url: p.thumbnail.url, type: p.thumbnail.type, extra: p.thumbnail.extra },
    extra: p.extra,
  };
}

/** sha256 hex of the enterprise's content; equal for records that differ only in child order or spelling. */
export function enterpriseContentHash(e: NormalizedEnterprise): string {
  return sha256(canonicalJson(enterpriseHashContent(e)));
}

/** sha256 hex of the product's content, ignoring votes, comments and updatedAt. */
export function productContentHash(p: NormalizedProduct): string {
  return sha256(canonicalJson(productHashContent(p)));
}

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
