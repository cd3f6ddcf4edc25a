/**
 * Chat and mail subscriptions through the delivery engine, against local receivers written from
 * each vendor's documentation (support/vendors.ts) and an SMTP server (support/smtp.ts): signed
 * messages people can read, a Chinese name intact and a hostile one inert, a refusal in a 200
 * body failing the attempt, a receiver down for a while getting everything after, a burst folded
 * within a vendor's rate limit, mail as text and HTML, and the vendors' secrets kept out of logs,
 * listings and the attempt log.
 */
import { Writable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DeliveryEngine, type DeliveryOptions } from '../../src/delivery/engine.ts';
import { smtpMailer } from '../../src/delivery/mailer.ts';
import { addSubscription, type NewSubscription } from '../../src/delivery/store.ts';
import { appendEvents, type NewEvent } from '../../src/events/outbox.ts';
import { createLogger } from '../../src/log/log.ts';
import { parseSchedule } from '../../src/retry/schedule.ts';
import { waitFor } from '../faults/support/processes.ts';
import { runDaybook } from '../support/cli.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';
import { CHINESE, HOSTILE, STATUS_CHANGE } from './support/events.ts';
import { type SmtpReceiver, smtpReceiver } from './support/smtp.ts';
import { inert, type VendorReceiver, vendorReceiver } from './support/vendors.ts';

const SIGNING = 'SECabc123signing456';
const TOKEN = 'tok9f8e7d6c5b4a';
const FROM = 'daybook <daybook@example.com>';

let t: TestDatabase;
let smtp: SmtpReceiver;
const open: VendorReceiver[] = [];
const logged: string[] = [];

beforeAll(async () => {
  t = await freshDatabase();
  smtp = await smtpReceiver();
});
afterAll(async () => {
  await smtp?.close();
  await t?.drop();
});
afterEach(async () => {
  while (open.length) await open.pop()?.close();
  await t.sql`delete from subscriptions`;
});

const log = createLogger({
  level: 'info',
  destination: new Writable({
    write(chunk, _enc, cb) {
      logged.push(String(chunk));
      cb();
    },
  }),
});

function engine(extra: Partial<DeliveryOptions> = {}): DeliveryEngine {
  return new DeliveryEngine(t.sql, log, {
    schedule: parseSchedule('0,50ms,100ms,150ms,200ms,250ms,300ms,350ms,400ms,450ms'),
    timeoutMs: 5000,
    disableAfterMs: 5 * 86_400_000,
    concurrency: 16,
    publicUrl: 'https://daybook.example',
    // The test's SMTP server offers no STARTTLS: its login goes in the clear, as for a local relay.
    mailer: smtpMailer({ url: smtp.url, from: FROM, allowPlaintextAuth: true }),
    ...extra,
  });
}

async function receiver(
  vendor: Parameters<typeof vendorReceiver>[0],
  o: Parameters<typeof vendorReceiver>[1] = {},
) {
  const r = await vendorReceiver(vendor, { token: TOKEN, ...o });
  open.push(r);
  return r;
}

const subscribe = (s: NewSubscription) => addSubscription(t.sql, { allowPrivate: true, ...s });

let pidSeq = 0;
/** The companies a message names: a Chinese name with its number (messages name companies, not PIDs). */
const NAMED = new RegExp(`${CHINESE}\\d+`, 'g');

/** A status change at a company of its own (a Chinese name gets its company's number). */
function changeEvent(name: string, over: Partial<NewEvent> = {}): NewEvent {
  pidSeq++;
  if (name === CHINESE) name = `${CHINESE}${pidSeq}`;
  return {
    type: 'company.status.changed',
    severity: 'high',
    pid: `CHAT${String(pidSeq).padStart(5, '0')}`,
    cycle: '2026-11-10',
    detectedAt: new Date('2026-11-10T03:40:00Z'),
    rawResponseId: null,
    name,
    data: { ...STATUS_CHANGE, current: name === HOSTILE ? HOSTILE : '注销' },
    ...over,
  };
}

const write = (events: NewEvent[]) => t.sql.begin((tx) => appendEvents(tx, events));

/** Passes until `done`, or fails naming `what`. */
async function until(e: DeliveryEngine, what: string, done: () => boolean | Promise<boolean>) {
  await waitFor(
    what,
    async () => {
      await e.pass();
      return done();
    },
    60_000,
    50,
  );
}

describe('chat channels', { timeout: 120_000 }, () => {
  it('every vendor gets a signed, readable message: the Chinese name intact, the hostile one inert', async () => {
    const feishu = await receiver('feishu', { secret: SIGNING });
    const dingtalk = await receiver('dingtalk', { secret: SIGNING });
    const wecom = await receiver('wecom');
    const teams = await receiver('teams');
    await subscribe({ url: feishu.url, format: 'feishu', signingSecret: SIGNING });
    await subscribe({ url: dingtalk.url, format: 'dingtalk', signingSecret: SIGNING });
    await subscribe({ url: wecom.url, format: 'wecom', lang: 'en' });
    await subscribe({ url: teams.url, format: 'teams' });
    await write([changeEvent(CHINESE), changeEvent(HOSTILE)]);
    const summary = await engine().pass();
    expect(summary.delivered).toBe(8);
    for (const r of [feishu, dingtalk, wecom, teams]) {
      expect(
        r.got.every((g) => g.accepted),
        JSON.stringify(r.got.map((g) => g.answer)),
      ).toBe(true);
      // Two deliveries to one endpoint may run side by side: told apart by what they say.
      const chinese = r.accepted().find((g) => g.text.includes(CHINESE));
      const hostile = r.accepted().find((g) => g.text.includes('evil'));
      expect(r.accepted()).toHaveLength(2);
      expect(chinese?.text).toContain(CHINESE);
      expect(chinese?.text).toContain('存续 → 注销');
      expect(chinese?.text).toContain('2026-11-10');
      expect(chinese?.text).toMatch(/高|high/);
      expect(chinese?.body).toContain('https://daybook.example/ui/companies/CHAT');
      // Our own link to the company is the one link a message may hold.
      const theirs = (hostile?.text ?? '').replace(
        /\[(查看详情|Open in the console)\]\(https:\/\/daybook\.example\/[^)\s]*\)/g,
        '',
      );
      expect(inert(theirs), hostile?.text).toBe(true);
      expect(hostile?.text).toContain('evil');
    }
    expect(wecom.accepted()[0]?.text).toContain('Severity');
  });

  it("counts a refusal in a 200 body as a failed attempt with the vendor's reason, and disables the endpoint as any other", async () => {
    const feishu = await receiver('feishu', { secret: SIGNING });
    const { subscription } = await subscribe({
      url: feishu.url,
      format: 'feishu',
      signingSecret: 'SECwrong-secret-000',
    });
    await write([changeEvent(CHINESE)]);
    const state = async () =>
      (await t.sql<{ state: string }[]>`select state from subscriptions where id = ${subscription.id}`)[0]
        ?.state;
    const e = engine({ disableAfterMs: 1 });
    const first = await e.pass();
    expect(first.delivered).toBe(0);
    expect(first.retrying).toBeGreaterThanOrEqual(1);
    await until(e, 'the endpoint disabled', async () => (await state()) === 'disabled');
    const [attempt] = await t.sql<{ outcome: string; http_status: number; error: string }[]>`
      select outcome, http_status, error from webhook_deliveries where subscription_id = ${subscription.id} order by id`;
    expect(attempt?.http_status).toBe(200);
    expect(attempt?.error).toContain('19021');
    const [disabled] = await t.sql`select data from events where type = 'endpoint.disabled'`;
    expect(disabled).toBeDefined();
    expect(JSON.stringify(disabled)).not.toContain('0b7c-hook-token');
  });

  it('gets everything to a receiver that was down for a while, once it is back', async () => {
    const dingtalk = await receiver('dingtalk', { secret: SIGNING });
    await subscribe({ url: dingtalk.url, format: 'dingtalk', signingSecret: SIGNING });
    dingtalk.down = true;
    const events = [changeEvent(CHINESE), changeEvent(CHINESE), changeEvent(CHINESE)];
    await write(events);
    const e = engine();
    await e.pass();
    await e.pass();
    expect(dingtalk.accepted()).toHaveLength(0);
    expect(dingtalk.got.length).toBeGreaterThan(0);
    dingtalk.down = false;
    await until(e, 'every event after recovery', () => dingtalk.accepted().length >= 3);
    const named = dingtalk.accepted().flatMap((g) => g.text.match(NAMED) ?? []);
    expect(new Set(named)).toEqual(new Set(events.map((x) => x.name)));
  });

  it('folds a burst of 100 events to a bot limited to 20 a minute into at most 20 messages a minute, naming all 100', async () => {
    const windowMs = 1500;
    // Feishu's own limits (5 a second, 100 a minute) are always kept by its receiver.
    for (const vendor of ['dingtalk', 'wecom', 'feishu'] as const) {
      const r = await receiver(vendor, {
        ...(vendor === 'wecom' ? {} : { secret: SIGNING }),
        ...(vendor === 'feishu' ? {} : { perMinute: 20, windowMs }),
      });
      await subscribe({
        url: r.url,
        format: vendor,
        signingSecret: vendor === 'wecom' ? null : SIGNING,
        lang: 'en',
      });
      // Feishu takes 100 a minute one by one: its burst is 150.
      const events = Array.from({ length: vendor === 'feishu' ? 150 : 100 }, () => changeEvent(CHINESE));
      await write(events);
      const e = engine({ rateWindowMs: windowMs, vendorWaitMs: windowMs });
      const pids = new Set(events.map((x) => x.name as string));
      const named = () => new Set(r.accepted().flatMap((g) => g.text.match(NAMED) ?? []));
      await until(e, `all ${pids.size} named (${vendor})`, () => [...pids].every((p) => named().has(p)));
      // The receiver answers "too fast" past 20 in its window: it never had to.
      expect(r.got.filter((g) => !g.accepted).map((g) => g.answer)).toEqual([]);
      expect(r.accepted().length).toBeLessThan(pids.size);
      // DingTalk and WeCom markdown holds fewer events than Feishu's 20 KB post.
      if (vendor !== 'feishu') expect(r.accepted().length).toBeGreaterThan(1);
      const [left] = await t.sql<{ n: number }[]>`
        select count(*)::int as n from delivery_queue where state <> 'succeeded'`;
      expect(left?.n).toBe(0);
      await t.sql`delete from subscriptions`;
    }
  });

  it('spreads a burst that needs more than 20 messages over several windows, never past 20 in one', async () => {
    const windowMs = 1500;
    const r = await receiver('dingtalk', { secret: SIGNING, perMinute: 20, windowMs });
    await subscribe({ url: r.url, format: 'dingtalk', signingSecret: SIGNING });
    // Long values: a few events fill a message, so 100 need more messages than one window allows.
    const scope = '经营范围：技术开发、技术咨询、技术服务。'.repeat(20);
    const events = Array.from({ length: 100 }, () =>
      changeEvent(CHINESE, {
        type: 'company.business_scope.changed',
        severity: 'low',
        data: {
          category: 'business_scope',
          field: 'OPSCOPE',
          kind: 'modified',
          previous: scope,
          current: `${scope}。`,
        },
      }),
    );
    await write(events);
    const e = engine({ rateWindowMs: windowMs, vendorWaitMs: windowMs });
    const pids = events.map((x) => x.name as string);
    const named = () => new Set(r.accepted().flatMap((g) => g.text.match(NAMED) ?? []));
    await until(e, 'all 100 named over several windows', () => pids.every((p) => named().has(p)));
    expect(r.accepted().length).toBeGreaterThan(20);
    expect(r.got.filter((g) => !g.accepted).map((g) => g.answer)).toEqual([]);
  });

  it('waits out a vendor\'s "too fast" answer without failing the endpoint: WeCom 45009, Teams 429', async () => {
    const wecom = await receiver('wecom', { perMinute: 0, windowMs: 60_000 });
    const teams = await receiver('teams', { tooMany: 1 });
    const subs = [
      (await subscribe({ url: wecom.url, format: 'wecom' })).subscription,
      (await subscribe({ url: teams.url, format: 'teams' })).subscription,
    ];
    await write([changeEvent(CHINESE)]);
    await engine({ vendorWaitMs: 60_000 }).pass();
    expect(wecom.got[0]?.answer).toMatchObject({ errcode: 45009 });
    expect(teams.got[0]?.status).toBe(429);
    for (const subscription of subs) {
      const [q] = await t.sql<{ state: string; attempts: number; wait_s: number }[]>`
        select state, attempts, extract(epoch from next_attempt_at - now())::float8 as wait_s
        from delivery_queue where subscription_id = ${subscription.id}`;
      expect(q).toMatchObject({ state: 'pending', attempts: 0 });
      // WeCom: its minute; Teams: the Retry-After it gave (1 s).
      expect(q?.wait_s).toBeLessThanOrEqual(subscription.format === 'teams' ? 1 : 60);
      const [s] = await t.sql<{ failing_since: Date | null; state: string }[]>`
        select failing_since, state from subscriptions where id = ${subscription.id}`;
      expect(s).toEqual({ failing_since: null, state: 'active' });
    }
    // Past its Retry-After, Teams takes the card.
    const e = engine();
    await until(e, 'Teams takes the card after its Retry-After', () => teams.accepted().length === 1);
  });

  it('keeps the URL tokens and the signing secret out of logs and the attempt log', async () => {
    const dingtalk = await receiver('dingtalk', { secret: SIGNING });
    await subscribe({ url: dingtalk.url, format: 'dingtalk', signingSecret: 'SECwrong-secret-000' });
    await write([changeEvent(CHINESE)]);
    await engine().pass();
    const attempts = await t.sql`select error, response from webhook_deliveries`;
    const text = JSON.stringify(attempts) + logged.join('');
    expect(text).toContain('310000');
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain('SECwrong-secret-000');
  });
});

describe('mail', { timeout: 120_000 }, () => {
  it('sends one mail per event and one per digest: text and HTML parts, in Chinese, the digest whole', async () => {
    smtp.mails.length = 0;
    await subscribe({ url: 'mailto:ops@example.com,risk@example.com', format: 'email' });
    const companies = Array.from({ length: 60 }, (_, i) => ({
      pid: `DIG${String(i).padStart(4, '0')}`,
      name: `${CHINESE}${i}`,
      changes: [
        {
          type: 'company.address.changed',
          severity: 'medium',
          field: 'DOM',
          previous: '北京',
          current: '上海',
          event_id: `e${i}`,
        },
      ],
    }));
    await write([
      changeEvent(CHINESE),
      changeEvent(HOSTILE),
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
    const summary = await engine().pass();
    expect(summary.delivered).toBe(3);
    expect(smtp.mails).toHaveLength(3);
    for (const m of smtp.mails) {
      expect(m.from?.value[0]).toMatchObject({ name: 'daybook', address: 'daybook@example.com' });
      expect(m.envelopeTo.sort()).toEqual(['ops@example.com', 'risk@example.com']);
      expect(m.headers.get('content-type')).toMatchObject({ value: 'multipart/alternative' });
      expect(m.text).toBeTruthy();
      expect(m.html).toBeTruthy();
    }
    // Sent in order: the changes by severity, then company; the digest last.
    const digest = smtp.mails.at(-1);
    const one = smtp.mails.find((m) => m.subject?.includes(CHINESE));
    const hostile = smtp.mails.find((m) => m.subject?.includes('evil'));
    expect(one?.subject).toContain(CHINESE);
    expect(one?.text).toContain('存续 → 注销');
    expect(one?.html).toContain(CHINESE);
    expect(String(hostile?.html)).not.toMatch(/<at\b|<img|<a href="https?:\/\/evil|@all/);
    expect(String(hostile?.text)).not.toContain('\u001b');
    expect(digest?.subject).toContain('2026-11-10');
    expect((String(digest?.text).match(NAMED) ?? []).length).toBe(60);
    expect((String(digest?.html).match(NAMED) ?? []).length).toBe(60);
  });
});

describe('subscribe add, list and test', { timeout: 120_000 }, () => {
  it("takes the channel flags, hides the tokens and secrets, and prints the vendor's answer to a test", async () => {
    const env = { DATABASE_URL: t.url, DAYBOOK_LANG: 'en' };
    const dingtalk = await receiver('dingtalk', { secret: SIGNING });
    const add = await runDaybook(
      [
        'subscribe',
        'add',
        dingtalk.url,
        '--format',
        'dingtalk',
        '--signing-secret',
        SIGNING,
        '--allow-private',
        '--json',
      ],
      env,
    );
    expect(add.code, add.stderr).toBe(0);
    const added = JSON.parse(add.stdout) as { id: number; lang: string; format: string; url: string };
    expect(added).toMatchObject({ lang: 'en', format: 'dingtalk' });
    expect(add.stdout).not.toContain(TOKEN);
    expect(add.stdout).not.toContain(SIGNING);
    const list = await runDaybook(['subscribe', 'list'], env);
    const listJson = await runDaybook(['subscribe', 'list', '--json'], env);
    for (const out of [list.stdout, listJson.stdout]) {
      expect(out).toContain('dingtalk');
      expect(out).not.toContain(TOKEN);
      expect(out).not.toContain(SIGNING);
    }
    const test = await runDaybook(['subscribe', 'test', String(added.id)], env);
    expect(test.code, test.stderr).toBe(0);
    expect(test.stdout).toContain('delivered (HTTP 200)');
    expect(test.stdout).toContain('"errcode":0');
    expect(dingtalk.accepted()[0]?.text).toContain('Example Technology');

    const wrong = await runDaybook(
      [
        'subscribe',
        'add',
        dingtalk.url,
        '--format',
        'dingtalk',
        '--signing-secret',
        'SECwrong-secret-000',
        '--allow-private',
        '--json',
      ],
      env,
    );
    const refused = await runDaybook(
      ['subscribe', 'test', String((JSON.parse(wrong.stdout) as { id: number }).id)],
      env,
    );
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('310000');
    expect(refused.stdout + refused.stderr).not.toContain(TOKEN);

    const bad = [
      ['subscribe', 'add', dingtalk.url, '--format', 'wecom', '--signing-secret', SIGNING, '--allow-private'],
      ['subscribe', 'add', dingtalk.url, '--format', 'feishu', '--lang', 'fr', '--allow-private'],
      ['subscribe', 'add', 'mailto:ops@example.com', '--format', 'email'],
      ['subscribe', 'add', 'mailto:not-an-address', '--format', 'email'],
      ['subscribe', 'add', 'mailto:ops@example.com', '--format', 'teams'],
    ];
    for (const args of bad) {
      const r = await runDaybook(args, env);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).not.toContain('    at ');
    }
    const mail = await runDaybook(
      ['subscribe', 'add', 'mailto:ops@example.com,risk@example.com', '--format', 'email', '--lang', 'zh'],
      {
        ...env,
        DAYBOOK_SMTP_URL: smtp.url,
        DAYBOOK_SMTP_FROM: FROM,
      },
    );
    expect(mail.code, mail.stderr).toBe(0);
    // A bad SMTP URL is refused without quoting its password.
    const badSmtp = await runDaybook(['subscribe', 'list'], {
      ...env,
      DAYBOOK_SMTP_URL: 'http://daybook:pw-secret-4242@127.0.0.1:25',
    });
    expect(badSmtp.code).toBe(2);
    expect(badSmtp.stderr).toContain('DAYBOOK_SMTP_URL');
    expect(badSmtp.stderr).not.toContain('pw-secret-4242');
    expect(mail.stdout).toContain('mailto:ops@example.com,risk@example.com (email)');
  });
});
