/**
 * The JSON each chat vendor takes, as documented by the vendor: a DingTalk custom robot's and a
 * WeCom group bot's markdown message, a Feishu (Lark) custom bot's rich-text `post`, an Adaptive
 * Card (1.4) in the message a Teams Workflows webhook takes, and a Slack incoming webhook's `text`
 * in mrkdwn. Upstream text is made inert by each vendor's rules (inert.ts). Pure.
 */
import { escapeFor, slackEntities } from './inert.ts';
import type { Message, Part } from './message.ts';
import {
  type Build,
  type ChatFormat,
  type Cut,
  fitAll,
  fitOne,
  itemLine,
  joined,
  markdownBody,
  SIZE_LIMITS,
  subLines,
} from './render.ts';
import { WORDS } from './words.ts';

const dingtalk: Build = (c) => {
  const { title, text } = markdownBody(c);
  return { body: JSON.stringify({ msgtype: 'markdown', markdown: { title, text } }), counted: text };
};

const wecom: Build = (c) => {
  const { text } = markdownBody(c);
  return { body: JSON.stringify({ msgtype: 'markdown', markdown: { content: text } }), counted: text };
};

type FeishuElement = { tag: 'text'; text: string } | { tag: 'a'; text: string; href: string };

const feishu: Build = (c) => {
  const w = WORDS[c.m.lang];
  const esc = escapeFor('feishu');
  const title = joined(c.m.title, esc, c.clip) + (c.part ? w.foldedPart(c.part.i, c.part.of) : '');
  const rows: FeishuElement[][] = [];
  const text = (t: string): FeishuElement[] => [{ tag: 'text', text: t }];
  for (const f of c.m.facts) rows.push(text(`${f.label}: ${joined(f.value, esc, c.clip)}`));
  if (c.m.intro) rows.push(text(c.m.intro));
  for (const x of c.items) {
    rows.push(text(`• ${itemLine(c.m, x, esc, c.clip)}`));
    for (const l of subLines(x, esc, c.clip)) rows.push(text(`    ◦ ${l}`));
  }
  if (c.omitted > 0) rows.push(text(w.leftOut(c.omitted)));
  if (c.m.link) rows.push([{ tag: 'a', text: w.link, href: c.m.link }]);
  const locale = c.m.lang === 'zh' ? 'zh_cn' : 'en_us';
  const body = JSON.stringify({
    msg_type: 'post',
    content: { post: { [locale]: { title, content: rows } } },
  });
  return { body, counted: body };
};

const teams: Build = (c) => {
  const w = WORDS[c.m.lang];
  const esc = escapeFor('teams');
  const title = joined(c.m.title, esc, c.clip) + (c.part ? w.foldedPart(c.part.i, c.part.of) : '');
  const block = (text: string, extra: Record<string, unknown> = {}) => ({
    type: 'TextBlock',
    text,
    wrap: true,
    ...extra,
  });
  const body: unknown[] = [
    block(title, {
      size: 'Medium',
      weight: 'Bolder',
      color: c.m.severity === 'high' ? 'Attention' : 'Default',
    }),
    {
      type: 'FactSet',
      facts: c.m.facts.map((f) => ({ title: f.label, value: joined(f.value, esc, c.clip) })),
    },
  ];
  if (c.m.intro) body.push(block(c.m.intro));
  if (c.items.length > 0)
    body.push(
      block(
        c.items
          .flatMap((x) => [
            `- ${itemLine(c.m, x, esc, c.clip)}`,
            ...subLines(x, esc, c.clip).map((l) => `    - ${l}`),
          ])
          .join('\n'),
      ),
    );
  if (c.omitted > 0) body.push(block(w.leftOut(c.omitted), { isSubtle: true }));
  const card = {
    type: 'AdaptiveCard',
    $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
    version: '1.4',
    body,
    ...(c.m.link ? { actions: [{ type: 'Action.OpenUrl', title: w.link, url: c.m.link }] } : {}),
  };
  const text = JSON.stringify({
    type: 'message',
    attachments: [
      { contentType: 'application/vnd.microsoft.card.adaptive', contentUrl: null, content: card },
    ],
  });
  return { body: text, counted: text };
};

/** The severity as Slack users know it, before the title: our own emoji, the only one a message shows. */
const SLACK_MARK: Record<Message['severity'], string> = {
  high: ':red_circle:',
  medium: ':large_orange_circle:',
  low: ':white_circle:',
};

/** A link of ours as Slack's `<url|text>`: the URL's `&` as Slack requires, and no `<`, `>` or `|` in it. */
function slackLink(url: string, text: string): string {
  const href = url.replace(/&/g, '&amp;').replace(/</g, '%3C').replace(/>/g, '%3E').replace(/\|/g, '%7C');
  return `<${href}|${text}>`;
}

/**
 * A Slack message: one mrkdwn `text`, a line each for the title, the facts, the intro, each item
 * and each line under it, what was left out, and the link. Slack counts the text's characters
 * (SIZE_LIMITS.slack): `counted` is as many bytes as the text has UTF-16 units. Links are not
 * unfurled: our own would show the console's page, and upstream text holds none.
 */
const slack: Build = (c) => {
  const w = WORDS[c.m.lang];
  const esc = escapeFor('slack');
  const title = joined(c.m.title, esc, c.clip) + (c.part ? w.foldedPart(c.part.i, c.part.of) : '');
  const lines = [`${SLACK_MARK[c.m.severity]} *${title}*`];
  for (const f of c.m.facts) lines.push(`*${f.label}*: ${joined(f.value, esc, c.clip)}`);
  if (c.m.intro) lines.push(c.m.intro);
  for (const x of c.items) {
    lines.push(`• ${itemLine(c.m, x, esc, c.clip, (s) => `*${s}*`)}`);
    for (const l of subLines(x, esc, c.clip)) lines.push(`    ◦ ${l}`);
  }
  if (c.omitted > 0) lines.push(w.leftOut(c.omitted));
  if (c.m.link) lines.push(slackLink(c.m.link, w.link));
  const text = lines.join('\n');
  return {
    body: JSON.stringify({ text, mrkdwn: true, unfurl_links: false, unfurl_media: false }),
    counted: 'x'.repeat(text.length),
  };
};

/** Our own text with Slack's reserved characters as entities too (upstream text gets its own rules). */
function slackOurs(m: Message): Message {
  const parts = (ps: readonly Part[]): Part[] =>
    ps.map((p) => ('ours' in p ? { ours: slackEntities(p.ours) } : p));
  return {
    ...m,
    title: parts(m.title),
    facts: m.facts.map((f) => ({ label: slackEntities(f.label), value: parts(f.value) })),
    intro: m.intro === null ? null : slackEntities(m.intro),
    items: m.items.map((x) => ({ ...x, parts: parts(x.parts), sub: x.sub.map(parts) })),
  };
}

const BUILDS: Record<ChatFormat, Build> = { dingtalk, wecom, feishu, teams, slack };

/** A message as a format's builder takes it (Slack: our own text escaped as well). */
const prepared = (format: ChatFormat, m: Message): Message => (format === 'slack' ? slackOurs(m) : m);

/** The body of `m` for `format`, within the vendor's size (a long digest cut, saying how much). */
export function chatBody(format: ChatFormat, m: Message): string {
  return fitOne(prepared(format, m), BUILDS[format], SIZE_LIMITS[format]);
}

/** The bodies of folded events for `format`: as many as the items need, none left out. */
export function chatBodies(format: ChatFormat, m: Message): { body: string; count: number }[] {
  return fitAll(prepared(format, m), BUILDS[format], SIZE_LIMITS[format]);
}

export type { Cut };
