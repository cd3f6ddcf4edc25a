/**
 * The JSON each chat vendor takes, as documented by the vendor: a DingTalk custom robot's and a
 * WeCom group bot's markdown message, a Feishu (Lark) custom bot's rich-text `post`, and an
 * Adaptive Card (1.4) in the message a Teams Workflows webhook takes. Pure.
 */
import { markdownText } from './inert.ts';
import type { Message } from './message.ts';
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
  const title = joined(c.m.title, markdownText, c.clip) + (c.part ? w.foldedPart(c.part.i, c.part.of) : '');
  const rows: FeishuElement[][] = [];
  const text = (t: string): FeishuElement[] => [{ tag: 'text', text: t }];
  for (const f of c.m.facts) rows.push(text(`${f.label}: ${joined(f.value, markdownText, c.clip)}`));
  if (c.m.intro) rows.push(text(c.m.intro));
  for (const x of c.items) {
    rows.push(text(`• ${itemLine(c.m, x, markdownText, c.clip)}`));
    for (const l of subLines(x, markdownText, c.clip)) rows.push(text(`    ◦ ${l}`));
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
  const title = joined(c.m.title, markdownText, c.clip) + (c.part ? w.foldedPart(c.part.i, c.part.of) : '');
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
      facts: c.m.facts.map((f) => ({ title: f.label, value: joined(f.value, markdownText, c.clip) })),
    },
  ];
  if (c.m.intro) body.push(block(c.m.intro));
  if (c.items.length > 0)
    body.push(
      block(
        c.items
          .flatMap((x) => [
            `- ${itemLine(c.m, x, markdownText, c.clip)}`,
            ...subLines(x, markdownText, c.clip).map((l) => `    - ${l}`),
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

const BUILDS: Record<ChatFormat, Build> = { dingtalk, wecom, feishu, teams };

/** The body of `m` for `format`, within the vendor's size (a long digest cut, saying how much). */
export function chatBody(format: ChatFormat, m: Message): string {
  return fitOne(m, BUILDS[format], SIZE_LIMITS[format]);
}

/** The bodies of folded events for `format`: as many as the items need, none left out. */
export function chatBodies(format: ChatFormat, m: Message): { body: string; count: number }[] {
  return fitAll(m, BUILDS[format], SIZE_LIMITS[format]);
}

export type { Cut };
