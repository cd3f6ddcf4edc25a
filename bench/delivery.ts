/**
 * Webhook delivery at volume: 10,000 events written to the outbox, delivered to 1
 * endpoint and then to 10, each a real HTTP receiver on loopback answering 200. Figures: the
 * latency from an event's commit to the receiver's 2xx being recorded (p50, p99), and deliveries
 * per second. Targets: at least 1,000 deliveries/s in a burst; when events come steadily, p99
 * under 250 ms to 1 endpoint and under 500 ms to 10 (the engine wakes on each commit).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DeliveryEngine } from '../src/delivery/engine.ts';
import { addSubscription } from '../src/delivery/store.ts';
import { appendEvents, type NewEvent } from '../src/events/outbox.ts';
import { createLogger } from '../src/log/log.ts';
import { DEFAULT_SCHEDULE, parseSchedule } from '../src/retry/schedule.ts';
import { freshDatabase, round } from './support.ts';

export interface DeliveryRun {
  /** burst: all written, then delivered; steady: written at `perSecondWritten` while delivered. */
  mode: 'burst' | 'steady';
  perSecondWritten: number | null;
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

/** The burst's target: deliveries per second. */
export const BURST_PER_SECOND = 1000;

/** The steady stream's target: p99 from the write to the 2xx, by number of endpoints. */
export const steadyP99Ms = (endpoints: number): number => (endpoints === 1 ? 250 : 500);

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] as number;
};

async function one(
  endpoints: number,
  events: number,
  steadyPerSecond: number | null = null,
): Promise<DeliveryRun> {
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
    const engine = new DeliveryEngine(db.sql, createLogger({ level: 'silent' }), {
      schedule: parseSchedule(DEFAULT_SCHEDULE),
      timeoutMs: 15_000,
      disableAfterMs: 5 * 86_400_000,
      concurrency: 32,
      perSubscription: Math.max(4, Math.ceil(32 / endpoints)),
      // As in a worker: it listens for new events on a connection of its own.
      listen: { url: db.url },
    });
    let summary = { delivered: 0 };
    let seconds: number;
    if (steadyPerSecond === null) {
      // A burst: every event written first (in transactions of 100), then one pass delivers them all.
      for (let i = 0; i < batch.length; i += 100)
        await db.sql.begin((tx) => appendEvents(tx, batch.slice(i, i + 100)));
      const started = performance.now();
      summary = await engine.pass();
      seconds = (performance.now() - started) / 1000;
    } else {
      // Steady: events written a tenth of a second's worth at a time while a running engine (as
      // in a worker: woken by each commit, looking on its own every second while it is not
      // hearing them) delivers them.
      const stop = new AbortController();
      const running = engine.run(stop.signal, 1000);
      const started = performance.now();
      const step = Math.max(1, Math.round(steadyPerSecond / 10));
      for (let i = 0; i < batch.length; i += step) {
        await db.sql.begin((tx) => appendEvents(tx, batch.slice(i, i + step)));
        const due = started + ((i + step) / steadyPerSecond) * 1000;
        await new Promise((r) => setTimeout(r, Math.max(0, due - performance.now())));
      }
      for (;;) {
        const [left] = await db.sql<{ n: number }[]>`
          select count(*)::int as n from delivery_queue where state <> 'succeeded'`;
        const [queued] = await db.sql<{ n: number }[]>`select count(*)::int as n from delivery_queue`;
        if (left?.n === 0 && queued?.n === events * endpoints) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      seconds = (performance.now() - started) / 1000;
      stop.abort();
      await running;
      summary = { delivered: events * endpoints };
    }
    // Latency: from the event's commit (created_at, the database's clock) to the recorded 2xx.
    const rows = await db.sql<{ ms: number }[]>`
      select extract(epoch from (d.attempted_at - e.created_at)) * 1000 + d.latency_ms as ms
      from webhook_deliveries d join events e on e.seq = d.event_seq where d.outcome = 'succeeded'`;
    const latencies = rows.map((r) => Number(r.ms));
    const errors = await db.sql<{ error: string; n: number }[]>`
      select coalesce(error, 'ok') as error, count(*)::int as n from webhook_deliveries group by 1 order by 2 desc limit 5`;
    if (errors.some((e) => e.error !== 'ok'))
      process.stderr.write(`bench delivery: ${endpoints} endpoints: errors ${JSON.stringify(errors)}\n`);
    return {
      mode: steadyPerSecond === null ? 'burst' : 'steady',
      perSecondWritten: steadyPerSecond,
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

/**
 * Throughput from bursts of `events` to 1 and to 10 endpoints; latency from events written at a
 * steady 20/s (twelve times what a cycle can find: the upstream answers 100 calls a minute).
 */
export async function benchDelivery(events = 10_000, steadyEvents = 1000): Promise<DeliveryResult> {
  const runs = [
    await one(1, events),
    await one(10, events),
    await one(1, steadyEvents, 20),
    await one(10, steadyEvents, 20),
  ];
  return {
    runs,
    target: `≥ ${BURST_PER_SECOND} deliveries/s in a burst; p99 from the write to the 2xx < ${steadyP99Ms(1)} ms to 1 endpoint and < ${steadyP99Ms(10)} ms to 10 when events come steadily`,
    met: runs.every((r) =>
      r.mode === 'burst' ? r.perSecond >= BURST_PER_SECOND : r.p99Ms < steadyP99Ms(r.endpoints),
    ),
  };
}
