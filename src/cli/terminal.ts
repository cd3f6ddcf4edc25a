/**
 * Text from the upstream, the database or a person, made safe to print on a terminal.
 *
 * `forTerminal` replaces each character a terminal would act on instead of showing by its
 * escape `\uXXXX` (a backslash, `u` and four lowercase hex digits, as JSON writes them), shown
 * literally, so it is visible and inert:
 *
 * - every C0 control, U+0000–U+001F: ESC (`\u001b`) starts the sequences that clear the screen,
 *   move the cursor or set the title; CR (`\u000d`) and BS let a line be overwritten. Tab
 *   (`\u0009`) and newline (`\u000a`) are escaped too: inside a table cell they break the
 *   alignment, and a newline lets a value forge a line of its own;
 * - DEL, U+007F;
 * - the C1 controls, U+0080–U+009F (U+009B is CSI on terminals that take 8-bit controls);
 * - the bidi embeddings, overrides and isolates, U+202A–U+202E and U+2066–U+2069, which reorder
 *   what follows them on the line ("Trojan Source").
 *
 * Everything else, CJK, emoji and a backslash among them, passes through untouched, so a text
 * holding a literal `\u001b` looks like an escaped ESC: it is just as inert. Pure.
 *
 * JSON output needs none of this (JSON.stringify escapes the C0 controls), and CSV output is data
 * for machines, byte-exact: neither goes through here.
 *
 * Also the output helpers the commands share: the aligned text table and JSON lines.
 */

/** Whether a terminal would act on the code point instead of showing it. */
export function isTerminalControl(cp: number): boolean {
  return (
    cp <= 0x1f ||
    (cp >= 0x7f && cp <= 0x9f) ||
    (cp >= 0x202a && cp <= 0x202e) ||
    (cp >= 0x2066 && cp <= 0x2069)
  );
}

/** `text` with each terminal control written as its `\uXXXX` escape; see the module comment. */
export function forTerminal(text: string): string {
  let out = '';
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const cp = text.charCodeAt(i);
    // Every control is in the Basic Multilingual Plane, and no surrogate is one: code units will do.
    if (!isTerminalControl(cp)) continue;
    out += `${text.slice(from, i)}\\u${cp.toString(16).padStart(4, '0')}`;
    from = i + 1;
  }
  return from === 0 ? text : out + text.slice(from);
}

/** Columns a terminal gives a character: 2 for East Asian wide and fullwidth ones and emoji, else 1. */
function charWidth(ch: string): number {
  return /[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6\u{1f300}-\u{1f64f}\u{1f680}-\u{1f6ff}\u{1f900}-\u{1f9ff}\u{1fa70}-\u{1faff}\u{20000}-\u{3fffd}]/u.test(
    ch,
  )
    ? 2
    : 1;
}

function textWidth(s: string): number {
  let w = 0;
  for (const ch of s) w += charWidth(ch);
  return w;
}

/**
 * Prints rows as an aligned text table. Every cell and header goes through forTerminal (control
 * characters, tab and newline among them, shown as inert escapes), and the widths are those of
 * the escaped text.
 */
export function formatTable(rows: readonly Record<string, unknown>[], columns?: string[]): string {
  if (rows.length === 0) return '(no rows)\n';
  const cols = columns ?? Object.keys(rows[0] as object);
  const cell = (v: unknown) =>
    forTerminal(
      v === null || v === undefined
        ? ''
        : v instanceof Date
          ? v.toISOString()
          : typeof v === 'object'
            ? JSON.stringify(v)
            : String(v),
    ).replace(/\s+/g, ' ');
  const headers = cols.map((c) => forTerminal(c).replace(/\s+/g, ' '));
  const text = rows.map((r) => cols.map((c) => cell(r[c])));
  const widths = headers.map((h, i) =>
    Math.min(60, Math.max(textWidth(h), ...text.map((t) => textWidth(t[i] as string)))),
  );
  const pad = (s: string, w: number) => {
    const sw = textWidth(s);
    if (sw <= w) return s + ' '.repeat(w - sw);
    // Cut whole characters to leave a column for the ellipsis, then pad what a wide one left.
    let out = '';
    let ow = 0;
    for (const ch of s) {
      const cw = charWidth(ch);
      if (ow + cw > w - 1) break;
      out += ch;
      ow += cw;
    }
    return `${out}…${' '.repeat(w - 1 - ow)}`;
  };
  const line = (vals: string[]) =>
    vals
      .map((v, i) => pad(v, widths[i] as number))
      .join('  ')
      .trimEnd();
  return `${[line(headers), line(widths.map((w) => '-'.repeat(w))), ...text.map(line)].join('\n')}\n`;
}

/** The columns of a drift table, as `status` and `drift` show it (`drift` adds records and an example). */
export const DRIFT_COLUMNS = [
  'operation',
  'field',
  'kind',
  'seen',
  'expected',
  'responses',
  'first_seen_at',
  'last_seen_at',
];

/** One JSON value per line, each line ended; nothing for no rows. */
export function jsonLines(rows: readonly unknown[]): string {
  return rows.map((r) => JSON.stringify(r)).join('\n') + (rows.length ? '\n' : '');
}

/**
 * What a list command prints: with --json each row as it is, one JSON line each; else the aligned
 * table of `columns`, each row made a table row by `cells` (the row itself when not given).
 */
export function listOutput<T>(
  rows: readonly T[],
  json: boolean | undefined,
  table: { cells?: (row: T) => Record<string, unknown>; columns?: string[] } = {},
): string {
  if (json) return jsonLines(rows);
  const cells = table.cells ?? ((row: T) => row as Record<string, unknown>);
  return formatTable(
    rows.map((row) => cells(row)),
    table.columns,
  );
}
