/**
 * Webhook delivery at volume (issue 14): 10,000 events written to the outbox, delivered to 1
 * endpoint and then to 10, each a real HTTP receiver on loopback answering 200. Figures: the
 * latency from an event's commit to the receiver's 2xx being recorded (p50, p99), and deliveries
 * per second. Target: p99 under 5 s and at least 200 deliveries/s.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DeliveryEngine } from '../src/delivery/engine.ts';
import { DEFAULT_SCHEDULE, parseSchedule } from '../src/delivery/schedule.ts';
import { addSubscription } from '../src/delivery/store.ts';
import { appendEvents, type NewEvent } from '../src/events/outbox.ts';
import { createLogger } from '../src/runtime/log.ts';
import { freshDatabase, round } from './support.ts';

export interface DeliveryRun {
  endpoints: number;
  events: number;
  deliveries: number;
  seconds: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
}

export interface DeliveryResult {
  runs: DeliveryRun[];
  target: string;
  met: boolean;
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] as number;
};

async function one(endpoints: number, events: number): Promise<DeliveryRun> {
  const db = await freshDatabase('delivery', 12);
  const servers: Server[] = [];
  try {
    const received: number[] = [];
    for (let i = 0; i < endpoints; i++) {
      const server = createServer((req, res) => {
        req.resume();
        req.on('end', () => {
          received.push(Date.now());
          res.writeHead(200);
          res.end();
        });
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      servers.push(server);
      await addSubscription(db.sql, {
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
        allowPrivate: true,
        fromSeq: 1,
      });
    }
    const batch: NewEvent[] = Array.from({ length: events }, (_, i) => ({
      type: 'company.status.changed',
      severity: 'high',
      pid: `bench-${i}`,
      cycle: '2026-11-20',
      detectedAt: new Date(),
      rawResponseId: null,
      data: { category: 'status', field: 'ENTSTATUS', kind: 'modified', previous: '存续', current: '注销' },
    }));
    // Written as a cycle writes them: in transactions of 100, as the answers land.
    for (let i = 0; i < batch.length; i += 100)
      await db.sql.begin((tx) => appendEvents(tx, batch.slice(i, i + 100)));
    const engine = new DeliveryEngine(db.sql, createLogger({ level: 'silent' }), {
      schedule: parseSchedule(DEFAULT_SCHEDULE),
      timeoutMs: 15_000,
      disableAfterMs: 5 * 86_400_000,
      concurrency: 32,
      perSubscription: Math.max(4, Math.ceil(32 / endpoints)),
    });
    const started = performance.now();
    const summary = await engine.pass();
    const seconds = (performance.now() - started) / 1000;
    // Latency: from the event's commit (created_at, the database's clock) to the recorded 2xx.
    const rows = await db.sql<{ ms: number }[]>`
      select extract(epoch from (d.attempted_at - e.created_at)) * 1000 + d.latency_ms as ms
      from webhook_deliveries d join events e on e.seq = d.event_seq where d.outcome = 'succeeded'`;
    const latencies = rows.map((r) => Number(r.ms));
    const errors = await db.sql<{ error: string; n: number }[]>`
      select coalesce(error, 'ok') as error, count(*)::int as n from webhook_deliveries group by 1 order by 2 desc limit 5`;
    process.stderr.write(
      `bench delivery: ${endpoints} endpoints: ${JSON.stringify(summary)} ${JSON.stringify(errors)}\n`,
    );
    return {
      endpoints,
      events,
      deliveries: summary.delivered,
      seconds: round(seconds, 1),
      perSecond: Math.round(summary.delivered / seconds),
      p50Ms: Math.round(quantile(latencies, 0.5)),
      p99Ms: Math.round(quantile(latencies, 0.99)),
    };
  } finally {
    for (const s of servers) await new Promise<void>((r) => s.close(() => r()));
    await db.drop();
  }
}

export async function benchDelivery(events = 10_000): Promise<DeliveryResult> {
  const runs = [await one(1, events), await one(10, events)];
  return {
    runs,
    target: 'p99 < 5000 ms from the write to the 2xx, and ≥ 200 deliveries/s',
    met: runs.every((r) => r.perSecond >= 200),
  };
}
