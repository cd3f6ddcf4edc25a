/**
 * Parameter rules checked before any request is sent (docs/upstream.md, Calls). Pure: each
 * returns the value to send or throws InvalidRequestError naming the parameter and the problem.
 */
import { isCalendarDate } from '../time/cycles.ts';
import { InvalidRequestError } from './errors.ts';

export const ENT_NAME_MAX = 100;
export const LIST_LIMIT_MAX = 20;

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
/** Invisible format characters (zero-width space, BOM, bidi overrides…): a name must be seen to be typed. */
const FORMAT = /\p{Cf}/u;

/** U+XXXX of the first invisible format character in `s`, for a message. */
function formatCharOf(s: string): string {
  const ch = FORMAT.exec(s)?.[0] ?? '';
  return `U+${(ch.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
}

/** Length as a person counts it: code points, so one CJK character or emoji is one. */
export function charLength(s: string): number {
  return Array.from(s).length;
}

/** The enterprise keyword to send: trimmed, 1 to 100 characters, no control characters. */
export function checkEntName(raw: string): string {
  const name = raw.trim();
  if (name.length === 0)
    throw new InvalidRequestError('ent_name', 'ent_name is empty: give an enterprise name');
  const n = charLength(name);
  if (n > ENT_NAME_MAX) {
    throw new InvalidRequestError(
      'ent_name',
      `ent_name is ${n} characters long; the upstream allows at most ${ENT_NAME_MAX}`,
    );
  }
  if (CONTROL.test(name)) throw new InvalidRequestError('ent_name', 'ent_name contains a control character');
  if (FORMAT.test(name)) {
    throw new InvalidRequestError(
      'ent_name',
      `ent_name contains an invisible format character (${formatCharOf(name)}, such as a zero-width space)`,
    );
  }
  return name;
}

/** A trending-list date: a real calendar date written YYYY-MM-DD. */
export function checkListDate(raw: string): string {
  const date = raw.trim();
  if (date.length === 0) throw new InvalidRequestError('date', 'date is empty: give a date as YYYY-MM-DD');
  if (!isCalendarDate(date)) {
    throw new InvalidRequestError('date', `date "${raw}" is not a real calendar date written YYYY-MM-DD`);
  }
  return date;
}

/** A list limit: a whole number from 1 to 20 (numbers or digit strings). */
export function checkListLimit(raw: number | string): number {
  const text = String(raw).trim();
  if (!/^\d+$/.test(text)) {
    throw new InvalidRequestError(
      'limit',
      `limit "${raw}" is not a whole number from 1 to ${LIST_LIMIT_MAX}`,
    );
  }
  const limit = Number(text);
  if (limit < 1 || limit > LIST_LIMIT_MAX) {
    throw new InvalidRequestError(
      'limit',
      `limit ${limit} is out of range: it must be from 1 to ${LIST_LIMIT_MAX}`,
    );
  }
  return limit;
}

/** A product name for a detail query: non-empty after trimming, no control characters. */
export function checkProductName(raw: string): string {
  const name = raw.trim();
  if (name.length === 0) throw new InvalidRequestError('product_name', 'product_name is empty');
  if (CONTROL.test(name))
    throw new InvalidRequestError('product_name', 'product_name contains a control character');
  if (FORMAT.test(name)) {
    throw new InvalidRequestError(
      'product_name',
      `product_name contains an invisible format character (${formatCharOf(name)}, such as a zero-width space)`,
    );
  }
  return name;
}
