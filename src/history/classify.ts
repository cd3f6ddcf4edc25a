/**
 * Field-level change classification between two consecutive versions of a record. Pure.
 *
 * One row per change. Scalars are compared by their comparison values (see history/hash.ts), so a
 * row appears exactly when the content hash would see a difference. `field` is the upstream field
 * name; a child row uses the child array's name (PERSONS, BE_INVEST, CLEARINGINFO.member) and
 * before/after describe the whole child ('张三 (监事)'); the opening or closing of a liquidation
 * is one more row with field CLEARINGINFO. Unknown fields use category 'extra', field = the key,
 * and before/after are JSON texts.
 *
 * `detail` refines a row where the severity depends on it; its values:
 * - registered_capital / REGCAP: 'increase' | 'decrease' (same currency, both amounts known)
 * - status: 'to_bad' (the new status contains 吊销, 注销, 清算, 停业, 撤销, or English
 *   cancel…, revok…, liquidat…, suspend…)
 * - revocation / REVOKEDATE: 'revoked' (a revocation date appears)
 * - liquidation / CLEARINGINFO: 'opened' | 'closed' (CLEARINGINFO gets its first entry / loses
 *   its last; an entry counts whether or not a member could be read from it, see inLiquidation)
 * - key_personnel, liquidation members: 'position_changed' | 'extra_changed'; shareholders: a comma-separated list of
 *   'renamed', 'type_changed', 'pid_changed', 'extra_changed'
 * Rows are sorted by category, field, kind, before, after (null first; code-unit order).
 */
import { canonicalJson } from '../normalize/text.ts';
import type { JsonObject, JsonValue, NormalizedEnterprise, NormalizedProduct } from '../normalize/types.ts';
import {
  type ChangeKind,
  ENTERPRISE_CHANGE_CATEGORIES,
  type EnterpriseChangeCategory,
  isBadStatus,
  PRODUCT_CHANGE_CATEGORIES,
  type ProductChangeCategory,
  type Severity,
} from '../terms/changes.ts';
import {
  clearingMemberJson,
  ENTERPRISE_FIELDS,
  type EnterpriseField,
  enterpriseFieldValues,
  linkJson,
  mediaJson,
  personJson,
  shareholderJson,
} from './hash.ts';

export type { ChangeKind, EnterpriseChangeCategory, ProductChangeCategory, Severity };
export { ENTERPRISE_CHANGE_CATEGORIES, PRODUCT_CHANGE_CATEGORIES };

/** One field-level change. `before`/`after` are null for added/removed. */
export interface Change<C extends string> {
  category: C;
  field: string;
  kind: ChangeKind;
  before: string | null;
  after: string | null;
  severity: Severity;
  /** See the module comment for the values; null when nothing more is to be said. */
  detail: string | null;
}
export type EnterpriseChange = Change<EnterpriseChangeCategory>;
export type ProductChange = Change<ProductChangeCategory>;

/** The category of each documented scalar enterprise field. */
export const ENTERPRISE_FIELD_CATEGORIES: Readonly<Record<EnterpriseField, EnterpriseChangeCategory>> = {
  PID: 'other',
  ENTNAME: 'name',
  HISTORYNAME: 'name',
  IS_LISTED: 'listing',
  LEGALPERSON: 'legal_representative',
  LEGALPERSONDESC: 'legal_representative',
  ESDATE: 'registration',
  SCONFORM: 'other',
  REGNO: 'registration',
  UNCID: 'registration',
  ENTTYPECODE: 'enterprise_type',
  ENTTYPE: 'enterprise_type',
  REGCAP: 'registered_capital',
  REGCAPCUR: 'registered_capital',
  PROVINCE: 'other',
  OPFROM: 'operating_period',
  OPTO: 'operating_period',
  REGORG: 'registration',
  APPRDATE: 'registration',
  REVOKEDATE: 'revocation',
  REVOKEREASON: 'revocation',
  ENTSTATUS: 'status',
  OPLOC: 'address',
  OPSCOPE: 'business_scope',
  participants: 'insured_employees',
  INDUSTRYPHY: 'industry',
  INDUSTRYBIG: 'industry',
  industry_middle: 'industry',
};

/** A severity rule: `detail` '*' matches any detail. The first matching rule wins. */
export interface SeverityRule {
  category: EnterpriseChangeCategory;
  detail: string;
  severity: Severity;
  /** The rule in words, for the README. */
  when: string;
}

/** The enterprise severity table; a change no rule matches is DEFAULT_SEVERITY. */
export const SEVERITY_RULES: readonly SeverityRule[] = [
  {
    category: 'status',
    detail: 'to_bad',
    severity: 'high',
    when: 'status moves to a bad value (吊销, 注销, 清算, 停业, 撤销; cancelled, revoked, liquidating, suspended)',
  },
  {
    category: 'liquidation',
    detail: 'opened',
    severity: 'high',
    when: 'liquidation opened (CLEARINGINFO empty → non-empty)',
  },
  {
    category: 'revocation',
    detail: 'revoked',
    severity: 'high',
    when: 'revocation date set (REVOKEDATE appears)',
  },
  { category: 'name', detail: '*', severity: 'medium', when: 'name or former name changed' },
  { category: 'legal_representative', detail: '*', severity: 'medium', when: 'legal representative changed' },
  {
    category: 'registered_capital',
    detail: 'decrease',
    severity: 'medium',
    when: 'registered capital decreased',
  },
  {
    category: 'shareholders',
    detail: '*',
    severity: 'medium',
    when: 'shareholder added, removed or changed',
  },
  {
    category: 'registered_capital',
    detail: 'increase',
    severity: 'low',
    when: 'registered capital increased',
  },
];
export const DEFAULT_SEVERITY: Severity = 'low';

/** The severity of a change of `category` with `detail`, per SEVERITY_RULES. */
export function severityOf(category: EnterpriseChangeCategory, detail: string | null): Severity {
  const rule = SEVERITY_RULES.find(
    (r) => r.category === category && (r.detail === '*' || r.detail === detail),
  );
  return rule?.severity ?? DEFAULT_SEVERITY;
}

/**
 * Whether the enterprise is in liquidation: its CLEARINGINFO held any entry, readable or not.
 * A version stored before `inLiquidation` existed has its members to tell.
 */
export function inLiquidation(e: NormalizedEnterprise): boolean {
  return e.inLiquidation === true || e.clearingMembers.length > 0;
}

/** Every field-level change from `before` to `after`, in a deterministic order. */
export function diffEnterprises(
  before: NormalizedEnterprise,
  after: NormalizedEnterprise,
): EnterpriseChange[] {
  const rows: EnterpriseChange[] = [];
  const add = (
    category: EnterpriseChangeCategory,
    field: string,
    b: string | null,
    a: string | null,
    detail: string | null,
  ) => {
    const kind = kindOf(b, a);
    if (kind !== null)
      rows.push({
        category,
        field,
        kind,
        before: b,
        after: a,
        severity: severityOf(category, detail),
        detail,
      });
  };

  const vb = enterpriseFieldValues(before);
  const va = enterpriseFieldValues(after);
  for (const field of ENTERPRISE_FIELDS) {
    const b = vb[field];
    const a = va[field];
    if (b === a) continue;
    add(ENTERPRISE_FIELD_CATEGORIES[field], field, b, a, scalarDetail(field, b, a, before, after));
  }

  const addPeople = (category: EnterpriseChangeCategory, field: string, matches: Iterable<Match<Person>>) => {
    for (const m of matches)
      add(
        category,
        field,
        m.before && describePerson(m.before),
        m.after && describePerson(m.after),
        positionDetail(m),
      );
  };
  addPeople(
    'key_personnel',
    'PERSONS',
    matchChildren(before.persons, after.persons, personJson, [(p) => p.name]),
  );

  for (const m of matchChildren(before.shareholders, after.shareholders, shareholderJson, [
    (s) => s.pid,
    (s) => s.name,
  ])) {
    let detail: string | null = null;
    if (m.before && m.after) {
      const what: string[] = [];
      if (m.before.name !== m.after.name) what.push('renamed');
      if (m.before.type !== m.after.type) what.push('type_changed');
      if (m.before.pid !== m.after.pid) what.push('pid_changed');
      if (canonicalJson(m.before.extra) !== canonicalJson(m.after.extra)) what.push('extra_changed');
      detail = what.join(',');
    }
    add(
      'shareholders',
      'BE_INVEST',
      m.before && describeShareholder(m.before),
      m.after && describeShareholder(m.after),
      detail,
    );
  }

  // From the record, not from the members that survived normalization: a liquidation whose
  // members are all unreadable (or dropped) still opens and closes.
  const wasLiquidating = inLiquidation(before);
  const isLiquidating = inLiquidation(after);
  if (wasLiquidating !== isLiquidating) {
    const list = (e: NormalizedEnterprise) => e.clearingMembers.map(describePerson).sort().join('; ');
    add(
      'liquidation',
      'CLEARINGINFO',
      wasLiquidating ? list(before) : null,
      isLiquidating ? list(after) : null,
      isLiquidating ? 'opened' : 'closed',
    );
  }
  addPeople(
    'liquidation',
    'CLEARINGINFO.member',
    matchChildren(before.clearingMembers, after.clearingMembers, clearingMemberJson, [(c) => c.name]),
  );

  addExtraChanges(before.extra, after.extra, (key, b, a) => add('extra', key, b, a, null));
  return rows.sort(compareChanges);
}

/** Every change from `before` to `after` of a product's content (volatile fields ignored); all low. */
export function diffProducts(before: NormalizedProduct, after: NormalizedProduct): ProductChange[] {
  const rows: ProductChange[] = [];
  const add = (category: ProductChangeCategory, field: string, b: string | null, a: string | null) => {
    const kind = kindOf(b, a);
    if (kind !== null)
      rows.push({ category, field, kind, before: b, after: a, severity: 'low', detail: null });
  };
  add('identity', 'product_id', before.productId, after.productId);
  add('identity', 'id', before.id, after.id);
  add('name', 'name', before.name, after.name);
  add('tagline', 'tagline', before.tagline, after.tagline);
  add('description', 'description', before.description, after.description);
  add('url', 'url', before.url, after.url);
  add(
    'timing',
    'created_at',
    before.createdAt ?? before.createdAtText,
    after.createdAt ?? after.createdAtText,
  );
  add(
    'timing',
    'featured_at',
    before.featuredAt ?? before.featuredAtText,
    after.featuredAt ?? after.featuredAtText,
  );
  const thumb = (p: NormalizedProduct) =>
    p.thumbnail === null
      ? null
      : canonicalJson({ url: p.thumbnail.url, type: p.thumbnail.type, extra: p.thumbnail.extra });
  add('thumbnail', 'thumbnail', thumb(before), thumb(after));
  for (const m of setDiff(before.topics, after.topics)) add('topics', 'topics', m.before, m.after);
  const media = (p: NormalizedProduct) => p.media.map((x) => canonicalJson(mediaJson(x)));
  for (const m of setDiff(media(before), media(after))) add('media', 'media', m.before, m.after);
  const links = (p: NormalizedProduct) => p.links.map((x) => canonicalJson(linkJson(x)));
  for (const m of setDiff(links(before), links(after))) add('links', 'product_links', m.before, m.after);
  addExtraChanges(before.extra, after.extra, (key, b, a) => add('extra', key, b, a));
  return rows.sort(compareChanges);
}

function kindOf(b: string | null, a: string | null): ChangeKind | null {
  if (b === a) return null;
  if (b === null) return 'added';
  if (a === null) return 'removed';
  return 'modified';
}

function scalarDetail(
  field: EnterpriseField,
  b: string | null,
  a: string | null,
  before: NormalizedEnterprise,
  after: NormalizedEnterprise,
): string | null {
  switch (field) {
    case 'ENTSTATUS':
      return isBadStatus(a) ? 'to_bad' : null;
    case 'REVOKEDATE':
      return b === null && a !== null ? 'revoked' : null;
    case 'REGCAP': {
      const x = before.capitalAmount;
      const y = after.capitalAmount;
      if (x === null || y === null || before.capitalCurrency !== after.capitalCurrency) return null;
      const c = compareDecimal(x, y);
      return c < 0 ? 'increase' : c > 0 ? 'decrease' : null;
    }
    default:
      return null;
  }
}

/** Compares two canonical decimal strings exactly: -1, 0 or 1. */
export function compareDecimal(x: string, y: string): number {
  const [xi, yi] = alignDecimals(x, y);
  return xi < yi ? -1 : xi > yi ? 1 : 0;
}

function alignDecimals(x: string, y: string): [bigint, bigint] {
  const fx = x.split('.')[1] ?? '';
  const fy = y.split('.')[1] ?? '';
  const scale = Math.max(fx.length, fy.length);
  const scaled = (s: string, f: string) => BigInt(s.replace('.', '') + '0'.repeat(scale - f.length));
  return [scaled(x, fx), scaled(y, fy)];
}

/** What changed in a matched pair of persons or clearing members; null for an added or removed one. */
/** A person or clearing member as a change names it. */
type Person = { name: string; position: string | null; extra: JsonObject };

function positionDetail(m: Match<Person>): string | null {
  if (m.before === null || m.after === null) return null;
  return m.before.position !== m.after.position ? 'position_changed' : 'extra_changed';
}

/** '张三 (监事)'; the extra JSON follows when there is any; '(监事)' for a person sent without a name. */
function describePerson(p: Person): string {
  const base = p.position === null ? p.name : `${p.name} (${p.position})`;
  return withExtra(base.trim(), p.extra);
}

/** '某某有限公司 [企业法人] PID 123'. */
function describeShareholder(s: {
  name: string | null;
  type: string | null;
  pid: string | null;
  extra: JsonObject;
}): string {
  let base = s.name ?? '';
  if (s.type !== null) base += ` [${s.type}]`;
  if (s.pid !== null) base += ` PID ${s.pid}`;
  return withExtra(base.trim(), s.extra);
}

function withExtra(base: string, extra: JsonObject): string {
  return Object.keys(extra).length === 0 ? base : `${base} ${canonicalJson(extra)}`.trim();
}

interface Match<T> {
  before: T | null;
  after: T | null;
}

/**
 * Pairs children of two versions: identical ones first (no row), then by each key in turn (a
 * null key never matches), then the rest as added or removed. Returns only pairs that differ.
 * Both sides are taken in canonical order, and each child pairs with the first unpaired one of
 * the other side that has its key: buckets by key make that near-linear (10,000 children with
 * every position changed take milliseconds, not the minute a scan per child took).
 */
function matchChildren<T>(
  before: readonly T[],
  after: readonly T[],
  toJson: (item: T) => JsonValue,
  keys: readonly ((item: T) => string | null)[],
): Match<T>[] {
  interface Entry {
    item: T;
    sort: string;
  }
  const canonical = (xs: readonly T[]): Entry[] =>
    xs.map((item) => ({ item, sort: canonicalJson(toJson(item)) })).sort((p, q) => cmp(p.sort, q.sort));
  let left = canonical(before);
  let right = canonical(after);
  const out: Match<T>[] = [];

  const pair = (keyOf: (e: Entry) => string | null, emit: boolean) => {
    const buckets = new Map<string, { entries: Entry[]; next: number }>();
    for (const r of right) {
      const k = keyOf(r);
      if (k === null) continue;
      const b = buckets.get(k);
      if (b) b.entries.push(r);
      else buckets.set(k, { entries: [r], next: 0 });
    }
    const paired = new Set<Entry>();
    const rest: Entry[] = [];
    for (const l of left) {
      const k = keyOf(l);
      const b = k === null ? undefined : buckets.get(k);
      const r = b?.entries[b.next];
      if (!b || r === undefined) {
        rest.push(l);
        continue;
      }
      b.next++;
      paired.add(r);
      if (emit) out.push({ before: l.item, after: r.item });
    }
    left = rest;
    right = right.filter((r) => !paired.has(r));
  };

  pair((e) => e.sort, false);
  for (const key of keys) pair((e) => key(e.item), true);
  for (const l of left) out.push({ before: l.item, after: null });
  for (const r of right) out.push({ before: null, after: r.item });
  return out;
}

/** Added and removed members of two string lists, treated as sets. */
function setDiff(
  before: readonly string[],
  after: readonly string[],
): { before: string | null; after: string | null }[] {
  const b = new Set(before);
  const a = new Set(after);
  return [
    ...[...b].filter((x) => !a.has(x)).map((x) => ({ before: x, after: null })),
    ...[...a].filter((x) => !b.has(x)).map((x) => ({ before: null, after: x })),
  ];
}

function addExtraChanges(
  before: JsonObject,
  after: JsonObject,
  add: (key: string, b: string | null, a: string | null) => void,
): void {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  for (const key of keys) {
    const b = key in before ? canonicalJson(before[key] ?? null) : null;
    const a = key in after ? canonicalJson(after[key] ?? null) : null;
    if (b !== a) add(key, b, a);
  }
}

function cmp(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  return a < b ? -1 : 1;
}

function compareChanges<C extends string>(x: Change<C>, y: Change<C>): number {
  return (
    cmp(x.category, y.category) ||
    cmp(x.field, y.field) ||
    cmp(x.kind, y.kind) ||
    cmp(x.before, y.before) ||
    cmp(x.after, y.after) ||
    cmp(x.detail, y.detail)
  );
}
