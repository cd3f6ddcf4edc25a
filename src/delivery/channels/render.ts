/**
 * Messages rendered for each vendor, within its documented size: DingTalk's and WeCom's markdown
 * at most 4096 bytes, a Feishu request at most 20 KB, a Teams card about 28 KB. A digest too long
 * is cut, with a line saying how many items were left out; folded events are split over as many
 * messages as they need (none is dropped). Upstream text is escaped for each format (inert.ts).
 * Pure.
 */

import { tokenLabel } from '../../terms/fields.ts';
import { type Escape, markdownText } from './inert.ts';
import { CHAT_FORMATS, type ChatFormat } from './limits.ts';
import type { Line, Message, Part } from './message.ts';
import { WORDS } from './words.ts';

export { CHAT_FORMATS, type ChatFormat };

/** The documented limits, in bytes of UTF-8. */
export const SIZE_LIMITS: Record<ChatFormat, number> = {
  dingtalk: 4096,
  wecom: 4096,
  // 20 KB for the whole request, less room for the timestamp and signature added after.
  feishu: 20 * 1024 - 128,
  teams: 28 * 1024,
  // Slack counts characters, not bytes: 4,000, as it recommends for a message (it cuts text past
  // 40,000). Its body counts one byte per UTF-16 unit of the text (bodies.ts).
  slack: 4000,
};

/** Shorter clips tried, in turn, when a message does not fit with the longer one. */
const CLIPS = [300, 120, 40, 12];

/** Parts joined, the upstream's escaped. */
export function joined(parts: readonly Part[], esc: Escape, clip: number): string {
  return parts.map((p) => ('ours' in p ? p.ours : esc(p.theirs, clip))).join('');
}

/** One item's own line (no list marker), its severity first when it has one. */
export function itemLine(m: Message, x: Line, esc: Escape, clip: number, bold = (s: string) => s): string {
  const text = joined(x.parts, esc, clip);
  return x.severity ? `${bold(`[${tokenLabel('severity', x.severity, m.lang)}]`)} ${text}` : text;
}

/** The lines under an item (a company's changes), each without a list marker. */
export function subLines(x: Line, esc: Escape, clip: number): string[] {
  return x.sub.map((parts) => joined(parts, esc, clip));
}

/** What a renderer is given: the message, the items it shows, how many it leaves out, the clip. */
export interface Cut {
  m: Message;
  items: readonly Line[];
  omitted: number;
  clip: number;
  /** "part i of n" of a split message. */
  part: { i: number; of: number } | null;
}

/** The markdown text of DingTalk, WeCom (and the title of others). */
export function markdownBody(c: Cut): { title: string; text: string } {
  const w = WORDS[c.m.lang];
  const title = joined(c.m.title, markdownText, c.clip) + (c.part ? w.foldedPart(c.part.i, c.part.of) : '');
  const lines = [`### ${title}`];
  for (const f of c.m.facts) lines.push(`**${f.label}**: ${joined(f.value, markdownText, c.clip)}`);
  if (c.m.intro) lines.push(c.m.intro);
  for (const x of c.items)
    lines.push(
      [
        `- ${itemLine(c.m, x, markdownText, c.clip, (s) => `**${s}**`)}`,
        ...subLines(x, markdownText, c.clip).map((l) => `    - ${l}`),
      ].join('\n'),
    );
  if (c.omitted > 0) lines.push(w.leftOut(c.omitted));
  if (c.m.link) lines.push(`[${w.link}](${c.m.link})`);
  return { title, text: lines.join('\n\n') };
}

/** The body a format sends for a cut, and the bytes its vendor's limit counts. */
export type Build = (c: Cut) => { body: string; counted: string };

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

/** The most items of `from` (from index `start`) whose body fits, and that body; null if none fits. */
function largest(
  m: Message,
  build: Build,
  limit: number,
  start: number,
  cut: (n: number) => Omit<Cut, 'm' | 'clip'>,
): { n: number; body: string } | null {
  for (const clip of CLIPS) {
    const fits = (n: number) => {
      const out = build({ m, clip, ...cut(n) });
      return bytes(out.counted) <= limit ? out.body : null;
    };
    let lo = 0;
    let hi = m.items.length - start;
    let best = fits(0);
    if (best === null) continue;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      const body = fits(mid);
      if (body !== null) {
        lo = mid;
        best = body;
      } else hi = mid - 1;
    }
    // A split message must move on: with none of its items fitting, try a shorter clip.
    if (lo === 0 && m.items.length > start && cut(0).part !== null) continue;
    return { n: lo, body: best };
  }
  return null;
}

/**
 * The message as one body, its items cut to the limit (saying how many were left out); a
 * message that cannot fit even bare is sent bare with the shortest clip.
 */
export function fitOne(m: Message, build: Build, limit: number): string {
  const total = m.items.length;
  const got = largest(m, build, limit, 0, (n) => ({
    items: m.items.slice(0, n),
    omitted: total - n,
    part: null,
  }));
  return (
    got?.body ??
    build({ m, clip: CLIPS[CLIPS.length - 1] as number, items: [], omitted: total, part: null }).body
  );
}

/**
 * The message split over as many bodies as its items need, every item in one of them, in order:
 * each body with how many items it carries.
 */
export function fitAll(m: Message, build: Build, limit: number): { body: string; count: number }[] {
  const chunks: Line[][] = [];
  let start = 0;
  // First the split, with a placeholder part number (two digits each, as wide as most).
  while (start < m.items.length) {
    const got = largest(m, build, limit - 16, start, (n) => ({
      items: m.items.slice(start, start + n),
      omitted: 0,
      part: { i: 99, of: 99 },
    }));
    const n = Math.max(1, got?.n ?? 1);
    chunks.push(m.items.slice(start, start + n));
    start += n;
  }
  if (chunks.length <= 1) return [{ body: fitOne(m, build, limit), count: m.items.length }];
  return chunks.map((items, i) => {
    const part = { i: i + 1, of: chunks.length };
    for (const clip of CLIPS) {
      const out = build({ m, clip, items, omitted: 0, part });
      if (bytes(out.counted) <= limit) return { body: out.body, count: items.length };
    }
    return { body: build({ m, clip: 12, items, omitted: 0, part }).body, count: items.length };
  });
}
