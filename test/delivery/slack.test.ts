/**
 * Slack through the delivery engine, as the other chat vendors: one message per company and
 * cycle in the subscription's language, with a link to the console when DAYBOOK_PUBLIC_URL is set,
 * a digest with its companies, a burst folded within Slack's size, and upstream text inert (a name
 * holding a newline and mrkdwn does not forge a line, a mention, a link or an emoji). The receiver
 * (support/vendors.ts) reads the mrkdwn as Slack does and answers as Slack's incoming webhooks do;
 * their refusals are read (answer.ts).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readAnswer, readRefusal } from '../../src/delivery/channels/answer.ts';
import { DeliveryEngine, type DeliveryOptions } from '../../src/delivery/engine.ts';
import { addSubscription, type NewSubscription } from '../../src/delivery/store.ts';
import { appendEvents, type NewEvent } from '../../src/events/outbox.ts';
import { createLogger } from '../../src/log/log.ts';
import { parseSchedule } from '../../src/retry/schedule.ts';
import { waitFor } from '../faults/support/processes.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';
import { CHINESE, HOSTILE, STATUS_CHANGE } from './support/events.ts';
import { type Got, type VendorReceiver, vendorReceiver } from './support/vendors.ts';

const TOKEN = 'XXslackHookSecret42';
/** The name: a newline, then what would read as a second, high-severity event. */
const FORGED = '甲公司\n:red_circle: *company.status.changed* 中国银行股份有限公司: 存续 → 吊销';
/** More of what Slack would act on: mentions, links it makes itself, bidi and invisible breaks. */
const MORE =
  '乙公司\u2028<!channel> <!here> @here <@U024BE7LH> <#C024BE7LR> <https://evil.example|点我> http://x.y www.x.com evil.com ops@evil.com \u202eexe.gnp\u202c \u2066x\u2069 a\u200bb `code` _i_ ~s~ &amp; :tada:';
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/;

let t: TestDatabase;
const open: VendorReceiver[] = [];

beforeAll(async () => {
  t = await freshDatabase();
});
afterAll(async () => {
  await t?.drop();
});
afterEach(async () => {
  while (open.length) await open.pop()?.close();
  await t.sql`delete from subscriptions`;
});

const log = createLogger({ level: 'silent' });

function engine(extra: Partial<DeliveryOptions> = {}): DeliveryEngine {
  return new DeliveryEngine(t.sql, log, {
    schedule: parseSchedule('0,50ms,100ms,150ms,200ms,250ms,300ms,350ms,400ms,450ms'),
    timeoutMs: 5000,
    disableAfterMs: 5 * 86_400_000,
    concurrency: 16,
    publicUrl: 'https://daybook.example',
    // Slack's one message a second, in a shorter window.
    rateWindowMs: 100,
    vendorWaitMs: 100,
    ...extra,
  });
}

async function receiver(o: Parameters<typeof vendorReceiver>[1] = {}) {
  const r = await vendorReceiver('slack', { token: TOKEN, ...o });
  open.push(r);
  return r;
}

const subscribe = (s: NewSubscription) => addSubscription(t.sql, { allowPrivate: true, ...s });

let pidSeq = 0;
function changeEvent(name: string, over: Partial<NewEvent> = {}, current = '吊销'): NewEvent {
  pidSeq++;
  return {
    type: 'company.status.changed',
    severity: 'high',
    pid: `SLK${String(pidSeq).padStart(5, '0')}`,
    cycle: '2026-11-10',
    detectedAt: new Date('2026-11-10T03:40:00Z'),
    rawResponseId: null,
    name,
    data: { ...STATUS_CHANGE, current },
    ...over,
  };
}

const write = (events: NewEvent[]) => t.sql.begin((tx) => appendEvents(tx, events));

async function until(e: DeliveryEngine, what: string, done: () => boolean | Promise<boolean>) {
  await waitFor(
    what,
    async () => {
      await e.pass();
      return done();
    },
    60_000,
    20,
  );
}

/** The text we sent, as written (before Slack reads it). */
const sent = (g: Got) => String((JSON.parse(g.body) as { text: string }).text);

/** What every Slack message must show: upstream text inert, the lines we wrote and no more. */
function expectInert(g: Got, link: RegExp | null) {
  const shown = g.shown;
  if (!shown) throw new Error(`not read as a Slack message: ${g.body}`);
  // Exactly one line per line we wrote: no separator from the upstream survived.
  expect(shown.lines, sent(g)).toHaveLength(sent(g).split('\n').length);
  // No mention of anyone, no link but ours, no emoji but our severity's at the start.
  expect(shown.mentions).toEqual([]);
  expect(shown.links).toEqual(link ? [expect.stringMatching(link)] : []);
  expect(shown.emoji).toHaveLength(1);
  expect(sent(g).startsWith(shown.emoji[0] as string)).toBe(true);
  // Formatting only where we put it (the title, the labels, a severity in bold): every ASCII `*`
  // is ours, and no `_`, `~` or backtick is left but in our severity's emoji code.
  const ours = sent(g)
    .replace(/<[^>]*>/g, ' ')
    .replace(/^:[a-z_]+:/, '');
  expect(shown.formatted.every((f) => f.startsWith('*'))).toBe(true);
  expect(shown.formatted).toHaveLength((ours.match(/\*/g) ?? []).length / 2);
  expect(ours).not.toMatch(/[_~`]/);
  expect(g.body).not.toMatch(BIDI);
  expect(sent(g)).not.toMatch(/<[!@#]|https?:\/\/(?!daybook\.example)|www\.|@here|<https:\/\/evil/);
  expect(sent(g).length).toBeLessThanOrEqual(4000);
}

describe('slack', { timeout: 120_000 }, () => {
  it('gets one message per company in Chinese, with its link, and a forged line, mention, link or emoji stays inert', async () => {
    const r = await receiver();
    await subscribe({ url: r.url, format: 'slack', lang: 'zh' });
    const events = [
      changeEvent(FORGED, {}, FORGED),
      changeEvent(MORE, {}, MORE),
      changeEvent(HOSTILE, {}, HOSTILE),
      changeEvent(CHINESE),
    ];
    await write(events);
    const e = engine();
    await until(e, 'four messages', () => r.accepted().length === 4);
    expect(r.got.filter((g) => !g.accepted)).toEqual([]);
    expect(r.got.every((g) => g.reply === 'ok')).toBe(true);
    for (const g of r.accepted()) {
      expectInert(g, /^https:\/\/daybook\.example\/ui\/companies\/SLK\d{5}\?at=2026-11-10#v2$/);
      const lines = g.shown?.lines ?? [];
      // The title, the company, the cycle, the severity, the change, the link.
      expect(lines, g.text).toHaveLength(6);
      expect(lines[0]).toMatch(/^:red_circle: \*\[高\] .+ · 登记状态变更\*$/);
      expect(lines[1]).toMatch(/^\*企业\*: /);
      expect(lines[2]).toBe('*周期*: 2026-11-10');
      expect(lines[3]).toBe('*严重程度*: 高');
      expect(lines[4]).toMatch(/^• 登记状态：存续 → /);
      expect(lines[5]).toBe('查看详情');
    }
    const forged = r.accepted().find((g) => g.text.includes('甲公司'));
    const chinese = r.accepted().find((g) => g.text.includes(CHINESE));
    expect(chinese?.text).toContain('存续 → 吊销');
    // The forged event is no line of its own: it stays on the lines of the name and the value.
    for (const line of forged?.shown?.lines ?? [])
      if (line.includes('中国银行股份有限公司')) expect(line).toMatch(/甲公司 .*中国银行股份有限公司/);
    expect(forged?.shown?.lines.filter((l) => l.includes('中国银行股份有限公司'))).toHaveLength(3);
    expect(forged?.text).not.toMatch(/(^|\n):red_circle: \*company/);
    // A name is clipped (300 characters), however long: the body stays small.
    expect(r.accepted().every((g) => g.body.length < 6000)).toBe(true);
  });

  it('speaks English when asked, links nothing without a public URL, and sends a digest with its companies', async () => {
    const r = await receiver();
    await subscribe({ url: r.url, format: 'slack', lang: 'en' });
    const companies = Array.from({ length: 3 }, (_, i) => ({
      pid: `SLKD${i}`,
      name: i === 0 ? FORGED : `${CHINESE}${i}`,
      changes: [
        {
          type: 'company.status.changed',
          severity: 'high',
          field: 'ENTSTATUS',
          previous: '存续',
          current: i === 0 ? MORE : '注销',
        },
        {
          type: 'company.address.changed',
          severity: 'medium',
          field: 'DOM',
          previous: '北京市海淀区',
          current: '上海市浦东新区',
        },
      ],
    }));
    await write([
      changeEvent(CHINESE),
      {
        type: 'digest.daily',
        severity: 'low',
        pid: null,
        cycle: '2026-11-10',
        detectedAt: new Date('2026-11-10T04:00:00Z'),
        rawResponseId: null,
        data: { cycle: '2026-11-10', markdown: '', companies },
      },
    ]);
    const e = engine({ publicUrl: undefined });
    await until(e, 'two messages', () => r.accepted().length === 2);
    const [one, digest] = r.accepted();
    for (const g of r.accepted()) expectInert(g as Got, null);
    expect(one?.shown?.lines[0]).toMatch(/^:red_circle: \*\[high\] .+ · Status changed\*$/);
    expect(one?.text).toContain('*Severity*: high');
    expect(one?.text).not.toContain('Open in the console');
    // The digest: its title, the cycle, the counts, then each company with its changes under it.
    const lines = digest?.shown?.lines ?? [];
    expect(lines[0]).toMatch(/^:red_circle: \*daybook digest, cycle 2026-11-10\*$/);
    expect(lines).toContain('3 companies changed: 3 high, 3 medium, 0 low.');
    expect(lines.filter((l) => l.startsWith('• *[high]* '))).toHaveLength(3);
    expect(lines.filter((l) => l.startsWith('    ◦ '))).toHaveLength(6);
    expect(lines.filter((l) => l.startsWith('    ◦ [high] Status: 存续 → '))).toHaveLength(3);
    expect(lines.length).toBe(3 + 3 * 3);
  });

  it('folds a burst past the minute Slack takes into messages of at most 4,000 characters, naming every company', async () => {
    const r = await receiver();
    await subscribe({ url: r.url, format: 'slack', lang: 'zh' });
    const names = Array.from({ length: 150 }, (_, i) => `测试${String(i).padStart(3, '0')}号${CHINESE}`);
    await write(names.map((n) => changeEvent(n)));
    const e = engine();
    const named = () => new Set(r.accepted().flatMap((g) => g.text.match(/测试\d{3}号/g) ?? []));
    await until(e, 'all 150 named', () => named().size === 150);
    expect(r.got.filter((g) => !g.accepted)).toEqual([]);
    // Folded (what is left once the minute can take it goes one message per company).
    const folded = r.accepted().filter((g) => g.shown?.lines[0]?.includes('已合并'));
    expect(folded.length).toBeGreaterThanOrEqual(2);
    expect(r.accepted().length).toBeLessThan(150);
    for (const g of r.accepted()) {
      expect(sent(g).length).toBeLessThanOrEqual(4000);
      expectInert(g, /^https:\/\/daybook\.example\/ui\//);
    }
    const [left] = await t.sql<{ n: number }[]>`
      select count(*)::int as n from delivery_queue where state <> 'succeeded'`;
    expect(left?.n).toBe(0);
  });

  it("reads Slack's refusals: the error word kept, 410 channel_is_archived disabling the endpoint, a 429 waited out", async () => {
    const missing = await receiver({ refuse: { status: 404, error: 'channel_not_found' } });
    const archived = await receiver({ refuse: { status: 410, error: 'channel_is_archived' } });
    const busy = await receiver({ tooMany: 1 });
    const subs = {
      missing: (await subscribe({ url: missing.url, format: 'slack' })).subscription.id,
      archived: (await subscribe({ url: archived.url, format: 'slack' })).subscription.id,
      busy: (await subscribe({ url: busy.url, format: 'slack' })).subscription.id,
    };
    await write([changeEvent(CHINESE)]);
    const e = engine({ vendorWaitMs: 60_000 });
    await e.pass();
    const attempt = async (id: number) =>
      (
        await t.sql<{ http_status: number; error: string | null }[]>`
          select http_status, error from webhook_deliveries where subscription_id = ${id} order by id limit 1`
      )[0];
    expect(await attempt(subs.missing)).toEqual({
      http_status: 404,
      error: expect.stringContaining('channel_not_found'),
    });
    expect((await attempt(subs.archived))?.error).toContain('channel_is_archived');
    const state = async (id: number) =>
      (await t.sql<{ state: string }[]>`select state from subscriptions where id = ${id}`)[0]?.state;
    expect(await state(subs.archived)).toBe('disabled');
    expect(await state(subs.missing)).toBe('active');
    // The 429: no attempt counted, the endpoint not failing, and taken once its Retry-After is past.
    expect(busy.got[0]?.status).toBe(429);
    const [q] = await t.sql<{ state: string; attempts: number }[]>`
      select state, attempts from delivery_queue where subscription_id = ${subs.busy}`;
    expect(q).toEqual({ state: 'pending', attempts: 0 });
    await until(
      engine(),
      'Slack takes the message after its Retry-After',
      () => busy.accepted().length === 1,
    );
    // The webhook's token is its secret: never in the attempt log.
    const logged = JSON.stringify(await t.sql`select error, response from webhook_deliveries`);
    expect(logged).not.toContain(TOKEN);
  });

  it('reads the answers of an incoming webhook', () => {
    expect(readAnswer('slack', 'ok')).toEqual({ ok: true });
    expect(readAnswer('slack', '')).toEqual({ ok: true });
    expect(readAnswer('slack', 'no_text')).toMatchObject({ ok: false, rateLimited: false });
    expect(readRefusal('slack', 400, 'invalid_payload')).toMatch(/HTTP 400: invalid_payload \(.+\)/);
    expect(readRefusal('slack', 403, 'action_prohibited')).toContain('action_prohibited');
    expect(readRefusal('slack', 404, 'no_service')).toContain('the webhook is disabled');
    expect(readRefusal('slack', 500, '<html>oops</html>')).toBe('slack refused the message: HTTP 500');
    expect(readRefusal('teams', 400, 'invalid_payload')).toBeNull();
  });
});
