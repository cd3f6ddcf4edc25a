/**
 * Upstream text made inert for each message format. A company name, a field value or a reason
 * comes from the upstream and may hold anything: markup, a mention of everyone (`@all`,
 * `<at user_id="all">`), a link or an image, terminal escapes. Each escaper keeps the text
 * readable (a Chinese name arrives as it was) and takes the power out of the rest:
 *
 * - `plainText`: control characters and ANSI escape sequences out, whitespace made one space,
 *   long text clipped. Every other escaper starts from it.
 * - `markdownText` (DingTalk, WeCom, Teams, Feishu): the characters markdown and the vendors'
 *   markup read (`* _ [ ] < > # ! | ~ \` and the backtick) and `@` become their full-width forms,
 *   which look the same to a reader and mean nothing to a renderer (the vendors' markdown does
 *   not honour backslash escapes alike), and a URL is broken so no client makes it a link.
 * - `htmlText` (the HTML part of a mail): entities for `& < > " ' @`, and URLs broken likewise.
 * Pure.
 */

// CSI and OSC sequences first (their parameters would otherwise be left behind), then any other
// C0 or C1 control character.
// biome-ignore lint/suspicious/noControlCharactersInRegex: escape sequences are what it removes
const ANSI = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|\u001b[@-_]?/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it removes
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** The longest stretch of upstream text one value shows (a long business scope is clipped). */
export const DEFAULT_CLIP = 300;

export function plainText(s: string, clip = DEFAULT_CLIP): string {
  const flat = s.replace(ANSI, '').replace(CONTROL, ' ').replace(/\s+/g, ' ').trim();
  const chars = [...flat];
  return chars.length > clip ? `${chars.slice(0, Math.max(1, clip - 1)).join('')}…` : flat;
}

/** `://` and `www.` broken by a zero-width space: no client turns the text into a link. */
function unlinked(s: string): string {
  return s.replace(/:\/\//g, ':/\u200b/').replace(/\bwww\./gi, (m) => `${m.slice(0, 3)}\u200b.`);
}

const FULL_WIDTH: Record<string, string> = {
  '\\': '＼',
  '`': '｀',
  '*': '＊',
  _: '＿',
  '[': '［',
  ']': '］',
  '<': '＜',
  '>': '＞',
  '#': '＃',
  '!': '！',
  '|': '｜',
  '~': '～',
  '@': '＠',
};

/** Plain text for a mail's text part and subject: no controls, and no URL a client would link. */
export function mailText(s: string, clip = DEFAULT_CLIP): string {
  return unlinked(plainText(s, clip));
}

export function markdownText(s: string, clip = DEFAULT_CLIP): string {
  return unlinked(plainText(s, clip).replace(/[\\`*_[\]<>#!|~@]/g, (c) => FULL_WIDTH[c] ?? c));
}

export function htmlText(s: string, clip = DEFAULT_CLIP): string {
  return unlinked(
    plainText(s, clip)
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/"/g, '&quot;')
      .replace(/'/g, '&#39;')
      .replace(/@/g, '&#64;'),
  );
}

/** An escaper: upstream text in, text fit for one format out. */
export type Escape = (s: string, clip?: number) => string;
