/**
 * `daybook serve`: the admin server. Bull Board at /queues, Prometheus metrics at /metrics,
 * /healthz checking Postgres and Redis. Metrics are computed at scrape time from the shared
 * state (Postgres and Redis), so one admin server reports for every worker on every machine.
 * Bound to 127.0.0.1 by default; bound anywhere else it requires a token (header
 * `Authorization: Bearer <token>`, or `?token=` once, which sets a cookie for the browser and
 * redirects to the same address without the token).
 *
 * With or without a token, it answers only to expected Host headers (see `allowedHosts`): a page
 * on another site whose name a DNS rebinding points at 127.0.0.1 sends its own name as the Host,
 * and gets 421 instead of Bull Board's pause and clean buttons.
 */
import { timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import Fastify, { type FastifyInstance } from 'fastify';
import type postgres from 'postgres';
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import type { ConsoleReader } from '../console/reader.ts';
import { consoleRoutes, sendLoginPage } from '../console/routes.ts';
import { readEvents } from '../events/feed.ts';
import { within } from '../time/deadline.ts';
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
}

export interface RunningAdmin {
  url: string;
  close(): Promise<void>;
}

/** How long the token cookie lasts: a working day; then `?token=` or the header again. */
export const TOKEN_COOKIE_MAX_AGE_S = 8 * 3600;

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

/** The request target without any `token` query parameter, the rest kept as sent; always a path on this server. */
export function withoutToken(url: string): string {
  const q = url.indexOf('?');
  // Leading slashes and backslashes are folded into one: `//evil.example` in a Location is another site.
  const path = `/${(q === -1 ? url : url.slice(0, q)).replace(/^[/\\]+/, '')}`;
  const kept =
    q === -1
      ? []
      : url
          .slice(q + 1)
          .split('&')
          .filter((part) => part !== '' && [...new URLSearchParams(part).keys()][0] !== 'token');
  return kept.length > 0 ? `${path}?${kept.join('&')}` : path;
}

/** A cookie value percent-decoded, or as it is when it is not valid percent-encoding. */
function decodedOrRaw(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

function sameToken(given: string | undefined, token: string): boolean {
  if (!given) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * The running counts of `metric` by their labels (metric_counts, kept by triggers as rows are
 * written): a scrape reads these few rows, never the tables they count.
 */
async function countsOf(sql: postgres.Sql, metric: string): Promise<{ a: string; b: string; n: number }[]> {
  return sql<{ a: string; b: string; n: number }[]>`
    select a, b, sum(n)::float8 as n from metric_counts where metric = ${metric} group by 1, 2`;
}

/** The gauges of traffic: upstream answers, webhooks, rate limits and credits billed. */
function registerTrafficGauges(registry: Registry, sql: postgres.Sql): void {
  new Gauge({
    name: 'daybook_upstream_requests',
    help: 'Upstream answers landed, by operation and outcome (success or error code); from raw_responses.',
    labelNames: ['operation', 'outcome'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const r of await countsOf(sql, 'upstream_requests'))
        this.set({ operation: r.a, outcome: r.b }, r.n);
    },
  });
  new Gauge({
    name: 'daybook_webhook_attempts',
    help: 'Webhook delivery attempts (webhook_deliveries), by outcome: succeeded, retrying, failed.',
    labelNames: ['outcome'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const r of await countsOf(sql, 'webhook_attempts')) this.set({ outcome: r.a }, r.n);
    },
  });
  new Gauge({
    name: 'daybook_webhook_queue',
    help: 'Webhook deliveries by state (pending, delivering, succeeded, failed) in delivery_queue.',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const r of await countsOf(sql, 'delivery_queue')) if (r.n !== 0) this.set({ state: r.a }, r.n);
    },
  });
  new Gauge({
    name: 'daybook_webhook_endpoints',
    help: 'Webhook subscriptions by state (active, paused, disabled).',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      this.reset();
      const rows = await sql<{ state: string; n: number }[]>`
        select state, count(*)::int as n from subscriptions group by 1`;
      for (const r of rows) this.set({ state: r.state }, r.n);
    },
  });
  new Gauge({
    name: 'daybook_rate_limited_answers',
    help: 'rate_limit_exceeded answers from the upstream, by operation.',
    labelNames: ['operation'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const r of await countsOf(sql, 'upstream_requests'))
        if (r.b === 'rate_limit_exceeded') this.set({ operation: r.a }, r.n);
    },
  });
  new Gauge({
    name: 'daybook_credits_billed',
    help: 'Credits billed by the upstream (credit_ledger), in total and in the latest cycle.',
    labelNames: ['scope'],
    registers: [registry],
    async collect() {
      // Running counts by cycle: the total, and the latest cycle's.
      const byCycle = (await countsOf(sql, 'credits')).filter((c) => c.n !== 0);
      const latest = byCycle.reduce<string>((m, c) => (c.a > m ? c.a : m), '');
      this.set(
        { scope: 'total' },
        byCycle.reduce((s, c) => s + c.n, 0),
      );
      this.set({ scope: 'latest_cycle' }, byCycle.find((c) => c.a === latest)?.n ?? 0);
    },
  });
}

/** The gauges of work done: job durations, queue depths, versions written and changes detected. */
function registerWorkGauges(registry: Registry, sql: postgres.Sql, queues: Queues): void {
  new Gauge({
    name: 'daybook_job_duration_seconds',
    help: 'Durations of job runs finished in the last 24 hours, by kind (avg, p95, max; of the latest 5,000 of each kind).',
    labelNames: ['kind', 'stat'],
    registers: [registry],
    async collect() {
      this.reset();
      const rows = await sql<{ kind: string; avg: number; p95: number; max: number }[]>`
        select kind,
          avg(extract(epoch from finished_at - started_at))::float8 as avg,
          percentile_cont(0.95) within group (order by extract(epoch from finished_at - started_at))::float8 as p95,
          max(extract(epoch from finished_at - started_at))::float8 as max
        from (
          -- The kinds, read from the index on (kind, started_at) one at a time; then each kind's
          -- runs started in the last two days, by the same index (a job outlasts no day).
          with recursive kinds as (
            select min(kind) as k from runs
            union all
            select (select min(kind) from runs where kind > kinds.k) from kinds where kinds.k is not null
          )
          select kinds.k as kind, r.started_at, r.finished_at from kinds
          cross join lateral (
            select started_at, finished_at from runs
            where kind = kinds.k and started_at > now() - interval '48 hours'
            order by started_at desc limit 5000) r
          where kinds.k is not null
        ) recent
        where finished_at > now() - interval '24 hours' group by kind`;
      for (const r of rows) {
        this.set({ kind: r.kind, stat: 'avg' }, r.avg);
        this.set({ kind: r.kind, stat: 'p95' }, r.p95);
        this.set({ kind: r.kind, stat: 'max' }, r.max);
      }
    },
  });
  new Gauge({
    name: 'daybook_queue_jobs',
    help: 'Jobs in each BullMQ queue, by state.',
    labelNames: ['queue', 'state'],
    registers: [registry],
    async collect() {
      this.reset();
      const counts = await queues.counts();
      for (const [queue, states] of Object.entries(counts)) {
        for (const [state, n] of Object.entries(states)) this.set({ queue, state }, n);
      }
    },
  });
  new Gauge({
    name: 'daybook_versions_written',
    help: 'SCD2 versions written, by entity.',
    labelNames: ['entity'],
    registers: [registry],
    async collect() {
      const counts = await countsOf(sql, 'versions');
      for (const entity of ['enterprise', 'product'])
        this.set({ entity }, counts.find((c) => c.a === entity)?.n ?? 0);
    },
  });
  new Gauge({
    name: 'daybook_changes_detected',
    help: 'Field-level enterprise changes detected, by severity.',
    labelNames: ['severity'],
    registers: [registry],
    async collect() {
      for (const s of ['high', 'medium', 'low']) this.set({ severity: s }, 0);
      for (const r of await countsOf(sql, 'changes')) this.set({ severity: r.a }, r.n);
    },
  });
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

export async function buildAdminApp(options: AdminOptions): Promise<FastifyInstance> {
  checkBinding(options.host, options.token);
  const app = Fastify({ logger: false });
  const hosts = allowedHosts(options.host, options.allowedHosts);
  const pathOf = (url: string) => url.split('?', 1)[0];
  // Every route, Bull Board's API and the 404s included, answers only to an expected Host, before
  // any token is looked at: a foreign Host with a good token gets no cookie and no data. /healthz
  // is the one exception: an orchestrator probes it by the container's address or a service name
  // nobody listed, and to such a Host it says only ok or unhealthy (the handler leaves out the
  // error texts, which can name internal addresses).
  app.addHook('onRequest', async (request, reply) => {
    if (pathOf(request.url) === '/healthz' || hostAllowed(request.headers.host, hosts)) return;
    return reply
      .code(421)
      .type('text/plain; charset=utf-8')
      .send('misdirected request: this server does not answer to that Host (see DAYBOOK_ADMIN_HOSTS)\n');
  });
  const token = options.token;
  if (token) {
    app.addHook('onRequest', async (request, reply) => {
      if (pathOf(request.url) === '/healthz') return;
      const header = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '')?.[1];
      const query = new URL(request.url, 'http://admin').searchParams.get('token') ?? undefined;
      const cookie = /(?:^|;\s*)daybook_token=([^;]+)/.exec(request.headers.cookie ?? '')?.[1];
      if (sameToken(query, token)) {
        // Secure only over TLS on this socket: X-Forwarded-Proto is not trusted (no trustProxy).
        // Lax, not Strict: a link to a company's page clicked in a chat app is a cross-site
        // navigation, and must arrive signed in; a cross-site POST or PUT still gets no cookie.
        reply.header(
          'Set-Cookie',
          `daybook_token=${encodeURIComponent(token)}; Path=/; Max-Age=${TOKEN_COOKIE_MAX_AGE_S}; HttpOnly; SameSite=Lax${request.protocol === 'https' ? '; Secure' : ''}`,
        );
        // A page load drops the token from the address bar (and history, and Referer); other
        // methods go on as they are, as a 303 would turn them into a GET.
        if (request.method === 'GET' || request.method === 'HEAD') {
          reply.header('Cache-Control', 'no-store');
          return reply.redirect(withoutToken(request.url), 303);
        }
        return;
      }
      if (sameToken(header, token) || sameToken(cookie ? decodedOrRaw(cookie) : undefined, token)) return;
      // The console's pages answer with a sign-in form (which sends ?token= and gets the cookie).
      if (options.console && /^\/ui(\/|$)/.test(pathOf(request.url) ?? ''))
        return sendLoginPage(request, reply);
      return reply
        .code(401)
        .send({ error: 'a token is required: Authorization: Bearer <token>, or ?token=<token>' });
    });
  }

  if (options.console) await app.register(consoleRoutes(options.console), { prefix: '/ui' });
  if (options.queues) await registerQueueRoutes(app, options.sql, options.queues, options.rateLimits);
  registerEventFeed(app, options.sql);

  app.get('/healthz', async (request, reply) => {
    const redis = options.redis;
    const checks: Record<string, string> = {};
    const withTimeout = <T>(p: Promise<T>) => within(p, 2000, 'the check');
    try {
      await withTimeout(options.sql`select 1`);
      checks.postgres = 'ok';
    } catch (err) {
      checks.postgres = `error: ${err instanceof Error ? err.message : String(err)}`;
    }
    if (redis) {
      try {
        await withTimeout(redis.ping());
        checks.redis = 'ok';
      } catch (err) {
        checks.redis = `error: ${err instanceof Error ? err.message : String(err)}`;
      }
    }
    const ok = Object.values(checks).every((v) => v === 'ok');
    reply.code(ok ? 200 : 503);
    if (!hostAllowed(request.headers.host, hosts)) return { status: ok ? 'ok' : 'unhealthy' };
    return { status: ok ? 'ok' : 'unhealthy', ...checks };
  });
  app.get('/', async (_request, reply) => reply.redirect(options.queues ? '/queues' : '/ui/'));
  return app;
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
  serverAdapter.setBasePath('/queues');
  await app.register(serverAdapter.registerPlugin(), { prefix: '/queues' });

  const registry = metricsRegistry(sql, queues, rateLimits ? { rateLimits } : {});
  app.get('/metrics', async (_request, reply) => {
    reply.type(registry.contentType);
    return registry.metrics();
  });
}

/** The pull feed at /events: the outbox read from Postgres, with or without Redis. */
function registerEventFeed(app: FastifyInstance, sql: postgres.Sql): void {
  // The pull feed: the outbox from any point (?after=<sequence>&limit=N&type=…), behind the token.
  app.get('/events', async (request, reply) => {
    const q = request.query as Record<string, string | string[] | undefined>;
    const one = (k: string) => (Array.isArray(q[k]) ? q[k][0] : q[k]);
    const after = Number(one('after') ?? 0);
    const limit = Number(one('limit') ?? 100);
    if (
      !Number.isSafeInteger(after) ||
      after < 0 ||
      !Number.isSafeInteger(limit) ||
      limit < 1 ||
      limit > 10_000
    )
      return reply
        .code(400)
        .send({ error: 'after must be a whole number ≥ 0 and limit one from 1 to 10000' });
    const types = ([] as string[]).concat(q.type ?? []);
    const events = await readEvents(sql, { after, limit, ...(types.length ? { types } : {}) });
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
