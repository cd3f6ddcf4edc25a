/**
 * Telling a database outage (a dropped or refused connection) from a refused statement, and
 * waiting one out. Jobs use it where giving up would cost money: an upstream answer already
 * bought must land, not be bought again by the job's retry.
 */
import { type Backoff, backoffMs } from '../retry/backoff.ts';

/** Driver and socket codes of a lost or refused connection (not our own `sql.end()`). */
const LOST = new Set([
  'CONNECTION_CLOSED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  // SQLSTATE: admin_shutdown (pg_terminate_backend), crash_shutdown, cannot_connect_now
  // (starting up or shutting down), too_many_connections.
  '57P01',
  '57P02',
  '57P03',
  '53300',
]);

/** Whether `err` says the database could not be reached or dropped the connection. */
export function isConnectionLoss(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const code = String((err as { code?: unknown }).code ?? '');
  if (LOST.has(code) || code.startsWith('08')) return true;
  // object_not_in_prerequisite_state is also what a statement can get; only this message is an outage
  // (ALTER DATABASE … ALLOW_CONNECTIONS false, a database being dropped or renamed).
  return code === '55000' && /not currently accepting connections/.test(String((err as Error).message));
}

export interface Patience {
  /** The longest the outage is waited out, in all. */
  maxMs: number;
  /** Told of each wait (for a log line). */
  onWait?: (err: unknown, waitMs: number, waitedMs: number) => void;
  sleep?: (ms: number) => Promise<void>;
}

/** The waits while the database is unreachable: 250 ms, doubling to 5 s, no jitter. */
export const OUTAGE_BACKOFF: Backoff = { baseMs: 250, capMs: 5000 };

/**
 * Runs `fn(0)`, and again as `fn(1)`, `fn(2)`… while it fails with a connection loss, waiting
 * 250 ms, doubling to 5 s, for at most `maxMs` in all. Any other error, or the last loss, is thrown.
 */
export async function whileUnreachable<T>(fn: (retry: number) => Promise<T>, patience: Patience): Promise<T> {
  const sleep = patience.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const started = Date.now();
  for (let retry = 0; ; retry++) {
    try {
      return await fn(retry);
    } catch (err) {
      const waited = Date.now() - started;
      if (!isConnectionLoss(err) || waited >= patience.maxMs) throw err;
      const wait = Math.min(backoffMs(retry, OUTAGE_BACKOFF), patience.maxMs - waited);
      patience.onWait?.(err, wait, waited);
      await sleep(wait);
    }
  }
}
