/**
 * A real cycle against the simulator reaches every channel: Feishu, DingTalk, WeCom, Teams (local
 * receivers written from the vendors' documentation) and mail (an SMTP server).
 *
 * The subscriptions are made by the README's own setup commands (its "Chat and mail" sections),
 * run as written: only the vendor's host becomes the receiver's, and the placeholders the test's
 * token and secret. `daybook deliver` then delivers the cycle: every change and the digest reach
 * every channel, signed where the vendor signs, within the vendor's size and rate, each event
 * once. Two receivers are down at first (DingTalk, which is rate limited, and Teams, which is
 * not) and get everything once they are back.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Envelope, readEvents } from '../../src/events/feed.ts';
import type { RunningSimulator } from '../../src/sim/server.ts';
import { waitFor } from '../faults/support/processes.ts';
import { runDaybook } from '../support/cli.ts';
import { type CliSim, cliAgainstSim } from '../support/cli-sim.ts';
import type { TestDatabase } from '../support/db.ts';
import { runCyclesInline, watchChanging } from '../support/inline.ts';
import { fencedUnder, shellWords } from '../support/markdown.ts';
import { UNTHROTTLED } from '../support/sim.ts';
import { type SmtpReceiver, smtpReceiver } from './support/smtp.ts';
import { type Vendor, type VendorReceiver, vendorReceiver } from './support/vendors.ts';

const CYCLES = ['2026-11-10', '2026-11-11'];
const SIGNING = 'SECcycle-signing-0042';
const TOKEN = 'cycle-token-31415926';

/** The README's heading of each channel's setup. */
const SECTIONS: Record<Vendor | 'email', string> = {
  feishu: 'Feishu (Lark)',
  dingtalk: 'DingTalk',
  wecom: 'WeCom (企业微信)',
  teams: 'Microsoft Teams',
  email: 'Email',
};

/** The README's `daybook subscribe add` commands of a channel, as words (without `daybook`). */
function readmeCommands(channel: keyof typeof SECTIONS): string[][] {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const lines = fencedUnder(readme, SECTIONS[channel]).filter((l) => l.startsWith('daybook subscribe add '));
  expect(lines.length, `the README's ${SECTIONS[channel]} section gives its command`).toBeGreaterThan(0);
  return lines.map((l) => shellWords(l).slice(1));
}

/** A README command made to reach `receiver`: the vendor's origin becomes the receiver's. */
function aimed(words: string[], receiver: VendorReceiver): string[] {
  const local = new URL(receiver.url);
  return words.map((w, i) => {
    if (i !== 2) return w === '<secret>' || w === 'SEC…' ? SIGNING : w;
    if (!/^https:\/\//.test(w)) return receiver.url;
    const u = new URL(w.replace(/<token>|<key>/g, TOKEN));
    return `${local.origin}${u.pathname}${u.search}`;
  });
}

describe('a real cycle reaches every channel', { timeout: 300_000 }, () => {
  let dbSim: CliSim;
  let t: TestDatabase;
  let sim: RunningSimulator;
  let smtp: SmtpReceiver;
  const receivers = {} as Record<Vendor, VendorReceiver>;
  beforeAll(async () => {
    dbSim = await cliAgainstSim({ enterprises: 200, rateLimits: UNTHROTTLED });
    ({ t, sim } = dbSim);
    smtp = await smtpReceiver();
    receivers.feishu = await vendorReceiver('feishu', { secret: SIGNING });
    receivers.dingtalk = await vendorReceiver('dingtalk', { secret: SIGNING, token: TOKEN, perMinute: 20 });
    receivers.wecom = await vendorReceiver('wecom', { token: TOKEN, perMinute: 20 });
    receivers.teams = await vendorReceiver('teams');
  });
  afterAll(async () => {
    for (const r of Object.values(receivers)) await r?.close();
    await smtp?.close();
    await dbSim?.close();
  });

  it("delivers every change and the digest to each channel the README sets up, signed, once, a receiver's downtime included", async () => {
    await watchChanging(t, sim, CYCLES, 5);
    await runCyclesInline(t, sim, CYCLES.slice(0, 1));
    const env = {
      ...dbSim.env,
      DAYBOOK_SMTP_URL: smtp.url,
      DAYBOOK_SMTP_FROM: 'daybook <daybook@example.com>',
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
      for (const words of readmeCommands(channel)) {
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
    expect(changes.length).toBeGreaterThan(0);
    expect(digest).toBeDefined();

    // Each subscription got each event once: one succeeded delivery per (subscription, event).
    const delivered = await t.sql<{ subscription_id: number; n: number; distinct_events: number }[]>`
      select subscription_id::int, count(*)::int as n, count(distinct event_seq)::int as distinct_events
      from delivery_queue where state = 'succeeded' group by subscription_id`;
    expect(delivered).toHaveLength(subs.size);
    for (const d of delivered) {
      const sub = subs.get(d.subscription_id);
      expect(d.n, `subscription ${d.subscription_id} (${sub?.channel})`).toBe(
        sub?.digest ? 1 : events.length,
      );
      expect(d.distinct_events).toBe(d.n);
    }

    for (const [vendor, r] of Object.entries(receivers)) {
      // Every request was taken (signature, key, body shape, size, rate), except while down.
      const refused = r.got.filter((g) => g.status !== 503 && !g.accepted);
      expect(
        refused.map((g) => g.answer ?? g.status),
        vendor,
      ).toEqual([]);
      const texts = r.accepted().map((g) => g.text);
      for (const e of changes)
        expect(
          texts.some((x) => x.includes(e.pid as string)),
          `${vendor}: ${e.pid}`,
        ).toBe(true);
      // The digest arrives once, dated by its cycle, with its link.
      const digests = r.accepted().filter((g) => /每日摘要 · 周期|daybook digest, cycle/.test(g.text));
      expect(digests, vendor).toHaveLength(1);
      expect(digests[0]?.text).toContain(CYCLES[1]);
      expect(digests[0]?.body).toContain('https://daybook.example/events?after=');
    }
    // Feishu takes 100 a minute: a cycle's events go one message each, 5 a second at most.
    expect(events.length).toBeLessThanOrEqual(100);
    expect(receivers.feishu.accepted()).toHaveLength(events.length);
    expect(receivers.dingtalk.got.some((g) => g.status === 503)).toBe(true);
    expect(receivers.teams.got.some((g) => g.status === 503)).toBe(true);

    // Mail: the digest subscription one mail (the whole digest); the other one mail per event.
    const to = (address: string) => smtp.mails.filter((m) => m.envelopeTo.includes(address));
    expect(to('risk@example.com')).toHaveLength(1);
    expect(to('ops@example.com')).toHaveLength(1);
    expect(to('risk@example.com')[0]?.subject).toContain(CYCLES[1]);
    const companies = digest?.data.companies as { pid: string; changes: unknown[] }[];
    for (const c of companies) expect(to('risk@example.com')[0]?.text).toContain(c.pid);
    const analyst = to('analyst@example.com');
    expect(analyst).toHaveLength(events.length);
    for (const e of changes) expect(analyst.some((m) => String(m.text).includes(e.pid as string))).toBe(true);
    for (const m of analyst) expect(m.html).toBeTruthy();

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
