/**
 * Hearing new events as they commit: a connection of its own LISTENs on the outbox's channel
 * (outbox.ts notifies it in the transaction that writes the events, so the notification comes
 * with the commit), and the delivery engine wakes on each notification.
 *
 * A LISTEN is held by a session, so it needs a direct connection to Postgres: through PgBouncer
 * in transaction mode the session that listened is handed to other clients and notifications
 * never arrive. Whether they do is not assumed but checked: `check` sends a probe through the
 * engine's own pool and waits for it to come back on the listening connection. Until a probe has
 * come back (no Postgres reachable, PgBouncer in transaction mode, a listening connection lost and
 * not opened again), `listening` is false and the engine looks for new events on its timer, as it
 * would without this; the check is tried again later (RETRY).
 */
import { randomUUID } from 'node:crypto';
import type postgres from 'postgres';
import { type Database, openDatabase } from '../db/connect.ts';
import { EVENTS_CHANNEL } from '../events/outbox.ts';
import type { Logger } from '../log/log.ts';
import { backoffMs } from '../retry/backoff.ts';
import { within } from '../time/deadline.ts';

/** Where to listen: a Postgres URL reaching the server directly (not PgBouncer in transaction mode). */
export interface ListenOptions {
  url: string;
  /** Named prepared statements on the listening connection (DAYBOOK_DB_PREPARE). */
  prepare?: boolean;
  /** How long a probe may take to come back before notifications are taken not to arrive. */
  probeMs?: number;
}

const PROBE = 'probe:';

/**
 * After a failed check, the next is put off (the one backoff rule: 10 s, doubling, 10 min at
 * most): behind PgBouncer in transaction mode each LISTEN leaves a pooled server session
 * listening, and trying every few seconds would leave more.
 */
const RETRY = { baseMs: 10_000, capMs: 600_000 };

export class EventsHeard {
  private db: Database | null = null;
  private heard = false;
  private warned = false;
  private waiting: { token: string; back: () => void } | null = null;
  private checking: Promise<void> | null = null;
  private closed = false;
  private failures = 0;
  private retryAt = 0;
  /** Why the last check failed (its error); null once a probe came back. */
  private why: unknown = null;

  constructor(
    private readonly o: ListenOptions,
    /** The engine's pool: the probe is sent through it, as events are written. */
    private readonly sql: postgres.Sql,
    /** Called on each notification of new events, and each time the LISTEN is (re)established. */
    private readonly onEvents: () => void,
    private readonly log: Logger,
  ) {}

  /** Whether notifications are known to arrive (the last probe came back). */
  get listening(): boolean {
    return this.heard;
  }

  /** Why the last check failed: the error (no connection, a probe that did not come back); null when none did. */
  get failure(): unknown {
    return this.why;
  }

  /**
   * Listens (opening the connection when it is not open), then sends a probe and waits for it.
   * Never throws: a failure leaves `listening` false, closes the connection, and is logged once
   * until notifications arrive again.
   */
  check(): Promise<void> {
    if (this.closed || (!this.heard && performance.now() < this.retryAt)) return Promise.resolve();
    this.checking ??= this.probe().finally(() => {
      this.checking = null;
    });
    return this.checking;
  }

  private async probe(): Promise<void> {
    const probeMs = this.o.probeMs ?? 5_000;
    const token = `${PROBE}${randomUUID()}`;
    const back = new Promise<void>((resolve) => {
      this.waiting = { token, back: resolve };
    });
    try {
      if (!this.db) {
        const db = openDatabase(this.o.url, {
          max: 1,
          applicationName: 'daybook-listen',
          ...(this.o.prepare === undefined ? {} : { prepare: this.o.prepare }),
        });
        this.db = db;
        await within(
          db.sql.listen(
            EVENTS_CHANNEL,
            (payload) => this.notified(payload),
            () => this.onEvents(),
          ),
          Math.max(probeMs, 10_000),
          'listening for new events',
        );
      }
      await within(this.sql`select pg_notify(${EVENTS_CHANNEL}, ${token})`, probeMs, 'probing the listener');
      await within(back, probeMs, 'a probe notification');
      if (this.closed) return;
      if (!this.heard) this.log.info('listening for new events: deliveries start as events commit');
      this.heard = true;
      this.warned = false;
      this.failures = 0;
      this.why = null;
    } catch (err) {
      if (this.closed) return;
      this.why = err;
      if (this.heard || !this.warned)
        this.log.warn(
          { err: err instanceof Error ? err.message : String(err) },
          'new events are not heard (LISTEN/NOTIFY needs a direct connection to Postgres, not PgBouncer in transaction mode: set DAYBOOK_LISTEN_URL to one): looking for them on a timer; trying again later',
        );
      this.heard = false;
      this.warned = true;
      this.retryAt = performance.now() + backoffMs(this.failures++, RETRY);
      await this.drop();
    } finally {
      this.waiting = null;
    }
  }

  private notified(payload: string): void {
    if (payload.startsWith(PROBE)) {
      // A probe: ours comes back; another engine's says nothing new.
      if (this.waiting?.token === payload) this.waiting.back();
      return;
    }
    this.onEvents();
  }

  private async drop(): Promise<void> {
    const db = this.db;
    this.db = null;
    await db?.close().catch(() => {});
  }

  /** Stops listening and closes the connection. */
  async close(): Promise<void> {
    this.closed = true;
    this.heard = false;
    // A probe still waiting ends now.
    this.waiting?.back();
    await this.drop();
  }
}
