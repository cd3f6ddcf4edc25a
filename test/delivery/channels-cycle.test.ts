/**
 * A real cycle against the simulator reaches every channel: Feishu, DingTalk, WeCom, Teams (local
 * receivers written from the vendors' documentation) and mail (an SMTP server), each subscribed
 * with `daybook subscribe add … --digest` and delivered by `daybook deliver`. Each gets the
 * cycle's digest once, signed where the vendor signs, within the vendor's size, naming the
 * companies that changed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Envelope, readEvents } from '../../src/events/feed.ts';
import type { RunningSimulator } from '../../src/sim/server.ts';
import { runDaybook } from '../support/cli.ts';
import { type CliSim, cliAgainstSim } from '../support/cli-sim.ts';
import type { TestDatabase } from '../support/db.ts';
import { runCyclesInline, watchChanging } from '../support/inline.ts';
import { UNTHROTTLED } from '../support/sim.ts';
import { type SmtpReceiver, smtpReceiver } from './support/smtp.ts';
import { type VendorReceiver, vendorReceiver } from './support/vendors.ts';

const CYCLES = ['2026-11-10', '2026-11-11'];
const SIGNING = 'SECcycle-signing-0042';
const TOKEN = 'cycle-token-31415926';

describe('a real cycle reaches every channel', { timeout: 300_000 }, () => {
  let dbSim: CliSim;
  let t: TestDatabase;
  let sim: RunningSimulator;
  let smtp: SmtpReceiver;
  const receivers: Record<string, VendorReceiver> = {};
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
    for (const r of Object.values(receivers)) await r.close();
    await smtp?.close();
    await dbSim?.close();
  });

  it('delivers the digest of the cycle once to each, readable and within each limit', async () => {
    await watchChanging(t, sim, CYCLES, 5);
    await runCyclesInline(t, sim, CYCLES.slice(0, 1));
    const env = {
      ...dbSim.env,
      DAYBOOK_SMTP_URL: smtp.url,
      DAYBOOK_SMTP_FROM: 'daybook <daybook@example.com>',
      DAYBOOK_PUBLIC_URL: 'https://daybook.example',
    };
    const add = async (url: string, format: string, extra: string[] = []) => {
      const r = await runDaybook(
        ['subscribe', 'add', url, '--format', format, '--digest', '--allow-private', ...extra],
        env,
      );
      expect(r.code, r.stderr).toBe(0);
    };
    await add(receivers.feishu?.url as string, 'feishu', ['--signing-secret', SIGNING]);
    await add(receivers.dingtalk?.url as string, 'dingtalk', ['--signing-secret', SIGNING]);
    await add(receivers.wecom?.url as string, 'wecom', ['--lang', 'en']);
    await add(receivers.teams?.url as string, 'teams', ['--lang', 'en']);
    await add('mailto:risk@example.com', 'email');
    // The second cycle, with changes: its digest goes to every subscription.
    await runCyclesInline(t, sim, CYCLES.slice(1));
    const deliver = await runDaybook(['deliver', '--json'], env);
    expect(deliver.code, deliver.stderr).toBe(0);
    expect(JSON.parse(deliver.stdout)).toMatchObject({ delivered: 5, failed: 0, retrying: 0 });

    const [digest] = (await readEvents(t.sql, { after: 0, limit: 100_000, types: ['digest.daily'] })).filter(
      (e) => e.cycle === CYCLES[1],
    ) as Envelope[];
    const companies = digest?.data.companies as { pid: string; name: string; changes: unknown[] }[];
    expect(companies.length).toBeGreaterThan(0);
    const items = companies.reduce((n, c) => n + c.changes.length, 0);
    for (const [vendor, r] of Object.entries(receivers)) {
      expect(r.got, vendor).toHaveLength(1);
      expect(r.got[0]?.accepted, `${vendor}: ${JSON.stringify(r.got[0]?.answer)}`).toBe(true);
      const text = r.got[0]?.text ?? '';
      expect(text).toContain(CYCLES[1]);
      // Every item is shown, or the message says how many were left out.
      const shown = companies.filter((c) => text.includes(c.pid)).length;
      expect(shown).toBeGreaterThan(0);
      if (shown < companies.length) expect(text).toMatch(/另有 \d+ 项未列出|\d+ more items? not shown/);
      expect(r.got[0]?.body).toContain('https://daybook.example/events?after=');
    }
    expect(smtp.mails).toHaveLength(1);
    const mail = smtp.mails[0];
    expect(mail?.subject).toContain(CYCLES[1]);
    for (const c of companies) expect(mail?.text).toContain(c.pid);
    expect((String(mail?.text).match(/^- /gm) ?? []).length).toBe(items);
    expect(deliver.stderr).not.toContain(TOKEN);
    expect(deliver.stderr).not.toContain(SIGNING);
  });
});
