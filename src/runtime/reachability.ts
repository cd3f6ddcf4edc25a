/**
 * Saying that Redis or Postgres cannot be reached, once: a long-running process (worker,
 * scheduler, serve) keeps retrying with backoff, and its log gets one clear line when a
 * dependency goes down, a reminder at most every `repeatMs` while it stays down, and one line
 * when it is back. The drivers' own reconnect errors (a stack dump per attempt) never reach the
 * log.
 */
import type { Logger } from '../log/log.ts';
import { withoutPassword } from '../log/urls.ts';
import { type Backoff, backoffMs } from '../retry/backoff.ts';
import { sleepUnless } from '../time/sleep.ts';
import { type RedisClient, type RedisTarget, redisLabel, redisVariable } from './redis.ts';

export { sleepUnless, withoutPassword };

export type Dependency = 'redis' | 'postgres';

const WHAT: Record<Dependency, { name: string; variable: string }> = {
  redis: { name: 'Redis', variable: 'REDIS_URL' },
  postgres: { name: 'Postgres', variable: 'DATABASE_URL' },
};

/** Error codes and messages of a connection that could not be made or was lost. */
const REDIS_LOSS =
  /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN|EPIPE|Connection is closed|connect ETIMEDOUT|Stream isn't writeable|LOADING|READONLY|MASTERDOWN/;

/** Whether a Redis client or BullMQ error says the server cannot be reached (not a bad command). */
export function isRedisUnreachable(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const code = String((err as { code?: unknown }).code ?? '');
  return REDIS_LOSS.test(code) || REDIS_LOSS.test(String((err as Error).message ?? ''));
}

/** The message of an error in one line, without its stack. */
function oneLine(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const code = (err as { code?: unknown } | null)?.code;
  const text = message || (typeof code === 'string' ? code : 'unknown error');
  return text.split('\n')[0]?.slice(0, 300) ?? '';
}

interface Outage {
  since: number;
  failures: number;
  lastSaid: number;
  lastError: string;
}

export interface ReachabilityOptions {
  /** The URLs, for the messages (their passwords are never printed). */
  urls: Partial<Record<Dependency, string>>;
  /** Where Redis is (REDIS_URL or REDIS_CLUSTER_NODES), when the messages name it. */
  redis?: RedisTarget;
  /** The shortest time between two lines about the same outage. */
  repeatMs?: number;
  now?: () => number;
}

/** Tracks whether each dependency answers, and logs the changes at a bounded rate. */
export class Reachability {
  private readonly outages = new Map<Dependency, Outage>();
  private readonly log: Logger;
  private readonly urls: Partial<Record<Dependency, string>>;
  private readonly redis: RedisTarget | undefined;
  private readonly repeatMs: number;
  private readonly now: () => number;

  constructor(log: Logger, options: ReachabilityOptions) {
    this.log = log;
    this.urls = options.urls;
    this.redis = options.redis;
    this.repeatMs = options.repeatMs ?? 60_000;
    this.now = options.now ?? Date.now;
  }

  /** What is down now, with since when and the last error. */
  down(): { dependency: Dependency; since: Date; failures: number; error: string }[] {
    return [...this.outages].map(([dependency, o]) => ({
      dependency,
      since: new Date(o.since),
      failures: o.failures,
      error: o.lastError,
    }));
  }

  private label(d: Dependency): string {
    if (d === 'redis' && this.redis) return redisLabel(this.redis);
    const url = this.urls[d];
    return `${WHAT[d].name}${url ? ` at ${withoutPassword(url)}` : ''} (${WHAT[d].variable})`;
  }

  private variable(d: Dependency): string {
    return d === 'redis' && this.redis ? redisVariable(this.redis) : WHAT[d].variable;
  }

  /** A failed attempt to reach `d`. */
  failed(d: Dependency, err: unknown): void {
    const now = this.now();
    const error = oneLine(err);
    const o = this.outages.get(d);
    const fields = { dependency: d, variable: this.variable(d), error };
    if (!o) {
      this.outages.set(d, { since: now, failures: 1, lastSaid: now, lastError: error });
      this.log.error(fields, `${this.label(d)} is unreachable: ${error}. Retrying with backoff.`);
      return;
    }
    o.failures++;
    o.lastError = error;
    if (now - o.lastSaid >= this.repeatMs) {
      o.lastSaid = now;
      const s = Math.round((now - o.since) / 1000);
      this.log.error(
        { ...fields, downForS: s, failures: o.failures },
        `${this.label(d)} still unreachable after ${s} s (${o.failures} failed attempts): ${error}`,
      );
    }
  }

  /** `d` answered: a line if it had been down. */
  answered(d: Dependency): void {
    const o = this.outages.get(d);
    if (!o) return;
    this.outages.delete(d);
    const s = Math.round((this.now() - o.since) / 1000);
    this.log.info(
      { dependency: d, variable: this.variable(d), downForS: s, failures: o.failures },
      `${this.label(d)} reachable again after ${s} s`,
    );
  }
}

/** Anything with Node's event emitter `on`, as ioredis clients, BullMQ queues and workers are. */
interface Emitter {
  on(event: string, listener: (...args: never[]) => void): unknown;
}

/**
 * Routes the errors of Redis clients, BullMQ queues and workers into `reach`: unreachable
 * Redis becomes the one rate-limited line, anything else goes to `other`. A client also reports
 * when it is ready again. Without a listener, ioredis prints a stack dump per reconnect.
 */
export function watchRedis(
  reach: Reachability,
  emitters: readonly (Emitter | RedisClient)[],
  other: (err: Error) => void,
): void {
  for (const e of emitters as Emitter[]) {
    e.on('error', ((err: Error) => {
      if (isRedisUnreachable(err)) reach.failed('redis', err);
      else other(err);
    }) as (...args: never[]) => void);
    e.on('ready', (() => reach.answered('redis')) as (...args: never[]) => void);
  }
}

/** Raised when a stop was asked for while waiting for a dependency. */
export class StoppedWhileWaiting extends Error {
  override readonly name = 'StoppedWhileWaiting';
}

/** The waits between reconnect attempts: 500 ms, doubling to 30 s, no jitter. */
export const RECONNECT_BACKOFF: Backoff = { baseMs: 500, capMs: 30_000 };

/**
 * Runs `fn` until it succeeds, while it fails because `d` is unreachable (`isLoss`): the
 * failures go to `reach`, the waits grow from 500 ms to 30 s, and an abort of `signal` ends the
 * wait with StoppedWhileWaiting. Any other error is thrown at once.
 */
export async function untilReachable<T>(
  reach: Reachability,
  d: Dependency,
  isLoss: (err: unknown) => boolean,
  signal: AbortSignal,
  fn: () => Promise<T>,
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    if (signal.aborted) throw new StoppedWhileWaiting(`stopped while waiting for ${d}`);
    try {
      const value = await fn();
      reach.answered(d);
      return value;
    } catch (err) {
      if (!isLoss(err)) throw err;
      reach.failed(d, err);
      await sleepUnless(backoffMs(attempt, RECONNECT_BACKOFF), signal);
    }
  }
}
