/**
 * Subscriptions and signed webhook delivery, against real HTTP receivers on loopback. Every
 * delivery is verified twice: by the standardwebhooks library and by an HMAC written here from the
 * spec. A receiver that is down gets every event afterwards; a 410 disables its endpoint; a slow
 * endpoint does not hold a fast one up; a rotated secret signs beside the new one; private
 * addresses need --allow-private.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { getEventListeners } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DeliveryEngine } from '../../src/delivery/engine.ts';
import { addSubscription, rotateSecret } from '../../src/delivery/store.ts';
import { type Envelope, readEvents } from '../../src/events/feed.ts';
import { createLogger } from '../../src/log/log.ts';
import { parseSchedule } from '../../src/retry/schedule.ts';
import type { RunningSimulator } from '../../src/sim/server.ts';
import { waitFor } from '../faults/support/processes.ts';
import { runDaybook } from '../support/cli.ts';
import { type CliSim, cliAgainstSim } from '../support/cli-sim.ts';
import type { TestDatabase } from '../support/db.ts';
import { runCyclesInline, watchChanging } from '../support/inline.ts';
import { startTestSim, TEST_KEY, UNTHROTTLED } from '../support/sim.ts';

const CYCLES = ['2026-11-10', '2026-11-11'];

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** A receiver on loopback: it records every request and answers what `answer` says. */
async function receiver(
  answer: (r: Received) => Promise<{ status: number; headers?: Record<string, string> }>,
) {
  const got: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      got.push(r);
      void answer(r).then((a) => {
        res.writeHead(a.status, a.headers ?? {});
        res.end('ok');
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    got,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** The spec's check, by hand: HMAC-SHA256 over `id.timestamp.body` with the decoded secret. */
function verifiedByHand(secret: string, r: Received): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key)
    .update(`${r.headers['webhook-id']}.${r.headers['webhook-timestamp']}.${r.body}`)
    .digest();
  return String(r.headers['webhook-signature'] ?? '')
    .split(' ')
    .some((part) => {
      const [version, sig] = part.split(',');
      if (version !== 'v1' || !sig) return false;
      const given = Buffer.from(sig, 'base64');
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
}

const verifiedByLibrary = (secret: string, r: Received) => {
  try {
    new Webhook(secret).verify(r.body, r.headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
};

const ok = async () => ({ status: 204 });
const quiet = createLogger({ level: 'silent' });
const engine = (t: TestDatabase, schedule = '0,50ms,100ms,150ms,200ms,250ms') =>
  new DeliveryEngine(t.sql, quiet, {
    schedule: parseSchedule(schedule),
    timeoutMs: 5000,
    disableAfterMs: 5 * 86_400_000,
    concurrency: 16,
  });

describe('webhook delivery', { timeout: 180_000 }, () => {
  let t: TestDatabase;
  let sim: RunningSimulator;
  let dbSim: CliSim;
  let events: Envelope[];
  beforeAll(async () => {
    dbSim = await cliAgainstSim({ enterprises: 300, rateLimits: UNTHROTTLED });
    ({ t, sim } = dbSim);
    await watchChanging(t, sim, CYCLES, 5);
    await runCyclesInline(t, sim, CYCLES);
    events = await readEvents(t.sql, { after: 0, limit: 1_000_000 });
  });
  afterAll(async () => {
    await dbSim?.close();
  });
  // Each test subscribes its own receivers; their deliveries and attempts go with them.
  afterEach(async () => {
    await t.sql`delete from subscriptions`;
  });
  const current = () => readEvents(t.sql, { after: 0, limit: 1_000_000 });

  const subscribe = (url: string, extra: Partial<Parameters<typeof addSubscription>[1]> = {}) =>
    addSubscription(t.sql, {
      url,
      allowPrivate: true,
      fromSeq: 1,
      ...extra,
    });

  it('delivers every event once, signed: the library and a hand-written HMAC both verify it, and it equals the feed', async () => {
    const r = await receiver(ok);
    const { secret } = await subscribe(r.url);
    const summary = await engine(t).pass();
    expect(summary.delivered).toBe(events.length);
    expect(r.got.map((g) => g.headers['webhook-id'])).toEqual(
      expect.arrayContaining(events.map((e) => e.id)),
    );
    expect(new Set(r.got.map((g) => g.headers['webhook-id'])).size).toBe(events.length);
    for (const g of r.got) {
      expect(verifiedByLibrary(secret, g)).toBe(true);
      expect(verifiedByHand(secret, g)).toBe(true);
      const body = JSON.parse(g.body) as { type: string; timestamp: string; data: Envelope };
      expect(body.data).toEqual(events.find((e) => e.id === g.headers['webhook-id']));
      expect(body.type).toBe(body.data.type);
    }
    // A tampered body fails both checks.
    const first = r.got[0] as Received;
    const tampered = { ...first, body: first.body.replace('"type"', '"typ"') };
    expect(verifiedByLibrary(secret, tampered)).toBe(false);
    expect(verifiedByHand(secret, tampered)).toBe(false);
    // Nothing is left to send.
    expect((await engine(t).pass()).attempted).toBe(0);
    await r.close();
  });

  it('filters by type family, severity and PID', async () => {
    const r = await receiver(ok);
    const pid = events.find((e) => e.pid !== null && e.type !== 'company.first_seen')?.pid as string;
    await subscribe(r.url, { types: ['company.first_seen'] });
    await subscribe(r.url, { minSeverity: 'medium' });
    await subscribe(r.url, { pids: [pid] });
    await engine(t).pass();
    const ids = (pred: (e: Envelope) => boolean) =>
      events
        .filter(pred)
        .map((e) => e.id)
        .sort();
    const received = r.got.map((g) => JSON.parse(g.body).data as Envelope);
    const by = (sub: (e: Envelope) => boolean) => received.filter(sub);
    expect(by((e) => e.type === 'company.first_seen').length).toBeGreaterThanOrEqual(
      ids((e) => e.type === 'company.first_seen').length,
    );
    const got = r.got.map((g) => JSON.parse(g.body).data as Envelope);
    const want = [
      ...events.filter((e) => e.type === 'company.first_seen'),
      ...events.filter((e) => e.severity !== 'low'),
      ...events.filter((e) => e.pid === pid),
    ];
    expect(
      want.filter((w) => !got.some((g) => g.id === w.id)).map((w) => `${w.type} ${w.severity} ${w.sequence}`),
    ).toEqual([]);
    expect(r.got.length).toBe(
      ids((e) => e.type === 'company.first_seen').length +
        ids((e) => e.severity !== 'low').length +
        ids((e) => e.pid === pid).length,
    );
    await r.close();
  });

  it('gets every event to a receiver that was down for the first attempts, none lost, duplicates recognisable by webhook-id', async () => {
    // Down for each event's first two attempts (counted per webhook-id, so however the passes
    // fall on a loaded machine), then up.
    const tries = new Map<string, number>();
    const r = await receiver(async (got) => {
      const id = String(got.headers['webhook-id']);
      tries.set(id, (tries.get(id) ?? 0) + 1);
      return { status: (tries.get(id) ?? 0) <= 2 ? 503 : 200 };
    });
    const { subscription } = await subscribe(r.url);
    const e = engine(t, `0,${Array(30).fill('100ms').join(',')}`);
    // Passes until every delivery is through (a loaded machine may need a while).
    for (let i = 0; i < 250; i++) {
      await e.pass();
      const [left] = await t.sql<{ n: number }[]>`
        select count(*)::int as n from delivery_queue where subscription_id = ${subscription.id} and state <> 'succeeded'`;
      if (left?.n === 0) break;
      await new Promise((res) => setTimeout(res, 120));
    }
    const delivered = new Set(
      r.got
        .filter((g) => (tries.get(String(g.headers['webhook-id'])) ?? 0) > 2)
        .map((g) => g.headers['webhook-id']),
    );
    expect([...delivered].sort()).toEqual(events.map((x) => x.id).sort());
    // Each event went three times: twice refused, then through, by the same webhook-id.
    expect([...tries.values()].every((n) => n === 3)).toBe(true);
    const [log] = await t.sql<{ failed: number; ok: number }[]>`
      select count(*) filter (where outcome <> 'succeeded')::int as failed,
             count(*) filter (where outcome = 'succeeded')::int as ok
      from webhook_deliveries where subscription_id = ${subscription.id}`;
    expect(log?.ok).toBe(events.length);
    expect(log?.failed).toBe(2 * events.length);
    const out = await runDaybook(
      ['deliveries', '--failed', '--subscription', String(subscription.id), '--json'],
      {
        DATABASE_URL: t.url,
      },
    );
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toContain('"status":503');
    await r.close();
  });

  it('gives up on an attempt it cannot record within the lease and carries on with the rest', async () => {
    // The first delivery's queue row is locked by another session as soon as it is sent, so its
    // record waits; one slot only, so the rest go out only if that wait is given up.
    const blocker = postgres(t.url, { max: 1, onnotice: () => {} });
    let release: (() => void) | undefined;
    let locked: Promise<void> | undefined;
    let releasedAt = Number.POSITIVE_INFINITY;
    const first = events[0]?.id as string;
    const r = await receiver(async (got) => {
      if (got.headers['webhook-id'] === first && !locked) {
        locked = new Promise<void>((ready) => {
          void blocker.begin(async (tx) => {
            await tx`select 1 from delivery_queue d join events e on e.seq = d.event_seq
                     where e.id = ${first} for update of d`;
            ready();
            await new Promise<void>((done) => (release = done));
          });
        });
        await locked;
      }
      return { status: 200 };
    });
    const { subscription } = await subscribe(r.url);
    const e = new DeliveryEngine(t.sql, quiet, {
      schedule: parseSchedule('0,50ms'),
      timeoutMs: 500,
      leaseMs: 1000,
      disableAfterMs: 5 * 86_400_000,
      concurrency: 1,
    });
    const passing = e.pass();
    try {
      // Events after the first reach the receiver while the first's record still waits.
      await waitFor('deliveries past the waiting one', async () => r.got.length >= 5, 30_000);
    } finally {
      releasedAt = Date.now();
      release?.();
    }
    await passing;
    const before = r.got.filter((g) => g.at < releasedAt && g.headers['webhook-id'] !== first);
    expect(before.length).toBeGreaterThanOrEqual(4);
    for (let i = 0; i < 100; i++) {
      const [left] = await t.sql<{ n: number }[]>`
        select count(*)::int as n from delivery_queue where subscription_id = ${subscription.id} and state <> 'succeeded'`;
      if (left?.n === 0) break;
      await new Promise((res) => setTimeout(res, 100));
      await e.pass();
    }
    const delivered = new Set(r.got.map((g) => g.headers['webhook-id']));
    expect([...delivered].sort()).toEqual(events.map((x) => x.id).sort());
    await blocker.end();
    await r.close();
  });

  it('disables an endpoint that answers 410, with an endpoint.disabled event', async () => {
    const r = await receiver(async () => ({ status: 410 }));
    const { subscription } = await subscribe(r.url);
    const summary = await engine(t).pass();
    expect(summary.disabled).toBe(1);
    const [s] = await t.sql<{ state: string; disabled_reason: string }[]>`
      select state, disabled_reason from subscriptions where id = ${subscription.id}`;
    expect(s).toEqual({ state: 'disabled', disabled_reason: 'the endpoint answered 410 Gone' });
    const disabled = (
      await readEvents(t.sql, { after: 0, limit: 1_000_000, types: ['endpoint.disabled'] })
    ).filter((x) => x.data.subscription_id === subscription.id);
    expect(disabled).toHaveLength(1);
    // Nothing more is sent to it.
    const before = r.got.length;
    await engine(t).pass();
    expect(r.got.length).toBe(before);
    await r.close();
  });

  it('does not let a slow endpoint hold a fast one up', async () => {
    const slow = await receiver(async () => {
      await new Promise((res) => setTimeout(res, 2000));
      return { status: 200 };
    });
    const fast = await receiver(ok);
    const now = await current();
    const last = now.at(-1) as Envelope;
    const fromSeq = (now.at(-8) as Envelope).sequence;
    await subscribe(slow.url, { fromSeq });
    await subscribe(fast.url, { fromSeq });
    const started = Date.now();
    await engine(t).pass();
    const fastDone = Math.max(...fast.got.map((g) => g.at));
    expect(fast.got).toHaveLength(now.filter((e) => e.sequence >= fromSeq).length);
    // Every fast delivery arrived before the slow endpoint had answered once (2 s after its first request).
    expect(fastDone).toBeLessThan(Math.min(...slow.got.map((g) => g.at)) + 2000);
    expect(fastDone).toBeGreaterThanOrEqual(started);
    expect(slow.got).toHaveLength(now.filter((e) => e.sequence >= fromSeq).length);
    expect(last.sequence).toBeGreaterThan(fromSeq);
    await slow.close();
    await fast.close();
  });

  it('keeps at most 1 KB of an answer, follows no redirect, and gives up on a silent endpoint at the timeout', async () => {
    const big = await receiver(async () => ({ status: 500 }));
    const bigServer = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end('x'.repeat(5000));
      });
    });
    await new Promise<void>((r) => bigServer.listen(0, '127.0.0.1', r));
    const redirect = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(302, { location: big.url });
        res.end();
      });
    });
    await new Promise<void>((r) => redirect.listen(0, '127.0.0.1', r));
    const silent = createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const url = (srv: Server) => `http://127.0.0.1:${(srv.address() as AddressInfo).port}/hook`;
    const fromSeq = ((await current()).at(-1) as Envelope).sequence;
    const a = (await subscribe(url(bigServer), { fromSeq })).subscription.id;
    const b = (await subscribe(url(redirect), { fromSeq })).subscription.id;
    const c = (await subscribe(url(silent), { fromSeq })).subscription.id;
    await new DeliveryEngine(t.sql, quiet, {
      schedule: [0, 60_000],
      timeoutMs: 300,
      disableAfterMs: 5 * 86_400_000,
      concurrency: 4,
    }).pass();
    const log = await t.sql<
      { subscription_id: number; http_status: number | null; error: string | null; response: string | null }[]
    >`
      select subscription_id::int as subscription_id, http_status, error, response from webhook_deliveries
      where subscription_id in (${a}, ${b}, ${c}) order by subscription_id`;
    expect(log.map((l) => [l.subscription_id, l.http_status])).toEqual([
      [a, 500],
      [b, 302],
      [c, null],
    ]);
    expect(log[0]?.response).toBe('x'.repeat(1024));
    expect(big.got).toHaveLength(0);
    expect(log[2]?.error).toBe('no answer within 300 ms');
    for (const srv of [bigServer, redirect, silent]) {
      srv.closeAllConnections();
      await new Promise<void>((r) => srv.close(() => r()));
    }
    await big.close();
  });

  it('disables an endpoint failing longer than the limit, and says so when one recovers', async () => {
    let up = false;
    const r = await receiver(async () => ({ status: up ? 200 : 500 }));
    const fromSeq = ((await current()).at(-1) as Envelope).sequence;
    const { subscription } = await subscribe(r.url, { fromSeq });
    const e = new DeliveryEngine(t.sql, quiet, {
      schedule: [0, 0, 0],
      timeoutMs: 2000,
      disableAfterMs: 1,
      concurrency: 4,
    });
    await e.pass();
    const [s] = await t.sql<{ state: string; disabled_reason: string }[]>`
      select state, disabled_reason from subscriptions where id = ${subscription.id}`;
    expect(s?.state).toBe('disabled');
    // Turned on again after a long failure, it answers: endpoint.recovered.
    await t.sql`update subscriptions set state = 'active', failing_since = now() - interval '1 hour' where id = ${subscription.id}`;
    await t.sql`update delivery_queue set state = 'pending', next_attempt_at = now(), attempts = 0 where subscription_id = ${subscription.id}`;
    up = true;
    await engine(t).pass();
    const recovered = (await current()).filter(
      (x) => x.type === 'endpoint.recovered' && x.data.subscription_id === subscription.id,
    );
    expect(recovered).toHaveLength(1);
    await r.close();
  });

  it('signs with both secrets while a rotation overlaps, then with the new one only', async () => {
    const r = await receiver(ok);
    const fromSeq = (events.at(-2) as Envelope).sequence;
    const { subscription, secret: old } = await subscribe(r.url, { fromSeq });
    const fresh = (await rotateSecret(t.sql, subscription.id, 60_000)) as string;
    expect(fresh).toMatch(/^whsec_/);
    await engine(t).pass();
    for (const g of r.got) {
      expect(verifiedByLibrary(old, g)).toBe(true);
      expect(verifiedByLibrary(fresh, g)).toBe(true);
      expect(String(g.headers['webhook-signature']).split(' ')).toHaveLength(2);
    }
    const newest = (await rotateSecret(t.sql, subscription.id, 0)) as string;
    await t.sql`update subscriptions set cursor_seq = ${fromSeq - 1} where id = ${subscription.id}`;
    await t.sql`delete from delivery_queue where subscription_id = ${subscription.id}`;
    const before = r.got.length;
    await engine(t).pass();
    for (const g of r.got.slice(before)) {
      expect(verifiedByLibrary(newest, g)).toBe(true);
      expect(verifiedByLibrary(fresh, g)).toBe(false);
    }
    await r.close();
  });

  it('sends a subscription its events again on replay, with the same webhook-ids', async () => {
    const r = await receiver(ok);
    const { subscription } = await subscribe(r.url);
    await engine(t).pass();
    const first = r.got.map((g) => g.headers['webhook-id']);
    const now = await current();
    expect(first.length).toBe(now.length);
    const out = await runDaybook(
      [
        'events',
        'replay',
        '--subscription',
        String(subscription.id),
        '--after',
        String((now.at(-4) as Envelope).sequence),
      ],
      { DATABASE_URL: t.url },
    );
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toContain('3 events queued again');
    await engine(t).pass();
    expect(
      r.got
        .slice(first.length)
        .map((g) => g.headers['webhook-id'])
        .sort(),
    ).toEqual(
      now
        .slice(-3)
        .map((e) => e.id)
        .sort(),
    );
    const bad = await runDaybook(['events', 'replay', '--subscription', String(subscription.id)], {
      DATABASE_URL: t.url,
    });
    expect(bad.code).toBe(2);
    await r.close();
  });

  it('runs for as long as asked with one abort listener at most (no leak per poll), and stops when told', async () => {
    const stop = new AbortController();
    const running = engine(t).run(stop.signal, 10);
    await new Promise((r) => setTimeout(r, 400));
    expect(getEventListeners(stop.signal, 'abort').length).toBeLessThanOrEqual(1);
    stop.abort();
    await running;
  });

  it('refuses a private address unless the subscription allows it, and shows the secret only once', async () => {
    const env = { DATABASE_URL: t.url };
    const refused = await runDaybook(['subscribe', 'add', 'http://127.0.0.1:9/hook'], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('127.0.0.1 is a private address');
    for (const bad of ['ftp://example.com/x', 'not a url', 'https://user:pw@example.com/x']) {
      const r = await runDaybook(['subscribe', 'add', bad], env);
      expect(r.code, bad).toBe(2);
    }
    const added = await runDaybook(
      ['subscribe', 'add', 'http://127.0.0.1:9/hook', '--allow-private', '--json'],
      env,
    );
    expect(added.code, added.stderr).toBe(0);
    const { id, secret } = JSON.parse(added.stdout) as { id: number; secret: string };
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]{44}$/);
    const list = await runDaybook(['subscribe', 'list', '--json'], env);
    expect(list.stdout).toContain(`"id":${id}`);
    expect(list.stdout).not.toContain(secret);
    expect((await runDaybook(['subscribe', 'pause', String(id)], env)).stdout).toContain('paused');
    expect((await runDaybook(['subscribe', 'remove', String(id)], env)).code).toBe(0);
    expect((await runDaybook(['subscribe', 'remove', String(id)], env)).code).toBe(2);
    // The secret is in no analytics view.
    const dump = await runDaybook(['sql', '--json', 'select * from analytics.events'], env);
    expect(dump.stdout).not.toContain('whsec_');
  });
});

describe('webhooks in the embedded mode', { timeout: 180_000 }, () => {
  it('daybook run delivers what the cycle found, as the pull feed lists it', async () => {
    const sim = await startTestSim({ enterprises: 50 });
    const dir = mkdtempSync(join(tmpdir(), 'daybook-embedded-hooks-'));
    const r = await receiver(ok);
    try {
      const env = {
        DAYBOOK_DATA_DIR: dir,
        DAYBOOK_API_BASE_URL: sim.url,
        DAYBOOK_API_KEY: TEST_KEY,
        LOG_LEVEL: 'error',
      };
      expect((await runDaybook(['migrate'], env)).code).toBe(0);
      const names = sim.sim
        .world()
        .all()
        .slice(0, 3)
        .map((e) => e.ENTNAME);
      expect((await runDaybook(['watch', 'add', ...names], env)).code).toBe(0);
      const added = await runDaybook(['subscribe', 'add', r.url, '--allow-private', '--json'], env);
      expect(added.code, added.stderr).toBe(0);
      const { secret } = JSON.parse(added.stdout) as { secret: string };
      const run = await runDaybook(['run', '--only', 'enterprises', '--cycle', '2026-11-20'], env);
      expect(run.code, run.stderr).toBe(0);
      // Three companies first seen, then the cycle completed and its digest.
      expect(run.stdout).toContain('webhooks: 5 delivered');
      expect(r.got.map((g) => JSON.parse(g.body).type).sort()).toEqual([
        'company.first_seen',
        'company.first_seen',
        'company.first_seen',
        'cycle.completed',
        'digest.daily',
      ]);
      for (const g of r.got) expect(verifiedByLibrary(secret, g)).toBe(true);
      const feed = await runDaybook(['events', '--json'], env);
      const ids = feed.stdout
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { id: string }).id);
      expect(r.got.map((g) => g.headers['webhook-id']).sort()).toEqual(ids.sort());
    } finally {
      await r.close();
      await sim.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
