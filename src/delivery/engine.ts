/**
 * The delivery engine: queues new events for each subscription (fan-out), then keeps up to
 * `concurrency` deliveries in flight, at most `perSubscription` per endpoint, claiming more as
 * each one ends, so a slow or failing endpoint never holds the others up. Any number of engines
 * (workers, `daybook deliver`, `daybook run`) share the queue through claims in Postgres.
 *
 * Outcomes: a 2xx delivers (for a chat vendor, a 2xx whose body says the vendor took it:
 * dispatch.ts); a vendor's "too fast" waits the vendor's time, failing nothing; a 410 disables the endpoint (`endpoint.disabled`); anything else is
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
import { MOST_PER_WINDOW, rateLimitOf } from './channels/limits.ts';
import { groupedBy, inSendOrder } from './channels/message.ts';
import { foldedRequests } from './channels/request.ts';
import {
  chatTarget,
  type Dispatched,
  type DispatchOptions,
  dispatchEvents,
  isChat,
  knownFor,
  sendChat,
} from './dispatch.ts';
import {
  type Claimed,
  claimDue,
  disableSubscription,
  fanOut,
  markFailing,
  markRecovered,
  nextDueInMs,
  recordAttempt,
  releaseClaims,
  returnSends,
  settleSends,
  takeSends,
} from './store.ts';
import { EventsHeard, type ListenOptions } from './wake.ts';

export interface DeliveryOptions extends Omit<DispatchOptions, 'timeoutMs'> {
  schedule: readonly number[];
  timeoutMs: number;
  disableAfterMs: number;
  concurrency: number;
  perSubscription?: number;
  /** How long a claim lasts: longer than a send can take. */
  leaseMs?: number;
  now?: () => Date;
  random?: () => number;
  /** The window of every rate-limited vendor's count, instead of its own (limits.ts; shorter in tests). */
  rateWindowMs?: number;
  /** How long a vendor's "too fast" answer is waited out (its own time by default; shorter in tests). */
  vendorWaitMs?: number;
  /**
   * Where `run` listens for new events (wake.ts): it then starts delivering as an event commits,
   * and looks on its own only when a delivery falls due and every `safetyMs`. Without it, or
   * while notifications do not arrive, `run` looks every `pollMs`.
   */
  listen?: ListenOptions;
  /** How often `run` looks for new events while it hears them (a missed notification's bound). */
  safetyMs?: number;
}

/** The longest `run` waits between looks while it hears new events as they commit. */
export const SAFETY_MS = 10_000;

/** The shortest wait of `run` for a delivery said to be due (one locked by another engine's claim). */
const LEAST_WAIT_MS = 50;

/** The most deliveries of one rate-limited subscription claimed at once. */
const BATCH_CLAIM = 500;

/** An endpoint failing for less than this and answering again emits no `endpoint.recovered`. */
const RECOVERY_NOTICE_MS = 5 * 60_000;

export interface PassSummary {
  queued: number;
  attempted: number;
  delivered: number;
  retrying: number;
  failed: number;
  disabled: number;
  /** Sends in flight when the pass's time ran out (`until`): closed unanswered, due again at once. */
  abandoned: number;
  /** The pass's time ran out (`until`) before it had sent everything due. */
  stopped: boolean;
}

const emptySummary = (): PassSummary => ({
  queued: 0,
  attempted: 0,
  delivered: 0,
  retrying: 0,
  failed: 0,
  disabled: 0,
  abandoned: 0,
  stopped: false,
});

/** The error recorded for a send abandoned when its pass stopped waiting. */
export const ABANDONED_ERROR =
  'no answer yet when the delivery pass stopped waiting (daybook run waits DAYBOOK_RUN_DELIVERY_WAIT at most); due again at once, for a worker or daybook deliver';

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

/** A receiver as shown to people: a URL cut of its tokens (safeUrl), a mail list as it is. */
export function shownReceiver(url: string): string {
  return /^mailto:/i.test(url) ? url : safeUrl(url);
}

export class DeliveryEngine {
  /** Each engine holds its claims under a name of its own, even beside another in this process. */
  private readonly holder = newHolder();
  private readonly perSub = new Map<number, number>();
  private inFlight = 0;
  private idle = false;
  private wake: (() => void) | null = null;
  /** New events were heard since the last fan-out. */
  private fresh = false;
  /** Ends the wait of `run` between passes. */
  private rouse: (() => void) | null = null;
  private readonly now: () => Date;
  private readonly random: () => number;
  /** Aborted when a pass with a deadline (`pass({ until })`) stops waiting. */
  private stopping: AbortSignal | undefined;

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
   * (retries due later are left for a later pass). With `until`, it stops then: it claims no
   * more, sends nothing more, and closes the sends still waiting for an answer (recorded as no
   * attempt of the schedule, due again at once: ABANDONED_ERROR), so it returns right after
   * `until` whatever the receivers do.
   */
  async pass(o: { until?: Date } = {}): Promise<PassSummary> {
    const summary = emptySummary();
    if (o.until === undefined) {
      summary.queued = await fanOut(this.sql);
      await this.pump(summary, () => false);
      return summary;
    }
    const stop = new AbortController();
    const timer = setTimeout(() => stop.abort(), Math.max(0, o.until.getTime() - Date.now()));
    this.stopping = stop.signal;
    try {
      if (!stop.signal.aborted) summary.queued = await fanOut(this.sql);
      await this.pump(summary, () => stop.signal.aborted);
      // The sends in flight end at once when stopped (closed unanswered), and are recorded.
      while (this.inFlight > 0) await new Promise<void>((r) => (this.wake = r));
    } finally {
      clearTimeout(timer);
      this.stopping = undefined;
    }
    summary.stopped = stop.signal.aborted;
    return summary;
  }

  /** What a send needs: the options, and the signal of a pass that stops waiting. */
  private sendOptions(): DeliveryOptions {
    return this.stopping ? { ...this.o, signal: this.stopping } : this.o;
  }

  /**
   * Passes until `signal` aborts. With `listen` (and while notifications arrive), a pass starts as
   * soon as new events commit, when the next delivery falls due, and every `safetyMs` at least;
   * otherwise every `pollMs`.
   */
  async run(signal: AbortSignal, pollMs = 1000): Promise<void> {
    const summary = emptySummary();
    const safetyMs = this.o.safetyMs ?? SAFETY_MS;
    const heard = this.o.listen
      ? new EventsHeard(this.o.listen, this.sql, () => this.heard(), this.log)
      : null;
    let checkedAt = Number.NEGATIVE_INFINITY;
    try {
      while (!signal.aborted) {
        // The listener is checked (and opened again when it was lost) every safetyMs.
        if (heard && performance.now() - checkedAt >= safetyMs) {
          checkedAt = performance.now();
          void heard.check();
        }
        this.fresh = false;
        let failed = false;
        try {
          summary.queued += await within(fanOut(this.sql), this.queryDeadlineMs(), 'queuing new events');
          await this.pump(summary, () => signal.aborted);
        } catch (err) {
          failed = true;
          this.log.warn(
            { err: err instanceof Error ? err.message : String(err) },
            'delivery pass failed; trying again',
          );
        }
        // Events heard during the pass and not yet fanned out: at once.
        if (this.fresh && !failed) continue;
        if (failed) this.fresh = false;
        await this.rest(signal, heard?.listening && !failed ? await this.untilDue(safetyMs) : pollMs);
      }
    } finally {
      await heard?.close();
    }
    while (this.inFlight > 0) await new Promise<void>((r) => (this.wake = r));
  }

  /** New events committed: a waiting `run` passes now, a pump fans them out at its next turn. */
  private heard(): void {
    this.fresh = true;
    const rouse = this.rouse;
    this.rouse = null;
    rouse?.();
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  /** How long until the next delivery falls due, `atMostMs` at most. */
  private async untilDue(atMostMs: number): Promise<number> {
    try {
      const ms = await within(nextDueInMs(this.sql), this.queryDeadlineMs(), 'reading the next due delivery');
      return ms === null ? atMostMs : Math.min(atMostMs, Math.max(LEAST_WAIT_MS, Math.ceil(ms)));
    } catch {
      return LEAST_WAIT_MS * 20;
    }
  }

  /** Waits `ms`, or less when new events are heard or `signal` aborts. */
  private async rest(signal: AbortSignal, ms: number): Promise<void> {
    if (this.fresh || signal.aborted) return;
    const woken = new AbortController();
    this.rouse = () => woken.abort();
    const stop = () => woken.abort();
    signal.addEventListener('abort', stop, { once: true });
    try {
      await sleepUnless(ms, woken.signal);
    } finally {
      signal.removeEventListener('abort', stop);
      this.rouse = null;
    }
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
      // New events heard while this pass delivers: queued now, claimed with the rest.
      if (this.fresh) {
        this.fresh = false;
        summary.queued += await within(fanOut(this.sql), this.queryDeadlineMs(), 'queuing new events');
      }
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
        claimed = claimed.concat(await this.claimRateLimited(summary));
      }
      if (claimed.length === 0 && this.inFlight === 0) {
        // Endpoints busy when the claim began may have finished since: ask again, excluding none.
        if (excluded) continue;
        break;
      }
      // Nothing more was due: claim again as soon as a slot frees, whatever its size.
      this.idle = free > 0 && claimed.length < free;
      // The deliveries started may all have ended while the rate-limited ones were claimed: then
      // nobody is left to wake this pass, and it claims again at once.
      if (this.inFlight === 0) continue;
      // Wait for one delivery to end: its slot, or its endpoint's, is free again.
      await new Promise<void>((r) => (this.wake = r));
    }
  }

  private start(d: Claimed, summary: PassSummary): void {
    this.track(d.subscription_id, 1, () => this.deliver(d, summary), { event: d.event_seq });
  }

  /** Runs `work` in a slot of its own, counted `weight` times against its subscription's share. */
  private track(subscriptionId: number, weight: number, work: () => Promise<void>, about: object): void {
    this.inFlight++;
    this.perSub.set(subscriptionId, (this.perSub.get(subscriptionId) ?? 0) + weight);
    void work()
      .catch((err: unknown) =>
        this.log.error(
          { subscription: subscriptionId, ...about, err: err instanceof Error ? err.message : String(err) },
          'delivery could not be recorded; its claim lapses and it is tried again',
        ),
      )
      .finally(() => {
        this.inFlight--;
        const n = (this.perSub.get(subscriptionId) ?? weight) - weight;
        if (n <= 0) this.perSub.delete(subscriptionId);
        else this.perSub.set(subscriptionId, n);
        const w = this.wake;
        this.wake = null;
        w?.();
      });
  }

  /**
   * Claims the due work of rate-limited subscriptions (DingTalk, WeCom, Feishu: limits.ts), all of one
   * subscription at once, and delivers each subscription's share in one slot (deliverBatch).
   */
  private async claimRateLimited(summary: PassSummary): Promise<Claimed[]> {
    if (this.o.concurrency - this.inFlight <= 0) return [];
    const claimed = await within(
      claimDue(this.sql, {
        holder: this.holder,
        limit: BATCH_CLAIM,
        perSubscription: BATCH_CLAIM,
        busy: [...this.perSub.keys()],
        leaseMs: this.batchLeaseMs(),
        rateLimited: true,
      }),
      this.queryDeadlineMs(),
      'claiming due deliveries',
    );
    const bySub = new Map<number, Claimed[]>();
    for (const d of claimed) bySub.set(d.subscription_id, [...(bySub.get(d.subscription_id) ?? []), d]);
    for (const [id, ds] of bySub)
      this.track(id, this.o.perSubscription ?? 4, () => this.deliverBatch(ds, summary), {
        deliveries: ds.length,
      });
    return claimed;
  }

  /** A batch's lease: every send of a full window, one after the other. */
  private batchLeaseMs(): number {
    return this.leaseMs() + this.o.timeoutMs * MOST_PER_WINDOW;
  }

  /**
   * Delivers the due work of one subscription read by people (chat, Slack, mail) without going
   * past its vendor's limit: one message per company and cycle (every change of the company in
   * it), one per digest or operator event, sent one after another in a stable order (severity,
   * then company). While the vendor's minute can take them all, as many go now as the window has
   * room for and the rest wait for room (no attempt is counted for them); a burst beyond that is
   * folded by company into as few messages as the vendor's size allows (a digest keeps its own).
   */
  private async deliverBatch(all: Claimed[], summary: PassSummary): Promise<void> {
    // An event gone from the outbox is recorded as such, as anywhere else.
    for (const d of all) if (!d.event) await this.deliver(d, summary);
    const ds = all.filter((d) => d.event);
    const first = ds[0];
    if (!first) return;
    const o = this.sendOptions();
    const limit = rateLimitOf(first.format);
    if (!limit) throw new Error(`no rate limit is kept for the format ${first.format}`);
    const windowMs = this.o.rateWindowMs ?? limit.windowMs;
    // A margin for the time a send takes to arrive: the vendor counts arrivals.
    const window = {
      perWindow: limit.perWindow,
      windowMs: windowMs + Math.max(250, Math.round(windowMs / 20)),
    };
    const known = await within(
      knownFor(
        this.sql,
        ds.map((d) => d.event),
      ),
      this.queryDeadlineMs(),
      'reading the companies of a message',
    );
    const groups = inSendOrder(
      groupedBy(ds, (d) => d.event),
      (g) => g.map((d) => d.event),
      known,
      first.lang,
    );
    const { granted, freeAt } = await takeSends(this.sql, first.subscription_id, {
      ...window,
      want: groups.length,
    });
    const at = this.now();
    const events = (g: readonly Claimed[]) => g.map((d) => d.event);
    let sends: { part: Claimed[]; send: () => Promise<Dispatched> }[];
    if (groups.length <= Math.max(granted, limit.perMinute)) {
      // One message per group while the vendor's minute can take them all: as many now as the
      // window has room for, the rest when it has room again.
      sends = groups.slice(0, granted).map((g) => ({
        part: g,
        send: () => dispatchEvents(first, events(g), known, at, o),
      }));
    } else {
      // A digest keeps a message of its own; the other groups are folded into the sends left.
      const digests = groups.filter((g) => g[0]?.event.type === 'digest.daily').slice(0, granted);
      const rest = groups.filter((g) => !digests.includes(g));
      sends = digests.map((g) => ({
        part: g,
        send: () => dispatchEvents(first, events(g), known, at, o),
      }));
      const room = granted - sends.length;
      if (room > 0 && rest.length > 0) {
        if (isChat(first.format)) {
          let folded = 0;
          for (const req of foldedRequests(chatTarget(first, o), rest.map(events), known, at).slice(
            0,
            room,
          )) {
            const part = rest.slice(folded, folded + req.count).flat();
            folded += req.count;
            sends.push({ part, send: () => sendChat(first, req, (part[0] as Claimed).event.id, o) });
          }
        } else {
          // A mail has no size limit: the burst is one mail.
          const part = rest.flat();
          sends.push({ part, send: () => dispatchEvents(first, events(part), known, at, o) });
        }
      }
    }
    if (granted > sends.length) await returnSends(this.sql, first.subscription_id, granted - sends.length);
    const sent = new Set<number>();
    let waitUntil = freeAt;
    // Sends not begun because the pass stopped waiting: given back to the window.
    let unused = 0;
    // The messages of one batch that fail are tried again together, so they go again in the
    // same order: one draw of the jitter for all of them.
    const jitter = this.random();
    try {
      for (const [i, { part, send }] of sends.entries()) {
        if (o.signal?.aborted) {
          unused = sends.length - i;
          break;
        }
        const result = await send();
        for (const d of part) {
          await this.record(d, result, at, summary, jitter);
          sent.add(d.id);
        }
        if (result.rateLimitedMs !== null) {
          waitUntil = new Date(at.getTime() + (this.o.vendorWaitMs ?? result.rateLimitedMs));
          break;
        }
      }
    } finally {
      await settleSends(this.sql, first.subscription_id, sends.length - unused);
      if (unused > 0) await returnSends(this.sql, first.subscription_id, unused);
    }
    await releaseClaims(
      this.sql,
      ds.filter((d) => !sent.has(d.id)).map((d) => d.id),
      this.holder,
      waitUntil,
    );
  }

  private async deliver(d: Claimed, summary: PassSummary): Promise<void> {
    const o = this.sendOptions();
    // Claimed as the pass stopped waiting: let go unsent, due at once.
    if (o.signal?.aborted) return releaseClaims(this.sql, [d.id], this.holder, this.now());
    const at = this.now();
    const result: Dispatched = d.event
      ? await dispatchEvents(d, [d.event], await knownFor(this.sql, [d.event]), at, o)
      : {
          status: null,
          response: null,
          retryAfter: undefined,
          error: 'the event is missing',
          latencyMs: 0,
          ok: false,
          rateLimitedMs: null,
        };
    await this.record(d, result, at, summary);
  }

  /** Records what came of an attempt of `d`, and what follows from it for its endpoint. */
  private async record(
    d: Claimed,
    result: Dispatched,
    at: Date,
    summary: PassSummary,
    jitter = this.random(),
  ): Promise<void> {
    const attempt = d.attempts + 1;
    summary.attempted++;
    const ok = result.ok;
    const gone = result.status === 410;
    // The vendor's "too fast": the attempt waits the vendor's time and is no failure of the endpoint.
    // Nor is a send abandoned when the pass stopped waiting: it is due again at once.
    const abandoned = !ok && result.abandoned === true;
    const limited = result.rateLimitedMs !== null || abandoned;
    const next =
      ok || gone
        ? null
        : limited
          ? new Date(at.getTime() + (result.rateLimitedMs ?? 0))
          : nextAttemptAt(this.o.schedule, attempt, at, parseRetryAfter(result.retryAfter, at), jitter);
    const outcome = ok ? 'succeeded' : next ? 'retrying' : 'failed';
    const error = ok ? null : abandoned ? ABANDONED_ERROR : (result.error ?? `HTTP ${result.status}`);
    // Past the claim's lease the delivery is another's to take: a record still not written then
    // (a lock held elsewhere, a connection wedged in the driver) is given up, and its slot freed.
    const recording = this.sql.begin(async (tx) => {
      const recorded = await recordAttempt(tx, {
        deliveryId: d.id,
        subscriptionId: d.subscription_id,
        eventSeq: d.event_seq,
        attempt,
        ...(limited ? { keepAttempts: true } : {}),
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
      else if (!limited) await this.failedAttempt(tx, d, gone, at, summary);
    });
    await within(recording, this.leaseMs(), 'recording the attempt');
    if (ok) summary.delivered++;
    else if (abandoned) summary.abandoned++;
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
