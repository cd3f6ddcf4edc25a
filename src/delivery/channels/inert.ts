/**
 * Upstream text made inert for each message format. A company name, a field value or a reason
 * comes from the upstream and may hold anything: markup, a mention of everyone (`@all`,
 * `<at user_id="all">`, `<!channel>`), a link or an image, an emoji code, a line break that would
 * start a line of its own, bidi or invisible characters, terminal escapes. Each escaper keeps the
 * text readable (a Chinese name arrives as it was) and takes the power out of the rest. One
 * function, `inert(text, format, clip)`, gives each format its own rules:
 *
 * - `plainText` (every format starts from it): control characters and ANSI escape sequences out;
 *   line and paragraph separators, bidi controls and invisible (format) characters become spaces;
 *   whitespace made one space; long text clipped.
 * - `markdownText` (DingTalk, WeCom, Feishu, Teams): the characters markdown and the vendors'
 *   markup read (`* _ [ ] < > # ! | ~ \` and the backtick) and `@` become their full-width forms,
 *   which look the same to a reader and mean nothing to a renderer (the vendors' markdown does
 *   not honour backslash escapes alike), and a URL is broken so no client makes it a link.
 * - `mrkdwnText` (Slack's mrkdwn): `&`, `<` and `>` as the entities Slack requires (so no `<!here>`,
 *   `<@U…>` or `<url|text>` is left), the characters that format or mention (`* _ ~ @ #` and the
 *   backtick) and `:` (no `:emoji:` code) in their full-width forms, and URLs and bare domains
 *   broken so Slack links none.
 * - `mailText` (a mail's text part and subject): plain text with URLs broken.
 * - `htmlText` (a mail's HTML part): entities for `& < > " ' @`, and URLs broken likewise.
 * Pure.
 */
import type { ChatFormat } from './limits.ts';

// CSI and OSC sequences first (their parameters would otherwise be left behind), then any other
// C0 or C1 control character.
// biome-ignore lint/suspicious/noControlCharactersInRegex: escape sequences are what it removes
const ANSI = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|\u001b[@-_]?/g;
// Controls (Cc), line and paragraph separators (Zl, Zp), format characters (Cf: bidi controls,
// zero-width spaces and joiners, the word joiner, the BOM, soft hyphen, tags …), and the fillers
// that show as nothing (Hangul fillers, the combining grapheme joiner).
const CONTROL = /[\p{Cc}\p{Zl}\p{Zp}\p{Cf}\u115f\u1160\u3164\uffa0]|\u034f/gu;

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
  ':': '：',
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

/** Slack's three reserved characters as the entities it requires (its mrkdwn has no other escape). */
export function slackEntities(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * Slack mrkdwn. Slack links bare domains as well as URLs (`evil.com`): a dot between a name and
 * letters becomes a one-dot leader (`․`, U+2024), which reads as a dot and links nothing.
 */
export function mrkdwnText(s: string, clip = DEFAULT_CLIP): string {
  return slackEntities(
    unlinked(plainText(s, clip))
      .replace(/([a-z0-9-])\.(?=[a-z])/gi, '$1\u2024')
      .replace(/[`*_~@#:]/g, (c) => FULL_WIDTH[c] ?? c),
  );
}

/** An escaper: upstream text in, text fit for one format out. */
export type Escape = (s: string, clip?: number) => string;

/** Every format upstream text is shown in: each chat vendor's, and a mail's two parts. */
export type InertFormat = ChatFormat | 'mail' | 'html';

const ESCAPES: Record<InertFormat, Escape> = {
  dingtalk: markdownText,
  wecom: markdownText,
  feishu: markdownText,
  teams: markdownText,
  slack: mrkdwnText,
  mail: mailText,
  html: htmlText,
};

/** Upstream text made inert for `format`, clipped to `clip` characters. */
export function inert(s: string, format: InertFormat, clip = DEFAULT_CLIP): string {
  return ESCAPES[format](s, clip);
}

/** The escaper of `format`, for the renderers that take one (render.ts `joined`, `itemLine`). */
export function escapeFor(format: InertFormat): Escape {
  return ESCAPES[format];
}
