/**
 * The delivery engine wakes on the commit that writes an event (LISTEN/NOTIFY), not on its timer:
 * with timers far longer than the test, an event written is delivered, a retry goes when it
 * falls due, and an event rolled back is not. Where notifications cannot arrive (PgBouncer in
 * transaction mode), the engine says so and delivers on its timer; given a direct URL to listen on
 * (DAYBOOK_LISTEN_URL), it hears them there while its pool goes through PgBouncer.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveryEngine } from '../../src/cli/assemble.ts';
import { loadConfig } from '../../src/config/config.ts';
import { openDatabase } from '../../src/db/connect.ts';
import { DeliveryEngine, type DeliveryOptions } from '../../src/delivery/engine.ts';
import { addSubscription } from '../../src/delivery/store.ts';
import { appendEvents, type NewEvent } from '../../src/events/outbox.ts';
import { createLogger } from '../../src/log/log.ts';
import { parseSchedule } from '../../src/retry/schedule.ts';
import { waitFor } from '../faults/support/processes.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';
import { type PgBouncer, startPgBouncer } from '../support/pgbouncer.ts';

/** Longer than any test here: a delivery that happens did not wait for a timer. */
const NEVER_MS = 600_000;

const event = (pid: string): NewEvent => ({
  type: 'company.status.changed',
  severity: 'high',
  pid,
  cycle: '2026-11-20',
  detectedAt: new Date(),
  rawResponseId: null,
  data: { category: 'status', field: 'ENTSTATUS', kind: 'modified', previous: '存续', current: '注销' },
});

/** A receiver on loopback answering each request with the next of `statuses` (then 200). */
async function receiver(statuses: number[] = []) {
  const got: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push(
        String((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: { pid: string } }).data.pid),
      );
      res.writeHead(statuses.shift() ?? 200);
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    got,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** A logger whose lines are kept. */
function keptLog() {
  const lines: { level: number; msg: string }[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean))
        lines.push(JSON.parse(line) as { level: number; msg: string });
      done();
    },
  });
  return { lines, log: createLogger({ level: 'info', destination, pretty: false }) };
}

const options = (listenUrl: string, extra: Partial<DeliveryOptions> = {}): DeliveryOptions => ({
  schedule: parseSchedule('0,300ms,300ms'),
  timeoutMs: 30_000,
  disableAfterMs: 5 * 86_400_000,
  concurrency: 8,
  listen: { url: listenUrl, probeMs: 60_000 },
  safetyMs: NEVER_MS,
  ...extra,
});

describe('waking on new events', { timeout: 300_000 }, () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await freshDatabase();
  });
  afterAll(async () => {
    await t?.drop();
  });

  it('delivers an event as it commits, a retry when it falls due, and nothing of a rollback, with timers that never fire', async () => {
    const r = await receiver([500]);
    const { subscription } = await addSubscription(t.sql, { url: r.url, allowPrivate: true });
    const { lines, log } = keptLog();
    const engine = new DeliveryEngine(t.sql, log, options(t.url));
    const stop = new AbortController();
    const running = engine.run(stop.signal, NEVER_MS);
    try {
      await waitFor('the listener', async () => lines.some((l) => l.msg.startsWith('listening')), 60_000);
      // A write that rolls back notifies nobody; the one after it is delivered.
      await t.sql
        .begin(async (tx) => {
          await appendEvents(tx, [event('rolled-back')]);
          throw new Error('roll back');
        })
        .catch(() => {});
      await t.sql.begin((tx) => appendEvents(tx, [event('first')]));
      // Answered 500 first: the retry is due 300 ms later, and goes then.
      await waitFor('the first event, retried', async () => r.got.length >= 2, 60_000, 20);
      expect(r.got).toEqual(['first', 'first']);
      await t.sql.begin((tx) => appendEvents(tx, [event('second')]));
      await waitFor('the second event', async () => r.got.includes('second'), 60_000, 20);
      // The receiver answers before the engine records: both are recorded delivered soon after.
      await waitFor(
        'both recorded delivered',
        async () => {
          const [queue] = await t.sql<{ n: number }[]>`
            select count(*)::int as n from delivery_queue
            where subscription_id = ${subscription.id} and state = 'succeeded'`;
          return queue?.n === 2;
        },
        60_000,
        20,
      );
      expect(r.got).not.toContain('rolled-back');
    } finally {
      stop.abort();
      await running;
      await r.close();
      await t.sql`delete from subscriptions`;
    }
  });

  describe('through PgBouncer in transaction mode', () => {
    let bouncer: PgBouncer;
    beforeAll(async () => {
      bouncer = await startPgBouncer({ database: t.name, poolMode: 'transaction', poolSize: 4 });
    });
    afterAll(async () => {
      await bouncer?.stop();
    });

    it('says notifications do not arrive, and delivers on its timer', async () => {
      const r = await receiver();
      await addSubscription(t.sql, { url: r.url, allowPrivate: true });
      const { lines, log } = keptLog();
      const engine = new DeliveryEngine(
        t.sql,
        log,
        options(bouncer.url, { listen: { url: bouncer.url, prepare: false, probeMs: 1000 } }),
      );
      const stop = new AbortController();
      const running = engine.run(stop.signal, 100);
      try {
        await waitFor(
          'the warning',
          async () => lines.some((l) => l.msg.startsWith('new events are not heard')),
          60_000,
        );
        await t.sql.begin((tx) => appendEvents(tx, [event('timer')]));
        await waitFor('the event', async () => r.got.includes('timer'), 60_000, 20);
        expect(lines.some((l) => l.msg.startsWith('listening'))).toBe(false);
      } finally {
        stop.abort();
        await running;
        await r.close();
        await t.sql`delete from subscriptions`;
      }
    });

    it('with DAYBOOK_LISTEN_URL, listens on the direct connection and delivers as events commit, its pool through PgBouncer', async () => {
      const r = await receiver();
      await addSubscription(t.sql, { url: r.url, allowPrivate: true });
      const { lines, log } = keptLog();
      const config = loadConfig(
        { DATABASE_URL: bouncer.url, DAYBOOK_LISTEN_URL: t.url, DAYBOOK_DB_PREPARE: 'false' },
        '/nonexistent/.env',
      );
      const pool = openDatabase(bouncer.url, { prepare: false, max: 4, applicationName: 'daybook-bouncer' });
      const engine = deliveryEngine(config, pool.sql, log, bouncer.url);
      const stop = new AbortController();
      const running = engine.run(stop.signal, NEVER_MS);
      try {
        await waitFor('the listener', async () => lines.some((l) => l.msg.startsWith('listening')), 60_000);
        await pool.sql.begin((tx) => appendEvents(tx, [event('direct')]));
        await waitFor('the event', async () => r.got.includes('direct'), 60_000, 20);
        expect(lines.some((l) => l.msg.startsWith('new events are not heard'))).toBe(false);
      } finally {
        stop.abort();
        await running;
        await pool.close();
        await r.close();
        await t.sql`delete from subscriptions`;
      }
    });
  });
});
