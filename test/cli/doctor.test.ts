/**
 * `daybook doctor`, run as a person runs it (the real CLI, a child process) against a database of
 * its own (migrated), the local Redis under a prefix of its own, an HTTPS upstream and SMTP
 * servers on loopback with a certificate this machine is told to trust (NODE_EXTRA_CA_CERTS).
 *
 * A good setup passes every check (or skips it, saying why), exit 0; Redis on a closed port, a key
 * of the wrong shape and an SMTP server without STARTTLS but with a password are each a failed
 * check with its fix, exit 1; the configuration's errors come all at once; --json parses. No
 * secret is ever printed, no stack trace, and the upstream never sees the key or an operation.
 * Nothing here depends on timing: a silent server fails a check by its timeout, whenever that is.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpsServer, type Server } from 'node:https';
import {
  type AddressInfo,
  createServer as createTcpServer,
  type Socket,
  type Server as TcpServer,
} from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createTask, parse } from 'node-cron';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLAINTEXT_LOGIN } from '../../src/delivery/mailer.ts';
import { nextFires } from '../../src/time/cron.ts';
import { keyShapeProblem } from '../../src/upstream/key-shape.ts';
import { type SmtpReceiver, smtpReceiver } from '../delivery/support/smtp.ts';
import { type RedisCluster, startRedisCluster } from '../faults/support/processes.ts';
import { type CliResult, runDaybook } from '../support/cli.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';
import { ensureDebianTool } from '../support/debian.ts';
import { freePort } from '../support/net.ts';
import { type PgBouncer, startPgBouncer } from '../support/pgbouncer.ts';

const run = promisify(execFile);
const STACK = /\n\s+at .+:\d+:\d+/;
const KEY = 'sk-doctor-7c1e95b04a2d';
const SMTP_PASSWORD = 'smtp-doctor-pass-31d8';
const REDIS_PASSWORD = 'redis-doctor-pass-5b02';

interface CheckJson {
  check: string;
  ok: boolean;
  skipped: boolean;
  detail: string;
  fix: string | null;
}

/** The line of the check named `name` (its mark first). */
function line(out: string, name: string): string {
  const found = out.split('\n').find((l) => l.slice(2).startsWith(`${name} `));
  if (!found) throw new Error(`no line for ${name} in:\n${out}`);
  return found;
}

/** The fix printed under the check named `name`. */
function fixOf(out: string, name: string): string {
  const lines = out.split('\n');
  const at = lines.indexOf(line(out, name));
  const next = lines[at + 1] ?? '';
  return /^\s+fix: /.test(next) ? next.trim().slice('fix: '.length) : '';
}

/** A self-signed certificate for 127.0.0.1 (openssl, as test/runtime/admin.test.ts makes one). */
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

/** An SMTP server that offers STARTTLS and takes a login only over it. */
async function startTlsSmtp(tls: {
  key: string;
  cert: string;
}): Promise<{ url: string; close: () => Promise<void> }> {
  const server = new SMTPServer({
    key: tls.key,
    cert: tls.cert,
    logger: false,
    onAuth(auth, _session, cb) {
      if (auth.username === 'daybook' && auth.password === SMTP_PASSWORD) cb(null, { user: 'daybook' });
      else cb(new Error('Invalid username or password'));
    },
    onData(stream, _session, cb) {
      stream.resume();
      stream.on('end', () => cb());
    },
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://daybook:${SMTP_PASSWORD}@127.0.0.1:${port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** A TCP server that accepts connections and never says a word. */
async function silentServer(): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: TcpServer = createTcpServer((s) => {
    sockets.add(s);
    s.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

describe('daybook doctor', { timeout: 120_000 }, () => {
  let db: TestDatabase;
  let dir: string;
  let upstream: Server;
  let upstreamUrl: string;
  const upstreamSeen: { method: string; path: string; authorization: boolean }[] = [];
  let goodSmtp: { url: string; close: () => Promise<void> };
  let plainSmtp: SmtpReceiver;
  let certPath: string;
  const prefix = `doctor_${randomBytes(4).toString('hex')}`;

  /** The environment of a good setup. */
  const good = (): Record<string, string> => ({
    DATABASE_URL: db.url,
    REDIS_URL: 'redis://127.0.0.1:6379',
    DAYBOOK_REDIS_PREFIX: prefix,
    DAYBOOK_API_BASE_URL: upstreamUrl,
    DAYBOOK_API_KEY: KEY,
    DAYBOOK_SMTP_URL: goodSmtp.url,
    DAYBOOK_SMTP_FROM: 'daybook <daybook@example.com>',
    DAYBOOK_EXPORT_DIR: join(dir, 'export'),
    NODE_EXTRA_CA_CERTS: certPath,
    LOG_LEVEL: 'warn',
  });
  /** `daybook doctor args…`; a check waits up to 20 s unless args say otherwise (a slow machine passes too). */
  const doctor = (env: Record<string, string>, ...args: string[]): Promise<CliResult> =>
    runDaybook(['doctor', ...(args.includes('--timeout') ? [] : ['--timeout', '20']), ...args], env, dir);

  beforeAll(async () => {
    db = await freshDatabase();
    dir = mkdtempSync(join(tmpdir(), 'daybook-doctor-'));
    const tls = await certificate(dir);
    certPath = tls.certPath;
    upstream = createHttpsServer({ key: tls.key, cert: tls.cert }, (req, res) => {
      upstreamSeen.push({
        method: req.method ?? '',
        path: req.url ?? '',
        authorization: req.headers.authorization !== undefined,
      });
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not_found"}');
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', () => r()));
    upstreamUrl = `https://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    goodSmtp = await startTlsSmtp(tls);
    plainSmtp = await smtpReceiver(SMTP_PASSWORD);
    // A webhook on this machine (allowed to be private) and a mail list.
    await db.sql`
      insert into subscriptions (url, secret, format, allow_private)
      values ('http://127.0.0.1:9/hooks/doctor-token-1', 'whsec_doctor', 'standard', true),
             ('mailto:ops@example.com', 'whsec_doctor2', 'email', false)`;
  });

  afterAll(async () => {
    await new Promise((r) => upstream?.close(r));
    await goodSmtp?.close();
    await plainSmtp?.close();
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('passes every check of a good setup (or skips it, saying why), exit 0', async () => {
    const r = await doctor(good());
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).not.toContain('✗');
    for (const name of [
      'configuration',
      'Postgres',
      'migrations',
      'read-only role',
      'clock',
      'Redis',
      'Redis key prefix',
      'upstream',
      'API key',
      'SMTP',
      'new events',
      'subscriptions',
      'enterprise schedule',
      'products schedule',
      'export folder',
    ])
      expect(line(r.stdout, name), name).toMatch(/^✔ /);
    expect(line(r.stdout, 'Postgres')).toMatch(/PostgreSQL \d+/);
    expect(line(r.stdout, 'migrations')).toMatch(/all \d+ applied/);
    expect(line(r.stdout, 'Redis key prefix')).toContain(prefix);
    expect(line(r.stdout, 'upstream')).toContain('answers over TLS');
    expect(line(r.stdout, 'SMTP')).toContain('offers STARTTLS, and accepts the login');
    expect(line(r.stdout, 'subscriptions')).toContain('all 2 receivers resolve');
    expect(line(r.stdout, 'new events')).toContain('heard as they commit (LISTEN/NOTIFY)');
    // The schedules: the zone and three fire times each.
    expect(line(r.stdout, 'enterprise schedule')).toMatch(
      /30 3 \* \* \* in Asia\/Shanghai: (\w{3} \d{1,2} \w{3} 03:30, ){2}\w{3} \d{1,2} \w{3} 03:30$/,
    );
    // The embedded database's folder is not used with DATABASE_URL: skipped, with why.
    expect(line(r.stdout, 'data folder')).toMatch(/^- data folder\s+skipped: DATABASE_URL is set/);
    expect(r.stdout).toMatch(/No problems found/);
    expect(r.stderr).toBe('');
  });

  it('never shows a secret, and the upstream sees neither the key nor an operation', async () => {
    const r = await doctor(good());
    for (const secret of [KEY, SMTP_PASSWORD, 'doctor-token-1'])
      expect(r.stdout + r.stderr).not.toContain(secret);
    expect(upstreamSeen.length).toBeGreaterThan(0);
    for (const seen of upstreamSeen)
      expect(seen).toEqual({ method: 'HEAD', path: '/', authorization: false });
  });

  it('fails Redis on a closed port, a key of the wrong shape and SMTP without STARTTLS, each with its fix: exit 1', async () => {
    const closed = await freePort();
    const r = await doctor({
      ...good(),
      REDIS_URL: `redis://:${REDIS_PASSWORD}@127.0.0.1:${closed}`,
      DAYBOOK_API_KEY: `"${KEY}"`,
      DAYBOOK_SMTP_URL: plainSmtp.url,
    });
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(line(r.stdout, 'Redis')).toMatch(
      /^✗ Redis\s+nothing answers at redis:\/\/:\*\*\*@127\.0\.0\.1:\d+: connection refused/,
    );
    expect(fixOf(r.stdout, 'Redis')).toContain('start Redis, or set REDIS_URL to where it runs');
    expect(line(r.stdout, 'API key')).toMatch(/^✗ API key\s+the key starts or ends with a quote mark/);
    expect(fixOf(r.stdout, 'API key')).toContain('remove the quote marks');
    expect(line(r.stdout, 'SMTP')).toMatch(/^✗ SMTP\s+127\.0\.0\.1:\d+ answers EHLO but offers no STARTTLS/);
    expect(line(r.stdout, 'SMTP')).toContain('daybook does not send a password in the clear, so mail fails');
    // The fix is the mailer's own (src/delivery/mailer.ts), the opt-out for a trusted relay included.
    expect(fixOf(r.stdout, 'SMTP')).toBe(PLAINTEXT_LOGIN.fix);
    expect(fixOf(r.stdout, 'SMTP')).toMatch(
      /^use smtps:\/\/ \(port 465\) or a server that offers STARTTLS; .*DAYBOOK_SMTP_ALLOW_PLAINTEXT_AUTH=true/,
    );
    // The other checks still ran, and passed.
    for (const name of ['Postgres', 'migrations', 'upstream', 'subscriptions'])
      expect(line(r.stdout, name)).toMatch(/^✔ /);
    expect(r.stdout).toMatch(/3 problems found/);
    for (const secret of [KEY, SMTP_PASSWORD, REDIS_PASSWORD])
      expect(r.stdout + r.stderr).not.toContain(secret);
    expect(r.stdout + r.stderr).not.toMatch(STACK);
    // The password never reached the server without STARTTLS: doctor only said EHLO.
    expect(plainSmtp.mails).toEqual([]);
  });

  it('passes SMTP without STARTTLS when DAYBOOK_SMTP_ALLOW_PLAINTEXT_AUTH=true, saying the login goes in the clear', async () => {
    const r = await doctor({
      ...good(),
      DAYBOOK_SMTP_URL: plainSmtp.url,
      DAYBOOK_SMTP_ALLOW_PLAINTEXT_AUTH: 'true',
    });
    expect(line(r.stdout, 'SMTP')).toMatch(
      /^✔ SMTP\s+127\.0\.0\.1:\d+ answers EHLO, offers no STARTTLS: the login goes in the clear, as DAYBOOK_SMTP_ALLOW_PLAINTEXT_AUTH=true allows, and accepts the login$/,
    );
    expect(r.stdout + r.stderr).not.toContain(SMTP_PASSWORD);
  });

  it('--json prints the same checks as an array of {check, ok, skipped, detail, fix}', async () => {
    const closed = await freePort();
    const r = await doctor(
      {
        ...good(),
        REDIS_URL: `redis://127.0.0.1:${closed}`,
        DAYBOOK_API_KEY: 'your-api-key',
        DAYBOOK_SMTP_URL: plainSmtp.url,
      },
      '--json',
    );
    expect(r.code).toBe(1);
    const checks = JSON.parse(r.stdout) as CheckJson[];
    for (const c of checks) {
      expect(Object.keys(c).sort()).toEqual(['check', 'detail', 'fix', 'ok', 'skipped']);
      expect(typeof c.detail).toBe('string');
      // A fix exactly when the check failed.
      expect(c.fix === null, c.check).toBe(c.ok);
    }
    const failed = checks.filter((c) => !c.ok).map((c) => c.check);
    expect(failed.sort()).toEqual(['API key', 'Redis', 'SMTP']);
    expect(checks.find((c) => c.check === 'API key')?.detail).toBe(
      'the key is a placeholder from an example',
    );
    expect(checks.find((c) => c.check === 'data folder')).toMatchObject({ ok: true, skipped: true });
    expect(checks.find((c) => c.check === 'Postgres')).toMatchObject({ ok: true, skipped: false });
  });

  it('lists every bad value of the configuration at once, exit 1 (not a usage error)', async () => {
    const r = await doctor({
      DATABASE_URL: 'mysql://nope',
      DAYBOOK_CRON_TZ: 'Mars/Olympus_Mons',
      DAYBOOK_ENTERPRISE_CRON: 'every day',
      DAYBOOK_API_KEY: KEY,
    });
    expect(r.code, r.stderr).toBe(1);
    const failed = r.stdout.split('\n').filter((l) => l.startsWith('✗ configuration'));
    expect(failed).toHaveLength(3);
    expect(r.stdout).toContain('DATABASE_URL must be a URL starting with postgres:// or postgresql://');
    expect(r.stdout).toContain('DAYBOOK_CRON_TZ is not an IANA time zone');
    expect(r.stdout).toContain('DAYBOOK_ENTERPRISE_CRON is not a valid cron expression');
    expect(r.stdout).toMatch(/^- other checks\s+skipped: they need a valid configuration/m);
    expect(r.stdout + r.stderr).not.toContain(KEY);
  });

  it('fails a down Postgres quickly and skips what needs it; a silent Redis fails by the timeout', async () => {
    const closed = await freePort();
    const silent = await silentServer();
    try {
      const r = await doctor(
        {
          ...good(),
          DATABASE_URL: `postgres://postgres:pg-doctor-pw@127.0.0.1:${closed}/daybook`,
          REDIS_URL: `redis://127.0.0.1:${silent.port}`,
        },
        '--timeout',
        '1',
      );
      expect(r.code).toBe(1);
      expect(line(r.stdout, 'Postgres')).toMatch(
        /^✗ Postgres\s+postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/daybook cannot be reached: connection refused/,
      );
      expect(fixOf(r.stdout, 'Postgres')).toContain(
        'start Postgres, or correct the host and port in DATABASE_URL',
      );
      for (const name of ['migrations', 'read-only role', 'clock', 'new events', 'subscriptions'])
        expect(line(r.stdout, name)).toMatch(/skipped: Postgres cannot be reached \(above\)/);
      // Whichever gives up first, the client's own timeout or the check's: a failure either way.
      expect(line(r.stdout, 'Redis')).toMatch(
        /^✗ Redis\s+nothing answer(s|ed) at redis:\/\/127\.0\.0\.1:\d+/,
      );
      expect(r.stdout + r.stderr).not.toContain('pg-doctor-pw');
      expect(r.stdout + r.stderr).not.toMatch(STACK);
    } finally {
      await silent.close();
    }
  });

  it('fails a subscription whose receiver is a private address it may not reach, naming it without its token', async () => {
    const [s] = await db.sql<{ id: string }[]>`
      insert into subscriptions (url, secret, format) values ('http://10.1.2.3/hooks/private-token-9', 'whsec_x', 'standard')
      returning id::text`;
    try {
      const r = await doctor(good());
      expect(r.code).toBe(1);
      expect(line(r.stdout, `subscription ${s?.id}`)).toMatch(
        /^✗ subscription \d+\s+http:\/\/10\.1\.2\.3\/hooks\/… resolves to a private address \(10\.1\.2\.3\)/,
      );
      expect(fixOf(r.stdout, `subscription ${s?.id}`)).toContain('--allow-private');
      expect(line(r.stdout, 'subscriptions')).toContain('2 of 3 receivers resolve');
      expect(r.stdout).not.toContain('private-token-9');
    } finally {
      await db.sql`delete from subscriptions where id = ${s?.id ?? 0}`;
    }
  });

  it('says why Postgres and Redis are skipped with the embedded database and REDIS_URL unset', async () => {
    const r = await doctor({
      DAYBOOK_API_BASE_URL: upstreamUrl,
      DAYBOOK_API_KEY: KEY,
      NODE_EXTRA_CA_CERTS: certPath,
      DAYBOOK_DATA_DIR: join(dir, 'data'),
    });
    expect(r.code, r.stdout).toBe(0);
    expect(line(r.stdout, 'Postgres')).toMatch(/^- Postgres\s+skipped: DATABASE_URL is not set/);
    expect(line(r.stdout, 'Redis')).toMatch(/^- Redis\s+skipped: REDIS_URL is not set/);
    expect(line(r.stdout, 'SMTP')).toMatch(/^- SMTP\s+skipped: DAYBOOK_SMTP_URL is not set/);
    expect(line(r.stdout, 'data folder')).toMatch(/^✔ data folder\s+.*free \(made when first needed\)$/);
    expect(line(r.stdout, 'new events')).toMatch(/^- new events\s+skipped: the embedded database/);
    expect(r.stderr).toBe('');
  });

  describe('through PgBouncer in transaction mode', () => {
    let bouncer: PgBouncer;
    beforeAll(async () => {
      bouncer = await startPgBouncer({ database: db.name, poolMode: 'transaction', poolSize: 4 });
    });
    afterAll(async () => {
      await bouncer?.stop();
    });
    const through = (extra: Record<string, string> = {}) => ({
      ...good(),
      DATABASE_URL: bouncer.url,
      DAYBOOK_DB_PREPARE: 'false',
      ...extra,
    });

    it('says new events are not heard there, and names DAYBOOK_LISTEN_URL; exit 0', async () => {
      const r = await doctor(through());
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(line(r.stdout, 'new events')).toMatch(
        /^✔ new events\s+not heard through DATABASE_URL .*set DAYBOOK_LISTEN_URL to a URL that reaches Postgres directly$/,
      );
    });

    it('hears them on DAYBOOK_LISTEN_URL, a direct URL', async () => {
      const r = await doctor(through({ DAYBOOK_LISTEN_URL: db.url }));
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(line(r.stdout, 'new events')).toMatch(
        /^✔ new events\s+heard as they commit, on DAYBOOK_LISTEN_URL/,
      );
    });

    it('fails a DAYBOOK_LISTEN_URL that does not hear them, without showing its password', async () => {
      const closed = await freePort();
      const r = await doctor(
        through({ DAYBOOK_LISTEN_URL: `postgres://postgres:listen-pw-7@127.0.0.1:${closed}/${db.name}` }),
        '--timeout',
        '2',
      );
      expect(r.code).toBe(1);
      expect(line(r.stdout, 'new events')).toMatch(
        /^✗ new events\s+a notification sent through DATABASE_URL did not arrive on DAYBOOK_LISTEN_URL \(postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/\S+\): connection refused/,
      );
      expect(fixOf(r.stdout, 'new events')).toContain('set DAYBOOK_LISTEN_URL to the same database');
      expect(r.stdout + r.stderr).not.toContain('listen-pw-7');
      const viaBouncer = await doctor(through({ DAYBOOK_LISTEN_URL: bouncer.url }), '--timeout', '2');
      expect(viaBouncer.code).toBe(1);
      expect(line(viaBouncer.stdout, 'new events')).toMatch(
        /^✗ new events\s+a notification .* did not arrive/,
      );
    });
  });

  it('exits 2 for bad usage only', async () => {
    const r = await doctor(good(), '--timeout', '0');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--timeout must be more than 0');
    expect((await doctor(good(), '--no-such-flag')).code).toBe(2);
  });
});

describe('daybook doctor on a Redis Cluster', { timeout: 120_000 }, () => {
  let cluster: RedisCluster | undefined;

  beforeAll(async () => {
    ensureDebianTool('/usr/bin/redis-server', 'redis-server');
    ensureDebianTool('/usr/bin/redis-cli', 'redis-tools');
    cluster = await startRedisCluster(3);
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  const env = () => ({
    // Postgres down on purpose: only Redis is looked at here.
    DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none',
    REDIS_CLUSTER_NODES: cluster?.seeds ?? '',
  });

  it('checks every master and the slots, and fails when a master is down', async () => {
    const r = await runDaybook(['doctor', '--json', '--timeout', '20'], env());
    const checks = JSON.parse(r.stdout) as CheckJson[];
    const redis = checks.filter((c) => c.check.startsWith('Redis'));
    expect(redis.map((c) => [c.check, c.ok, c.skipped])).toEqual([
      ['Redis', true, false],
      ['Redis memory policy', true, false],
      ['Redis key prefix', true, false],
      ['Redis Cluster slots', true, false],
    ]);
    expect(redis[0]?.detail).toMatch(/^Redis Cluster \(3 masters\) \d+\.\d+\.\d+ at /);
    expect(redis[3]?.detail).toMatch(/^all 16384 slots served; the queues hash to slots \d+, \d+, \d+, \d+$/);

    await cluster?.nodes[2]?.stop();
    const down = await runDaybook(['doctor', '--timeout', '2'], env());
    expect(down.code).toBe(1);
    expect(line(down.stdout, 'Redis')).toMatch(/^✗ Redis\s+/);
    expect(fixOf(down.stdout, 'Redis')).not.toBe('');
    expect(down.stdout + down.stderr).not.toMatch(STACK);
  });
});

describe('nextFires', () => {
  const matcher = (expression: string, timezone: string) => {
    const task = createTask(expression, () => {}, { timezone });
    return { match: (d: Date) => task.match(d), destroy: () => task.destroy() };
  };

  it('gives the next fire times of a schedule in its time zone, strictly after the instant', async () => {
    const m = matcher('30 3 * * *', 'Asia/Shanghai');
    try {
      // 03:30 Beijing is 19:30 UTC the day before.
      const at = new Date('2026-11-20T19:30:00Z');
      expect(nextFires(m.match, at, 3).map((d) => d.toISOString())).toEqual([
        '2026-11-21T19:30:00.000Z',
        '2026-11-22T19:30:00.000Z',
        '2026-11-23T19:30:00.000Z',
      ]);
      expect(nextFires(m.match, new Date('2026-11-20T19:29:59Z'), 1)[0]?.toISOString()).toBe(
        '2026-11-20T19:30:00.000Z',
      );
    } finally {
      await m.destroy();
    }
  });

  it('fires at each second of a six-field schedule, and gives fewer when the look-ahead runs out', async () => {
    const expression = '*/20 * * * * *';
    const m = matcher(expression, 'UTC');
    const rare = matcher('0 0 29 2 *', 'UTC');
    try {
      const fires = nextFires(m.match, new Date('2026-01-01T00:00:05Z'), 4, {
        seconds: parse(expression).second,
      });
      expect(fires.map((d) => d.toISOString().slice(11, 19))).toEqual([
        '00:00:20',
        '00:00:40',
        '00:01:00',
        '00:01:20',
      ]);
      expect(nextFires(rare.match, new Date('2026-01-01T00:00:00Z'), 3, { maxMinutes: 24 * 60 })).toEqual([]);
    } finally {
      await m.destroy();
      await rare.destroy();
    }
  });
});

describe('keyShapeProblem', () => {
  const local = { remote: false, sandboxKey: 'sk-sandbox' };
  it('takes a key that looks like one', () => {
    expect(keyShapeProblem(KEY, local)).toBeNull();
    expect(keyShapeProblem('sk-sandbox', local)).toBeNull();
  });
  it('names quotes, a pasted line, Bearer, a URL, a placeholder, a short key and the sandbox key elsewhere', () => {
    const cases: [string, RegExp][] = [
      [`'${KEY}'`, /quote mark/],
      [`DAYBOOK_API_KEY=${KEY}`, /variable name/],
      ['Bearer:abcdefgh1234', /Bearer/],
      ['https://api.example.com', /a URL, not a key/],
      ['<your-key>', /placeholder/],
      ['sk-xxxxxxxx', /placeholder/],
      ['changeme', /placeholder/],
      ['abc123', /6 characters long/],
    ];
    for (const [key, problem] of cases) {
      const p = keyShapeProblem(key, local);
      expect(p?.detail, key).toMatch(problem);
      expect(p?.detail).not.toContain(key);
    }
    expect(keyShapeProblem('sk-sandbox', { remote: true, sandboxKey: 'sk-sandbox' })?.detail).toMatch(
      /sandbox key/,
    );
  });
});
