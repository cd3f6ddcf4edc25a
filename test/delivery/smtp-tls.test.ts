/**
 * An SMTP login goes only over TLS (src/delivery/mailer.ts): with a user and password in
 * DAYBOOK_SMTP_URL, `daybook deliver` (the real command, a child process) sends them over
 * smtps:// or after STARTTLS, which is then required; to a server that offers no STARTTLS (or
 * whose STARTTLS someone on the path stripped) it sends no AUTH command at all, and the mail
 * fails with an error naming the problem and the fix, on the retry schedule, which ends.
 * DAYBOOK_SMTP_ALLOW_PLAINTEXT_AUTH=true lets the login go unencrypted (a local relay).
 *
 * Every connection goes through a tap on loopback that keeps what the client sent: a password,
 * as is or in base64 (AUTH PLAIN, AUTH LOGIN), must never be in it; after STARTTLS the tap sees
 * ciphertext only. The servers are smtp-server; the STARTTLS one has a self-signed certificate
 * that the command trusts through NODE_EXTRA_CA_CERTS, as an operator would add a private CA.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { SMTPServer } from 'smtp-server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { addSubscription } from '../../src/delivery/store.ts';
import { appendEvents } from '../../src/events/outbox.ts';
import { SCHEDULE_JITTER } from '../../src/retry/schedule.ts';
import { runDaybook } from '../support/cli.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';

const run = promisify(execFile);
const USER = 'daybook';
const PASSWORD = 'smtp-tls-pass-8c41e2';
const FROM = 'daybook <daybook@example.com>';

/** A self-signed certificate for 127.0.0.1 (openssl, as the doctor and admin tests make one). */
async function certificate(dir: string): Promise<{ key: string; cert: string; certPath: string }> {
  const keyPath = join(dir, 'key.pem');
  const certPath = join(dir, 'cert.pem');
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-days',
    '2',
    '-subj',
    '/CN=127.0.0.1',
    '-addext',
    'subjectAltName=IP:127.0.0.1',
    '-keyout',
    keyPath,
    '-out',
    certPath,
  ]);
  return { key: readFileSync(keyPath, 'utf8'), cert: readFileSync(certPath, 'utf8'), certPath };
}

interface Smtp {
  /** smtp://daybook:<password>@127.0.0.1:<the tap's port> */
  url: string;
  /** Every login the server was given, and whether its connection was encrypted then. */
  logins: { user: string; password: string; secure: boolean }[];
  mails: string[];
  /** What clients sent through the tap, every connection's bytes as latin1 text. */
  sent: () => string;
  close: () => Promise<void>;
}

/**
 * An SMTP server behind a tap. `tls` given: it offers STARTTLS and takes a login only over it;
 * otherwise it offers no STARTTLS and takes a login in the clear.
 */
async function smtp(tls?: { key: string; cert: string }): Promise<Smtp> {
  const logins: Smtp['logins'] = [];
  const mails: string[] = [];
  const server = new SMTPServer({
    ...(tls ? { key: tls.key, cert: tls.cert } : { disabledCommands: ['STARTTLS'], allowInsecureAuth: true }),
    logger: false,
    onAuth(auth, session, cb) {
      logins.push({ user: auth.username ?? '', password: auth.password ?? '', secure: session.secure });
      if (auth.username === USER && auth.password === PASSWORD) cb(null, { user: USER });
      else cb(new Error('Invalid username or password'));
    },
    onData(stream, _session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        mails.push(Buffer.concat(chunks).toString('utf8'));
        cb();
      });
    },
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.server.address() as AddressInfo).port;
  const sent: Buffer[] = [];
  const sockets = new Set<Socket>();
  const tap: Server = createServer((client) => {
    const upstream = connect(port, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.on('data', (d: Buffer) => {
      sent.push(d);
      upstream.write(d);
    });
    upstream.pipe(client);
  });
  await new Promise<void>((r) => tap.listen(0, '127.0.0.1', () => r()));
  return {
    url: `smtp://${USER}:${PASSWORD}@127.0.0.1:${(tap.address() as AddressInfo).port}`,
    logins,
    mails,
    sent: () => Buffer.concat(sent).toString('latin1'),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => tap.close(() => r()));
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** The forms a password takes on the wire: as is, in AUTH LOGIN's base64, in AUTH PLAIN's. */
const PASSWORD_FORMS = [
  PASSWORD,
  Buffer.from(PASSWORD).toString('base64'),
  Buffer.from(`\u0000${USER}\u0000${PASSWORD}`).toString('base64'),
];

/** Whether a login went in clear text over the tap: an AUTH command, or the password in any form. */
function loginInClear(sent: string): boolean {
  return /^AUTH\b/im.test(sent) || PASSWORD_FORMS.some((f) => sent.includes(f));
}

describe('an SMTP login goes only over TLS', { timeout: 120_000 }, () => {
  let t: TestDatabase;
  let dir: string;
  let cert: { key: string; cert: string; certPath: string };
  const open: Smtp[] = [];

  beforeAll(async () => {
    t = await freshDatabase();
    dir = mkdtempSync(join(tmpdir(), 'daybook-smtp-tls-'));
    cert = await certificate(dir);
  });
  afterEach(async () => {
    while (open.length) await open.pop()?.close();
    await t.sql`delete from subscriptions`;
  });
  afterAll(async () => {
    await t?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const server = async (tls?: { key: string; cert: string }) => {
    const s = await smtp(tls);
    open.push(s);
    return s;
  };

  /** A mail subscription, then one change for it: one mail to send. Returns the subscription's id. */
  async function oneMail(): Promise<number> {
    const { subscription } = await addSubscription(t.sql, {
      url: 'mailto:ops@example.com',
      format: 'email',
      lang: 'en',
    });
    await t.sql.begin((tx) =>
      appendEvents(tx, [
        {
          type: 'company.status.changed',
          severity: 'high',
          pid: `TLS${subscription.id}`,
          cycle: '2026-11-10',
          detectedAt: new Date('2026-11-10T03:40:00Z'),
          rawResponseId: null,
          name: 'Example Technology Co., Ltd.',
          data: {
            category: 'status',
            field: 'ENTSTATUS',
            kind: 'modified',
            previous: '存续',
            current: '注销',
          },
        },
      ]),
    );
    return subscription.id;
  }

  const deliver = (env: Record<string, string>) =>
    runDaybook(['deliver', '--json'], {
      DATABASE_URL: t.url,
      DAYBOOK_SMTP_FROM: FROM,
      LOG_LEVEL: 'warn',
      ...env,
    });

  const queueOf = async (id: number) => {
    const [row] = await t.sql<
      { state: string; attempts: number; last_error: string | null; due_in_s: number }[]
    >`
      select state, attempts, last_error,
        extract(epoch from next_attempt_at - now())::int as due_in_s
      from delivery_queue where subscription_id = ${id}`;
    return row;
  };

  it('sends no AUTH to a server without STARTTLS: the mail fails with the problem and the fix, on a schedule that ends', async () => {
    const plain = await server();
    const id = await oneMail();
    // One attempt, the next an hour later.
    const first = await deliver({ DAYBOOK_SMTP_URL: plain.url, DAYBOOK_WEBHOOK_SCHEDULE: '0,1h' });
    expect(first.code, first.stderr).toBe(0);
    // The client connected and said EHLO: it did reach the server, and sent no login.
    expect(plain.sent()).toMatch(/^EHLO /m);
    expect(loginInClear(plain.sent()), plain.sent()).toBe(false);
    expect(plain.logins).toEqual([]);
    expect(JSON.parse(first.stdout)).toMatchObject({ attempted: 1, delivered: 0, retrying: 1 });
    expect(plain.mails).toEqual([]);
    const row = await queueOf(id);
    expect(row).toMatchObject({ state: 'pending', attempts: 1 });
    // An hour, give or take the schedule's jitter (each wait is drawn within ±SCHEDULE_JITTER of its
    // step), less the few seconds the command took.
    expect(row?.due_in_s).toBeGreaterThan(3600 * (1 - SCHEDULE_JITTER) - 120);
    expect(row?.due_in_s).toBeLessThanOrEqual(3600 * (1 + SCHEDULE_JITTER));
    expect(row?.last_error).toMatch(
      /^127\.0\.0\.1:\d+ offers no STARTTLS; DAYBOOK_SMTP_URL holds a login, and daybook does not send a password in the clear/,
    );
    expect(row?.last_error).toContain('use smtps:// (port 465) or a server that offers STARTTLS');
    expect(row?.last_error).toContain('DAYBOOK_SMTP_ALLOW_PLAINTEXT_AUTH=true');
    // The attempt log says the same; no password anywhere.
    const [attempt] = await t.sql<{ outcome: string; error: string }[]>`
      select outcome, error from webhook_deliveries where subscription_id = ${id}`;
    expect(attempt).toEqual({ outcome: 'retrying', error: row?.last_error });
    for (const out of [first.stdout, first.stderr, row?.last_error ?? ''])
      for (const f of PASSWORD_FORMS) expect(out).not.toContain(f);

    // The schedule ends: with two attempts due at once, the second is the last, and it is failed.
    await t.sql`update delivery_queue set next_attempt_at = now() where subscription_id = ${id}`;
    const last = await deliver({ DAYBOOK_SMTP_URL: plain.url, DAYBOOK_WEBHOOK_SCHEDULE: '0,1h' });
    expect(last.code, last.stderr).toBe(0);
    expect(JSON.parse(last.stdout)).toMatchObject({ attempted: 1, failed: 1 });
    expect(await queueOf(id)).toMatchObject({ state: 'failed', attempts: 2 });
    expect(loginInClear(plain.sent())).toBe(false);
    expect(plain.logins).toEqual([]);
  });

  it('sends the login in the clear when DAYBOOK_SMTP_ALLOW_PLAINTEXT_AUTH=true (a local relay)', async () => {
    const plain = await server();
    const id = await oneMail();
    const r = await deliver({ DAYBOOK_SMTP_URL: plain.url, DAYBOOK_SMTP_ALLOW_PLAINTEXT_AUTH: 'true' });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ delivered: 1 });
    expect(plain.logins).toEqual([{ user: USER, password: PASSWORD, secure: false }]);
    expect(plain.mails).toHaveLength(1);
    // What the tap catches when a login does go in the clear: the check above is not blind.
    expect(loginInClear(plain.sent())).toBe(true);
    expect(await queueOf(id)).toMatchObject({ state: 'succeeded', attempts: 1 });
  });

  it('sends the login to a server that offers STARTTLS only after TLS', async () => {
    const tls = await server(cert);
    const id = await oneMail();
    const r = await deliver({ DAYBOOK_SMTP_URL: tls.url, NODE_EXTRA_CA_CERTS: cert.certPath });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ delivered: 1 });
    expect(tls.logins).toEqual([{ user: USER, password: PASSWORD, secure: true }]);
    expect(tls.mails).toHaveLength(1);
    expect(tls.mails[0]).toContain('Subject:');
    // In the clear: EHLO and STARTTLS, then only ciphertext.
    expect(tls.sent()).toMatch(/^STARTTLS\r$/m);
    expect(loginInClear(tls.sent())).toBe(false);
    expect(await queueOf(id)).toMatchObject({ state: 'succeeded', attempts: 1 });
  });

  it('keeps STARTTLS required whatever the URL query says (ignoreTLS, requireTLS=false)', async () => {
    const tls = await server(cert);
    const id = await oneMail();
    const r = await deliver({
      DAYBOOK_SMTP_URL: `${tls.url}?ignoreTLS=true&requireTLS=false`,
      NODE_EXTRA_CA_CERTS: cert.certPath,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(tls.logins).toEqual([{ user: USER, password: PASSWORD, secure: true }]);
    expect(loginInClear(tls.sent())).toBe(false);
    expect(await queueOf(id)).toMatchObject({ state: 'succeeded' });
  });
});
