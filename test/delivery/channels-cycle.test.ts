/**
 * A real cycle against the simulator reaches every channel: Feishu, DingTalk, WeCom, Teams (local
 * receivers written from the vendors' documentation) and mail (an SMTP server).
 *
 * Three watched companies change in the cycle, one of them renamed. Each channel gets one
 * message per company (at most three) and one digest, in the order severity then company; each
 * message names the company and its 统一社会信用代码, links to its page in the console, and reads
 * in words (no field code, no token, no hex id, no amount without unit) in Chinese and English.
 *
 * The subscriptions are made by the documentation's own setup commands (the "Chat and mail"
 * sections of docs/channels.md, where the README's moved), run as written: only the vendor's host
 * becomes the receiver's, and the placeholders the test's token and secret. `daybook deliver` then delivers the cycle: every change and the digest reach
 * every channel, signed where the vendor signs, within the vendor's size and rate, each event
 * once. Two receivers are down at first (DingTalk, which is rate limited, and Teams, which is
 * not) and get everything once they are back.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Envelope, readEvents } from '../../src/events/feed.ts';
import type { RunningSimulator } from '../../src/sim/server.ts';
import { keywordKey } from '../../src/watch/keyword.ts';
import { waitFor } from '../faults/support/processes.ts';
import { runDaybook } from '../support/cli.ts';
import { type CliSim, cliAgainstSim } from '../support/cli-sim.ts';
import type { TestDatabase } from '../support/db.ts';
import { humanProblems } from '../support/human.ts';
import { runCyclesInline } from '../support/inline.ts';
import { fencedUnder, shellWords } from '../support/markdown.ts';
import { UNTHROTTLED } from '../support/sim.ts';
import { type SmtpReceiver, smtpReceiver } from './support/smtp.ts';
import { type AnyVendor, type VendorReceiver, vendorReceiver } from './support/vendors.ts';

/** The first cycle from this one whose refresh renames a company and changes at least two others. */
const FROM = '2026-11-10';
const SIGNING = 'SECcycle-signing-0042';
const TOKEN = 'cycle-token-31415926';

/** The heading of each channel's setup in docs/channels.md. */
const SECTIONS: Record<AnyVendor | 'email', string> = {
  feishu: 'Feishu (Lark)',
  dingtalk: 'DingTalk',
  wecom: 'WeCom (企业微信)',
  teams: 'Microsoft Teams',
  slack: 'Slack',
  email: 'Email',
};

/** The `daybook subscribe add` commands of a channel in docs/channels.md, as words (without `daybook`). */
function documentedCommands(channel: keyof typeof SECTIONS): string[][] {
  const doc = readFileSync(new URL('../../docs/channels.md', import.meta.url), 'utf8');
  const lines = fencedUnder(doc, SECTIONS[channel]).filter((l) => l.startsWith('daybook subscribe add '));
  expect(lines.length, `docs/channels.md's ${SECTIONS[channel]} section gives its command`).toBeGreaterThan(
    0,
  );
  return lines.map((l) => shellWords(l).slice(1));
}

/** A documented command made to reach `receiver`: the vendor's origin becomes the receiver's. */
function aimed(words: string[], receiver: VendorReceiver): string[] {
  const local = new URL(receiver.url);
  return words.map((w, i) => {
    if (i !== 2) return w === '<secret>' || w === 'SEC…' ? SIGNING : w;
    if (!/^https:\/\//.test(w)) return receiver.url;
    const u = new URL(w.replace(/<token>|<key>/g, TOKEN));
    if (u.host === 'hooks.slack.com') return receiver.url;
    return `${local.origin}${u.pathname}${u.search}`;
  });
}

describe('a real cycle reaches every channel', { timeout: 300_000 }, () => {
  let dbSim: CliSim;
  let t: TestDatabase;
  let sim: RunningSimulator;
  let smtp: SmtpReceiver;
  const receivers = {} as Record<AnyVendor, VendorReceiver>;
  beforeAll(async () => {
    dbSim = await cliAgainstSim({ enterprises: 200, rateLimits: UNTHROTTLED });
    ({ t, sim } = dbSim);
    smtp = await smtpReceiver();
    receivers.feishu = await vendorReceiver('feishu', { secret: SIGNING });
    receivers.dingtalk = await vendorReceiver('dingtalk', { secret: SIGNING, token: TOKEN, perMinute: 20 });
    receivers.wecom = await vendorReceiver('wecom', { token: TOKEN, perMinute: 20 });
    receivers.teams = await vendorReceiver('teams');
    receivers.slack = await vendorReceiver('slack');
  });
  afterAll(async () => {
    for (const r of Object.values(receivers)) await r?.close();
    await smtp?.close();
    await dbSim?.close();
  });

  it("delivers one message per changed company and the digest to each channel docs/channels.md sets up, signed, once, in words, a receiver's downtime included", async () => {
    // Three companies that change in the second cycle (one of them renamed), and three that do not.
    const world = sim.sim.world();
    let CYCLES: string[] = [];
    let changed: string[] = [];
    for (let d = 0; d < 120 && changed.length === 0; d++) {
      const day = new Date(Date.parse(`${FROM}T00:00:00Z`) + (d + 1) * 86_400_000).toISOString().slice(0, 10);
      const changes = world.changesIn(day);
      const rename = changes.find((c) => c.fields.includes('ENTNAME'));
      const others = changes.filter((c) => c !== rename && !c.fields.includes('ENTNAME'));
      if (rename && others.length >= 2) {
        CYCLES = [new Date(Date.parse(`${day}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10), day];
        changed = [rename.pid, ...others.slice(0, 2).map((c) => c.pid)];
      }
    }
    expect(changed, 'a cycle with a rename and two other changes').toHaveLength(3);
    world.at(CYCLES[0] as string);
    const moving = new Set(world.changesIn(CYCLES[1] as string).map((c) => c.pid));
    const watched = [
      ...changed.map((pid) => world.byPid(pid)),
      ...world
        .all()
        .filter((e) => !moving.has(e.PID))
        .slice(0, 3),
    ].filter((e) => e !== undefined);
    await t.sql`insert into watchlist ${t.sql(watched.map((e) => ({ keyword: e.ENTNAME, keyword_key: keywordKey(e.ENTNAME) })))}`;
    await runCyclesInline(t, sim, CYCLES.slice(0, 1));
    const env = {
      ...dbSim.env,
      DAYBOOK_SMTP_URL: smtp.url,
      DAYBOOK_SMTP_FROM: 'daybook <daybook@example.com>',
      // The test's SMTP server offers no STARTTLS: its login goes in the clear, as to a local relay.
      DAYBOOK_SMTP_ALLOW_PLAINTEXT_AUTH: 'true',
      DAYBOOK_PUBLIC_URL: 'https://daybook.example',
      // Retries 5 s apart: the first pass ends long before the schedule does.
      DAYBOOK_WEBHOOK_SCHEDULE: '0,5s,5s,5s,5s,5s,5s,5s,5s,5s',
    };
    const subscribe = async (args: string[]) => {
      const r = await runDaybook([...args, '--allow-private'], env);
      expect(r.code, `daybook ${args.join(' ')}: ${r.stderr}`).toBe(0);
      return Number(/subscription (\d+)/i.exec(r.stdout)?.[1] ?? Number.NaN);
    };
    const subs = new Map<number, { channel: string; digest: boolean }>();
    for (const channel of Object.keys(SECTIONS) as (keyof typeof SECTIONS)[])
      for (const words of documentedCommands(channel)) {
        const args = channel === 'email' ? words : aimed(words, receivers[channel]);
        subs.set(await subscribe(args), { channel, digest: words.includes('--digest') });
      }
    const [{ after } = { after: 0 }] = await t.sql<{ after: number }[]>`
      select coalesce(max(seq), 0)::int as after from events`;

    // The second cycle, with changes; DingTalk and Teams are down for the first delivery pass.
    await runCyclesInline(t, sim, CYCLES.slice(1));
    receivers.dingtalk.down = true;
    receivers.teams.down = true;
    const first = await runDaybook(['deliver', '--json'], env);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout).retrying).toBeGreaterThan(0);
    expect(receivers.dingtalk.accepted()).toHaveLength(0);
    expect(receivers.teams.accepted()).toHaveLength(0);
    receivers.dingtalk.down = false;
    receivers.teams.down = false;
    const left = async () =>
      (
        await t.sql<{ n: number }[]>`select count(*)::int as n from delivery_queue where state <> 'succeeded'`
      )[0]?.n;
    let last = '';
    await waitFor(
      'every delivery succeeded',
      async () => {
        const r = await runDaybook(['deliver', '--json'], env);
        expect(r.code, r.stderr).toBe(0);
        last = r.stderr;
        return (await left()) === 0;
      },
      120_000,
      500,
    );

    const events = await readEvents(t.sql, { after, limit: 100_000 });
    const changes = events.filter((e) => e.cycle === CYCLES[1] && /\.changed$/.test(e.type));
    const [digest] = events.filter((e) => e.type === 'digest.daily' && e.cycle === CYCLES[1]) as Envelope[];
    expect(new Set(changes.map((e) => e.pid))).toEqual(new Set(changed));
    expect(changes.some((e) => e.data.field === 'ENTNAME')).toBe(true);
    expect(digest).toBeDefined();
    // What people are sent by default: the companies' changes and the digest (no operator events).
    expect(events.some((e) => e.type === 'cycle.completed')).toBe(true);
    const taken = events.filter(
      (e) =>
        e.type === 'digest.daily' ||
        (e.type.startsWith('company.') &&
          !['company.first_seen', 'company.stale_answer.ignored'].includes(e.type)),
    );
    // The registry's own words, which a message quotes as they are.
    const uscc = new Map(
      (
        await t.sql<{ pid: string; uncid: string }[]>`
          select pid, uncid from enterprise_versions where is_current and pid = any(${changed}::text[])`
      ).map((r) => [r.pid, r.uncid]),
    );
    const quoted = [
      ...uscc.values(),
      ...changes.flatMap((e) =>
        [
          e.name,
          e.data.field === 'REGCAP' ? null : e.data.previous,
          e.data.field === 'REGCAP' ? null : e.data.current,
        ].map((v) => (typeof v === 'string' ? v : '')),
      ),
    ].filter((v) => v.length > 0);

    // Each subscription got each event once: one succeeded delivery per (subscription, event).
    const delivered = await t.sql<{ subscription_id: number; n: number; distinct_events: number }[]>`
      select subscription_id::int, count(*)::int as n, count(distinct event_seq)::int as distinct_events
      from delivery_queue where state = 'succeeded' group by subscription_id`;
    expect(delivered).toHaveLength(subs.size);
    for (const d of delivered) {
      const sub = subs.get(d.subscription_id);
      expect(d.n, `subscription ${d.subscription_id} (${sub?.channel})`).toBe(sub?.digest ? 1 : taken.length);
      expect(d.distinct_events).toBe(d.n);
    }

    for (const [vendor, r] of Object.entries(receivers)) {
      // Every request was taken (signature, key, body shape, size, rate), except while down.
      const refused = r.got.filter((g) => g.status !== 503 && !g.accepted);
      expect(
        refused.map((g) => g.answer ?? g.status),
        vendor,
      ).toEqual([]);
      const lang = 'zh';
      const got = r.accepted();
      const isDigest = (text: string) => /每日摘要 · 周期|daybook digest, cycle/.test(text);
      // One message per changed company, in the order severity then company, and one digest.
      const messages = got.filter((g) => !isDigest(g.text));
      expect(messages, vendor).toHaveLength(3);
      for (const pid of changed) {
        const m = messages.filter((g) => g.text.includes(uscc.get(pid) as string));
        expect(m, `${vendor}: one message names ${pid}'s credit code`).toHaveLength(1);
        expect(m[0]?.body, vendor).toContain(`https://daybook.example/ui/companies/${pid}?at=${CYCLES[1]}#v`);
      }
      for (const g of got)
        expect(humanProblems(g.text, { lang, quoted }), `${vendor}: ${g.text}`).toEqual([]);
      const renamed = changes.find((e) => e.data.field === 'ENTNAME') as Envelope;
      const renameMessage = messages.find((g) => g.text.includes(String(renamed.data.current)));
      expect(renameMessage?.text, vendor).toContain(`${renamed.data.previous} → ${renamed.data.current}`);
      expect(renameMessage?.text, vendor).not.toMatch(lang === 'zh' ? /曾用名/ : /Former name/);
      // The digest arrives once, dated by its cycle, grouped by company, linked to the cycle's changes.
      const digests = got.filter((g) => isDigest(g.text));
      expect(digests, vendor).toHaveLength(1);
      expect(digests[0]?.text).toContain(CYCLES[1]);
      for (const pid of changed) expect(digests[0]?.text, vendor).toContain(uscc.get(pid) as string);
      // Slack writes & in a link as &amp;, as it asks.
      expect(digests[0]?.body.replace(/&amp;/g, '&')).toContain(
        `https://daybook.example/ui/changes?from=${CYCLES[1]}&to=${CYCLES[1]}`,
      );
      expect(got.at(-1), `${vendor}: the digest comes last`).toBe(digests[0]);
    }
    expect(receivers.feishu.accepted()).toHaveLength(4);
    expect(receivers.dingtalk.got.some((g) => g.status === 503)).toBe(true);
    expect(receivers.teams.got.some((g) => g.status === 503)).toBe(true);

    // Mail: the digest subscription one mail (the whole digest); the other one mail per event.
    const to = (address: string) => smtp.mails.filter((m) => m.envelopeTo.includes(address));
    expect(to('risk@example.com')).toHaveLength(1);
    expect(to('ops@example.com')).toHaveLength(1);
    expect(to('risk@example.com')[0]?.subject).toContain(CYCLES[1]);
    for (const pid of changed) expect(to('risk@example.com')[0]?.text).toContain(uscc.get(pid));
    const analyst = to('analyst@example.com');
    expect(analyst).toHaveLength(4);
    for (const pid of changed)
      expect(analyst.filter((m) => String(m.text).includes(uscc.get(pid) as string))).toHaveLength(2);
    for (const m of [...analyst, ...to('risk@example.com')]) {
      expect(m.html).toBeTruthy();
      const lang = m.envelopeTo.includes('analyst@example.com') ? 'en' : 'zh';
      expect(humanProblems(`${m.subject}\n${m.text}`, { lang, quoted }), String(m.text)).toEqual([]);
      expect(String(m.text)).toMatch(/https:\/\/daybook\.example\/ui\//);
    }

    // CHANNEL_SAMPLES=<dir> keeps one change message and the digest of each channel, as received.
    const samples = process.env.CHANNEL_SAMPLES;
    if (samples) {
      mkdirSync(samples, { recursive: true });
      for (const [vendor, r] of Object.entries(receivers)) {
        const got = r.accepted();
        const change = got.find((g) => !/每日摘要|digest/.test(g.text));
        const digestGot = got.find((g) => /每日摘要 · 周期|daybook digest, cycle/.test(g.text));
        writeFileSync(
          `${samples}/${vendor}.json`,
          JSON.stringify({ change: change?.json, digest: digestGot?.json }, null, 2),
        );
      }
      writeFileSync(`${samples}/email-digest.eml`, to('risk@example.com')[0]?.raw ?? '');
      writeFileSync(`${samples}/email-change.eml`, analyst.find((m) => /→/.test(String(m.text)))?.raw ?? '');
    }

    for (const text of [first.stderr, last]) {
      expect(text).not.toContain(TOKEN);
      expect(text).not.toContain(SIGNING);
    }
  });
});
