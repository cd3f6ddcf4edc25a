/**
 * Webhook delivery survives what workers survive. Events go to a real receiver on loopback from
 * `daybook worker` processes while one worker is SIGKILLed mid-delivery, their Redis is stopped and
 * started again, and the test database's connections are terminated. Every event reaches the
 * receiver (counted by webhook-id); a repeat is recognisable by its id.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addSubscription } from '../../src/delivery/store.ts';
import { appendEvents, type NewEvent } from '../../src/events/outbox.ts';
import { STATUS_CHANGE } from '../delivery/support/events.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';
import { adminUrl } from '../support/pg-url.ts';
import { figures } from './support/cycle.ts';
import {
  type RedisServer,
  spawnWorker,
  startRedis,
  type WorkerProcess,
  waitFor,
} from './support/processes.ts';

const event = (i: number): NewEvent => ({
  type: 'company.status.changed',
  severity: 'high',
  pid: `p-${i}`,
  cycle: '2026-11-20',
  detectedAt: new Date(),
  rawResponseId: null,
  data: { ...STATUS_CHANGE },
});

describe('webhook delivery under faults', { timeout: 480_000 }, () => {
  let t: TestDatabase;
  let redis: RedisServer;
  let admin: postgres.Sql;
  const workers: WorkerProcess[] = [];
  const received = new Map<string, number>();
  const server = createServer((req, res) => {
    const id = String(req.headers['webhook-id']);
    req.resume();
    req.on('end', () =>
      setTimeout(() => {
        received.set(id, (received.get(id) ?? 0) + 1);
        res.writeHead(200);
        res.end();
      }, 10),
    );
  });
  let next = 0;
  const append = async (n: number) => {
    const batch = Array.from({ length: n }, () => event(next++));
    await t.sql.begin((tx) => appendEvents(tx, batch));
  };

  beforeAll(async () => {
    t = await freshDatabase();
    redis = await startRedis({ appendonly: false });
    admin = postgres(adminUrl(), { max: 1, onnotice: () => {} });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  });
  afterAll(async () => {
    for (const w of workers.splice(0)) await w.stop('SIGKILL');
    await new Promise<void>((r) => server.close(() => r()));
    await redis.stop();
    await admin.end();
    await t.drop();
  });

  const env = () => ({
    DATABASE_URL: t.url,
    REDIS_URL: redis.url,
    DAYBOOK_REDIS_PREFIX: `dbd-${process.pid}`,
    DAYBOOK_API_BASE_URL: 'http://127.0.0.1:9',
    DAYBOOK_API_KEY: 'test-key-delivery',
    DAYBOOK_WEBHOOK_TIMEOUT_MS: '1000',
    DAYBOOK_WEBHOOK_SCHEDULE: '0,200ms,500ms,1s,1s,1s,1s,1s,1s,1s',
    LOG_LEVEL: 'info',
  });

  it('loses nothing through a SIGKILL mid-delivery, a Redis restart and terminated database connections', async () => {
    const port = (server.address() as AddressInfo).port;
    await addSubscription(t.sql, {
      url: `http://127.0.0.1:${port}/hook`,
      allowPrivate: true,
      fromSeq: 1,
    });
    await append(400);
    const a = spawnWorker(env());
    workers.push(a);
    await a.started;
    await waitFor('deliveries under way', async () => received.size >= 40, 30_000).catch((err) => {
      throw new Error(`${err.message}: received ${received.size}\n${a.lines.slice(-15).join('\n')}`);
    });
    await a.stop('SIGKILL');
    const killedAt = received.size;
    const b = spawnWorker(env());
    workers.push(b);
    await b.started;

    // Redis goes away and comes back: delivery runs on Postgres and carries on.
    await redis.stop();
    await append(100);
    await new Promise((r) => setTimeout(r, 2000));
    redis = await startRedis({ appendonly: false, port: redis.port });

    // The database drops every connection of the test's database, three times.
    let terminated = 0;
    for (let i = 0; i < 3; i++) {
      await append(50);
      const rows = await admin`
        select pg_terminate_backend(pid) as ok from pg_stat_activity
        where datname = ${t.name} and pid <> pg_backend_pid()`;
      terminated += rows.length;
      await new Promise((r) => setTimeout(r, 500));
    }
    const total = next;
    // A hang guard, not a deadline: on a loaded machine worker b's reconnects after the three
    // terminations back off, and it once resumed only just before a 120 s guard ran out.
    await waitFor('every event delivered', async () => received.size === total, 360_000).catch(
      async (err) => {
        const states = await t.sql`select state, count(*)::int as n, min(next_attempt_at) as next
                                 from delivery_queue group by state`;
        throw new Error(
          `${err.message}: received ${received.size} of ${total}; worker b exit ${JSON.stringify(b.exit)}; queue ${JSON.stringify(states)}\n` +
            b.lines.slice(-25).join('\n'),
        );
      },
    );
    const [ids] = await t.sql<{ n: number }[]>`select count(*)::int as n from events`;
    expect(received.size).toBe(ids?.n);
    const repeats = [...received.values()].reduce((s, n) => s + n - 1, 0);
    expect(b.exit).toBeNull();
    figures('webhook delivery', {
      events: total,
      'delivered before the kill': killedAt,
      'connections terminated': terminated,
      'events lost': total - received.size,
      'repeats (same webhook-id)': repeats,
    });
  });
});
