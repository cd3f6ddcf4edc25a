/**
 * The delivery engine: queues new events for each subscription (fan-out), then keeps up to
 * `concurrency` deliveries in flight, at most `perSubscription` per endpoint, claiming more as
 * each one ends, so a slow or failing endpoint never holds the others up. Any number of engines
 * (workers, `daybook deliver`, `daybook run`) share the queue through claims in Postgres.
 *
 * Outcomes: a 2xx delivers; a 410 disables the endpoint (`endpoint.disabled`); anything else is
 * tried again on the schedule (schedule.ts) until it is used up. An endpoint failing for
 * `disableAfterMs` is disabled too; one that had been failing for a while and answers again
 * emits `endpoint.recovered`.
 */
import type postgres from 'postgres';
import { newHolder } from '../db/lease.ts';
import { appendEvents } from '../events/outbox.ts';
import type { Logger } from '../log/log.ts';
import { parseRetryAfter } from '../retry/retry-after.ts';
import { nextAttemptAt } from '../retry/schedule.ts';
import { within } from '../time/deadline.ts';
import { sleepUnless } from '../time/sleep.ts';
import { bodyOf, signedHeaders } from './payload.ts';
import { post, type SendResult } from './send.ts';
import {
  type Claimed,
  claimDue,
  disableSubscription,
  fanOut,
  markFailing,
  markRecovered,
  recordAttempt,
} from './store.ts';

export interface DeliveryOptions {
  schedule: readonly number[];
  timeoutMs: number;
  disableAfterMs: number;
  concurrency: number;
  perSubscription?: number;
  /** How long a claim lasts: longer than a send can take. */
  leaseMs?: number;
  now?: () => Date;
  random?: () => number;
}

/** An endpoint failing for less than this and answering again emits no `endpoint.recovered`. */
const RECOVERY_NOTICE_MS = 5 * 60_000;

export interface PassSummary {
  queued: number;
  attempted: number;
  delivered: number;
  retrying: number;
  failed: number;
  disabled: number;
}

const emptySummary = (): PassSummary => ({
  queued: 0,
  attempted: 0,
  delivered: 0,
  retrying: 0,
  failed: 0,
  disabled: 0,
});

/**
 * The URL for logs and events: its origin and first path segment only. A query or a longer path
 * can hold a token (a Slack incoming webhook's path is its secret).
 */
export function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    const [first, ...rest] = u.pathname.split('/').filter(Boolean);
    return `${u.protocol}//${u.host}${first ? `/${first}` : '/'}${rest.length > 0 || u.search ? '/…' : ''}`;
  } catch {
    return '(invalid URL)';
  }
}

export class DeliveryEngine {
  /** Each engine holds its claims under a name of its own, even beside another in this process. */
  private readonly holder = newHolder();
  private readonly perSub = new Map<number, number>();
  private inFlight = 0;
  private idle = false;
  private wake: (() => void) | null = null;
  private readonly now: () => Date;
  private readonly random: () => number;

  constructor(
    private readonly sql: postgres.Sql,
    private readonly log: Logger,
    private readonly o: DeliveryOptions,
  ) {
    this.now = o.now ?? (() => new Date());
    this.random = o.random ?? Math.random;
  }

  /**
   * Fans out, then delivers everything due now, and returns when nothing is due or in flight
   * (retries due later are left for a later pass).
   */
  async pass(): Promise<PassSummary> {
    const summary = emptySummary();
    summary.queued = await fanOut(this.sql);
    await this.pump(summary, () => false);
    return summary;
  }

  /** Passes until `signal` aborts, looking for new events every `pollMs`. */
  async run(signal: AbortSignal, pollMs = 1000): Promise<void> {
    const summary = emptySummary();
    while (!signal.aborted) {
      try {
        summary.queued += await within(fanOut(this.sql), this.queryDeadlineMs(), 'queuing new events');
        await this.pump(summary, () => signal.aborted);
      } catch (err) {
        this.log.warn(
          { err: err instanceof Error ? err.message : String(err) },
          'delivery pass failed; trying again',
        );
      }
      await sleepUnless(pollMs, signal);
    }
    while (this.inFlight > 0) await new Promise<void>((r) => (this.wake = r));
  }

  /** How long a claim lasts: longer than a send can take. */
  private leaseMs(): number {
    return this.o.leaseMs ?? this.o.timeoutMs + 10_000;
  }

  /** How long a queue query may take before the pass gives up on it and starts again. */
  private queryDeadlineMs(): number {
    return Math.max(30_000, this.leaseMs());
  }

  private async pump(summary: PassSummary, stop: () => boolean): Promise<void> {
    const per = this.o.perSubscription ?? 4;
    for (;;) {
      if (stop()) break;
      const free = this.o.concurrency - this.inFlight;
      let claimed: Claimed[] = [];
      let excluded = false;
      // Claims go in batches (a quarter of the slots, or whatever is free when nothing runs):
      // a claim per finished delivery would cost a query each.
      if (free > 0 && (free >= Math.ceil(this.o.concurrency / 4) || this.inFlight === 0 || this.idle)) {
        const busy = [...this.perSub].filter(([, n]) => n >= per).map(([id]) => id);
        claimed = await within(
          claimDue(this.sql, {
            holder: this.holder,
            limit: free,
            perSubscription: per,
            busy,
            leaseMs: this.leaseMs(),
          }),
          this.queryDeadlineMs(),
          'claiming due deliveries',
        );
        excluded = busy.length > 0;
        for (const d of claimed) this.start(d, summary);
      }
      if (claimed.length === 0 && this.inFlight === 0) {
        // Endpoints busy when the claim began may have finished since: ask again, excluding none.
        if (excluded) continue;
        break;
      }
      // Nothing more was due: claim again as soon as a slot frees, whatever its size.
      this.idle = free > 0 && claimed.length < free;
      // Wait for one delivery to end: its slot, or its endpoint's, is free again.
      await new Promise<void>((r) => (this.wake = r));
    }
  }

  private start(d: Claimed, summary: PassSummary): void {
    this.inFlight++;
    this.perSub.set(d.subscription_id, (this.perSub.get(d.subscription_id) ?? 0) + 1);
    void this.deliver(d, summary)
      .catch((err: unknown) =>
        this.log.error(
          {
            subscription: d.subscription_id,
            event: d.event_seq,
            err: err instanceof Error ? err.message : String(err),
          },
          'delivery could not be recorded; its claim lapses and it is tried again',
        ),
      )
      .finally(() => {
        this.inFlight--;
        const n = (this.perSub.get(d.subscription_id) ?? 1) - 1;
        if (n <= 0) this.perSub.delete(d.subscription_id);
        else this.perSub.set(d.subscription_id, n);
        const w = this.wake;
        this.wake = null;
        w?.();
      });
  }

  private async deliver(d: Claimed, summary: PassSummary): Promise<void> {
    const attempt = d.attempts + 1;
    const at = this.now();
    let result: SendResult;
    if (!d.event) {
      result = {
        status: null,
        response: null,
        retryAfter: undefined,
        error: 'the event is missing',
        latencyMs: 0,
      };
    } else {
      const body = bodyOf(d.format, d.event);
      const headers = signedHeaders(d.event.id, body, d.secrets, at);
      result = await post(new URL(d.url), headers, body, {
        timeoutMs: this.o.timeoutMs,
        allowPrivate: d.allow_private,
      });
    }
    summary.attempted++;
    const ok = result.status !== null && result.status >= 200 && result.status < 300;
    const gone = result.status === 410;
    const next =
      ok || gone
        ? null
        : nextAttemptAt(this.o.schedule, attempt, at, parseRetryAfter(result.retryAfter, at), this.random());
    const outcome = ok ? 'succeeded' : next ? 'retrying' : 'failed';
    const error = ok ? null : (result.error ?? `HTTP ${result.status}`);
    // Past the claim's lease the delivery is another's to take: a record still not written then
    // (a lock held elsewhere, a connection wedged in the driver) is given up, and its slot freed.
    const recording = this.sql.begin(async (tx) => {
      const recorded = await recordAttempt(tx, {
        deliveryId: d.id,
        subscriptionId: d.subscription_id,
        eventSeq: d.event_seq,
        attempt,
        attemptedAt: at,
        latencyMs: result.latencyMs,
        httpStatus: result.status,
        outcome,
        error,
        response: result.response,
        nextAttemptAt: next,
        holder: this.holder,
      });
      if (!recorded) return;
      if (ok) await this.succeeded(tx, d);
      else await this.failedAttempt(tx, d, gone, at, summary);
    });
    await within(recording, this.leaseMs(), 'recording the attempt');
    if (ok) summary.delivered++;
    else if (outcome === 'retrying') summary.retrying++;
    else summary.failed++;
    this.log.info(
      {
        subscription: d.subscription_id,
        url: safeUrl(d.url),
        event: d.event?.id,
        type: d.event?.type,
        attempt,
        status: result.status,
        latencyMs: result.latencyMs,
        outcome,
        ...(error ? { error } : {}),
      },
      `webhook ${outcome}`,
    );
  }

  private async succeeded(tx: postgres.TransactionSql, d: Claimed): Promise<void> {
    // Usually the endpoint was not failing, and nothing is written (or locked).
    if (d.failing_since === null) return;
    const since = await markRecovered(tx, d.subscription_id);
    if (since && this.now().getTime() - new Date(since).getTime() >= RECOVERY_NOTICE_MS)
      await appendEvents(tx, [
        {
          type: 'endpoint.recovered',
          severity: 'low',
          pid: null,
          cycle: null,
          detectedAt: this.now(),
          rawResponseId: null,
          data: { subscription_id: d.subscription_id, url: safeUrl(d.url), reason: null },
        },
      ]);
  }

  private async failedAttempt(
    tx: postgres.TransactionSql,
    d: Claimed,
    gone: boolean,
    at: Date,
    summary: PassSummary,
  ): Promise<void> {
    const s = await markFailing(tx, d.subscription_id, at);
    if (!s || s.state === 'disabled') return;
    const longFailing = at.getTime() - new Date(s.failing_since).getTime() >= this.o.disableAfterMs;
    if (!gone && !longFailing) return;
    const reason = gone
      ? 'the endpoint answered 410 Gone'
      : `failing for ${Math.round(this.o.disableAfterMs / 3_600_000)} h without a success`;
    await disableSubscription(tx, d.subscription_id, reason);
    await appendEvents(tx, [
      {
        type: 'endpoint.disabled',
        severity: 'high',
        pid: null,
        cycle: null,
        detectedAt: at,
        rawResponseId: null,
        data: { subscription_id: d.subscription_id, url: safeUrl(d.url), reason },
      },
    ]);
    summary.disabled++;
    this.log.warn(
      { subscription: d.subscription_id, url: safeUrl(d.url), reason },
      'webhook endpoint disabled',
    );
  }
}
