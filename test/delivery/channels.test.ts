/**
 * Chat and mail messages without a database: what each says in Chinese and English, upstream text
 * made inert per format, the vendors' size limits, and signed requests sent to the local vendor
 * receivers (test/delivery/support/vendors.ts), which check the signatures with HMACs of their own
 * and answer as the vendors do.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { readAnswer } from '../../src/delivery/channels/answer.ts';
import { chatBodies, chatBody } from '../../src/delivery/channels/bodies.ts';
import { htmlText, markdownText } from '../../src/delivery/channels/inert.ts';
import { mailOf } from '../../src/delivery/channels/mail.ts';
import { companyMessage, digestMessage, foldedMessage } from '../../src/delivery/channels/message.ts';
import { CHAT_FORMATS } from '../../src/delivery/channels/render.ts';
import { chatRequest, foldedRequests } from '../../src/delivery/channels/request.ts';
import { post } from '../../src/delivery/send.ts';
import type { Envelope } from '../../src/events/feed.ts';
import { humanProblems } from '../support/human.ts';
import { CHINESE, change, HOSTILE, KNOWN, USCC } from './support/events.ts';
import { inert, type VendorReceiver, vendorReceiver } from './support/vendors.ts';

function digest(n: number): Envelope {
  const companies = Array.from({ length: n }, (_, i) => ({
    pid: `PID${String(i).padStart(5, '0')}`,
    name: `${CHINESE}${i}`,
    changes: [
      {
        type: 'company.address.changed',
        severity: 'medium',
        field: 'DOM',
        previous: '北京市海淀区'.repeat(3),
        current: '上海市浦东新区'.repeat(3),
        event_id: `e${i}`,
      },
    ],
  }));
  return change(
    { type: 'digest.daily', pid: null, name: null, severity: 'low' },
    { cycle: '2026-11-10', markdown: '', companies },
  );
}

const bytes = (s: string) => Buffer.byteLength(s);

describe('messages', () => {
  it('says who, what changed from what to what, how severe and which cycle, in Chinese by default and in English', () => {
    const e = change();
    const zh = chatBody('wecom', companyMessage([e], 'zh', KNOWN, 'https://daybook.example'));
    const content = (JSON.parse(zh) as { markdown: { content: string } }).markdown.content;
    expect(content).toContain(CHINESE);
    expect(content).toContain(USCC);
    expect(content).toContain('登记状态：存续 → 注销');
    expect(content).toContain('登记状态变更');
    expect(content).toContain('严重程度**: 高');
    expect(content).toContain('2026-11-10');
    expect(content).toContain(`(https://daybook.example/ui/companies/${e.pid}?at=2026-11-10#v2)`);
    expect(humanProblems(content, { lang: 'zh', quoted: [CHINESE] })).toEqual([]);
    const en = (
      JSON.parse(chatBody('wecom', companyMessage([e], 'en', KNOWN))) as { markdown: { content: string } }
    ).markdown.content;
    expect(en).toContain('Severity**: high');
    expect(en).toContain('Status: 存续 → 注销');
    expect(en).toContain(`(USCC ${USCC})`);
    expect(humanProblems(en, { lang: 'en', quoted: [CHINESE, '存续', '注销'] })).toEqual([]);
    expect(en).not.toContain('https://');
  });

  it('makes a hostile name inert in every format, and keeps a Chinese one as it was', () => {
    const e = change({ name: HOSTILE }, { previous: HOSTILE, current: '@all' });
    // Slack's mrkdwn has rules of its own: slack.test.ts reads its bodies as Slack does.
    for (const f of CHAT_FORMATS.filter((x) => x !== 'slack')) {
      const body = chatBody(f, companyMessage([e], 'zh', KNOWN));
      expect(inert(body), `${f}: ${body}`).toBe(true);
      expect(body).not.toContain('\\u001b');
    }
    const mail = mailOf(companyMessage([e], 'en', KNOWN));
    // Markdown means nothing in a mail: what must not pass is HTML, a mention, a link, an escape.
    expect(mail.html).not.toMatch(/<at\b|<img|<a href="https?:\/\/evil|@all|https?:\/\/evil/);
    expect(mail.html).not.toContain('\u001b');
    expect(mail.html).toContain('&lt;at user_id=&quot;all&quot;&gt;');
    expect(mail.text).not.toMatch(/https?:\/\/evil/);
    expect(mail.text).not.toContain('\u001b');
    expect(mail.html).not.toMatch(/<a href="https:\/\/evil/);
    expect(markdownText(CHINESE)).toBe(CHINESE);
    expect(htmlText(CHINESE)).toBe(CHINESE);
    expect(markdownText('a\nb\u0007c')).toBe('a b c');
  });

  it('keeps a long digest within each vendor limit and says how many items were left out', () => {
    const d = digest(400);
    for (const f of CHAT_FORMATS) {
      const body = chatBody(f, digestMessage(d, 'zh'));
      const json = JSON.parse(body) as Record<string, { text?: string; content?: string }>;
      const counted =
        f === 'dingtalk'
          ? String(json.markdown?.text)
          : f === 'wecom'
            ? String(json.markdown?.content)
            : body;
      // Slack counts the characters of its text (4,000 kept); the others bytes.
      if (f === 'slack') expect([...String(json.text)].length).toBeLessThanOrEqual(4000);
      else
        expect(bytes(counted)).toBeLessThanOrEqual(
          f === 'feishu' ? 20 * 1024 : f === 'teams' ? 28 * 1024 : 4096,
        );
      const shown = (body.match(new RegExp(`${CHINESE}\\d+`, 'g')) ?? []).length;
      expect(shown).toBeGreaterThan(0);
      expect(shown).toBeLessThan(400);
      expect(body).toContain(`另有 ${400 - shown} 项未列出`);
    }
    // A mail carries it whole.
    const mail = mailOf(digestMessage(d, 'zh'));
    expect((mail.text.match(new RegExp(`${CHINESE}\\d+`, 'g')) ?? []).length).toBe(400);
  });

  it('splits folded companies over as many messages as they need, naming every one', () => {
    const events = Array.from({ length: 100 }, (_, i) => change({ name: `${CHINESE}${i}` }));
    for (const f of CHAT_FORMATS) {
      const parts = chatBodies(
        f,
        foldedMessage(
          events.map((e) => [e]),
          'en',
          KNOWN,
        ),
      );
      expect(parts.reduce((n, p) => n + p.count, 0)).toBe(100);
      const bodies = parts.map((p) => p.body);
      const named = bodies.flatMap((b) => b.match(new RegExp(`${CHINESE}\\d+`, 'g')) ?? []);
      expect(new Set(named)).toEqual(new Set(events.map((e) => e.name)));
      if (f === 'dingtalk' || f === 'wecom') {
        expect(bodies.length).toBeGreaterThan(1);
        for (const b of bodies) expect(b).toMatch(/part \d+ of \d+/);
      }
    }
  });
});

describe('vendor answers', () => {
  it('reads a refusal in a 200 body as a failure with its reason, and the too-fast answers as rate limiting', () => {
    expect(readAnswer('feishu', '{"code":0,"msg":"success"}')).toEqual({ ok: true });
    expect(readAnswer('feishu', '{"StatusCode":0}')).toEqual({ ok: true });
    expect(readAnswer('feishu', '{"code":19021,"msg":"sign match fail"}')).toMatchObject({
      ok: false,
      rateLimited: false,
      reason: expect.stringContaining('19021'),
    });
    expect(readAnswer('dingtalk', '{"errcode":310000,"errmsg":"sign not match"}')).toMatchObject({
      ok: false,
      rateLimited: false,
    });
    expect(readAnswer('dingtalk', '{"errcode":130101,"errmsg":"send too fast"}')).toMatchObject({
      ok: false,
      rateLimited: true,
    });
    expect(readAnswer('wecom', '{"errcode":45009,"errmsg":"api freq out of limit"}')).toMatchObject({
      ok: false,
      rateLimited: true,
    });
    expect(readAnswer('wecom', '{"errcode":0,"errmsg":"ok"}')).toEqual({ ok: true });
    expect(readAnswer('wecom', 'not json')).toMatchObject({ ok: false });
    expect(readAnswer('teams', '')).toEqual({ ok: true });
  });
});

describe('signed requests to the vendor receivers', () => {
  const receivers: VendorReceiver[] = [];
  afterAll(async () => {
    for (const r of receivers) await r.close();
  });
  const send = async (u: URL, body: string) => post(u, {}, body, { timeoutMs: 5000, allowPrivate: true });

  it('Feishu and DingTalk take a message signed with the right secret and refuse one signed with another', async () => {
    for (const vendor of ['feishu', 'dingtalk'] as const) {
      const r = await vendorReceiver(vendor, { secret: 'SEC-right', token: 'tok123' });
      receivers.push(r);
      const good = chatRequest(
        { format: vendor, url: r.url, signingSecret: 'SEC-right', lang: 'zh' },
        [change()],
        KNOWN,
        new Date(),
      );
      const a = await send(good.url, good.body);
      expect(a.status).toBe(200);
      expect(readAnswer(vendor, a.response)).toEqual({ ok: true });
      const bad = chatRequest(
        { format: vendor, url: r.url, signingSecret: 'SEC-wrong', lang: 'zh' },
        [change()],
        KNOWN,
        new Date(),
      );
      const b = await send(bad.url, bad.body);
      expect(b.status).toBe(200);
      expect(readAnswer(vendor, b.response)).toMatchObject({
        ok: false,
        rateLimited: false,
        reason: expect.stringMatching(/19021|310000/),
      });
      expect(r.accepted()).toHaveLength(1);
      expect(r.accepted()[0]?.text).toContain(CHINESE);
    }
  });

  it('WeCom takes a message with its key and refuses a wrong key; Teams takes the card; past the limit they say too fast', async () => {
    const w = await vendorReceiver('wecom', { token: 'key-abc', perMinute: 2 });
    const t = await vendorReceiver('teams');
    receivers.push(w, t);
    const target = { format: 'wecom' as const, url: w.url, signingSecret: null, lang: 'en' as const };
    const wrong = chatRequest(
      { ...target, url: w.url.replace('key-abc', 'key-xyz') },
      [change()],
      KNOWN,
      new Date(),
    );
    expect(readAnswer('wecom', (await send(wrong.url, wrong.body)).response)).toMatchObject({
      ok: false,
      rateLimited: false,
    });
    const answers = [];
    for (let i = 0; i < 3; i++) {
      const q = chatRequest(target, [change()], KNOWN, new Date());
      answers.push(readAnswer('wecom', (await send(q.url, q.body)).response));
    }
    expect(answers.map((a) => a.ok)).toEqual([true, true, false]);
    expect(answers[2]).toMatchObject({ rateLimited: true });
    const folded = foldedRequests(
      { format: 'teams', url: t.url, signingSecret: null, lang: 'zh' },
      [[change()], [change()]],
      KNOWN,
      new Date(),
    );
    expect(folded).toHaveLength(1);
    const [f] = folded;
    expect((await send(f?.url as URL, f?.body as string)).status).toBe(202);
    expect(t.accepted()[0]?.text).toContain('2 家企业有变化');
  });
});
