/**
 * Format drift: how an upstream answer differs from docs/upstream.md. Pure; works on the body as
 * parsed JSON (`unknown`), so it also reads answers the schemas refused.
 *
 * Three kinds, each keyed by the field's path and the shape seen:
 * - `unknown_field`: a key the spec does not document (`seen` is its JSON type);
 * - `missing_field`: a documented key that is absent (`seen` is `absent`); optional keys
 *   (BE_INVEST[].PID) are not reported;
 * - `type_variant`: a documented key whose value has another JSON type (`REGCAP` as a string,
 *   `null`) or, for timestamps, another format (`ESDATE` without its `Z`).
 * Documented alternatives are not drift: OPTO as text (Long-term, 长期), media[].videoUrl null.
 * The five fields whose type the spec leaves open (SCONFORM, ENTTYPECODE, REVOKEREASON,
 * participants, industry_middle) are checked for presence only.
 */
import type { Operation } from '../upstream/errors.ts';
import { ExactNumber, hasRefusedText, numberFits, storableText } from '../upstream/json.ts';
import {
  ClearingMember,
  Comment,
  EnterpriseRecord,
  Media,
  Person,
  Product,
  ProductLink,
  Shareholder,
} from '../upstream/schemas.ts';
import { canonicalJson, toJsonValue } from './text.ts';

export type DriftKind = 'unknown_field' | 'missing_field' | 'type_variant';

/** One kind of drift in one answer, with how many of its records showed it. */
export interface DriftItem {
  field: string;
  kind: DriftKind;
  seen: string;
  expected: string;
  records: number;
  /** A value as received (JSON text, at most 200 characters); null for a missing field. */
  example: string | null;
}

type JsonType =
  | 'null'
  | 'boolean'
  | 'integer'
  | 'number'
  | 'non-finite number'
  | 'string'
  | 'array'
  | 'object';

/** A documented field: its JSON type, and for timestamps the formats the spec shows. */
interface FieldSpec {
  type: JsonType | 'any';
  /** Accepted formats of a string (the first is the documented one), from formatOf(). */
  formats?: readonly string[];
  /** Documented as possibly null. */
  nullable?: boolean;
  /** Documented as possibly absent. */
  optional?: boolean;
  /** Only these values (IS_LISTED: 0 or 1). */
  values?: readonly (string | number)[];
  /** The spec of each item, for arrays of objects or strings. */
  items?: Record<string, FieldSpec> | JsonType;
  /** The fields of an object. */
  fields?: Record<string, FieldSpec>;
}

const REGISTRY_DATETIME = ['YYYY-MM-DDTHH:MM:SS.sssZ'] as const;
const PRODUCT_TIME = ['YYYY-MM-DDTHH:MM:SS'] as const;

const str: FieldSpec = { type: 'string' };
const int: FieldSpec = { type: 'integer' };
const any: FieldSpec = { type: 'any' };

/** metadata.content of enterprise-search (docs/upstream.md, Enterprise record). */
export const ENTERPRISE_RECORD_SPEC: Readonly<Record<string, FieldSpec>> = {
  PID: str,
  ENTNAME: str,
  HISTORYNAME: str,
  IS_LISTED: { type: 'integer', values: [0, 1] },
  LEGALPERSON: str,
  LEGALPERSONDESC: str,
  ESDATE: { type: 'string', formats: REGISTRY_DATETIME },
  SCONFORM: any,
  REGNO: str,
  UNCID: str,
  ENTTYPECODE: any,
  ENTTYPE: str,
  REGCAP: { type: 'number' },
  REGCAPCUR: str,
  PROVINCE: int,
  // "ISO 8601 datetime": read as the registry's one documented datetime shape (ESDATE's).
  OPFROM: { type: 'string', formats: REGISTRY_DATETIME },
  OPTO: str,
  REGORG: str,
  APPRDATE: { type: 'string', formats: REGISTRY_DATETIME },
  REVOKEDATE: str,
  REVOKEREASON: any,
  ENTSTATUS: str,
  OPLOC: str,
  OPSCOPE: str,
  PERSONS: { type: 'array', items: { NAME: str, POSITION: str } },
  BE_INVEST: {
    type: 'array',
    items: { PID: { type: 'string', optional: true }, INV: str, INVTYPE: str },
  },
  participants: any,
  INDUSTRYPHY: str,
  INDUSTRYBIG: str,
  industry_middle: any,
  CLEARINGINFO: { type: 'array', items: { liqMem: str, ligpriSign: str } },
};

/** One product object (docs/upstream.md, Product object). */
export const PRODUCT_SPEC: Readonly<Record<string, FieldSpec>> = {
  id: str,
  product_id: str,
  name: str,
  tagline: str,
  description: str,
  url: str,
  votes_count: int,
  comments_count: int,
  created_at: { type: 'string', formats: PRODUCT_TIME },
  featured_at: { type: 'string', formats: PRODUCT_TIME },
  topics: { type: 'array', items: 'string' },
  media: { type: 'array', items: { url: str, type: str, videoUrl: { type: 'string', nullable: true } } },
  thumbnail: { type: 'object', fields: { url: str, type: str } },
  product_links: { type: 'array', items: { url: str, type: str } },
  comments: {
    type: 'array',
    items: {
      body: str,
      created_at: { type: 'string', formats: ['YYYY-MM-DDTHH:MM:SS.sssZ', 'YYYY-MM-DDTHH:MM:SSZ'] },
    },
  },
  updated_at: { type: 'string', formats: PRODUCT_TIME },
};

/** The field sets the schemas document, for the test that keeps these specs in step with them. */
export const SCHEMA_FIELD_SETS = {
  enterprise: Object.keys(EnterpriseRecord.shape),
  person: Object.keys(Person.shape),
  shareholder: Object.keys(Shareholder.shape),
  clearing: Object.keys(ClearingMember.shape),
  product: Object.keys(Product.shape),
  media: Object.keys(Media.shape),
  link: Object.keys(ProductLink.shape),
  comment: Object.keys(Comment.shape),
} as const;

const ENTERPRISE_ENVELOPE: Record<string, FieldSpec> = {
  status: str,
  markdown: str,
  metadata: {
    type: 'object',
    fields: { usage: { type: 'object', fields: { credits: int, remark: str } }, content: { type: 'object' } },
  },
};
const LIST_ENVELOPE: Record<string, FieldSpec> = {
  result: str,
  markdown: { type: 'array', items: 'string' },
  metadata: { type: 'array' },
};
const DETAIL_ENVELOPE: Record<string, FieldSpec> = {
  result: str,
  markdown: str,
  metadata: { type: 'object' },
};

const EXAMPLE_CHARS = 200;

/**
 * The drift of one answer: `operation` and its request `params` tell which shape was expected.
 * Only success documents are read (`status`/`result` = success); errors and non-JSON give [].
 */
export function detectDrift(
  operation: Operation,
  params: Record<string, string>,
  body: unknown,
): DriftItem[] {
  if (!isObject(body)) return [];
  const acc = new Accumulator();
  if (operation === 'enterprise-search') {
    if (body.status !== 'success') return [];
    acc.record((out) => {
      checkObject(body, ENTERPRISE_ENVELOPE, '$.', out);
      unstorable(body, '$.', out, (key, v) =>
        key === 'metadata' && isObject(v) ? { ...v, content: undefined } : v,
      );
    });
    const content = isObject(body.metadata) ? body.metadata.content : undefined;
    if (isObject(content))
      acc.record((out) => {
        checkObject(content, ENTERPRISE_RECORD_SPEC, '', out);
        unstorable(content, '', out);
      });
    return acc.items();
  }
  if (body.result !== 'success') return [];
  const list = params.date !== undefined;
  acc.record((out) => {
    checkObject(body, list ? LIST_ENVELOPE : DETAIL_ENVELOPE, '$.', out);
    unstorable(body, '$.', out, (key, v) => (key === 'metadata' ? undefined : v));
  });
  const products = list ? (Array.isArray(body.metadata) ? body.metadata : []) : [body.metadata];
  for (const p of products) {
    if (isObject(p))
      acc.record((out) => {
        checkObject(p, PRODUCT_SPEC, '', out);
        unstorable(p, '', out);
      });
    else if (list) acc.record((out) => out(variant('$.metadata[]', 'object', p)));
  }
  return acc.items();
}

/** Collects items per record, then counts each (field, kind, seen) once per record. */
class Accumulator {
  readonly #byKey = new Map<string, DriftItem>();

  record(check: (out: (item: Omit<DriftItem, 'records'>) => void) => void): void {
    const seen = new Set<string>();
    check((found) => {
      // A key or a value may hold text Postgres refuses: the drift row names it as stored.
      const item = {
        ...found,
        field: storableText(found.field),
        example: found.example === null ? null : storableText(found.example),
      };
      const key = `${item.field}\u0000${item.kind}\u0000${item.seen}`;
      if (seen.has(key)) return;
      seen.add(key);
      const had = this.#byKey.get(key);
      if (had) {
        had.records++;
      } else this.#byKey.set(key, { ...item, records: 1 });
    });
  }

  items(): DriftItem[] {
    return [...this.#byKey.values()].sort(
      (a, b) => cmp(a.field, b.field) || cmp(a.kind, b.kind) || cmp(a.seen, b.seen),
    );
  }
}

type Out = (item: Omit<DriftItem, 'records'>) => void;

function checkObject(
  obj: Record<string, unknown>,
  spec: Record<string, FieldSpec>,
  path: string,
  out: Out,
): void {
  for (const [key, value] of Object.entries(obj)) {
    if (value === undefined) continue;
    const field = `${path}${key}`;
    const s = Object.hasOwn(spec, key) ? spec[key] : undefined;
    if (!s) {
      // Whole and fractional numbers are one shape here: 4 and 4.5 in a new field are one drift.
      const type = jsonType(value);
      out({
        field,
        kind: 'unknown_field',
        seen: type === 'integer' ? 'number' : type,
        expected: 'undocumented',
        example: example(value),
      });
      continue;
    }
    checkValue(value, s, field, out);
  }
  for (const [key, s] of Object.entries(spec)) {
    if (s.optional || (Object.hasOwn(obj, key) && obj[key] !== undefined)) continue;
    out({
      field: `${path}${key}`,
      kind: 'missing_field',
      seen: 'absent',
      expected: describe(s),
      example: null,
    });
  }
}

function checkValue(value: unknown, s: FieldSpec, field: string, out: Out): void {
  if (s.type === 'any') return;
  const type = jsonType(value);
  if (value === null) {
    if (!s.nullable) out(variant(field, describe(s), value));
    return;
  }
  const typeOk = type === s.type || (s.type === 'number' && type === 'integer');
  if (!typeOk) {
    out(variant(field, describe(s), value));
    return;
  }
  if (s.type === 'integer' && type === 'integer' && !fitsInt32(value)) {
    out({ field, kind: 'type_variant', seen: BEYOND_INT32, expected: describe(s), example: example(value) });
    return;
  }
  if (s.values && !s.values.includes(value as string | number)) {
    out({
      field,
      kind: 'type_variant',
      seen: `${type} outside ${s.values.join('/')}`,
      expected: describe(s),
      example: example(value),
    });
    return;
  }
  if (s.formats && typeof value === 'string') {
    const format = formatOf(value);
    if (!s.formats.includes(format)) {
      out({
        field,
        kind: 'type_variant',
        seen: `string ${format}`,
        expected: describe(s),
        example: example(value),
      });
    }
    return;
  }
  if (s.fields && isObject(value)) checkObject(value, s.fields, `${field}.`, out);
  if (s.items && Array.isArray(value)) {
    for (const item of value) {
      if (typeof s.items === 'string') {
        if (jsonType(item) !== s.items) out(variant(`${field}[]`, s.items, item));
      } else if (isObject(item)) checkObject(item, s.items, `${field}[].`, out);
      else out(variant(`${field}[]`, 'object', item));
    }
  }
}

/** What drift says of a value storable() changed (src/upstream/json.ts). */
export const UNSTORABLE = {
  text: 'text with a character Postgres cannot store (stored with U+FFFD)',
  key: 'a key with a character Postgres cannot store (stored with U+FFFD)',
  number: 'a number beyond any column (stored as null)',
} as const;
/** A documented integer beyond the 32-bit columns that hold counts and codes: stored as null. */
export const BEYOND_INT32 = 'integer beyond 32 bits (stored as null)';

function fitsInt32(v: unknown): boolean {
  const n = v instanceof ExactNumber ? Number(v.text) : (v as number);
  return Number.isSafeInteger(n) && Math.abs(n) <= 2_147_483_647;
}

/**
 * Reports every value of `obj` that storable() changes: text or a key Postgres refuses, a number
 * beyond any column; `keep` can leave members out (a record read on its own).
 */
function unstorable(
  obj: Record<string, unknown>,
  path: string,
  out: Out,
  keep: (key: string, v: unknown) => unknown = (_k, v) => v,
): void {
  // A member's own number is checkObject's (a type variant, or the shape of an unknown field).
  const walk = (v: unknown, field: string, nested: boolean): void => {
    if (typeof v === 'string') {
      if (hasRefusedText(v)) out(changed(field, UNSTORABLE.text, storableText(v)));
    } else if (v instanceof ExactNumber) {
      if (nested && !numberFits(v.text)) out(changed(field, UNSTORABLE.number, v.text));
    } else if (Array.isArray(v)) {
      for (const item of v) walk(item, `${field}[]`, true);
    } else if (isObject(v)) members(v, `${field}.`);
  };
  const members = (o: Record<string, unknown>, prefix: string, filter = false): void => {
    for (const [key, raw] of Object.entries(o)) {
      const v = filter ? keep(key, raw) : raw;
      if (v === undefined) continue;
      const name = storableText(key);
      if (hasRefusedText(key)) out(changed(`${prefix}${name}`, UNSTORABLE.key, name));
      walk(v, `${prefix}${name}`, prefix !== path);
    }
  };
  members(obj, path, true);
}

function changed(field: string, seen: string, shown: string): Omit<DriftItem, 'records'> {
  return { field, kind: 'type_variant', seen, expected: 'a value Postgres stores', example: example(shown) };
}

function variant(field: string, expected: string, value: unknown): Omit<DriftItem, 'records'> {
  return { field, kind: 'type_variant', seen: jsonType(value), expected, example: example(value) };
}

function describe(s: FieldSpec): string {
  if (s.formats) return `string ${s.formats[0]}`;
  if (s.values) return `${s.type} ${s.values.join('/')}`;
  return s.nullable ? `${s.type} or null` : s.type;
}

/** The JSON type of a parsed value; whole numbers are `integer`. */
export function jsonType(v: unknown): JsonType {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return 'array';
  // A number beyond double range (1e400) parses to Infinity: the shape to report, not a number.
  if (typeof v === 'number')
    return !Number.isFinite(v) ? 'non-finite number' : Number.isInteger(v) ? 'integer' : 'number';
  if (v instanceof ExactNumber)
    return !numberFits(v.text) ? 'non-finite number' : /^-?\d+$/.test(v.text) ? 'integer' : 'number';
  if (typeof v === 'boolean') return 'boolean';
  if (typeof v === 'string') return 'string';
  return 'object';
}

const FORMAT_RE = /^(\d{4}-\d{2}-\d{2})(?:([T ])(\d{2}:\d{2})(:\d{2})?(\.\d+)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * The format of a timestamp string as a pattern: `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM:SS.sssZ`,
 * `YYYY-MM-DD HH:MM:SS+HH:MM`…; `empty` for "", `text` for anything else.
 */
export function formatOf(s: string): string {
  const t = s.trim();
  if (t === '') return 'empty';
  const m = FORMAT_RE.exec(t);
  if (!m) return 'text';
  if (m[2] === undefined) return 'YYYY-MM-DD';
  const zone = m[6] === undefined ? '' : m[6].toUpperCase() === 'Z' ? 'Z' : '+HH:MM';
  return `YYYY-MM-DD${m[2]}HH:MM${m[4] ? ':SS' : ''}${m[5] ? '.sss' : ''}${zone}`;
}

/** A value as text; objects with sorted keys, so an answer read back from jsonb gives the same text. */
function example(v: unknown): string {
  const text = typeof v === 'string' ? v : canonicalJson(toJsonValue(v));
  return [...text].length > EXAMPLE_CHARS ? `${[...text].slice(0, EXAMPLE_CHARS - 1).join('')}…` : text;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
