/**
 * HTML made safe by construction: a page is built with the `html` tag, which escapes every value
 * it is given unless that value is already `Html` (made by this tag). Upstream text can hold
 * markup (`<script>`, `onerror=`), links (`javascript:`), bidi controls that reorder what a reader
 * sees, and terminal escapes: all of it shows as plain, visible text.
 */

/** A fragment of HTML this module made: only `html`, `raw` and `join` build one. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

/**
 * Characters shown as a visible `\uXXXX` instead of acting: C0 and C1 controls (ANSI escapes
 * start with ESC), the bidi embeddings, overrides and isolates, the direction marks, zero-width
 * characters and the line and paragraph separators. Tab and newline are kept.
 */
const INVISIBLE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it makes visible
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;

const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

/** Controls and bidi characters made visible as `\uXXXX` text (see INVISIBLE). */
export function visible(s: string): string {
  return s.replace(INVISIBLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Text escaped for an element's content or a quoted attribute value. */
export function escapeText(value: unknown): string {
  const s = value === null || value === undefined ? '' : String(value);
  return visible(s).replace(/[&<>"'`]/g, (c) => ENTITIES[c] as string);
}

type Part = Html | string | number | boolean | null | undefined | readonly Part[];

function render(part: Part): string {
  if (part instanceof Html) return part.text;
  if (Array.isArray(part)) return part.map(render).join('');
  if (part === null || part === undefined || part === false) return '';
  return escapeText(part);
}

/** The tag: literal parts kept, every value escaped (arrays joined, null and false left out). */
export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0] as string;
  for (let i = 0; i < values.length; i++) out += render(values[i] as Part) + (strings[i + 1] as string);
  return new Html(out);
}

/** Fragments joined into one. */
export function join(parts: readonly Part[], separator = ''): Html {
  return new Html(parts.map(render).join(separator));
}

/** Markup this module wrote itself (an SVG path, a fixed entity): never upstream text. */
export function trusted(text: string): Html {
  return new Html(text);
}

/**
 * A URL fit for an href, or null: only http and https addresses (a `javascript:`, `data:` or
 * relative one from upstream is shown as text instead).
 */
export function safeHttpUrl(value: string | null | undefined): string | null {
  if (!value) return null;
  try {
    const u = new URL(value);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : null;
  } catch {
    return null;
  }
}
