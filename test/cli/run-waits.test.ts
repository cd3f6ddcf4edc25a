/**
 * What `daybook run` and `daybook deliver` say of the messages they leave, and how long `run`
 * waits for deliveries (src/cli/run.ts, src/cli/deliver.ts): the real commands, child processes,
 * against a database and a simulator of this file's own and receivers on loopback.
 *
 * - A Feishu bot takes 5 messages in 3 seconds: with more due, the rest wait for the window.
 *   `run` names the subscription (its id, its format and its URL cut of its token), how many
 *   wait and why, and when the next goes; `deliver --json` gives the same as fields.
 * - A receiver that never answers holds `run` for DAYBOOK_RUN_DELIVERY_WAIT and not much more
 *   (a generous margin: the machine is busy), though a send may take DAYBOOK_WEBHOOK_TIMEOUT_MS
 *   (100 s here); `run` says what it left, exits 0, and the send is due again, no attempt of the
 *   schedule spent.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ABANDONED_ERROR } from '../../src/delivery/engine.ts';
import { addSubscription } from '../../src/delivery/store.ts';
import { appendEvents, type NewEvent } from '../../src/events/outbox.ts';
import { type VendorReceiver, vendorReceiver } from '../delivery/support/vendors.ts';
import { runDaybook } from '../support/cli.ts';
import { type CliSim, cliAgainstSim } from '../support/cli-sim.ts';

const FEISHU_TOKEN = '0b7c-hook-token';

let pidSeq = 0;
/** A status change at a company of its own: one message each. */
function change(): NewEvent {
  pidSeq++;
  return {
    type: 'company.status.changed',
    severity: 'high',
    pid: `WAIT${String(pidSeq).padStart(5, '0')}`,
    cycle: '2026-11-10',
    detectedAt: new Date('2026-11-10T03:40:00Z'),
    rawResponseId: null,
    name: `Example Trading Co. ${pidSeq}`,
    data: { category: 'status', field: 'ENTSTATUS', kind: 'modified', previous: '存续', current: '注销' },
  };
}

/** A time as the CLI prints it: the Beijing date and time, to the second. */
const beijing = (at: Date) =>
  `${new Date(at.getTime() + 8 * 3_600_000).toISOString().slice(0, 19).replace('T', ' ')} Beijing time`;

/** An HTTP server that reads every request and never answers. */
async function silentReceiver(): Promise<{ url: string; seen: () => number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  let seen = 0;
  const server: Server = createServer((req: IncomingMessage) => {
    seen++;
    req.resume();
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/silent-token-77`,
    seen: () => seen,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

describe('daybook run and deliver: what waits, and how long run waits', { timeout: 240_000 }, () => {
  let c: CliSim;
  const write = (events: NewEvent[]) => c.t.sql.begin((tx) => appendEvents(tx, events));
  const pending = async (id: number) => {
    const [row] = await c.t.sql<{ n: number; next_at: Date | null }[]>`
      select count(*)::int as n, min(next_attempt_at) as next_at from delivery_queue
      where subscription_id = ${id} and state in ('pending', 'delivering')`;
    return { n: row?.n ?? 0, nextAt: row?.next_at ?? null };
  };

  beforeAll(async () => {
    c = await cliAgainstSim();
  });
  afterAll(async () => {
    await c?.close();
  });

  it("names each subscription whose messages wait for the vendor's rate window, how many, and when the next goes", async () => {
    let feishu: VendorReceiver | undefined;
    try {
      feishu = await vendorReceiver('feishu');
      const { subscription } = await addSubscription(c.t.sql, {
        url: feishu.url,
        format: 'feishu',
        lang: 'en',
        allowPrivate: true,
      });
      const id = subscription.id;
      // Eight companies changed: eight messages, five of them in Feishu's first window.
      await write(Array.from({ length: 8 }, change));
      const run = await runDaybook(['run', '--only', 'enterprises'], c.env);
      expect(run.code, run.stdout + run.stderr).toBe(0);
      expect(feishu.accepted().length).toBeGreaterThanOrEqual(5);
      const left = await pending(id);
      expect(left.n, 'messages left for the window').toBeGreaterThanOrEqual(3);
      const line = run.stdout.split('\n').find((l) => l.includes(`subscription ${id} `));
      expect(line, run.stdout).toBeDefined();
      // Its id, format and URL (the token cut), the number waiting and why, and the next time.
      expect(line).toContain(`subscription ${id} (feishu, http://127.0.0.1:`);
      expect(line).toContain('/open-apis/…)');
      expect(line).toContain(`: ${left.n} messages (`);
      expect(line).toMatch(/\(\d+ for the vendor's rate window\)|\(\d+ due now\)/);
      expect(line).toMatch(/the next goes (at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d Beijing time|now)$/);
      if (line?.includes('the next goes at')) expect(line).toContain(beijing(left.nextAt as Date));
      expect(run.stdout).toContain(`  not sent yet: ${left.n} messages\n`);
      expect(run.stdout).toContain('  left to a worker or daybook deliver\n');
      expect(run.stdout + run.stderr).not.toContain(FEISHU_TOKEN);

      // deliver --json: the same, as fields. Eight more: the window full again, some wait.
      await write(Array.from({ length: 8 }, change));
      const deliver = await runDaybook(['deliver', '--json'], c.env);
      expect(deliver.code, deliver.stderr).toBe(0);
      const out = JSON.parse(deliver.stdout) as { delivered: number; waiting: Record<string, unknown>[] };
      const after = await pending(id);
      expect(after.n).toBeGreaterThan(0);
      const mine = out.waiting.find((w) => w.subscription === id);
      expect(mine).toMatchObject({
        subscription: id,
        format: 'feishu',
        state: 'active',
        waiting: after.n,
        retrying: 0,
        nextAt: (after.nextAt as Date).toISOString(),
      });
      expect(String(mine?.target)).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/open-apis\/…$/);
      expect((mine?.rateWindow as number) + (mine?.due as number)).toBe(after.n);
      expect(deliver.stdout).not.toContain(FEISHU_TOKEN);
      // As text, deliver says it too.
      await write(Array.from({ length: 8 }, change));
      const text = await runDaybook(['deliver'], c.env);
      expect(text.stdout).toMatch(
        new RegExp(
          `^  subscription ${id} \\(feishu, http://127\\.0\\.0\\.1:\\d+/open-apis/…\\): \\d+ messages`,
          'm',
        ),
      );
    } finally {
      await feishu?.close();
      await c.t.sql`delete from subscriptions`;
    }
  });

  it('waits for a receiver that never answers only DAYBOOK_RUN_DELIVERY_WAIT, says what it left, and exits 0', async () => {
    const silent = await silentReceiver();
    try {
      const { subscription } = await addSubscription(c.t.sql, { url: silent.url, allowPrivate: true });
      const id = subscription.id;
      await write([change()]);
      const env = {
        ...c.env,
        DAYBOOK_RUN_DELIVERY_WAIT: '3s',
        // A send may take 100 s: without the wait, run would sit on it that long.
        DAYBOOK_WEBHOOK_TIMEOUT_MS: '100000',
      };
      const started = Date.now();
      const run = await runDaybook(['run', '--only', 'enterprises', '--json'], env, undefined, 150_000);
      const tookS = (Date.now() - started) / 1000;
      expect(run.code, run.stdout + run.stderr).toBe(0);
      expect(silent.seen()).toBeGreaterThan(0);
      // The wait plus a generous margin (starting node, the cycle, a busy machine): far from 100 s.
      expect(tookS).toBeLessThanOrEqual(3 + 15);
      const out = JSON.parse(run.stdout) as { deliveries: Record<string, unknown> & { waiting: unknown[] } };
      expect(out.deliveries).toMatchObject({ stopped: true, waitMs: 3000, delivered: 0, failed: 0 });
      expect(out.deliveries.abandoned as number).toBeGreaterThanOrEqual(1);
      const left = await pending(id);
      expect(left.n).toBeGreaterThanOrEqual(1);
      expect(out.deliveries.waiting).toContainEqual(
        expect.objectContaining({
          subscription: id,
          target: `http://127.0.0.1:${new URL(silent.url).port}/hooks/…`,
          waiting: left.n,
        }),
      );
      // The send left is due again at once, no attempt of the schedule spent, and says why.
      const rows = await c.t.sql<{ attempts: number; last_error: string | null }[]>`
        select attempts, last_error from delivery_queue where subscription_id = ${id} and last_error is not null`;
      expect(rows.length).toBeGreaterThanOrEqual(1);
      for (const r of rows) expect(r).toEqual({ attempts: 0, last_error: ABANDONED_ERROR });

      // As text: it stopped waiting, what it left, and to whom.
      await write([change()]);
      const text = await runDaybook(['run', '--only', 'enterprises'], env, undefined, 150_000);
      expect(text.code, text.stderr).toBe(0);
      expect(text.stdout).toMatch(
        /^ {2}stopped waiting for deliveries after 3 s \(DAYBOOK_RUN_DELIVERY_WAIT\): \d+ sends? had no answer yet and go(es)? again$/m,
      );
      expect(text.stdout).toMatch(
        new RegExp(
          `^ {4}subscription ${id} \\(standard, http://127\\.0\\.0\\.1:\\d+/hooks/…\\): \\d+ messages? \\(`,
          'm',
        ),
      );
      expect(text.stdout).toContain('  left to a worker or daybook deliver\n');
      expect(text.stdout + text.stderr).not.toContain('silent-token-77');
    } finally {
      await silent.close();
      await c.t.sql`delete from subscriptions`;
    }
  });
});
