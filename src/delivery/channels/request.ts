/**
 * The requests a chat channel sends for one event, or for several folded into as few messages as
 * the vendor's size allows: where (a DingTalk URL gets its signature in the query) and what (a
 * Feishu body gets its signature in the JSON). Pure but for the clock it is given.
 */
import type { Envelope } from '../../events/feed.ts';
import { chatBodies, chatBody } from './bodies.ts';
import { foldedMessage, type Known, messageOf } from './message.ts';
import type { ChatFormat } from './render.ts';
import { signedDingtalkUrl, signedFeishuBody } from './sign.ts';
import type { Lang } from './words.ts';

export interface ChatTarget {
  format: ChatFormat;
  url: string;
  signingSecret: string | null;
  lang: Lang;
  publicUrl?: string | undefined;
}

export interface ChatRequest {
  url: URL;
  body: string;
}

function signed(t: ChatTarget, body: string, at: Date): ChatRequest {
  if (t.format === 'feishu')
    return { url: new URL(t.url), body: signedFeishuBody(body, t.signingSecret, at) };
  if (t.format === 'dingtalk') return { url: signedDingtalkUrl(t.url, t.signingSecret, at), body };
  return { url: new URL(t.url), body };
}

/** The one request of `events`: one company's of one cycle, a digest, or an operator event. */
export function chatRequest(t: ChatTarget, events: readonly Envelope[], known: Known, at: Date): ChatRequest {
  return signed(t, chatBody(t.format, messageOf(events, t.lang, known, t.publicUrl)), at);
}

/**
 * The requests of `groups` folded (each group one company's events, or one operator event):
 * each names its share of the groups (`count`, in order), and together they name all.
 */
export function foldedRequests(
  t: ChatTarget,
  groups: readonly (readonly Envelope[])[],
  known: Known,
  at: Date,
): (ChatRequest & { count: number })[] {
  return chatBodies(t.format, foldedMessage(groups, t.lang, known, t.publicUrl)).map((b) => ({
    ...signed(t, b.body, at),
    count: b.count,
  }));
}
