/**
 * One send of a delivery in its subscription's format, and what came of it: a signed Standard
 * Webhooks POST (2xx delivers), a chat vendor's message, Slack's among them (2xx and the vendor's
 * verdict in the body; a refusal's reason read from the answer: answer.ts), or a mail over SMTP.
 * Errors and answers kept are cut of the URL's and the signing secret's text.
 */
import type { Sql } from '../db/connect.ts';
import type { Envelope } from '../events/feed.ts';
import { companyFacts } from '../history/facts.ts';
import { parseRetryAfter } from '../retry/retry-after.ts';
import { readAnswer, readRefusal, TOO_MANY_WAIT_MS } from './channels/answer.ts';
import { mailOf } from './channels/mail.ts';
import { type Known, messageOf, pidsNamed } from './channels/message.ts';
import { CHAT_FORMATS, type ChatFormat } from './channels/render.ts';
import { type ChatRequest, type ChatTarget, chatRequest } from './channels/request.ts';
import type { Lang } from './channels/words.ts';
import { type Mailer, mailAddresses } from './mailer.ts';
import { bodyOf, type Format, signedHeaders } from './payload.ts';
import { withoutSecrets } from './secrets.ts';
import { post, type SendResult } from './send.ts';
import type { Target } from './store.ts';

export type { Target } from './store.ts';

export interface DispatchOptions {
  timeoutMs: number;
  /** DAYBOOK_PUBLIC_URL: messages link to the event there. */
  publicUrl?: string | undefined;
  /** How mail goes (null: DAYBOOK_SMTP_URL is not set). */
  mailer?: Mailer | null;
  /** Aborted when the sender stops waiting (daybook run's wait is over): a send in flight is abandoned. */
  signal?: AbortSignal | undefined;
}

export interface Dispatched extends SendResult {
  ok: boolean;
  /** The vendor said "too fast": wait this long, and count it as no failure of the endpoint. */
  rateLimitedMs: number | null;
  /** The send was abandoned unanswered (`signal`): no verdict of the endpoint, to be sent again. */
  abandoned?: boolean;
}

export const isChat = (f: Format): f is ChatFormat => (CHAT_FORMATS as readonly string[]).includes(f);

export function chatTarget(t: Target, o: DispatchOptions): ChatTarget {
  return {
    format: t.format as ChatFormat,
    url: t.url,
    signingSecret: t.signing_secret,
    lang: t.lang,
    publicUrl: o.publicUrl,
  };
}

/** Sends one chat request and reads the vendor's verdict. */
export async function sendChat(
  t: Target,
  req: ChatRequest,
  eventId: string,
  o: DispatchOptions,
): Promise<Dispatched> {
  const r = await post(req.url, { 'webhook-id': eventId }, req.body, {
    timeoutMs: o.timeoutMs,
    allowPrivate: t.allow_private,
    signal: o.signal,
  });
  const response = withoutSecrets(r.response, t.url, t.signing_secret);
  const error = withoutSecrets(r.error, t.url, t.signing_secret);
  if (r.status === null && o.signal?.aborted)
    return { ...r, response, error, ok: false, rateLimitedMs: null, abandoned: true };
  // "Too many requests" (Teams, and any vendor's gateway): waited out, as the body's "too fast".
  if (r.status === 429)
    return {
      ...r,
      response,
      error,
      ok: false,
      rateLimitedMs: parseRetryAfter(r.retryAfter, new Date()) ?? TOO_MANY_WAIT_MS,
    };
  if (r.status === null) return { ...r, response, error, ok: false, rateLimitedMs: null };
  if (r.status < 200 || r.status >= 300) {
    // Slack says why in a word (404 channel_not_found, 410 channel_is_archived …).
    const reason = readRefusal(t.format, r.status, r.response);
    const why = reason === null ? error : withoutSecrets(reason, t.url, t.signing_secret);
    return { ...r, response, error: why, ok: false, rateLimitedMs: null };
  }
  const verdict = readAnswer(t.format, r.response);
  if (verdict.ok) return { ...r, response, error: null, ok: true, rateLimitedMs: null };
  return {
    ...r,
    response,
    error: withoutSecrets(verdict.reason, t.url, t.signing_secret),
    ok: false,
    rateLimitedMs: verdict.rateLimited ? verdict.waitMs : null,
  };
}

/** What daybook holds of the companies `events` name: their credit codes, names and currencies. */
export async function knownFor(sql: Sql, events: readonly Envelope[]): Promise<Known> {
  const facts = await companyFacts(sql, pidsNamed(events));
  const current = (pid: string) => facts.current.get(pid);
  return {
    uscc: (pid) => current(pid)?.uscc ?? null,
    name: (pid) => current(pid)?.name ?? null,
    currency: (pid, version) =>
      (version === null ? undefined : facts.currency.get(`${pid}|${version}`)) ??
      current(pid)?.currency ??
      null,
  };
}

/** Whether `format` is read by people (chat, Slack among them, mail): its messages group by company. */
export const isHuman = (f: Format): boolean => f !== 'standard';

async function sendMail(
  t: Target,
  events: readonly Envelope[],
  known: Known,
  o: DispatchOptions,
): Promise<Dispatched> {
  const base = { status: null, retryAfter: undefined, rateLimitedMs: null };
  if (!o.mailer)
    return {
      ...base,
      response: null,
      error: 'mail is not configured: set DAYBOOK_SMTP_URL and DAYBOOK_SMTP_FROM',
      latencyMs: 0,
      ok: false,
    };
  const r = await o.mailer(
    mailAddresses(t.url),
    mailOf(messageOf(events, t.lang, known, o.publicUrl)),
    o.signal,
  );
  return {
    ...base,
    response: r.response,
    error: r.error,
    latencyMs: r.latencyMs,
    ok: r.ok,
    ...(!r.ok && o.signal?.aborted ? { abandoned: true } : {}),
  };
}

/**
 * Sends `events` to `t` once, at `at`: for people, one message (one company's events of a cycle,
 * a digest, or an operator event); for a webhook, the one event.
 */
export async function dispatchEvents(
  t: Target,
  events: readonly Envelope[],
  known: Known,
  at: Date,
  o: DispatchOptions,
): Promise<Dispatched> {
  const e = events[0];
  if (!e) throw new Error('nothing to send');
  if (t.format === 'email') return sendMail(t, events, known, o);
  if (isChat(t.format)) return sendChat(t, chatRequest(chatTarget(t, o), events, known, at), e.id, o);
  if (events.length > 1) throw new Error('a webhook delivery sends one event at a time');
  const body = bodyOf(t.format, e);
  const r = await post(new URL(t.url), signedHeaders(e.id, body, t.secrets, at), body, {
    timeoutMs: o.timeoutMs,
    allowPrivate: t.allow_private,
    signal: o.signal,
  });
  const ok = r.status !== null && r.status >= 200 && r.status < 300;
  return {
    ...r,
    response: withoutSecrets(r.response, t.url, null),
    error: withoutSecrets(r.error, t.url, null),
    ok,
    rateLimitedMs: null,
    ...(r.status === null && o.signal?.aborted ? { abandoned: true } : {}),
  };
}

/** What a sample message knows of its example company. */
export const SAMPLE_KNOWN: Known = {
  uscc: () => '91110000600037341L',
  name: () => null,
  currency: () => 'CNY',
};

/** The sample event `subscribe test` sends: a registration status change at an example company. */
export function sampleEvent(lang: Lang, at: Date): Envelope {
  return {
    id: `evt_test_${at.getTime()}`,
    type: 'company.status.changed',
    sequence: 1,
    company_sequence: 1,
    severity: 'high',
    pid: 'SAMPLE0001',
    name: lang === 'zh' ? '示例科技有限公司' : 'Example Technology Co., Ltd.',
    cycle: at.toISOString().slice(0, 10),
    detected_at: at.toISOString(),
    effective_date: null,
    raw_response_id: null,
    data: {
      category: 'status',
      field: 'ENTSTATUS',
      kind: 'modified',
      previous: lang === 'zh' ? '存续' : 'in business',
      current: lang === 'zh' ? '注销' : 'deregistered',
      detail: 'to_bad',
      from_version: 1,
      to_version: 2,
    },
  };
}
