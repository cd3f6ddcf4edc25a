import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/config.ts';
import {
  AdminConfigError,
  buildAdminApp,
  newSession,
  type RunningAdmin,
  sessionKey,
  startAdminServer,
  withoutToken,
} from '../../src/runtime/admin.ts';
import { cycleOf } from '../../src/time/cycles.ts';
import { ensureChromium, HEADLESS_FLAGS } from '../support/debian.ts';
import { startPipeline, type TestPipeline, until } from '../support/pipeline.ts';

const run = promisify(execFile);

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * A real HTTP request to `base` with the Host header a browser would send for `host` (fetch
 * cannot set Host). `tls`: over HTTPS, trusting any certificate.
 */
function send(
  base: string,
  path: string,
  options: { host?: string; method?: string; headers?: Record<string, string>; tls?: boolean } = {},
): Promise<Answer> {
  const url = new URL(base);
  const request = options.tls ? https.request : http.request;
  return new Promise((resolve, reject) => {
    const req = request(
      {
        hostname: url.hostname,
        port: url.port,
        path,
        method: options.method ?? 'GET',
        headers: { ...options.headers, ...(options.host ? { host: options.host } : {}) },
        ...(options.tls ? { rejectUnauthorized: false } : {}),
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const REFUSED = 'misdirected request: this server does not answer to that Host (see DAYBOOK_ADMIN_HOSTS)\n';

/** A refusal carries the short plain text only: no data, no cookie. */
function expectRefused(a: Answer, what: string): void {
  expect(a.status, what).toBe(421);
  expect(a.headers['content-type'], what).toMatch(/^text\/plain/);
  expect(a.body, what).toBe(REFUSED);
  expect(a.headers['set-cookie'], what).toBeUndefined();
}

describe('the admin server', { timeout: 300_000 }, () => {
  let p: TestPipeline;
  let admin: RunningAdmin;

  beforeAll(async () => {
    p = await startPipeline();
    await p.watch(12);
    const cycle = cycleOf(p.sim.sim.now());
    const w = p.startWorkers(4);
    await p.queues.addPlan({ cycle });
    await until([w], async () => {
      const [r] = await p.db.sql<
        { n: number }[]
      >`select count(*)::int as n from cycle_fetches where status = 'succeeded'`;
      return r?.n === 12;
    });
    // A job is completed in BullMQ after its entry is settled (the last one may be writing the
    // cycle's digest): the counts below are taken once the queue says so too.
    await until([w], async () => (await p.queues.enterprise.getJobCounts('completed')).completed === 12);
    admin = await startAdminServer({
      sql: p.db.sql,
      redis: p.redis,
      queues: p.queues,
      host: '127.0.0.1',
      port: 0,
      token: null,
    });
  });
  afterAll(async () => {
    await admin?.close();
    await p?.close();
  });

  it('/healthz reports Postgres and Redis', async () => {
    const res = await fetch(`${admin.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok', postgres: 'ok', redis: 'ok' });
  });

  it('/metrics has upstream requests, credits, job durations, queue depths, versions and changes', async () => {
    const text = await (await fetch(`${admin.url}/metrics`)).text();
    expect(text).toMatch(/daybook_upstream_requests\{operation="enterprise-search",outcome="success"\} 12/);
    expect(text).toMatch(/daybook_credits_billed\{scope="total"\} 36/);
    expect(text).toMatch(/daybook_job_duration_seconds\{kind="enterprise",stat="p95"\} [\d.e-]+/);
    expect(text).toMatch(/daybook_queue_jobs\{queue="enterprise",state="completed"\} 12/);
    expect(text).toMatch(/daybook_versions_written\{entity="enterprise"\} 12/);
    expect(text).toMatch(/daybook_changes_detected\{severity="high"\} 0/);
    expect(text).toContain('daybook_rate_limited_answers');
  });

  it('/events pages through the outbox as daybook events does; /metrics counts webhook attempts', async () => {
    const all = (await (await fetch(`${admin.url}/events?limit=10000`)).json()) as {
      events: { sequence: number; type: string }[];
      next_after: number;
    };
    expect(all.events.filter((e) => e.type === 'company.first_seen')).toHaveLength(12);
    const page = (await (
      await fetch(`${admin.url}/events?after=${all.events[4]?.sequence}&limit=3`)
    ).json()) as {
      events: { sequence: number }[];
      next_after: number;
    };
    expect(page.events.map((e) => e.sequence)).toEqual(all.events.slice(5, 8).map((e) => e.sequence));
    expect(page.next_after).toBe(all.events[7]?.sequence);
    const typed = (await (await fetch(`${admin.url}/events?type=company.first_seen&limit=100`)).json()) as {
      events: unknown[];
    };
    expect(typed.events).toHaveLength(12);
    expect((await fetch(`${admin.url}/events?after=-1`)).status).toBe(400);
    const text = await (await fetch(`${admin.url}/metrics`)).text();
    expect(text).toContain('# HELP daybook_webhook_attempts');
    expect(text).toContain('# HELP daybook_webhook_queue');
  });

  it('refuses to bind beyond loopback without a token, and then requires it', async () => {
    await expect(
      buildAdminApp({
        sql: p.db.sql,
        redis: p.redis,
        queues: p.queues,
        host: '0.0.0.0',
        port: 0,
        token: null,
      }),
    ).rejects.toBeInstanceOf(AdminConfigError);
    const token = 'a-token-of-enough-length';
    const guarded = await startAdminServer({
      sql: p.db.sql,
      redis: p.redis,
      queues: p.queues,
      host: '127.0.0.1',
      port: 0,
      token,
    });
    try {
      expect((await fetch(`${guarded.url}/metrics`)).status).toBe(401);
      expect((await fetch(`${guarded.url}/queues`)).status).toBe(401);
      expect(
        (await fetch(`${guarded.url}/metrics`, { headers: { Authorization: `Bearer ${token}` } })).status,
      ).toBe(200);
      const viaQuery = await fetch(`${guarded.url}/queues?token=${token}`, { redirect: 'manual' });
      expect(viaQuery.status).toBe(303);
      expect(viaQuery.headers.get('location')).toBe('/queues');
      expect(viaQuery.headers.get('set-cookie')).toMatch(/^daybook_session=v1\./);
      expect((await fetch(`${guarded.url}/healthz`)).status).toBe(200);
    } finally {
      await guarded.close();
    }
  });

  describe('answers only to an expected Host (DNS rebinding)', () => {
    const foreign = ['evil.example', 'evil.example:9464'];
    const paths = ['/queues', '/metrics', '/queues/api/queues', '/queues/api/redis/stats', '/', '/nowhere'];

    it('refuses a foreign Host on every route, loopback and no token', async () => {
      const port = new URL(admin.url).port;
      for (const host of [
        ...foreign,
        `evil.example:${port}`,
        'localhost.evil.example',
        '127.0.0.1.evil.example',
      ])
        for (const path of paths) expectRefused(await send(admin.url, path, { host }), `${host} ${path}`);
      // Bull Board's buttons: pausing every queue, or one, changes nothing.
      for (const path of ['/queues/api/queues/pause', '/queues/api/queues/enterprise/pause'])
        expectRefused(await send(admin.url, path, { host: 'evil.example', method: 'PUT' }), path);
      for (const q of p.queues.all()) expect(await q.isPaused(), q.name).toBe(false);
    });

    it('answers to the bound address and the loopback names, with and without the port', async () => {
      const port = new URL(admin.url).port;
      for (const host of [
        `127.0.0.1:${port}`,
        '127.0.0.1',
        `localhost:${port}`,
        'localhost',
        'LocalHost',
        `[::1]:${port}`,
        '[::1]',
      ]) {
        const metrics = await send(admin.url, '/metrics', { host });
        expect(metrics.status, host).toBe(200);
        expect(metrics.body, host).toContain('daybook_queue_jobs');
        expect((await send(admin.url, '/queues', { host })).status, host).toBe(200);
        expect((await send(admin.url, '/queues/api/queues', { host })).status, host).toBe(200);
      }
    });

    it('leaves /healthz open to any Host, saying only ok to a foreign one', async () => {
      const a = await send(admin.url, '/healthz', { host: 'evil.example' });
      expect(a.status).toBe(200);
      expect(JSON.parse(a.body)).toEqual({ status: 'ok' });
      const own = await send(admin.url, '/healthz', { host: 'localhost' });
      expect(JSON.parse(own.body)).toEqual({ status: 'ok', postgres: 'ok', redis: 'ok' });
    });

    it('with a token: the bound address and DAYBOOK_ADMIN_HOSTS only; a foreign Host gets nothing even with the token', async () => {
      const token = 'a-token-of-enough-length';
      const config = loadConfig(
        { DAYBOOK_ADMIN_HOSTS: ' Admin.Internal, proxy.example:8443 ,', DAYBOOK_ADMIN_TOKEN: token },
        '/nonexistent/.env',
      );
      expect(config.DAYBOOK_ADMIN_HOSTS).toEqual(['admin.internal', 'proxy.example:8443']);
      // 127.0.0.2 is loopback on Linux, but not one of the names that skip the token.
      const guarded = await startAdminServer({
        sql: p.db.sql,
        redis: p.redis,
        queues: p.queues,
        host: '127.0.0.2',
        port: 0,
        token,
        allowedHosts: config.DAYBOOK_ADMIN_HOSTS ?? [],
      });
      const port = new URL(guarded.url).port;
      const bearer = { authorization: `Bearer ${token}` };
      const cookie = { cookie: `daybook_session=${newSession(sessionKey(token), Date.now())}` };
      try {
        for (const host of [
          ...foreign,
          'localhost',
          `127.0.0.1:${port}`,
          'proxy.example',
          'proxy.example:9999',
        ]) {
          for (const path of paths) {
            expectRefused(await send(guarded.url, path, { host, headers: bearer }), `${host} ${path} bearer`);
            expectRefused(await send(guarded.url, path, { host, headers: cookie }), `${host} ${path} cookie`);
            expectRefused(
              await send(guarded.url, `${path}?token=${token}`, { host }),
              `${host} ${path} ?token=`,
            );
          }
          expectRefused(
            await send(guarded.url, '/queues/api/queues/pause', { host, method: 'PUT', headers: bearer }),
            `${host} pause`,
          );
        }
        for (const q of p.queues.all()) expect(await q.isPaused(), q.name).toBe(false);
        for (const host of [
          `127.0.0.2:${port}`,
          '127.0.0.2',
          'admin.internal',
          'ADMIN.internal:443',
          'proxy.example:8443',
        ]) {
          expect((await send(guarded.url, '/metrics', { host, headers: bearer })).status, host).toBe(200);
          expect(
            (await send(guarded.url, '/queues/api/queues', { host, headers: cookie })).status,
            host,
          ).toBe(200);
          expect((await send(guarded.url, '/metrics', { host })).status, `${host} no token`).toBe(401);
        }
      } finally {
        await guarded.close();
      }
    });

    it('?token= sets an HttpOnly, SameSite=Lax session for 8 hours and redirects to the address without the token', async () => {
      const token = 'another-token-long-enough';
      const guarded = await startAdminServer({
        sql: p.db.sql,
        redis: p.redis,
        queues: p.queues,
        host: '127.0.0.1',
        port: 0,
        token,
      });
      try {
        const a = await send(guarded.url, `/queues/?a=1&token=${token}&b=x%20y&token=again`, {
          host: 'localhost',
          // Not trusted: no Secure flag over plain HTTP whatever a client claims.
          headers: { 'x-forwarded-proto': 'https' },
        });
        expect(a.status).toBe(303);
        expect(a.headers.location).toBe('/queues/?a=1&b=x%20y');
        expect(a.headers.location).not.toContain(token);
        expect(a.headers['cache-control']).toBe('no-store');
        const [setCookie] = a.headers['set-cookie'] ?? [];
        const attributes = (setCookie ?? '').split(/;\s*/);
        expect(attributes[0]).toMatch(/^daybook_session=v1\./);
        expect(attributes[0]).not.toContain(token);
        expect(attributes.slice(1).sort()).toEqual(['HttpOnly', 'Max-Age=28800', 'Path=/', 'SameSite=Lax']);
        const only = await send(guarded.url, `/metrics?token=${token}`, { host: 'localhost' });
        expect(only.status).toBe(303);
        expect(only.headers.location).toBe('/metrics');
        // The cookie alone then lets the browser in.
        const next = await send(guarded.url, '/metrics', { headers: { cookie: attributes[0] as string } });
        expect(next.status).toBe(200);
        // A wrong token redirects nowhere and sets nothing.
        const wrong = await send(guarded.url, '/queues?token=not-the-token-at-all');
        expect(wrong.status).toBe(401);
        expect(wrong.headers['set-cookie']).toBeUndefined();
        expect(wrong.headers.location).toBeUndefined();
      } finally {
        await guarded.close();
      }
    });

    it('the cookie is Secure over TLS', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'daybook-tls-'));
      await run('openssl', [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ]);
      const token = 'a-token-for-tls-requests';
      const app = await buildAdminApp({
        sql: p.db.sql,
        redis: p.redis,
        queues: p.queues,
        host: '127.0.0.1',
        port: 0,
        token,
      });
      await app.ready();
      const server = https.createServer(
        { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) },
        (req, res) => app.routing(req, res),
      );
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
      try {
        const a = await send(base, `/queues?token=${token}`, { tls: true, host: 'localhost' });
        expect(a.status).toBe(303);
        expect(a.headers.location).toBe('/queues');
        expect((a.headers['set-cookie']?.[0] ?? '').split(/;\s*/)).toContain('Secure');
        expectRefused(await send(base, `/queues?token=${token}`, { tls: true, host: 'evil.example' }), 'tls');
      } finally {
        await new Promise((resolve) => server.close(resolve));
        await app.close();
      }
    });
  });

  it('the redirect target keeps the rest of the query as sent and stays on this server', () => {
    expect(withoutToken('/queues?token=t')).toBe('/queues');
    expect(withoutToken('/queues/api?x=1&%74oken=t&token&y=%2F')).toBe('/queues/api?x=1&y=%2F');
    expect(withoutToken('//evil.example/x?token=t')).toBe('/evil.example/x');
    expect(withoutToken('/\\evil.example?token=t')).toBe('/evil.example');
  });

  it('DAYBOOK_ADMIN_HOSTS is checked with a clear message', () => {
    for (const bad of ['evil example', 'a.example:99999', 'http://a.example', 'a.example/x', ',', 'a:0']) {
      let error: unknown;
      try {
        loadConfig({ DAYBOOK_ADMIN_HOSTS: bad }, '/nonexistent/.env');
      } catch (err) {
        error = err;
      }
      expect(error, bad).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).problems.join('\n'), bad).toMatch(
        /^DAYBOOK_ADMIN_HOSTS must be a comma-separated list of host names or IP addresses, each optionally with a port/,
      );
    }
    expect(
      loadConfig(
        { DAYBOOK_ADMIN_HOSTS: 'daybook-admin:9464,10.0.0.5,[FD00::5]:8443,admin_1' },
        '/nonexistent/.env',
      ).DAYBOOK_ADMIN_HOSTS,
    ).toEqual(['daybook-admin:9464', '10.0.0.5', '[fd00::5]:8443', 'admin_1']);
  });

  it('Bull Board renders the queues in headless Chromium', async () => {
    const chromium = ensureChromium();
    const profile = mkdtempSync(join(tmpdir(), 'daybook-chromium-'));
    const flags = [...HEADLESS_FLAGS, `--user-data-dir=${profile}`, '--virtual-time-budget=15000'];
    const { stdout } = await run(chromium, [...flags, '--dump-dom', `${admin.url}/queues`], {
      timeout: 120_000,
      maxBuffer: 20_000_000,
    });
    for (const queue of ['enterprise', 'plan', 'products']) expect(stdout).toContain(queue);
    expect(stdout).toMatch(/bull/i);
    const shot = join(profile, 'bull-board.png');
    await run(chromium, [...flags, '--window-size=1280,900', `--screenshot=${shot}`, `${admin.url}/queues`], {
      timeout: 120_000,
    });
    expect(existsSync(shot)).toBe(true);
    expect(statSync(shot).size).toBeGreaterThan(10_000);
    console.log(`Bull Board screenshot: ${shot}`);
  });
});
