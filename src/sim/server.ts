/**
 * The upstream simulator: an HTTP server implementing docs/upstream.md over a seeded
 * world, with keys and credit balances, a sliding-window rate limit, a settable clock, fault
 * injection, and a control surface under /_sim for tests (among it `POST /_sim/resolve`, which
 * makes a keyword come to name another company, as the spec says a keyword may). The spec's
 * gaps (HTTP status of errors, the code for date + product_name together, for a bad limit, the
 * default limit) are options, so the client cannot silently depend on one guess.
 */
import type { AddressInfo, Socket } from 'node:net';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { addDays, cycleOf, daysBetween, isCalendarDate, pacificDate } from '../time/cycles.ts';
import { buildOpenApi } from '../upstream/openapi.ts';
import { EnterpriseWorld, SCHEDULABLE_STATUSES, type SchedulableStatus } from './enterprises.ts';
import {
  driftEnterprise,
  driftProduct,
  driftUsage,
  type FaultPlan,
  type FaultSpec,
  formatFaultSpec,
  parseFaultSpec,
  planFaults,
} from './faults.ts';
import { renderEnterpriseMarkdown, renderProductMarkdown } from './markdown.ts';
import { ProductWorld } from './products.ts';
import { SlidingWindowLimiter } from './ratelimit.ts';
import { rngFor } from './rng.ts';
import type { SimEnterprise } from './types.ts';

export {
  defaultSimOptions,
  SANDBOX_CREDITS,
  SANDBOX_KEY,
  type SimOperation,
  type SimOptions,
} from './options.ts';

import type { SimOperation, SimOptions } from './options.ts';

const HTTP_STATUS: Record<string, number> = {
  unauthorized: 401,
  invalid_parameter: 400,
  invalid_date: 400,
  missing_parameters: 400,
  not_found: 404,
  invalid_product_name: 404,
  insufficient_credits: 402,
  rate_limit_exceeded: 429,
};

interface KeyAccount {
  id: string;
  credits: number;
  requests: number;
  billedQueries: number;
  creditsBilled: number;
  dailyCalls: Map<string, number>;
}

/** Counters the tests and benchmarks read back through /_sim/state. */
export interface SimCounters {
  requests: Record<SimOperation, number>;
  outcomes: Record<SimOperation, Record<string, number>>;
  rateLimited: Record<SimOperation, number>;
  creditsBilled: number;
  billedQueries: number;
  /** How many times each PID was billed: more than once in a cycle is a wasted purchase. */
  billedByPid: Record<string, number>;
}

function emptyCounters(): SimCounters {
  return {
    requests: { 'enterprise-search': 0, 'product-listing': 0 },
    outcomes: { 'enterprise-search': {}, 'product-listing': {} },
    rateLimited: { 'enterprise-search': 0, 'product-listing': 0 },
    creditsBilled: 0,
    billedQueries: 0,
    billedByPid: {},
  };
}

class SimError extends Error {
  readonly code: string;
  readonly retryAfterS: number | null;
  constructor(code: string, message: string, retryAfterS: number | null = null) {
    super(message);
    this.code = code;
    this.retryAfterS = retryAfterS;
  }
}

/** The remark the simulator's enterprise answers bill under. */
export const ENTERPRISE_REMARK = 'enterprise-search: enterprise registry query';

/** The enterprise-search answer for `found`, billed `credits`, as the simulator sends it (without drift). */
export function enterpriseAnswer(found: SimEnterprise, credits: number) {
  return {
    status: 'success' as const,
    markdown: renderEnterpriseMarkdown(found),
    metadata: { usage: { credits, remark: ENTERPRISE_REMARK }, content: found },
  };
}

/** The simulator's state and behaviour, independent of HTTP. */
export class Simulator {
  readonly options: SimOptions;
  readonly enterprises: EnterpriseWorld;
  readonly products: ProductWorld;
  private readonly accounts = new Map<string, KeyAccount>();
  private readonly limiter: SlidingWindowLimiter;
  private readonly attempts = new Map<string, number>();
  /**
   * Keywords set to resolve to a given enterprise (by PID): the matching model coming to name
   * another company for a keyword, which docs/upstream.md says may happen. Set by tests.
   */
  private readonly resolutions = new Map<string, string>();
  /**
   * The simulated time is this plus the monotonic clock: it runs on at the real pace from where it
   * was set, and a step of the machine's wall clock (a time sync) never moves it.
   */
  private clockOffsetMs = Date.now() - performance.now();
  counters: SimCounters = emptyCounters();

  constructor(options: SimOptions) {
    this.options = options;
    this.limiter = new SlidingWindowLimiter(options.rateWindowMs);
    this.enterprises = new EnterpriseWorld({
      seed: options.seed,
      size: options.enterprises,
      epoch: options.epoch,
      changeShare: options.changeShare,
    });
    this.products = new ProductWorld({ seed: options.seed, epoch: options.epoch });
    let i = 0;
    for (const [key, credits] of options.keys) this.setCredits(key, credits, `key${++i}`);
    if (options.startAt) this.setClock(options.startAt);
  }

  /** The enterprise world as of the simulated clock's cycle. */
  world(): EnterpriseWorld {
    this.enterprises.at(cycleOf(this.now()));
    return this.enterprises;
  }

  /** The simulated time: the system clock moved by whatever the control surface set. */
  now(): Date {
    return new Date(Math.floor(performance.now() + this.clockOffsetMs));
  }

  setClock(at: Date): void {
    this.clockOffsetMs = at.getTime() - performance.now();
  }

  advanceClock(ms: number): void {
    this.clockOffsetMs += ms;
  }

  setCredits(key: string, credits: number, id?: string): void {
    const account = this.accounts.get(key);
    if (account) account.credits = credits;
    else {
      this.accounts.set(key, {
        id: id ?? `key${this.accounts.size + 1}`,
        credits,
        requests: 0,
        billedQueries: 0,
        creditsBilled: 0,
        dailyCalls: new Map(),
      });
    }
  }

  /**
   * Makes `keyword` (trimmed, as sent) resolve to the enterprise `pid` from now on; null goes back
   * to the model's own match. Throws RangeError for a PID the world does not hold.
   */
  resolveKeyword(keyword: string, pid: string | null): void {
    const k = keyword.trim();
    if (pid === null) {
      this.resolutions.delete(k);
      return;
    }
    if (!this.world().byPid(pid)) throw new RangeError(`no enterprise has PID ${pid}`);
    this.resolutions.set(k, pid);
  }

  credits(key: string): number | null {
    return this.accounts.get(key)?.credits ?? null;
  }

  setFaults(spec: FaultSpec): void {
    this.options.faults = spec;
  }

  resetCounters(): void {
    this.counters = emptyCounters();
    this.limiter.reset();
    this.attempts.clear();
  }

  /** Public view of the state, keys masked. */
  state(): Record<string, unknown> {
    const now = this.now();
    return {
      now: now.toISOString(),
      cycle: cycleOf(now),
      productDate: pacificDate(now),
      seed: this.options.seed,
      enterprises: this.options.enterprises,
      rateLimits: this.options.rateLimits,
      costs: this.options.costs,
      faults: formatFaultSpec(this.options.faults),
      errorStatus: this.options.errorStatus,
      keys: [...this.accounts.values()].map((a) => ({
        id: a.id,
        credits: a.credits,
        requests: a.requests,
        billedQueries: a.billedQueries,
        creditsBilled: a.creditsBilled,
      })),
      counters: this.counters,
      resolutions: Object.fromEntries(this.resolutions),
    };
  }

  /** Decides the faults for this request: deterministic by seed, parameters and attempt. */
  planFaults(operation: SimOperation, params: Record<string, string>): FaultPlan {
    const paramKey = `${operation}?${new URLSearchParams(Object.entries(params).sort()).toString()}`;
    const attempt = (this.attempts.get(paramKey) ?? 0) + 1;
    this.attempts.set(paramKey, attempt);
    return planFaults(this.options.faults, rngFor(this.options.seed, 'fault', paramKey, attempt));
  }

  count(operation: SimOperation, outcome: string): void {
    const outcomes = this.counters.outcomes[operation];
    outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
  }

  /** Authenticates, applies the rate limit and the daily cap. Returns the account. */
  admit(operation: SimOperation, authorization: string | undefined): KeyAccount {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    if (!m)
      throw new SimError('unauthorized', 'Missing API key: send the header Authorization: Bearer <API_KEY>');
    const key = m[1] as string;
    const account = this.accounts.get(key);
    if (!account) throw new SimError('unauthorized', 'Invalid API key');
    account.requests++;
    const waitMs = this.limiter.tryAcquire(
      `${account.id}|${operation}`,
      this.options.rateLimits[operation],
      Date.now(),
    );
    if (waitMs > 0) {
      this.counters.rateLimited[operation]++;
      throw new SimError(
        'rate_limit_exceeded',
        'Call frequency limit exceeded, please try again later',
        Math.ceil(waitMs / 1000),
      );
    }
    if (this.options.dailyCap !== null) {
      const day = `${operation}|${cycleOf(this.now())}`;
      const calls = (account.dailyCalls.get(day) ?? 0) + 1;
      account.dailyCalls.set(day, calls);
      if (calls > this.options.dailyCap) {
        this.counters.rateLimited[operation]++;
        throw new SimError('rate_limit_exceeded', 'Daily call cap reached for this account');
      }
    }
    return account;
  }

  private checkCredits(operation: SimOperation, account: KeyAccount): void {
    const cost = this.options.costs[operation];
    if (cost > 0 && account.credits < cost) {
      throw new SimError(
        'insufficient_credits',
        `Insufficient credits: this query costs ${cost}, the balance is ${account.credits}`,
      );
    }
  }

  private bill(operation: SimOperation, account: KeyAccount, pid: string | null): number {
    const cost = this.options.costs[operation];
    if (cost <= 0) return 0;
    account.credits -= cost;
    account.billedQueries++;
    account.creditsBilled += cost;
    this.counters.creditsBilled += cost;
    this.counters.billedQueries++;
    if (pid) this.counters.billedByPid[pid] = (this.counters.billedByPid[pid] ?? 0) + 1;
    return cost;
  }

  /** The enterprise-search operation after admission: validate, check credits, match, bill. */
  searchEnterprise(account: KeyAccount, params: Record<string, string>, plan: FaultPlan): unknown {
    const name = (params.ent_name ?? '').trim();
    if (name.length === 0 || Array.from(name).length > 100) {
      throw new SimError(
        'invalid_parameter',
        'Please provide a valid enterprise name keyword (1-100 characters)',
      );
    }
    this.checkCredits('enterprise-search', account);
    const set = this.resolutions.get(name);
    const found = set === undefined ? this.world().match(name) : this.world().byPid(set);
    if (!found) throw new SimError('not_found', `No matching enterprise information for "${name}"`);
    const credits = this.bill('enterprise-search', account, found.PID);
    const answer = enterpriseAnswer(found, credits);
    if (!plan.drift) return answer;
    // The content drifts first, then the usage (the order the fault plan's draws were made in).
    const content = driftEnterprise(found as unknown as Record<string, unknown>, plan.rng);
    const metadata: Record<string, unknown> = { usage: driftUsage(answer.metadata.usage, plan.rng), content };
    if (metadata.usage === undefined) delete metadata.usage;
    return { ...answer, metadata };
  }

  /** The product-listing operation after admission. */
  listProducts(account: KeyAccount, params: Record<string, string>, plan: FaultPlan): unknown {
    const date = params.date?.trim() ?? '';
    const productName = params.product_name?.trim() ?? '';
    if (date !== '' && productName !== '') {
      throw new SimError(this.options.bothParamsCode, 'date and product_name must not be used together');
    }
    if (date === '' && productName === '') {
      throw new SimError('missing_parameters', 'Required parameters are missing: give date or product_name');
    }
    const now = this.now();
    const drift = (p: unknown) =>
      plan.drift ? driftProduct(p as Record<string, unknown>, plan.rng) : (p as Record<string, unknown>);
    if (productName !== '') {
      const product = this.products.find(productName, now);
      if (!product) throw new SimError('invalid_product_name', `Product "${productName}" was not found`);
      this.checkCredits('product-listing', account);
      this.bill('product-listing', account, null);
      return { result: 'success', markdown: renderProductMarkdown(product), metadata: drift(product) };
    }
    if (!isCalendarDate(date)) throw new SimError('invalid_date', 'The date is not in the format YYYY-MM-DD');
    const limit = this.readLimit(params.limit);
    this.checkCredits('product-listing', account);
    const items = this.products.list(date, now).slice(0, limit);
    this.bill('product-listing', account, null);
    return {
      result: 'success',
      markdown: items.map((p) => renderProductMarkdown(p)),
      metadata: items.map(drift),
    };
  }

  private readLimit(raw: string | undefined): number {
    if (raw === undefined || raw.trim() === '') return this.options.defaultLimit;
    const n = /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : Number.NaN;
    if (n >= 1 && n <= 20) return n;
    if (this.options.badLimitCode === 'clamp')
      return Number.isNaN(n) ? this.options.defaultLimit : Math.min(Math.max(n, 1), 20);
    throw new SimError(this.options.badLimitCode, `limit must be a whole number from 1 to 20, got "${raw}"`);
  }
}

export interface RunningSimulator {
  sim: Simulator;
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Starts the simulator's HTTP server on `host:port` (port 0 picks a free one). */
export async function startSimulator(
  options: SimOptions,
  listen: { host?: string; port?: number } = {},
): Promise<RunningSimulator> {
  const sim = new Simulator(options);
  const app = buildApp(sim);
  await app.listen({ host: listen.host ?? '127.0.0.1', port: listen.port ?? 0 });
  const address = app.server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    sim,
    url: `http://${host}:${address.port}`,
    port: address.port,
    close: () => app.close(),
  };
}

/** The request's parameters: from the query string, else from a url-encoded or JSON body. */
function paramsOf(request: FastifyRequest): Record<string, string> {
  const params: Record<string, string> = {};
  const bodyText = (request as FastifyRequest & { bodyText?: string }).bodyText;
  if (bodyText && !bodyText.trimStart().startsWith('{')) {
    for (const [k, v] of new URLSearchParams(bodyText)) if (!(k in params)) params[k] = v;
  } else if (bodyText) {
    try {
      const json = JSON.parse(bodyText) as Record<string, unknown>;
      for (const [k, v] of Object.entries(json)) if (v != null) params[k] = String(v);
    } catch {
      // Not JSON either: ignore the body, as a query-string server would.
    }
  }
  const query = new URL(request.url, 'http://sim').searchParams;
  for (const [k, v] of query) params[k] = query.getAll(k)[0] ?? v;
  return params;
}

/** The handler of an upstream operation: faults first, then the account's answer (or error). */
function operationHandler(
  sim: Simulator,
  held: Set<Socket>,
  operation: SimOperation,
): (request: FastifyRequest, reply: FastifyReply) => Promise<void> {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    sim.counters.requests[operation]++;
    const params = paramsOf(request);
    const plan = sim.planFaults(operation, params);
    if (plan.latencyMs > 0) await new Promise((r) => setTimeout(r, plan.latencyMs));
    if (plan.gateway) {
      sim.count(operation, `fault:${plan.gateway}`);
      return sendGatewayFault(plan.gateway, reply, held);
    }
    let body: unknown;
    try {
      const account = sim.admit(operation, request.headers.authorization);
      body =
        operation === 'enterprise-search'
          ? sim.searchEnterprise(account, params, plan)
          : sim.listProducts(account, params, plan);
    } catch (err) {
      if (!(err instanceof SimError)) throw err;
      sim.count(operation, err.code);
      const status = sim.options.errorStatus === 'http' ? (HTTP_STATUS[err.code] ?? 400) : 200;
      if (err.retryAfterS !== null && sim.options.retryAfter)
        reply.header('Retry-After', String(err.retryAfterS));
      reply.code(status).send({ status: 'error', error: { code: err.code, message: err.message } });
      return;
    }
    // `late` holds back a billed enterprise search (product calls are answered at once).
    const late = operation === 'enterprise-search' && plan.lateMs > 0;
    sim.count(
      operation,
      plan.truncate
        ? 'success:truncated'
        : plan.trickle
          ? 'success:trickle'
          : late
            ? 'success:late'
            : 'success',
    );
    const text = JSON.stringify(body);
    if (plan.trickle) return trickle(text, plan, reply, held);
    if (late) return answerLate(text, plan.lateMs, reply, held);
    if (plan.truncate) {
      const cut = text.slice(0, Math.max(1, Math.floor(text.length * (0.2 + plan.rng.next() * 0.6))));
      reply.code(200).type('application/json; charset=utf-8').send(cut);
      return;
    }
    reply.code(200).type('application/json; charset=utf-8').send(text);
  };
}

/** The simulator's Fastify app: the two upstream operations and its control routes. */
function buildApp(sim: Simulator): FastifyInstance {
  const app = Fastify({ logger: false, forceCloseConnections: true });
  const held = new Set<Socket>();
  app.addHook('onClose', async () => {
    for (const socket of held) socket.destroy();
  });

  // The spec does not say whether parameters sit in the query string or a body, so accept
  // a url-encoded body too, on GET as well (Fastify does not parse GET bodies itself).
  app.addHook('preHandler', async (request) => {
    if (request.method !== 'GET') return;
    const length = Number(request.headers['content-length'] ?? 0);
    if (!(length > 0) && request.headers['transfer-encoding'] === undefined) return;
    const chunks: Buffer[] = [];
    for await (const chunk of request.raw) chunks.push(chunk as Buffer);
    (request as FastifyRequest & { bodyText?: string }).bodyText = Buffer.concat(chunks).toString('utf8');
  });

  const handle = (operation: SimOperation) => operationHandler(sim, held, operation);

  app.get('/v1/enterprise-search', handle('enterprise-search'));
  app.get('/v1/product-listing', handle('product-listing'));

  registerControlRoutes(app, sim);
  return app;
}

/** The simulator's own routes: its OpenAPI document and the /_sim controls and ground truth. */
function registerControlRoutes(app: FastifyInstance, sim: Simulator): void {
  app.get('/openapi.json', async () => buildOpenApi());
  app.get('/_sim/state', async () => sim.state());
  app.post('/_sim/clock', async (request, reply) => {
    const body = (request.body ?? {}) as { now?: string; advanceMs?: number };
    if (typeof body.now !== 'string' && typeof body.advanceMs !== 'number') {
      return reply.code(400).send({ error: 'send {"now": "<ISO time>"} or {"advanceMs": N}' });
    }
    if (typeof body.now === 'string') {
      const at = new Date(body.now);
      if (Number.isNaN(at.getTime())) return reply.code(400).send({ error: `bad time: ${body.now}` });
      sim.setClock(at);
    }
    if (typeof body.advanceMs === 'number') sim.advanceClock(body.advanceMs);
    return { now: sim.now().toISOString(), cycle: cycleOf(sim.now()) };
  });
  app.post('/_sim/credits', async (request, reply) => {
    const body = (request.body ?? {}) as { key?: string; credits?: number };
    if (typeof body.key !== 'string' || typeof body.credits !== 'number') {
      return reply.code(400).send({ error: 'send {"key": "...", "credits": N}' });
    }
    sim.setCredits(body.key, body.credits);
    return { credits: sim.credits(body.key) };
  });
  // Ground truth for backtests: what each refresh changed, and each firm's true base rate.
  app.get('/_sim/changes', async (request, reply) => {
    const q = request.query as { from?: string; to?: string };
    const from = q.from?.trim() ?? '';
    const to = q.to?.trim() ?? from;
    if (!isCalendarDate(from) || !isCalendarDate(to))
      return reply.code(400).send({ error: 'send ?from=YYYY-MM-DD&to=YYYY-MM-DD (real calendar dates)' });
    const span = daysBetween(from, to);
    if (span < 0) return reply.code(400).send({ error: `from ${from} is after to ${to}` });
    if (span >= 400) return reply.code(400).send({ error: `at most 400 days at once, asked ${span + 1}` });
    // One replay up to `to` logs every refresh on the way; then the world goes back.
    const world = sim.enterprises;
    const here = world.cycle;
    world.at(to);
    const changes = [];
    for (let d = 0; d <= span; d++) {
      const cycle = addDays(from, d);
      for (const c of world.changesIn(cycle)) changes.push({ cycle, ...c });
    }
    world.at(here);
    return { changes };
  });
  registerRelatedRoutes(app, sim);
  app.get('/_sim/rates', async () => {
    const world = sim.world();
    return { cycle: world.cycle, rates: Object.fromEntries(world.rates()) };
  });
  app.get('/_sim/balance', async (request, reply) => {
    const key = /^Bearer\s+(\S+)/i.exec(request.headers.authorization ?? '')?.[1];
    const credits = key ? sim.credits(key) : null;
    if (credits === null) return reply.code(404).send({ error: 'unknown key' });
    return { credits };
  });
  app.post('/_sim/faults', async (request, reply) => {
    const body = (request.body ?? {}) as { spec?: string };
    try {
      sim.setFaults(parseFaultSpec(body.spec ?? ''));
    } catch (err) {
      return reply.code(400).send({ error: (err as Error).message });
    }
    return { faults: formatFaultSpec(sim.options.faults) };
  });
  app.post('/_sim/limits', async (request, reply) => {
    const body = (request.body ?? {}) as Partial<Record<'enterprise' | 'product', number>>;
    const ok = (v: unknown) => v === undefined || (typeof v === 'number' && Number.isInteger(v) && v > 0);
    if (
      (body.enterprise === undefined && body.product === undefined) ||
      !ok(body.enterprise) ||
      !ok(body.product)
    ) {
      return reply
        .code(400)
        .send({ error: 'send {"enterprise": N, "product": N} (positive integers, either or both)' });
    }
    if (typeof body.enterprise === 'number') sim.options.rateLimits['enterprise-search'] = body.enterprise;
    if (typeof body.product === 'number') sim.options.rateLimits['product-listing'] = body.product;
    return { rateLimits: sim.options.rateLimits };
  });
  app.post('/_sim/resolve', async (request, reply) => {
    const body = (request.body ?? {}) as { keyword?: unknown; pid?: unknown };
    if (
      typeof body.keyword !== 'string' ||
      body.keyword.trim() === '' ||
      !(typeof body.pid === 'string' || body.pid === null)
    ) {
      return reply.code(400).send({
        error: 'send {"keyword": "...", "pid": "<PID>"} (pid null: back to the model\'s own match)',
      });
    }
    try {
      sim.resolveKeyword(body.keyword, body.pid);
    } catch (err) {
      if (!(err instanceof RangeError)) throw err;
      return reply.code(400).send({ error: err.message });
    }
    const e = typeof body.pid === 'string' ? sim.world().byPid(body.pid) : undefined;
    return { keyword: body.keyword.trim(), pid: body.pid, name: e?.ENTNAME ?? null };
  });
  app.post('/_sim/reset', async () => {
    sim.resetCounters();
    return { ok: true };
  });
}

/**
 * Related parties: shareholding chains of the world now (A held by B held by C …), and a status
 * given to an enterprise on a known day (the change log then reports it, with its holders).
 */
function registerRelatedRoutes(app: FastifyInstance, sim: Simulator): void {
  app.get('/_sim/chains', async (request, reply) => {
    const q = request.query as { length?: string; limit?: string };
    const length = Number(q.length ?? 3);
    const limit = Number(q.limit ?? 10);
    if (
      !Number.isInteger(length) ||
      length < 2 ||
      length > 4 ||
      !Number.isInteger(limit) ||
      limit < 1 ||
      limit > 1000
    )
      return reply.code(400).send({ error: 'send ?length=2..4&limit=1..1000 (integers)' });
    return { chains: sim.world().chains(length, limit) };
  });
  app.get('/_sim/people', async (request, reply) => {
    const limit = Number((request.query as { limit?: string }).limit ?? 10);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
      return reply.code(400).send({ error: 'send ?limit=1..1000 (an integer)' });
    const world = sim.world();
    return { cycle: world.cycle, people: world.sharedPeople(limit) };
  });
  app.post('/_sim/schedule', async (request, reply) => {
    const body = (request.body ?? {}) as { pid?: unknown; cycle?: unknown; status?: unknown };
    if (typeof body.pid !== 'string' || typeof body.cycle !== 'string' || typeof body.status !== 'string')
      return reply.code(400).send({
        error: `send {"pid": "<PID>", "cycle": "YYYY-MM-DD", "status": one of ${SCHEDULABLE_STATUSES.join(', ')}}`,
      });
    if (!isCalendarDate(body.cycle))
      return reply.code(400).send({ error: `cycle ${body.cycle} is not a calendar date` });
    try {
      sim.enterprises.schedule(body.pid, body.cycle, body.status as SchedulableStatus);
    } catch (err) {
      if (!(err instanceof RangeError)) throw err;
      return reply.code(400).send({ error: err.message });
    }
    return { pid: body.pid, cycle: body.cycle, status: body.status };
  });
}

/** How often a trickled answer sends its next byte. */
const TRICKLE_INTERVAL_MS = 200;
/** When a trickled answer lets go of a client that never went away (longer than any client timeout). */
const TRICKLE_GIVE_UP_MS = 30 * 60_000;

/** Takes the reply's socket over from Fastify, held in `held` (closed on shutdown) while open. */
function hold(reply: FastifyReply, held: Set<Socket>): FastifyReply['raw'] {
  reply.hijack();
  const res = reply.raw;
  const socket = res.socket;
  if (socket) {
    held.add(socket);
    socket.once('close', () => held.delete(socket));
  }
  return res;
}

/**
 * A billed answer that never completes: HTTP 200 and the first 1–12 bytes of `text` (at most
 * `{"status":"s`: not yet the word "success"), then one byte every TRICKLE_INTERVAL_MS (the rest
 * of the document, then spaces), until the client goes away.
 */
function trickle(text: string, plan: FaultPlan, reply: FastifyReply, held: Set<Socket>): void {
  const bytes = Buffer.from(text);
  let sent = plan.rng.int(1, Math.min(12, bytes.length));
  const res = hold(reply, held);
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
  res.write(bytes.subarray(0, sent));
  const space = Buffer.from(' ');
  const tick = setInterval(() => {
    res.write(sent < bytes.length ? bytes.subarray(sent, ++sent) : space);
  }, TRICKLE_INTERVAL_MS);
  const giveUp = setTimeout(() => res.destroy(), TRICKLE_GIVE_UP_MS);
  tick.unref();
  giveUp.unref();
  res.once('close', () => {
    clearInterval(tick);
    clearTimeout(giveUp);
  });
}

/**
 * A billed answer sent whole, but only `lateMs` after the request (headers included): a client
 * whose timeout is shorter has given up by then, and the bytes go nowhere. The call was billed
 * all the same, as a real upstream that processed it and answered slowly.
 */
function answerLate(text: string, lateMs: number, reply: FastifyReply, held: Set<Socket>): void {
  const res = hold(reply, held);
  const timer = setTimeout(() => {
    if (res.destroyed || res.writableEnded) return;
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
    res.end(text);
  }, lateMs);
  timer.unref();
  res.once('close', () => clearTimeout(timer));
}

const HTML_PAGE = `<!DOCTYPE html>
<html><head><title>502 Bad Gateway</title></head>
<body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>
`;

function sendGatewayFault(kind: string, reply: FastifyReply, held: Set<Socket>): void {
  switch (kind) {
    case '500':
      reply
        .code(500)
        .send({ status: 'error', error: { code: 'internal_error', message: 'Internal server error' } });
      return;
    case '502':
      reply.code(502).type('text/html').send(HTML_PAGE);
      return;
    case '503':
      reply.code(503).type('text/plain').send('Service Unavailable');
      return;
    case 'html':
      reply
        .code(200)
        .type('text/html')
        .send('<html><body><h1>Please wait while we check your browser...</h1></body></html>');
      return;
    case 'error200':
      reply.code(200).send({
        status: 'error',
        error: { code: 'internal_error', message: 'Temporary failure, try again' },
      });
      return;
    case 'reset':
      reply.hijack();
      reply.raw.socket?.destroy();
      return;
    case 'timeout': {
      reply.hijack();
      const socket = reply.raw.socket;
      if (socket) {
        held.add(socket);
        socket.once('close', () => held.delete(socket));
        // Never answer; let go after a long while so a forgotten client does not pin memory.
        setTimeout(() => socket.destroy(), 10 * 60_000).unref();
      }
      return;
    }
  }
}
