/**
 * Local stand-ins for the chat vendors' webhooks, written from the vendors' documentation and
 * sharing no code with daybook: each checks the signature with an HMAC computed here (WebCrypto,
 * not node:crypto's createHmac that daybook uses), checks the body's shape and the vendor's size
 * limit, and answers as the vendor does: HTTP 200 with the verdict in the body (Feishu `code`,
 * DingTalk and WeCom `errcode`), a refusal for a bad signature or key, and the vendor's
 * "sending too fast" answer past its per-minute limit. Teams (a Workflows webhook) answers 202.
 * Slack (an incoming webhook) answers 200 `ok`, or an error status with one word in the body
 * (400 `invalid_payload` / `no_text`, 404 `no_service` …), and shows the message as Slack would
 * (slackShown): mrkdwn links, mentions, emoji codes, bare URLs it links, and entities decoded.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Vendor = 'feishu' | 'dingtalk' | 'wecom' | 'teams';
/** Every vendor a receiver stands in for: Slack's as well. */
export type AnyVendor = Vendor | 'slack';

export interface Got {
  at: number;
  url: string;
  body: string;
  json: Record<string, unknown>;
  /** The words a person reads, as the vendor would show them (markdown, post text, card text). */
  text: string;
  /** What the receiver answered: its HTTP status and body. */
  status: number;
  answer: Record<string, unknown> | null;
  /** Slack: the answer's body as sent (`ok`, or the error word). */
  reply?: string;
  /** Slack: what Slack would make of the message (slackShown). */
  shown?: SlackShown;
  accepted: boolean;
}

export interface VendorReceiver {
  url: string;
  got: Got[];
  /** Only the messages the vendor took. */
  accepted: () => Got[];
  /** While true the receiver answers 503 (it is down). */
  down: boolean;
  close: () => Promise<void>;
}

const enc = new TextEncoder();

/** Base64 HMAC-SHA256 of `message` keyed by `key`, by WebCrypto. */
async function hmacBase64(key: string, message: string): Promise<string> {
  const k = await crypto.subtle.importKey('raw', enc.encode(key), { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
  ]);
  return Buffer.from(await crypto.subtle.sign('HMAC', k, enc.encode(message))).toString('base64');
}

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const withinAnHour = (ms: number) => Math.abs(Date.now() - ms) < 3_600_000;

/** Feishu: the answer to a body, and the text it shows. */
async function feishu(o: Options, json: Record<string, unknown>) {
  if (o.secret !== undefined) {
    const ts = json.timestamp;
    const ok =
      typeof ts === 'string' &&
      /^\d+$/.test(ts) &&
      withinAnHour(Number(ts) * 1000) &&
      json.sign === (await hmacBase64(`${ts}\n${o.secret}`, ''));
    if (!ok)
      return {
        answer: {
          code: 19021,
          data: {},
          msg: 'sign match fail or timestamp is not within one hour from current time',
        },
      };
  }
  const post = isObj(json.content) && isObj(json.content.post) ? json.content.post : null;
  const locale = post ? (post.zh_cn ?? post.en_us) : null;
  const good =
    json.msg_type === 'post' &&
    isObj(locale) &&
    typeof locale.title === 'string' &&
    Array.isArray(locale.content) &&
    locale.content.every(
      (row) =>
        Array.isArray(row) &&
        row.every((el) => isObj(el) && (el.tag === 'text' || el.tag === 'a') && typeof el.text === 'string'),
    );
  if (!good) return { answer: { code: 9499, data: {}, msg: 'Bad Request' } };
  const l = locale as { title: string; content: { tag: string; text: string; href?: string }[][] };
  const text = [l.title, ...l.content.map((row) => row.map((el) => el.text).join(''))].join('\n');
  return { answer: { StatusCode: 0, StatusMessage: 'success', code: 0, data: {}, msg: 'success' }, text };
}

async function dingtalk(o: Options, json: Record<string, unknown>, url: URL) {
  if (url.searchParams.get('access_token') !== o.token)
    return { answer: { errcode: 300001, errmsg: 'token is not exist' } };
  if (o.secret !== undefined) {
    const ts = url.searchParams.get('timestamp') ?? '';
    // The query is decoded once by URLSearchParams: what is left is the base64 the robot signed.
    const ok =
      /^\d+$/.test(ts) &&
      withinAnHour(Number(ts)) &&
      url.searchParams.get('sign') === (await hmacBase64(o.secret, `${ts}\n${o.secret}`));
    if (!ok)
      return {
        answer: {
          errcode: 310000,
          errmsg: 'sign not match, more: [https://ding-doc.dingtalk.com/doc#/serverapi2/qf2nxq]',
        },
      };
  }
  const md = isObj(json.markdown) ? json.markdown : null;
  if (json.msgtype !== 'markdown' || !md || typeof md.title !== 'string' || typeof md.text !== 'string')
    return { answer: { errcode: 40035, errmsg: '缺少参数 json' } };
  if (Buffer.byteLength(md.text) > 4096)
    return { answer: { errcode: 460101, errmsg: 'message too long, exceed 4096 bytes' } };
  return { answer: { errcode: 0, errmsg: 'ok' }, text: `${md.title}\n${md.text}` };
}

async function wecom(o: Options, json: Record<string, unknown>, url: URL) {
  if (url.searchParams.get('key') !== o.token)
    return { answer: { errcode: 93000, errmsg: 'invalid webhook url' } };
  const md = isObj(json.markdown) ? json.markdown : null;
  if (json.msgtype !== 'markdown' || !md || typeof md.content !== 'string')
    return { answer: { errcode: 40008, errmsg: 'invalid message type' } };
  if (Buffer.byteLength(md.content) > 4096)
    return { answer: { errcode: 40058, errmsg: 'markdown.content exceed max length 4096' } };
  return { answer: { errcode: 0, errmsg: 'ok' }, text: md.content };
}

function cardText(v: unknown): string {
  if (Array.isArray(v)) return v.map(cardText).filter(Boolean).join('\n');
  if (!isObj(v)) return '';
  if (v.type === 'TextBlock') return String(v.text);
  if (v.type === 'FactSet')
    return (v.facts as { title: string; value: string }[]).map((f) => `${f.title}: ${f.value}`).join('\n');
  return [cardText(v.body), cardText(v.actions)].filter(Boolean).join('\n');
}

function teams(json: Record<string, unknown>, size: number) {
  const a = Array.isArray(json.attachments) ? json.attachments[0] : null;
  const card = isObj(a) ? a.content : null;
  const good =
    json.type === 'message' &&
    isObj(a) &&
    a.contentType === 'application/vnd.microsoft.card.adaptive' &&
    isObj(card) &&
    card.type === 'AdaptiveCard' &&
    Number(card.version) >= 1.4 &&
    Array.isArray(card.body);
  if (!good || size > 28 * 1024) return { status: 400, answer: { error: { code: 'InvalidRequestContent' } } };
  return { status: 202, answer: null, text: cardText(card.body) };
}

/** A Slack message as Slack shows it: what the mrkdwn makes of the text a sender wrote. */
export interface SlackShown {
  /** The lines a person reads: links as their labels, mentions as `@here` …, entities decoded. */
  lines: string[];
  /** Every link: `<url|label>` and `<url>` written, and bare URLs and domains Slack links itself. */
  links: string[];
  /** Every mention: `<!here>`, `<!channel>`, `<!everyone>`, `<!subteam^…>`, `<@U…>`, `<#C…>`. */
  mentions: string[];
  /** Every `:emoji:` code Slack would show as an emoji. */
  emoji: string[];
  /** Every span Slack formats: `*bold*`, `_italic_`, `~strike~`, `` `code` ``. */
  formatted: string[];
}

// A bare URL or domain Slack links by itself (the auto-linking its `verbatim: false` default does).
const AUTO_LINK =
  /\b(?:https?|ftp|mailto):\/*[^\s<>]+|\bwww\.[^\s<>]+|\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}\b|[\w.+-]+@[\w-]+\.[\w.-]+/gi;

/** What Slack makes of mrkdwn text. */
export function slackShown(mrkdwn: string): SlackShown {
  const links: string[] = [];
  const mentions: string[] = [];
  const emoji: string[] = [];
  const formatted: string[] = [];
  // What `<…>` holds is a link or a mention, not text: no emoji or formatting inside.
  const outside = mrkdwn.replace(/<[^>]*>/g, ' ');
  for (const m of outside.matchAll(/:([a-z0-9_+'-]+):/g)) emoji.push(m[0]);
  for (const m of outside.matchAll(/(?:^|[\s([{])([*_~`])(?=\S)([^\n]*?\S)\1(?=$|[\s)\]}.,:;!?'"])/gm))
    formatted.push(m[0].trim());
  // Any line or paragraph separator breaks the line where a client shows it.
  const shownLines = mrkdwn.split(/\r\n|[\n\r\v\f\u0085\u2028\u2029]/).map((line) => {
    // Bare URLs and domains in the text itself, outside `<…>` (which Slack reads as markup).
    for (const m of line.replace(/<[^>]*>/g, ' ').matchAll(AUTO_LINK)) links.push(m[0]);
    return line
      .replace(/<([^>|]*)(?:\|([^>]*))?>/g, (_, target: string, label: string | undefined) => {
        if (target.startsWith('!')) {
          mentions.push(target);
          const name = target.slice(1).split('^')[0] ?? '';
          return label ?? `@${name}`;
        }
        if (target.startsWith('@') || target.startsWith('#')) {
          mentions.push(target);
          return label ?? target;
        }
        links.push(target);
        return label ?? target;
      })
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&');
  });
  return { lines: shownLines, links, mentions, emoji, formatted };
}

/** Slack: an incoming webhook's answer to a body, and the text it shows. */
function slack(o: Options, body: string, url: URL) {
  const fail = (status: number, word: string) => ({ status, answer: null, reply: word });
  if (o.refuse) return fail(o.refuse.status, o.refuse.error);
  if (url.pathname !== `/services/T0DAYBOOK/B0DAYBOOK/${o.token ?? ''}`) return fail(404, 'no_service');
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return fail(400, 'invalid_payload');
  }
  if (!isObj(json)) return fail(400, 'invalid_payload');
  const blocks = Array.isArray(json.blocks) ? json.blocks : null;
  if (json.blocks !== undefined && !blocks) return fail(400, 'invalid_blocks');
  const text = typeof json.text === 'string' ? json.text : null;
  if (json.text !== undefined && text === null) return fail(400, 'invalid_payload');
  if (!text && !blocks?.length) return fail(400, 'no_text');
  // Slack cuts text past 40,000 characters: the receiver refuses it, so a test sees it.
  if ((text ?? '').length > 40_000) return fail(400, 'msg_too_long');
  // With blocks, Slack shows the blocks (the text is the notification's); without, the text.
  const shownText = blocks ? blocks.map(blockText).filter(Boolean).join('\n') : (text ?? '');
  // `mrkdwn: false` turns formatting off; links, mentions and entities are read all the same.
  const shown = slackShown(shownText);
  if (json.mrkdwn === false) shown.formatted = [];
  return { status: 200, answer: null, reply: 'ok', text: shown.lines.join('\n'), shown };
}

/** The mrkdwn of a block: a header's, a section's text and fields, a context's elements. */
function blockText(b: unknown): string {
  if (!isObj(b)) return '';
  const t = (x: unknown) => (isObj(x) && typeof x.text === 'string' ? x.text : '');
  if (b.type === 'header') return t(b.text);
  if (b.type === 'section')
    return [t(b.text), ...(Array.isArray(b.fields) ? b.fields.map(t) : [])].filter(Boolean).join('\n');
  if (b.type === 'context') return (Array.isArray(b.elements) ? b.elements.map(t) : []).join(' ');
  return '';
}

export interface Options {
  secret?: string;
  /** The access_token (DingTalk) or key (WeCom) the URL must carry. */
  token?: string;
  /** Messages a minute before the vendor says "too fast" (DingTalk and WeCom: 20). */
  perMinute?: number;
  /** The minute, shorter for a test (the receiver counts the messages of the last `windowMs`). */
  windowMs?: number;
  /** Answers this many first requests 429 Too Many Requests with `Retry-After: 1`. */
  tooMany?: number;
  /** Slack: answers every request with this error status and word (404 `channel_not_found` …). */
  refuse?: { status: number; error: string };
}

/** A receiver for `vendor` on loopback. */
export async function vendorReceiver(vendor: AnyVendor, o: Options = {}): Promise<VendorReceiver> {
  const got: Got[] = [];
  const state = { down: false };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const url = new URL(req.url ?? '/', 'http://receiver');
        if (state.down) {
          got.push({
            at: Date.now(),
            url: req.url ?? '',
            body,
            json: {},
            text: '',
            status: 503,
            answer: null,
            accepted: false,
          });
          res.writeHead(503).end('down');
          return;
        }
        if (got.length < (o.tooMany ?? 0)) {
          got.push({
            at: Date.now(),
            url: req.url ?? '',
            body,
            json: {},
            text: '',
            status: 429,
            answer: null,
            accepted: false,
          });
          res.writeHead(429, { 'retry-after': '1' }).end('too many requests');
          return;
        }
        let json: Record<string, unknown> = {};
        try {
          json = JSON.parse(body) as Record<string, unknown>;
        } catch {}
        const within = (ms: number) => got.filter((g) => g.accepted && g.at > Date.now() - ms).length;
        const recent = within(o.windowMs ?? 60_000);
        let r: {
          status?: number;
          answer: Record<string, unknown> | null;
          text?: string;
          reply?: string;
          shown?: SlackShown;
        };
        // A Feishu custom bot takes 5 messages a second and 100 a minute, always.
        if (vendor === 'feishu' && (within(1000) >= 5 || within(60_000) >= 100))
          r = { answer: { code: 11232, data: {}, msg: 'frequency limited' } };
        else if (o.perMinute !== undefined && recent >= o.perMinute)
          r =
            vendor === 'dingtalk'
              ? { answer: { errcode: 130101, errmsg: 'send too fast, exceed 20 times per minute' } }
              : { answer: { errcode: 45009, errmsg: 'api freq out of limit' } };
        else if (vendor === 'feishu') r = await feishu(o, json);
        else if (vendor === 'dingtalk') r = await dingtalk(o, json, url);
        else if (vendor === 'wecom') r = await wecom(o, json, url);
        else if (vendor === 'slack') r = slack(o, body, url);
        else r = teams(json, Buffer.byteLength(body));
        const accepted = r.text !== undefined;
        got.push({
          at: Date.now(),
          url: req.url ?? '',
          body,
          json,
          text: r.text ?? '',
          status: r.status ?? 200,
          answer: r.answer,
          ...(r.reply !== undefined ? { reply: r.reply } : {}),
          ...(r.shown ? { shown: r.shown } : {}),
          accepted,
        });
        if (r.reply !== undefined) {
          res.writeHead(r.status ?? 200, { 'content-type': 'text/html' });
          res.end(r.reply);
          return;
        }
        res.writeHead(r.status ?? 200, { 'content-type': 'application/json' });
        res.end(r.answer ? JSON.stringify(r.answer) : '');
      })();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const path = {
    feishu: '/open-apis/bot/v2/hook/0b7c-hook-token',
    dingtalk: `/robot/send?access_token=${o.token ?? ''}`,
    wecom: `/cgi-bin/webhook/send?key=${o.token ?? ''}`,
    teams: '/workflows/abc/triggers/manual/paths/invoke?sig=teams-sig-secret',
    slack: `/services/T0DAYBOOK/B0DAYBOOK/${o.token ?? ''}`,
  }[vendor];
  return {
    url: `http://127.0.0.1:${port}${path}`,
    got,
    accepted: () => got.filter((g) => g.accepted),
    get down() {
      return state.down;
    },
    set down(v: boolean) {
      state.down = v;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** Whether `text` shows upstream text inert: no markup, mention, link, image or escape left. */
export function inert(text: string): boolean {
  return (
    !text.includes('\u001b') &&
    !/@all|<at\b|<a\b|<img|<script|!\[|\]\(|\*\*evil|https?:\/\/evil|www\.evil/i.test(text)
  );
}
