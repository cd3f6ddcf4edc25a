/**
 * JSON as the upstream sent it, and as Postgres can hold it. Pure.
 *
 * - `parseJsonExact` reads numbers to the last digit: a number a double holds exactly is a plain
 *   number, any other (30 digits, 1e400) an `ExactNumber` that keeps the text as sent. It is
 *   JSON.parse wherever no such number occurs, and keeps `__proto__` keys as own members, as
 *   JSON.parse does.
 * - `storable` is the copy of a parsed answer that Postgres can store: text and keys with a
 *   character Postgres refuses (NUL, a lone surrogate) get U+FFFD in its place, and a number
 *   beyond any column (beyond a double's range, or so small it is zero as a double) is null.
 *   What it changed is reported as format drift (src/normalize/drift.ts); the raw landing keeps
 *   the answer as received.
 * - `stringifyExact` writes an ExactNumber back as its digits (JSON.stringify would quote it).
 */
import { randomUUID } from 'node:crypto';

/** A JSON number a double cannot hold exactly, kept as the text the upstream sent. */
export class ExactNumber {
  /** How many were made in this process: none, and stringifyExact is plain JSON.stringify. */
  static made = 0;
  readonly text: string;
  constructor(text: string) {
    this.text = text;
    ExactNumber.made++;
  }
  toString(): string {
    return this.text;
  }
  /** Outside stringifyExact (a log line, a webhook payload), the digits travel as a string. */
  toJSON(): string {
    return this.text;
  }
}

/** Zod's objects drop a `__proto__` key; the schemas see this key in its place (keyOf maps back). */
export const PROTO_KEY = '__proto__\u{10FFFF}';

/** The key as the upstream sent it. */
export function keyOf(key: string): string {
  return key === PROTO_KEY ? '__proto__' : key;
}

/** Sets an own member, `__proto__` included, with no prototype effect. */
export function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  } else obj[key] = value;
}

const NUMBER_RE = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/** Whether the number token `token` reads back to the same value from a double. */
export function doubleHolds(token: string): boolean {
  const n = Number(token);
  if (!Number.isFinite(n)) return false;
  if (String(n) === token) return true;
  return decimalOf(token) === decimalOf(String(n));
}

/** Whether a double can stand for `token` at all (finite, and not a non-zero value read as 0). */
export function numberFits(token: string): boolean {
  const n = Number(token);
  if (!Number.isFinite(n)) return false;
  return n !== 0 || !/[1-9]/.test(token.replace(/[eE].*$/, ''));
}

/**
 * The canonical decimal of a JSON number token, exponent expanded (`1.50e2` → `150`, `-0` → `0`).
 * Only for tokens that numberFits: their exponent is bounded.
 */
export function decimalOf(token: string): string {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(token);
  if (!m) return token;
  const [, sign = '', int = '', frac = '', exp = '0'] = m;
  const digits = int + frac;
  const point = int.length + Number(exp);
  let out: string;
  if (point <= 0) out = `0.${'0'.repeat(-point)}${digits}`;
  else if (point >= digits.length) out = digits + '0'.repeat(point - digits.length);
  else out = `${digits.slice(0, point)}.${digits.slice(point)}`;
  const [i = '0', f = ''] = out.split('.');
  const whole = i.replace(/^0+(?=\d)/, '') || '0';
  const fraction = f.replace(/0+$/, '');
  const text = fraction === '' ? whole : `${whole}.${fraction}`;
  return sign === '-' && text !== '0' ? `-${text}` : text;
}

/**
 * Whether `text` holds a number token a double cannot hold exactly (read outside strings). The
 * fast path's test: most answers have none, and JSON.parse reads them.
 */
function hasInexactNumber(text: string): boolean {
  let found = false;
  outsideStrings(text, (i, c) => {
    if (c !== 0x2d && (c < 0x30 || c > 0x39)) return 0;
    NUMBER_RE.lastIndex = i;
    const token = NUMBER_RE.exec(text)?.[0];
    if (token === undefined) return 0;
    // Up to 15 significant digits and no exponent: always exact as a double.
    found = (token.length > 15 || /[eE]/.test(token)) && !doubleHolds(token);
    return found ? false : token.length - 1;
  });
  return found;
}

/**
 * Calls `visit` with each character of `text` outside its JSON strings (index and code unit), in
 * one pass with no recursion; `visit` returns how many characters after this one it read itself,
 * or false to stop.
 */
export function outsideStrings(text: string, visit: (i: number, c: number) => number | false): void {
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else {
      const read = visit(i, c);
      if (read === false) return;
      i += read;
    }
  }
}

/** JSON.parse, with numbers to the last digit (see the module note); throws SyntaxError as it does. */
export function parseJsonExact(text: string): unknown {
  if (!hasInexactNumber(text)) return JSON.parse(text) as unknown;
  return new ExactParser(text).document();
}

/** A JSON reader for the rare answer with numbers a double cannot hold. */
class ExactParser {
  #i = 0;
  readonly #text: string;
  constructor(text: string) {
    this.#text = text;
  }

  document(): unknown {
    const v = this.#value(0);
    this.#space();
    if (this.#i !== this.#text.length) this.#fail('unexpected text after the JSON value');
    return v;
  }

  #fail(what: string): never {
    throw new SyntaxError(`${what} at position ${this.#i}`);
  }

  #space(): void {
    const t = this.#text;
    while (this.#i < t.length && ' \t\n\r'.includes(t[this.#i] as string)) this.#i++;
  }

  #value(depth: number): unknown {
    if (depth > 10_000) this.#fail('nested too deeply');
    this.#space();
    const c = this.#text[this.#i];
    if (c === '{') return this.#object(depth);
    if (c === '[') return this.#array(depth);
    if (c === '"') return this.#string();
    for (const [word, value] of [
      ['true', true],
      ['false', false],
      ['null', null],
    ] as const) {
      if (this.#text.startsWith(word, this.#i)) {
        this.#i += word.length;
        return value;
      }
    }
    NUMBER_RE.lastIndex = this.#i;
    const m = NUMBER_RE.exec(this.#text);
    if (!m) this.#fail('unexpected character');
    this.#i += m[0].length;
    return doubleHolds(m[0]) ? Number(m[0]) : new ExactNumber(m[0]);
  }

  #object(depth: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    this.#items('}', () => {
      if (this.#text[this.#i] !== '"') this.#fail('expected a key');
      const key = this.#string();
      this.#space();
      if (this.#text[this.#i] !== ':') this.#fail("expected ':'");
      this.#i++;
      setOwn(out, key, this.#value(depth + 1));
    });
    return out;
  }

  #array(depth: number): unknown[] {
    const out: unknown[] = [];
    this.#items(']', () => out.push(this.#value(depth + 1)));
    return out;
  }

  /** Reads the comma-separated items of an object or array (`item` reads one) up to `close`. */
  #items(close: string, item: () => void): void {
    this.#i++;
    this.#space();
    if (this.#text[this.#i] === close) {
      this.#i++;
      return;
    }
    for (;;) {
      this.#space();
      item();
      this.#space();
      const c = this.#text[this.#i++];
      if (c === close) return;
      if (c !== ',') this.#fail(`expected ',' or '${close}'`);
    }
  }

  #string(): string {
    const t = this.#text;
    let end = this.#i + 1;
    for (;;) {
      const c = t.charCodeAt(end);
      if (Number.isNaN(c)) this.#fail('unterminated string');
      if (c === 0x5c) end += 2;
      else if (c === 0x22) break;
      else end++;
    }
    // The string's own escapes are JSON.parse's to read.
    const s = JSON.parse(t.slice(this.#i, end + 1)) as string;
    this.#i = end + 1;
    return s;
  }
}

/** U+FFFD, in place of each character Postgres refuses. */
export const REPLACEMENT = '\uFFFD';
/** NUL, and a surrogate that is not half of a pair: neither text nor jsonb can hold them. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is the very character to find
const REFUSED = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Whether `s` holds a character Postgres refuses. */
export function hasRefusedText(s: string): boolean {
  REFUSED.lastIndex = 0;
  const hit = REFUSED.test(s);
  REFUSED.lastIndex = 0;
  return hit;
}

/** `s` with each character Postgres refuses replaced by U+FFFD. */
export function storableText(s: string): string {
  return hasRefusedText(s) ? s.replace(REFUSED, REPLACEMENT) : s;
}

/**
 * The copy of a parsed answer Postgres can store (see the module note). A `__proto__` key comes
 * out as PROTO_KEY, which the schemas keep and keyOf turns back.
 */
export function storable(v: unknown): unknown {
  if (typeof v === 'string') return storableText(v);
  if (v instanceof ExactNumber) return numberFits(v.text) ? v : null;
  if (Array.isArray(v)) return v.map(storable);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, val] of Object.entries(v)) {
      out[k === '__proto__' ? PROTO_KEY : storableText(k)] = storable(val);
    }
    return out;
  }
  return v;
}

const SENTINEL = `\u0000exact-${randomUUID()}:`;
const SENTINEL_RE = new RegExp(`"\\\\u0000exact-${SENTINEL.slice(7, -1)}:([^"]+)"`, 'g');

/** JSON text of `v` with each ExactNumber as its digits (JSON.stringify otherwise). */
export function stringifyExact(v: unknown): string {
  if (ExactNumber.made === 0) return JSON.stringify(v);
  const text = JSON.stringify(v, function (this: Record<string, unknown>, key, value) {
    const own = this[key];
    return own instanceof ExactNumber ? `${SENTINEL}${own.text}` : value;
  });
  return text.replace(SENTINEL_RE, '$1');
}
