/**
 * `daybook serve`: the admin server. Bull Board at /queues, Prometheus metrics at /metrics,
 * /healthz checking Postgres and Redis. Metrics are computed at scrape time from the shared
 * state (Postgres and Redis), so one admin server reports for every worker on every machine.
 * Bound to 127.0.0.1 by default; bound anywhere else it requires a token (header
 * `Authorization: Bearer <token>`, or `?token=` once, which sets a session cookie for the browser
 * and redirects to the same address without the token, or to `next` on this server). The cookie
 * is a signed session that expires (see newSession), never the token: changing the token ends
 * every session.
 *
 * It logs through the given pino logger: every 5xx at error level, with its error and stack,
 * under the request's id, which the answer shows (the console's page, or `request_id` in JSON)
 * and carries in X-Request-Id; requests at debug. Never a token, a cookie or a header.
 *
 * With or without a token, it answers only to expected Host headers (see `allowedHosts`): a page
 * on another site whose name a DNS rebinding points at 127.0.0.1 sends its own name as the Host,
 * and gets 421 instead of Bull Board's pause and clean buttons.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from 'fastify';
import type postgres from 'postgres';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { BadParam, isFitText, param, readParams, withoutToken } from '../console/params.ts';
import type { ConsoleReader } from '../console/reader.ts';
import {
  clientStatus,
  consoleRoutes,
  logFailure,
  sendConsoleError,
  sendLoginPage,
} from '../console/routes.ts';
import { subscriptionsByState } from '../delivery/store.ts';
import { readEvents } from '../events/feed.ts';
import { runDurations } from '../landing/runs.ts';
import { createLogger, type Logger } from '../log/log.ts';
import { within } from '../time/deadline.ts';
import { gaugesOn } from './gauges.ts';
import { type OperatorMetricsOptions, registerOperatorGauges } from './ops-metrics.ts';
import type { Queues } from './queues.ts';
import type { RedisClient } from './redis.ts';

export const LOOPBACK_HOSTS = new Set(['127.0.0.1', '::1', 'localhost']);
const WILDCARD_HOSTS = new Set(['0.0.0.0', '::', '[::]']);

export class AdminConfigError extends Error {
  override readonly name = 'AdminConfigError';
}

export interface AdminOptions {
  sql: postgres.Sql;
  /** Redis and the queues: without them (the embedded database), no Bull Board, /metrics or /events. */
  redis: RedisClient | null;
  queues: Queues | null;
  /** The web console under /ui/ (src/console), reading as the sql reader; none: no console. */
  console?: ConsoleReader | null;
  host: string;
  port: number;
  token: string | null;
  /** More Host values to answer to (DAYBOOK_ADMIN_HOSTS): names or addresses, each with an optional port. */
  allowedHosts?: readonly string[];
  /** The configured calls per minute by upstream operation, reported beside the rate limiter's use. */
  rateLimits?: OperatorMetricsOptions['rateLimits'];
  /** Where the server logs (every 5xx, and requests at debug); none: nowhere. */
  log?: Logger;
  /**
   * DAYBOOK_TRUSTED_PROXIES: the addresses (or CIDR ranges) of reverse proxies whose
   * X-Forwarded-Proto and X-Forwarded-For are believed; none: no forwarded header is.
   */
  trustedProxies?: readonly string[];
  /** DAYBOOK_PUBLIC_URL: when it is https, the session cookie is Secure whatever the request came over. */
  publicUrl?: string;
  /** The clock sessions are minted and checked by (milliseconds); tests move it. */
  now?: () => number;
}

export interface RunningAdmin {
  url: string;
  close(): Promise<void>;
}

/** How long a session lasts: a working day; then `?token=` or the header again. */
export const SESSION_MAX_AGE_S = 8 * 3600;

/** The session cookie's name. */
export const SESSION_COOKIE = 'daybook_session';

/**
 * The key sessions are signed with, derived from the admin token: a new token gives a new key,
 * and every session signed with the old one is refused. The cookie tells nothing of the token.
 */
export function sessionKey(token: string): Buffer {
  return createHmac('sha256', token).update('daybook admin session v1').digest();
}

const sign = (key: Buffer, body: string) => createHmac('sha256', key).update(body).digest('base64url');

/** A new session: `v1.<expires, epoch seconds>.<nonce>.<HMAC-SHA256 of the rest>`. */
export function newSession(key: Buffer, nowMs: number): string {
  const body = `v1.${Math.floor(nowMs / 1000) + SESSION_MAX_AGE_S}.${randomBytes(16).toString('base64url')}`;
  return `${body}.${sign(key, body)}`;
}

/** Whether `value` is a session signed with `key` that has not expired (its MAC compared in constant time). */
export function sessionValid(key: Buffer, value: string | undefined, nowMs: number): boolean {
  const m = /^(v1\.(\d{1,12})\.[A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/.exec(value ?? '');
  if (!m) return false;
  const expires = Number(m[2]);
  const now = nowMs / 1000;
  // Expired, or set to outlive what this server would ever mint.
  if (expires <= now || expires > now + SESSION_MAX_AGE_S + 60) return false;
  const want = Buffer.from(sign(key, m[1] as string));
  const given = Buffer.from(m[3] as string);
  return want.length === given.length && timingSafeEqual(want, given);
}

/**
 * Where a sign-in returns to: the `next` parameter when it is a path on this server (its query
 * kept, a fragment dropped: that is the browser's), else /ui/; without `next`, the address asked
 * for without the token. `//evil.example`, `/\\evil.example`, `https://evil.example`,
 * `javascript:` and the like are not paths on this server.
 */
export function signInTarget(url: string): string {
  const q = url.indexOf('?');
  const next = q === -1 ? [] : new URLSearchParams(url.slice(q + 1)).getAll('next');
  if (next.length === 0) return withoutToken(url);
  const n = next.length === 1 ? (next[0] as string) : '';
  if (n.length > 2048 || !/^\/(?![/\\])/.test(n) || /[\p{Cc}\s\\]/u.test(n)) return '/ui/';
  let u: URL;
  try {
    u = new URL(n, 'http://admin.invalid');
  } catch {
    return '/ui/';
  }
  if (u.origin !== 'http://admin.invalid') return '/ui/';
  return withoutToken(`${u.pathname}${u.search}`);
}

/** A Host header value, lowercased, split into its name (an IPv6 address keeps its brackets) and port. */
export function splitHost(value: string): { name: string; port: string | null } | null {
  const m = /^(\[[0-9a-f:.]+\]|[^:[\]\s/@]+)(?::(\d{1,5}))?$/.exec(value.trim().toLowerCase());
  return m ? { name: m[1] as string, port: m[2] ?? null } : null;
}

/**
 * The Host values the server answers to, as `name` (any port) or `name:port` (that port only):
 * - the bound address, as given to --host (an IPv6 address in brackets);
 * - bound to loopback or to every interface (0.0.0.0, ::), the loopback names `localhost`,
 *   `127.0.0.1` and `[::1]`: a browser sends them only for a page it loaded from this machine;
 * - `extra`, from DAYBOOK_ADMIN_HOSTS: the names a reverse proxy, a port mapping or a Prometheus
 *   in another container use (a service name, the machine's DNS name).
 * The built-in names go with any port, so a published port (`-p 127.0.0.1:8080:9464`) works: the
 * port adds nothing against DNS rebinding, whose Host carries the attacker's name.
 */
export function allowedHosts(boundHost: string, extra: readonly string[] = []): string[] {
  const bound = boundHost.trim().toLowerCase();
  const names = new Set([bound.includes(':') && !bound.startsWith('[') ? `[${bound}]` : bound]);
  if (LOOPBACK_HOSTS.has(bound) || WILDCARD_HOSTS.has(bound))
    for (const n of ['localhost', '127.0.0.1', '[::1]']) names.add(n);
  return [...names, ...extra.map((h) => h.trim().toLowerCase())];
}

/** Whether a request's Host header (undefined: none) is one of `allowed` (see allowedHosts). */
export function hostAllowed(header: string | undefined, allowed: readonly string[]): boolean {
  const given = header === undefined ? null : splitHost(header);
  if (!given) return false;
  return allowed.some((entry) => {
    const want = splitHost(entry);
    return want !== null && want.name === given.name && (want.port === null || want.port === given.port);
  });
}

export { withoutToken };

/** Whether `given` is the token, compared in constant time (as digests: the length tells nothing either). */
function sameToken(given: string | undefined, token: string): boolean {
  if (!given) return false;
  const digest = (v: string) => createHash('sha256').update(v).digest();
  return timingSafeEqual(digest(given), digest(token));
}

/** A running count of a metric by its two labels, summed: a computed shape of `metric_counts`. */
interface MetricCount {
  a: string;
  b: string;
  n: number;
}

/**
 * The running counts of `metric` by their labels (metric_counts, kept by triggers as rows are
 * written): a scrape reads these few rows, never the tables they count.
 */
async function countsOf(sql: postgres.Sql, metric: string): Promise<MetricCount[]> {
  return sql<MetricCount[]>`
    select a, b, sum(n)::float8 as n from metric_counts where metric = ${metric} group by 1, 2`;
}

/** The gauges of traffic: upstream answers, webhooks, rate limits and credits billed. */
function registerTrafficGauges(registry: Registry, sql: postgres.Sql): void {
  const gauge = gaugesOn(registry);
  gauge(
    'daybook_upstream_requests',
    'Upstream answers landed, by operation and outcome (success or error code); from raw_responses.',
    ['operation', 'outcome'],
    async (set) => {
      for (const r of await countsOf(sql, 'upstream_requests')) set({ operation: r.a, outcome: r.b }, r.n);
    },
  );
  gauge(
    'daybook_webhook_attempts',
    'Webhook delivery attempts (webhook_deliveries), by outcome: succeeded, retrying, failed.',
    ['outcome'],
    async (set) => {
      for (const r of await countsOf(sql, 'webhook_attempts')) set({ outcome: r.a }, r.n);
    },
  );
  gauge(
    'daybook_webhook_queue',
    'Webhook deliveries by state (pending, delivering, succeeded, failed) in delivery_queue.',
    ['state'],
    async (set) => {
      for (const r of await countsOf(sql, 'delivery_queue')) if (r.n !== 0) set({ state: r.a }, r.n);
    },
  );
  gauge(
    'daybook_webhook_endpoints',
    'Webhook subscriptions by state (active, paused, disabled).',
    ['state'],
    async (set) => {
      for (const r of await subscriptionsByState(sql)) set({ state: r.state }, r.n);
    },
  );
  gauge(
    'daybook_rate_limited_answers',
    'rate_limit_exceeded answers from the upstream, by operation.',
    ['operation'],
    async (set) => {
      for (const r of await countsOf(sql, 'upstream_requests'))
        if (r.b === 'rate_limit_exceeded') set({ operation: r.a }, r.n);
    },
  );
  gauge(
    'daybook_credits_billed',
    'Credits billed by the upstream (credit_ledger), in total and in the latest cycle.',
    ['scope'],
    async (set) => {
      // Running counts by cycle: the total, and the latest cycle's.
      const byCycle = (await countsOf(sql, 'credits')).filter((c) => c.n !== 0);
      const latest = byCycle.reduce<string>((m, c) => (c.a > m ? c.a : m), '');
      set(
        { scope: 'total' },
        byCycle.reduce((s, c) => s + c.n, 0),
      );
      set({ scope: 'latest_cycle' }, byCycle.find((c) => c.a === latest)?.n ?? 0);
    },
  );
}

/** The gauges of work done: job durations, queue depths, versions written and changes detected. */
function registerWorkGauges(registry: Registry, sql: postgres.Sql, queues: Queues): void {
  const gauge = gaugesOn(registry);
  gauge(
    'daybook_job_duration_seconds',
    'Durations of job runs finished in the last 24 hours, by kind (avg, p95, max; of the latest 5,000 of each kind).',
    ['kind', 'stat'],
    async (set) => {
      const rows = await runDurations(sql);
      for (const r of rows) {
        set({ kind: r.kind, stat: 'avg' }, r.avg);
        set({ kind: r.kind, stat: 'p95' }, r.p95);
        set({ kind: r.kind, stat: 'max' }, r.max);
      }
    },
  );
  gauge('daybook_queue_jobs', 'Jobs in each BullMQ queue, by state.', ['queue', 'state'], async (set) => {
    const counts = await queues.counts();
    for (const [queue, states] of Object.entries(counts)) {
      for (const [state, n] of Object.entries(states)) set({ queue, state }, n);
    }
  });
  gauge('daybook_versions_written', 'SCD2 versions written, by entity.', ['entity'], async (set) => {
    const counts = await countsOf(sql, 'versions');
    for (const entity of ['enterprise', 'product'])
      set({ entity }, counts.find((c) => c.a === entity)?.n ?? 0);
  });
  gauge(
    'daybook_changes_detected',
    'Field-level enterprise changes detected, by severity.',
    ['severity'],
    async (set) => {
      for (const s of ['high', 'medium', 'low']) set({ severity: s }, 0);
      for (const r of await countsOf(sql, 'changes')) set({ severity: r.a }, r.n);
    },
  );
}

/** The metrics registry; every gauge reads the shared state when scraped, without full scans. */
export function metricsRegistry(
  sql: postgres.Sql,
  queues: Queues,
  operator: OperatorMetricsOptions = {},
): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'daybook_admin_' });
  registerTrafficGauges(registry, sql);
  registerWorkGauges(registry, sql, queues);
  registerOperatorGauges(registry, sql, queues, operator);
  return registry;
}

/** Refuses to bind beyond loopback without a token: checked before anything is opened. */
export function checkBinding(host: string, token: string | null): void {
  if (!LOOPBACK_HOSTS.has(host) && !token) {
    throw new AdminConfigError(
      `binding the admin server to ${host} exposes it beyond this machine: set a token in DAYBOOK_ADMIN_TOKEN`,
    );
  }
}

/** The longest value any parameter may have, whichever route it goes to. */
const PARAM_MAX = 2048;
const ANY_PARAM = param.many(param.text(PARAM_MAX), 100);

/** Throws BadParam for the first parameter of `source` that is not text fit for any route. */
function guardParams(source: unknown): void {
  if (source === null || typeof source !== 'object') return;
  const names = Object.keys(source);
  if (names.length > 100) throw new BadParam('(parameters)', { kind: 'many', max: 100 }, null);
  for (const name of names) {
    if (name.length > 200) throw new BadParam('(a name)', { kind: 'long', max: 200 }, null);
    if (!isFitText(name)) throw new BadParam('(a name)', { kind: 'text' }, null);
    readParams({ [name]: ANY_PARAM }, source);
  }
}

/** A logger that writes nothing: the server without one. */
const SILENT = createLogger({ level: 'silent', pretty: false });

/** The path of a request target, without its query. */
const pathOf = (url: string) => url.split('?', 1)[0] ?? '';
const isConsole = (url: string) => /^\/ui(\/|$)/.test(pathOf(url));

/**
 * The answer to an error on any route: the console's page under /ui; elsewhere JSON with
 * `request_id`. A bad parameter is a 400 naming it; Fastify's own client errors keep their status
 * and message; anything else is logged and answered 500 with a generic message, never the error's.
 */
function sendError(
  request: FastifyRequest,
  reply: FastifyReply,
  err: unknown,
  withConsole: boolean,
): FastifyReply {
  if (withConsole && isConsole(request.url)) return sendConsoleError(request, reply, err);
  const request_id = request.id;
  if (err instanceof BadParam) return reply.code(400).send({ error: err.message, request_id });
  const status = clientStatus(err);
  if (status !== null) {
    const fastify = /^FST_/.test(String((err as { code?: unknown }).code ?? ''));
    const error = fastify && err instanceof Error ? err.message : 'the request cannot be read';
    return reply.code(status).send({ error, request_id });
  }
  logFailure(request, err);
  return reply.code(500).send({
    error: 'internal error: the server log has the details under this request id',
    request_id,
  });
}

/**
 * The admin server, not yet listening: its error handling, its request hooks (the request id, the
 * debug log line, the parameter guard), the Host check, the token or session check when there is
 * a token, then the routes.
 */
export async function buildAdminApp(options: AdminOptions): Promise<FastifyInstance> {
  checkBinding(options.host, options.token);
  const withConsole = Boolean(options.console);
  const app = createServer(options, withConsole);
  installRequestHooks(app);
  const hosts = allowedHosts(options.host, options.allowedHosts);
  installHostGuard(app, hosts);
  if (options.token) installTokenCheck(app, options, options.token);

  if (options.console) await app.register(consoleRoutes(options.console), { prefix: '/ui' });
  if (options.queues) await registerQueueRoutes(app, options.sql, options.queues, options.rateLimits);
  registerEventFeed(app, options.sql);
  registerHealthCheck(app, options, hosts);
  app.get('/', async (_request, reply) => reply.redirect(options.queues ? '/queues' : '/ui/'));
  return app;
}

/**
 * The Fastify instance with its logger, request ids, trusted proxies and error handling: every
 * error, Fastify's own on a path it cannot read included, is answered by sendError.
 */
function createServer(options: AdminOptions, withConsole: boolean): FastifyInstance {
  const app = Fastify({
    loggerInstance: (options.log ?? SILENT).child({ component: 'admin' }) as FastifyBaseLogger,
    // Requests are logged at debug below, without a token: Fastify's own lines are at info, with
    // the whole address (a `?token=`).
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'requestId' }),
    genReqId: () => randomBytes(8).toString('hex'),
    requestIdHeader: false,
    // X-Forwarded-Proto and -For are believed from these addresses only.
    trustProxy: options.trustedProxies?.length ? [...options.trustedProxies] : false,
    // A path that is not valid percent-encoding (a lone surrogate, %FF): 400, as any bad input.
    frameworkErrors: (err, request, reply) => {
      reply.header('X-Request-Id', request.id);
      return sendError(request, reply, err, withConsole);
    },
  });
  app.setErrorHandler(async (err, request, reply) => sendError(request, reply, err, withConsole));
  return app;
}

/**
 * The hooks every request goes through: its id in X-Request-Id, a line at debug once answered
 * (without a token), and the guard on its parameters.
 */
function installRequestHooks(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    reply.header('X-Request-Id', request.id);
  });
  app.addHook('onResponse', async (request, reply) => {
    request.log.debug(
      {
        method: request.method,
        url: withoutToken(request.url),
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime),
      },
      'request',
    );
  });
  // Every route's parameters, Bull Board's too, are text of a sane length without control
  // characters before its handler sees them; each route then reads its own (see readParams).
  app.addHook('preValidation', async (request) => {
    guardParams(request.query);
    guardParams(request.params);
  });
}

/**
 * Every route, Bull Board's API and the 404s included, answers only to an expected Host, before
 * any token is looked at: a foreign Host with a good token gets no cookie and no data. /healthz
 * is the one exception: an orchestrator probes it by the container's address or a service name
 * nobody listed, and to such a Host it says only ok or unhealthy (the handler leaves out the
 * error texts, which can name internal addresses).
 */
function installHostGuard(app: FastifyInstance, hosts: readonly string[]): void {
  app.addHook('onRequest', async (request, reply) => {
    if (pathOf(request.url) === '/healthz' || hostAllowed(request.headers.host, hosts)) return;
    return reply
      .code(421)
      .type('text/plain; charset=utf-8')
      .send('misdirected request: this server does not answer to that Host (see DAYBOOK_ADMIN_HOSTS)\n');
  });
}

/**
 * Sign-in and sessions: every route but /healthz wants the token (the Bearer header, or `?token=`,
 * which sets a session cookie) or a valid session cookie; without one, the console's pages answer
 * with a sign-in form and everything else with 401.
 */
function installTokenCheck(app: FastifyInstance, options: AdminOptions, token: string): void {
  const key = sessionKey(token);
  const now = options.now ?? Date.now;
  const publicHttps = options.publicUrl !== undefined && /^https:/i.test(options.publicUrl);
  app.addHook('onRequest', async (request, reply) => {
    if (pathOf(request.url) === '/healthz') return;
    const header = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '')?.[1];
    const q = request.url.indexOf('?');
    const query =
      q === -1 ? undefined : (new URLSearchParams(request.url.slice(q + 1)).get('token') ?? undefined);
    const cookie = new RegExp(`(?:^|;\\s*)${SESSION_COOKIE}=([^;]+)`).exec(request.headers.cookie ?? '')?.[1];
    if (sameToken(query, token)) {
      // Secure when people reach the server over https (DAYBOOK_PUBLIC_URL), or over TLS on this
      // socket, or through a trusted proxy saying https (request.protocol believes
      // X-Forwarded-Proto only from DAYBOOK_TRUSTED_PROXIES).
      // Lax, not Strict: a link to a company's page clicked in a chat app is a cross-site
      // navigation, and must arrive signed in; a cross-site POST or PUT still gets no cookie.
      const secure = publicHttps || request.protocol === 'https';
      reply.header(
        'Set-Cookie',
        `${SESSION_COOKIE}=${newSession(key, now())}; Path=/; Max-Age=${SESSION_MAX_AGE_S}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`,
      );
      // A page load drops the token from the address bar (and history, and Referer), going to
      // the address asked for, or to `next` on this server; other methods go on as they are,
      // as a 303 would turn them into a GET.
      if (request.method === 'GET' || request.method === 'HEAD') {
        reply.header('Cache-Control', 'no-store');
        return reply.redirect(signInTarget(request.url), 303);
      }
      return;
    }
    if (sameToken(header, token) || sessionValid(key, cookie, now())) return;
    // The console's pages answer with a sign-in form (which sends ?token= and gets the cookie).
    if (options.console && isConsole(request.url)) return sendLoginPage(request, reply);
    return reply.code(401).send({
      error: 'a token is required: Authorization: Bearer <token>, or ?token=<token>',
      request_id: request.id,
    });
  });
}

/**
 * /healthz: each check is ok or error: what went wrong (an address, a database's message) goes to
 * the log, at warn under the request id the answer carries, never into the answer of this open
 * route. To a Host not expected it says only ok or unhealthy, without the checks.
 */
function registerHealthCheck(app: FastifyInstance, options: AdminOptions, hosts: readonly string[]): void {
  app.get('/healthz', async (request, reply) => {
    const redis = options.redis;
    const checks: Record<string, string> = {};
    const withTimeout = <T>(p: Promise<T>) => within(p, 2000, 'the check');
    const check = async (name: string, run: () => Promise<unknown>) => {
      try {
        await withTimeout(run());
        checks[name] = 'ok';
      } catch (err) {
        checks[name] = 'error';
        request.log.warn({ err, check: name }, `/healthz: the ${name} check failed`);
      }
    };
    await check('postgres', () => options.sql`select 1`);
    if (redis) await check('redis', () => redis.ping());
    const ok = Object.values(checks).every((v) => v === 'ok');
    reply.code(ok ? 200 : 503);
    const said = ok ? { status: 'ok' } : { status: 'unhealthy', request_id: request.id };
    if (!hostAllowed(request.headers.host, hosts)) return said;
    return { ...said, ...checks };
  });
}

/** Bull Board at /queues and the metrics at /metrics: what needs Redis and the queues. */
async function registerQueueRoutes(
  app: FastifyInstance,
  sql: postgres.Sql,
  queues: Queues,
  rateLimits: AdminOptions['rateLimits'],
): Promise<void> {
  const serverAdapter = new FastifyAdapter();
  createBullBoard({ queues: queues.all().map((q) => new BullMQAdapter(q)), serverAdapter });
  // Bull Board answers a failure with its error's message: passed on instead to the server's
  // handler, which logs it under the request id and answers without it.
  serverAdapter.setErrorHandler((err) => {
    throw err;
  });
  serverAdapter.setBasePath('/queues');
  await app.register(serverAdapter.registerPlugin(), { prefix: '/queues' });

  const registry = metricsRegistry(sql, queues, rateLimits ? { rateLimits } : {});
  app.get('/metrics', async (_request, reply) => {
    reply.type(registry.contentType);
    return registry.metrics();
  });
}

/**
 * The parameters of /events: after a sequence number, up to `limit` events, of up to 20 types
 * (each an event type, a prefix ending in `.*`, or `*`).
 */
const EVENT_PARAMS = {
  after: param.whole(0),
  limit: param.whole(1, 10_000),
  type: param.many(
    param.pattern(120, /^(?:\*|[a-z0-9_]+(?:\.[a-z0-9_]+)*(?:\.\*)?)$/, {
      en: 'must be an event type, a prefix ending in .* (company.status.*), or *',
      zh: '必须是事件类型、以 .* 结尾的前缀（company.status.*）或 *',
    }),
    20,
  ),
} as const;

/** The pull feed at /events: the outbox read from Postgres, with or without Redis. */
function registerEventFeed(app: FastifyInstance, sql: postgres.Sql): void {
  // The pull feed: the outbox from any point (?after=<sequence>&limit=N&type=…), behind the token.
  app.get('/events', async (request) => {
    const p = readParams(EVENT_PARAMS, request.query);
    const after = p.after ?? 0;
    const events = await readEvents(sql, {
      after,
      limit: p.limit ?? 100,
      ...(p.type.length ? { types: p.type } : {}),
    });
    const last = events.at(-1);
    return { events, next_after: last ? last.sequence : after };
  });
}

export async function startAdminServer(options: AdminOptions): Promise<RunningAdmin> {
  const app = await buildAdminApp(options);
  await app.listen({ host: options.host, port: options.port });
  const address = app.server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return { url: `http://${host}:${address.port}`, close: () => app.close() };
}
