/**
 * Hostile upstream text through every vendor's whole rendering, as a property: strings of line
 * and paragraph separators, bidi and invisible characters, each vendor's markup and mentions,
 * URLs, emoji codes and terminal escapes (and 100 KB of them) as a company's name, its credit
 * code and the values of its changes, in a company's message, a digest, a folded burst and an
 * operator event, rendered for every chat format (one body, and the bodies of a split) and as a
 * mail. Each body is valid JSON within its vendor's size; no upstream text starts a line of its
 * own; no mention, link or markup of the vendor's survives but our own link; no bidi or
 * invisible character survives (the zero-width spaces we put in `:/​/` and `www​.` aside).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chatBodies, chatBody } from '../../src/delivery/channels/bodies.ts';
import { type InertFormat, inert } from '../../src/delivery/channels/inert.ts';
import { mailOf } from '../../src/delivery/channels/mail.ts';
import {
  companyMessage,
  digestMessage,
  foldedMessage,
  type Known,
  type Message,
  messageOf,
} from '../../src/delivery/channels/message.ts';
import { CHAT_FORMATS, type ChatFormat } from '../../src/delivery/channels/render.ts';
import type { Lang } from '../../src/delivery/channels/words.ts';
import { change } from './support/events.ts';
import { slackShown } from './support/vendors.ts';

const PUBLIC = 'https://daybook.example';

/** What follows a separator: a line of its own, were the separator to survive. */
const FORGED = 'FORGED';
const SEPARATORS = ['\n', '\r\n', '\r', '\u2028', '\u2029', '\u0085', '\v', '\f'];
const INVISIBLE = [
  '\u200b',
  '\u200c',
  '\u200d',
  '\u2060',
  '\u2061',
  '\ufeff',
  '\u00ad',
  '\u034f',
  '\u061c',
  '\u180e',
  '\u200e',
  '\u200f',
  '\u202a',
  '\u202b',
  '\u202c',
  '\u202d',
  '\u202e',
  '\u2066',
  '\u2067',
  '\u2068',
  '\u2069',
  '\u3164',
  '\u{e0041}',
];
const MARKUP = [
  // Markdown, DingTalk, WeCom, Feishu, Teams.
  '**bold**',
  '*i*',
  '_i_',
  '~~s~~',
  '`code`',
  '```\nblock\n```',
  '# h1',
  '> quote',
  '- item',
  '1. item',
  '[t](https://evil.example/x)',
  '![i](https://evil.example/i.png)',
  '<a href="https://evil.example">a</a>',
  '<img src=x onerror=alert(1)>',
  '<font color="warning">red</font>',
  '<script>x</script>',
  '<at user_id="all">所有人</at>',
  '<at id=all></at>',
  '<@userid>',
  '@all',
  '@所有人',
  '|a|b|',
  // Slack.
  '<!channel>',
  '<!here>',
  '<!everyone>',
  '<!subteam^S0123>',
  '<@U024BE7LH>',
  '<#C024BE7LR>',
  '<https://evil.example|点我>',
  '<mailto:ops@evil.example|mail>',
  '@here',
  '@channel',
  '@everyone',
  ':red_circle:',
  ':tada:',
  '::skin-tone-2:',
  '&amp;',
  '&lt;!channel&gt;',
  '&#60;',
  // Anywhere.
  'http://x.y',
  'https://evil.example/x?a=1&b=2',
  'www.x.com',
  'WWW.X.COM',
  'evil.com',
  'ops@evil.com',
  'ftp://evil.example',
  '\u001b[31mred\u001b[0m',
  '\u001b]8;;https://evil.example\u0007x\u001b]8;;\u0007',
  '\\',
  '中国银行股份有限公司: 存续 → 吊销',
  '北京字节跳动科技有限公司（分公司）',
];

const piece = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...MARKUP) },
  { weight: 3, arbitrary: fc.constantFrom(...INVISIBLE) },
  { weight: 3, arbitrary: fc.constantFrom(...SEPARATORS).map((s) => `${s}${FORGED}`) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
  { weight: 1, arbitrary: fc.constantFrom(' ', '  ', '\t') },
);
/** A hostile string; it starts with `x`, so nothing of it starts a line but past a separator. */
const hostile = fc.array(piece, { maxLength: 24 }).map((ps) => `x${ps.join('')}`);
/** The same, 100 KB and more. */
const huge = hostile.map((h) => `x${h.repeat(Math.ceil(100_000 / h.length))}`);

/** Every message that shows upstream text, with `h` as all of it. */
function messages(h: string, lang: Lang): { what: string; m: Message }[] {
  const known: Known = { uscc: () => h, name: () => h, currency: () => null };
  const status = change({ name: h }, { previous: h, current: h });
  const address = change(
    { pid: status.pid, name: h, type: 'company.address.changed', severity: 'medium' },
    { field: 'DOM', previous: h, current: h },
  );
  const other = change({ name: h, severity: 'low' }, { previous: h, current: null });
  const companies = [status, other].map((e) => ({
    pid: e.pid,
    name: h,
    changes: [
      { type: e.type, severity: e.severity, field: 'ENTSTATUS', previous: h, current: h },
      { type: 'company.address.changed', severity: 'medium', field: 'DOM', previous: h, current: h },
    ],
  }));
  const digest = change(
    { type: 'digest.daily', pid: null, name: null, severity: 'low' },
    { cycle: '2026-11-10', markdown: '', companies },
  );
  const disabled = change(
    { type: 'endpoint.disabled', pid: null, name: null, severity: 'high' },
    { url: h, reason: h, message: h, keyword: h },
  );
  const nobody: Known = { uscc: () => null, name: () => null, currency: () => null };
  return [
    { what: 'company', m: companyMessage([status, address], lang, known, PUBLIC) },
    { what: 'company, nothing known', m: companyMessage([other], lang, nobody) },
    { what: 'digest', m: digestMessage(digest, lang, known, PUBLIC) },
    { what: 'folded', m: foldedMessage([[status, address], [other], [disabled]], lang, known, PUBLIC) },
    { what: 'operator', m: messageOf([disabled], lang, known, PUBLIC) },
  ];
}

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

/** The text a vendor's body shows, each string of it, and whether it is within the vendor's size. */
function shownOf(format: ChatFormat, body: string): { texts: string[]; within: boolean } {
  const json = JSON.parse(body) as Record<string, unknown>;
  const texts: string[] = [];
  // Every string a person may read: not the card's schema, a link's target or a content type.
  const walk = (v: unknown, key: string) => {
    if (typeof v === 'string') {
      if (!['$schema', 'url', 'href', 'contentType', 'type', 'msgtype', 'msg_type'].includes(key))
        texts.push(v);
    } else if (Array.isArray(v)) for (const x of v) walk(x, key);
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, k);
  };
  walk(json, '');
  const md = json.markdown as { text?: string; content?: string } | undefined;
  const within = {
    dingtalk: () => bytes(String(md?.text)) <= 4096,
    wecom: () => bytes(String(md?.content)) <= 4096,
    feishu: () => bytes(body) <= 20 * 1024,
    teams: () => bytes(body) <= 28 * 1024,
    slack: () => String(json.text).length <= 4000 && body.length < 40_000,
  }[format]();
  return { texts, within };
}

const LINE_BREAKS = /\r\n|[\n\r\v\f\u0085\u2028\u2029]/;
/** Our zero-width spaces, which break a URL: every other invisible character is the upstream's. */
const OURS_INVISIBLE = /[:：]\/\u200b\/|www\u200b\./gi;
const INVISIBLE_LEFT = /[\p{Cf}\p{Zl}\p{Zp}\u115f\u1160\u3164\uffa0]|\u034f|[^\P{Cc}\n]/u;

/** Upstream text started no line, and no bidi or invisible character of it is left. */
function expectNoLineNoInvisible(where: string, text: string) {
  for (const line of text.split(LINE_BREAKS))
    expect(line.trimStart().startsWith(FORGED), `${where}: a line of the upstream's: ${line}`).toBe(false);
  expect(text.replace(OURS_INVISIBLE, ''), where).not.toMatch(INVISIBLE_LEFT);
}

/** Our own links, the only ones a message may hold. */
const OUR_MD_LINK = /\[(查看详情|Open in the console)\]\(https:\/\/daybook\.example\/[^)\s]*\)/g;
const OUR_SLACK_LINK = /<https:\/\/daybook\.example\/[^|>\s]*\|(查看详情|Open in the console)>/g;
const OUR_MARK = /^:(red_circle|large_orange_circle|white_circle): /;

/** No mention, link or markup of `format` left in `text`, our own link aside. */
function expectNoMarkup(format: ChatFormat, where: string, text: string) {
  const anywhere = /:\/\/|\bwww\.|@/i;
  if (format === 'slack') {
    const theirs = text.replace(OUR_SLACK_LINK, '').replace(OUR_MARK, '');
    // No `<…>` (a mention, a link), no bare URL, domain or address Slack links, no emoji code, no
    // formatting but our bold.
    expect(theirs, where).not.toMatch(anywhere);
    expect(theirs, where).not.toMatch(/[<>]|[a-z0-9-]\.[a-z]|:[a-z0-9_+'-]+:|[_~`]/i);
    const shown = slackShown(text);
    expect(shown.lines, where).toHaveLength(text.split('\n').length);
    expect(shown.mentions, where).toEqual([]);
    expect(shown.emoji.length, where).toBeLessThanOrEqual(1);
    for (const l of shown.links) expect(l, where).toMatch(/^https:\/\/daybook\.example\//);
    return;
  }
  const theirs = text.replace(OUR_MD_LINK, '');
  expect(theirs, where).not.toMatch(anywhere);
  // Our severity is in brackets (`[高]`): a bracket alone is no markup, a link or an image is.
  expect(theirs, where).not.toMatch(/[<>`|~\\]|!\[|\]\(/);
}

function renderAll(h: string, lang: Lang) {
  for (const { what, m } of messages(h, lang)) {
    for (const format of CHAT_FORMATS) {
      const bodies = [chatBody(format, m), ...chatBodies(format, m).map((b) => b.body)];
      for (const [i, body] of bodies.entries()) {
        const where = `${format} ${what} #${i} (${lang})`;
        const { texts, within } = shownOf(format, body);
        expect(within, `${where}: over the vendor's size`).toBe(true);
        for (const text of texts) {
          expectNoLineNoInvisible(where, text);
          expectNoMarkup(format, where, text);
        }
      }
    }
    const mail = mailOf(m);
    const where = `mail ${what} (${lang})`;
    for (const text of [mail.subject, mail.text, mail.html]) expectNoLineNoInvisible(where, text);
    expect(mail.subject, where).not.toMatch(/[\n\r]/);
    const ourLink = /(查看详情|Open in the console): https:\/\/daybook\.example\/\S*/g;
    expect(mail.text.replace(ourLink, ''), where).not.toMatch(/:\/\/|\bwww\./i);
    const ourHref = /<a href="https:\/\/daybook\.example\/[^"]*">/g;
    expect(mail.html.replace(ourHref, ''), where).not.toMatch(
      /<(a|at|img|script|font|iframe)\b|@|:\/\/|\bwww\./i,
    );
  }
}

// CPU-bound properties of a fixed size (numRuns): seconds to a minute on an idle machine, several
// times that on a busy one. The timeout is a hang guard, not a deadline.
describe('upstream text is inert in every rendering', { timeout: 15 * 60_000 }, () => {
  it('for every vendor and mail, whatever the upstream sends', () => {
    fc.assert(
      fc.property(hostile, fc.constantFrom<Lang>('zh', 'en'), (h, lang) => renderAll(h, lang)),
      { numRuns: 100 },
    );
  });

  it('and when it sends 100 KB of it', () => {
    fc.assert(
      fc.property(huge, fc.constantFrom<Lang>('zh', 'en'), (h, lang) => renderAll(h, lang)),
      { numRuns: 4 },
    );
  });

  it('one function, with each format its rules', () => {
    const formats: InertFormat[] = [...CHAT_FORMATS, 'mail', 'html'];
    fc.assert(
      fc.property(hostile, fc.constantFrom(...formats), fc.integer({ min: 1, max: 400 }), (h, f, clip) => {
        const out = inert(h, f, clip);
        expectNoLineNoInvisible(f, out);
        if (f === 'slack') expect(out).not.toMatch(/[<>*_~`@:]|&(?!amp;|lt;|gt;)/);
        else if (f === 'html') expect(out).not.toMatch(/[<>"'@]|&(?!amp;|lt;|gt;|quot;|#39;|#64;)/);
        else if (f !== 'mail') expect(out).not.toMatch(/[<>*_~`@[\]#!|\\]/);
        expect(out.replace(OURS_INVISIBLE, '')).not.toMatch(/:\/\/|\bwww\./i);
      }),
      { numRuns: 300 },
    );
    // A Chinese name arrives as it was, in every format.
    for (const f of formats)
      expect(inert('北京字节跳动科技有限公司（分公司）', f)).toBe('北京字节跳动科技有限公司（分公司）');
    expect(inert('甲公司\n:red_circle: *x* <!here> a&b', 'slack')).toBe(
      '甲公司 ：red＿circle： ＊x＊ &lt;!here&gt; a&amp;b',
    );
  });
});
