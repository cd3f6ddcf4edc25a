/**
 * Value conventions every normalizer shares: JSON values for `extra`, trimmed text, canonical
 * JSON, and ISO-like timestamp parsing. Pure.
 */
import { decimalOf, ExactNumber, keyOf, numberFits, setOwn } from '../upstream/json.ts';
import type { JsonObject, JsonValue } from './types.ts';

/**
 * Converts a JSON-parsed value to a JsonValue: undefined object members are dropped, non-finite
 * numbers become null, ExactNumbers stay, and keys are the upstream's own (`__proto__` included).
 */
export function toJsonValue(v: unknown): JsonValue {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string' || typeof v === 'boolean' || v instanceof ExactNumber) return v;
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'bigint') return v.toString();
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? null : v.toISOString();
  if (Array.isArray(v)) return v.map(toJsonValue);
  if (typeof v === 'object') {
    const out: JsonObject = {};
    for (const [k, val] of Object.entries(v)) {
      if (val !== undefined) setOwn(out, keyOf(k), toJsonValue(val));
    }
    return out;
  }
  return null;
}

/** JSON text with object keys sorted at every level, so equal content gives equal text. */
export function canonicalJson(v: JsonValue): string {
  if (v instanceof ExactNumber) return numberFits(v.text) ? decimalOf(v.text) : 'null';
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
  if (v instanceof ExactNumber) return v.text;
  return canonicalJson(toJsonValue(v));
}

/** The members of `obj` whose keys are not in `known`, as received. */
export function extraOf(obj: Record<string, unknown>, known: ReadonlySet<string>): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(obj)) {
    if (!known.has(k) && v !== undefined) setOwn(out, keyOf(k), toJsonValue(v));
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
