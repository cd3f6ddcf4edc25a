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
