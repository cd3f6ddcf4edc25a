/**
 * Signing in to the admin server and its console: the cookie is a signed session that expires,
 * never the token, and a new token ends every session; it is Secure behind https (a trusted
 * proxy saying so, or an https DAYBOOK_PUBLIC_URL) and not on a client's say-so; signing in
 * returns to the page asked for, its query kept, and never to another site.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.ts';
import { type ConsoleReader, openConsoleReader } from '../../src/console/reader.ts';
import {
  type AdminOptions,
  newSession,
  type RunningAdmin,
  SESSION_COOKIE,
  SESSION_MAX_AGE_S,
  sessionKey,
  startAdminServer,
} from '../../src/runtime/admin.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';

const TOKEN = 'sessions-test-token-0a1b2c';
const ROTATED = 'sessions-test-token-rotated-9z';

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A real request (fetch cannot set Host or X-Forwarded-Proto as a proxy would). */
function send(base: string, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ hostname: url.hostname, port: url.port, path, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The session cookie a sign-in set: its `name=value`, and its attributes. */
function sessionOf(a: Answer): { pair: string; value: string; attributes: string[] } {
  const set = (a.headers['set-cookie'] ?? []).find((c) => c.startsWith(`${SESSION_COOKIE}=`));
  expect(set, 'a session cookie').toBeDefined();
  const [pair = '', ...attributes] = (set as string).split(/;\s*/);
  return { pair, value: pair.slice(SESSION_COOKIE.length + 1), attributes };
}

describe('sessions of the admin server', { timeout: 120_000 }, () => {
  let db: TestDatabase;
  let reader: ConsoleReader;
  const running: RunningAdmin[] = [];

  const start = async (options: Partial<AdminOptions> = {}): Promise<RunningAdmin> => {
    const admin = await startAdminServer({
      sql: db.sql,
      redis: null,
      queues: null,
      console: reader,
      host: '127.0.0.1',
      port: 0,
      token: TOKEN,
      ...options,
    });
    running.push(admin);
    return admin;
  };

  beforeAll(async () => {
    db = await freshDatabase();
    reader = await openConsoleReader(db.sql, db.url, false);
  });
  afterAll(async () => {
    for (const a of running) await a.close();
    await reader?.close();
    await db?.drop();
  });

  it('sets a signed, expiring session that is not the token, and lets it in', async () => {
    const admin = await start();
    const signIn = await send(admin.url, `/ui/?token=${TOKEN}`);
    expect(signIn.status).toBe(303);
    const { pair, value, attributes } = sessionOf(signIn);
    expect(value).not.toContain(TOKEN);
    expect(value).not.toContain(encodeURIComponent(TOKEN));
    expect(value).not.toContain(Buffer.from(TOKEN).toString('base64url'));
    expect(value).toMatch(/^v1\.\d+\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/);
    const expires = Number(value.split('.')[1]);
    expect(Math.abs(expires - (Date.now() / 1000 + SESSION_MAX_AGE_S))).toBeLessThan(60);
    expect(attributes.sort()).toEqual(['HttpOnly', 'Max-Age=28800', 'Path=/', 'SameSite=Lax']);
    // Two sign-ins, two sessions.
    expect(sessionOf(await send(admin.url, `/ui/?token=${TOKEN}`)).value).not.toBe(value);

    const page = await send(admin.url, '/ui/', { cookie: pair });
    expect(page.status).toBe(200);
    expect((await send(admin.url, '/events', { cookie: pair })).status).toBe(200);
    // The token itself as a cookie, as the server used to set it, is no session.
    for (const cookie of [`daybook_token=${TOKEN}`, `${SESSION_COOKIE}=${TOKEN}`])
      expect((await send(admin.url, '/events', { cookie })).status, cookie).toBe(401);
  });

  it('refuses a session from before the token changed, a forged one and an expired one', async () => {
    const first = await start();
    const { pair, value } = sessionOf(await send(first.url, `/ui/?token=${TOKEN}`));
    // A restart with the same token keeps the session.
    const again = await start();
    expect((await send(again.url, '/ui/', { cookie: pair })).status).toBe(200);
    // A restart with another token ends it: the sign-in page again.
    const rotated = await start({ token: ROTATED });
    const refused = await send(rotated.url, '/ui/', { cookie: pair });
    expect(refused.status).toBe(401);
    expect(refused.body).toContain('name="token"');
    expect((await send(rotated.url, '/events', { cookie: pair })).status).toBe(401);
    const fresh = sessionOf(await send(rotated.url, `/ui/?token=${ROTATED}`));
    expect((await send(rotated.url, '/ui/', { cookie: fresh.pair })).status).toBe(200);

    // Forged: a later expiry under the old MAC, or a MAC made with another key.
    const [v, exp, nonce, mac] = value.split('.');
    const later = `${SESSION_COOKIE}=${v}.${Number(exp) + 3600}.${nonce}.${mac}`;
    expect((await send(first.url, '/events', { cookie: later })).status).toBe(401);
    const otherKey = `${SESSION_COOKIE}=${newSession(sessionKey('some-other-token-entirely'), Date.now())}`;
    expect((await send(first.url, '/events', { cookie: otherKey })).status).toBe(401);
    // Expired: a session minted nine hours ago with the right key.
    const old = `${SESSION_COOKIE}=${newSession(sessionKey(TOKEN), Date.now() - 9 * 3600_000)}`;
    expect((await send(first.url, '/events', { cookie: old })).status).toBe(401);
    const current = `${SESSION_COOKIE}=${newSession(sessionKey(TOKEN), Date.now() - 3600_000)}`;
    expect((await send(first.url, '/events', { cookie: current })).status).toBe(200);
    // Expired by the server's clock too.
    const later9h = await start({ now: () => Date.now() + 9 * 3600_000 });
    expect((await send(later9h.url, '/events', { cookie: pair })).status).toBe(401);
  });

  it('is Secure through a trusted proxy saying https, or with an https public URL; not on a client’s say-so', async () => {
    const https = { 'x-forwarded-proto': 'https' };
    const secure = (a: Answer) => sessionOf(a).attributes.includes('Secure');

    const config = loadConfig({ DAYBOOK_TRUSTED_PROXIES: '127.0.0.1, 10.0.0.0/8' }, '/nonexistent/.env');
    expect(config.DAYBOOK_TRUSTED_PROXIES).toEqual(['127.0.0.1', '10.0.0.0/8']);
    const behindProxy = await start({ trustedProxies: config.DAYBOOK_TRUSTED_PROXIES ?? [] });
    expect(secure(await send(behindProxy.url, `/ui/?token=${TOKEN}`, https))).toBe(true);
    expect(secure(await send(behindProxy.url, `/ui/?token=${TOKEN}`))).toBe(false);
    expect(secure(await send(behindProxy.url, `/ui/?token=${TOKEN}`, { 'x-forwarded-proto': 'http' }))).toBe(
      false,
    );

    // The request comes from 127.0.0.1, which is not the proxy: its header is not believed.
    const otherProxy = await start({ trustedProxies: ['10.1.2.3'] });
    expect(secure(await send(otherProxy.url, `/ui/?token=${TOKEN}`, https))).toBe(false);
    const noProxy = await start();
    expect(secure(await send(noProxy.url, `/ui/?token=${TOKEN}`, https))).toBe(false);

    const publicHttps = await start({ publicUrl: 'https://daybook.example.com' });
    expect(secure(await send(publicHttps.url, `/ui/?token=${TOKEN}`))).toBe(true);
    const publicHttp = await start({ publicUrl: 'http://daybook.internal:9464' });
    expect(secure(await send(publicHttp.url, `/ui/?token=${TOKEN}`))).toBe(false);

    for (const bad of ['not-an-address', '10.0.0.0/33', '::1/129', '1.2.3.4/x', ',']) {
      expect(() => loadConfig({ DAYBOOK_TRUSTED_PROXIES: bad }, '/nonexistent/.env'), bad).toThrow(
        /DAYBOOK_TRUSTED_PROXIES must be/,
      );
    }
  });

  it('returns from the sign-in form to the page asked for, its query kept', async () => {
    const admin = await start();
    // The link a chat message sends: the browser keeps #v2 to itself.
    const asked = '/ui/companies/X?at=2026-01-02';
    const form = await send(admin.url, asked);
    expect(form.status).toBe(401);
    // The form has no action: it goes to this very address (fragment and all, in a browser),
    // its query as hidden fields beside the token.
    const tag = /<form\b[^>]*>/.exec(form.body)?.[0] ?? '';
    expect(tag).toContain('method="get"');
    expect(tag).not.toContain('action=');
    const fields = new URLSearchParams();
    for (const m of form.body.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g))
      fields.append(m[1] as string, m[2] as string);
    fields.append('token', TOKEN);
    const target = new URL(`${asked}#v2`, admin.url);
    target.search = fields.toString();
    const signIn = await send(admin.url, `${target.pathname}${target.search}`);
    expect(signIn.status).toBe(303);
    expect(signIn.headers.location).toBe('/ui/companies/X?at=2026-01-02');
    expect(signIn.headers['cache-control']).toBe('no-store');
    sessionOf(signIn);
  });

  it('goes to `next` on this server only: any other site, scheme or trick lands on /ui/', async () => {
    const admin = await start();
    const go = async (next: string) =>
      (await send(admin.url, `/ui/?token=${TOKEN}&next=${encodeURIComponent(next)}`)).headers.location;
    expect(await go('/ui/changes?severity=high&from=2026-01-01#c9')).toBe(
      '/ui/changes?severity=high&from=2026-01-01',
    );
    expect(await go('/ui/companies/X?at=2026-01-02&token=leak')).toBe('/ui/companies/X?at=2026-01-02');
    for (const next of [
      '//evil.example/ui/',
      '/\\evil.example',
      '\\\\evil.example',
      '///evil.example',
      'https://evil.example/ui/',
      'http:evil.example',
      'javascript:alert(1)',
      'data:text/html,<script>alert(1)</script>',
      ' //evil.example',
      '/\t/evil.example',
      '/ui/\r\nSet-Cookie: x=1',
      `${admin.url}/ui/`,
      'ui/companies',
      '',
    ]) {
      const location = await go(next);
      expect(location, JSON.stringify(next)).toBe('/ui/');
    }
    // Given twice: neither is chosen.
    const twice = await send(admin.url, `/ui/?token=${TOKEN}&next=/ui/changes&next=//evil.example`);
    expect(twice.headers.location).toBe('/ui/');
  });
});
