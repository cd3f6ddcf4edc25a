/**
 * The delivery tables: subscriptions, the delivery queue (one row per event and subscription,
 * and where it stands) and the attempt log (`webhook_deliveries`). Every write is a named
 * function here; the engine (engine.ts) calls them.
 */
import type postgres from 'postgres';
import type { Sql } from '../db/connect.ts';
import { leaseUntil, letGo, stillHeld, take } from '../db/lease.ts';
import type { DriverRow, NonNull, Recast } from '../db/rows.ts';
import type { events, subscriptions, webhookDeliveries } from '../db/schema.ts';
import { type Envelope, readEventsBySeq } from '../events/feed.ts';
import { RATE_LIMITED } from './channels/limits.ts';
import type { Lang } from './channels/words.ts';
import type { Format } from './payload.ts';
import { newSecret } from './payload.ts';

export type SubscriptionState = 'active' | 'paused' | 'disabled';

/** A subscription as listed: everything but its secrets (its int8 columns read `::int`). */
export type Subscription = Recast<
  Recast<
    Recast<
      Recast<
        Omit<
          DriverRow<typeof subscriptions>,
          'secret' | 'previous_secret' | 'previous_secret_until' | 'signing_secret' | 'recent_sends' | 'lang'
        >,
        'id' | 'cursor_seq',
        number
      >,
      'min_severity',
      'high' | 'medium' | 'low'
    >,
    'format',
    Format
  >,
  'state',
  SubscriptionState
> & { lang: Lang };

/** A subscription's id and event cursor, both read `::int`. */
type SubscriptionCursor = Recast<
  Pick<DriverRow<typeof subscriptions>, 'id' | 'cursor_seq'>,
  'id' | 'cursor_seq',
  number
>;

/** A failing endpoint's state: its `failing_since`, just set when it was null. */
export type FailingState = NonNull<
  Pick<DriverRow<typeof subscriptions>, 'failing_since' | 'state'>,
  'failing_since'
>;

/**
 * A computed shape: of the sends wanted, how many a rate-limited window grants, and when its
 * oldest counted send leaves it (`takeSends`).
 */
interface WindowGrant {
  granted: number;
  free_at: Date;
}

const LISTED = (sql: Sql) =>
  sql`id::int as id, url, types, min_severity, pids, digest_only, format, lang, allow_private, state,
      disabled_reason, failing_since, cursor_seq::int as cursor_seq, created_at`;

/** A subscription to add: a URL, and filters and options that default to all events, signed JSON. */
export interface NewSubscription {
  url: string;
  /** Type patterns (default: every type). */
  types?: string[];
  minSeverity?: 'high' | 'medium' | 'low';
  /** Only these PIDs (default: every company). */
  pids?: string[];
  digestOnly?: boolean;
  format?: Format;
  /** The language of a chat or mail message (default zh). */
  lang?: Lang;
  /** A Feishu or DingTalk bot's signing secret. */
  signingSecret?: string | null;
  allowPrivate?: boolean;
  /** Deliver events from this sequence on (default: only events written from now). */
  fromSeq?: number;
}

/** Adds a subscription; returns it with its secret, which is shown once and never again. */
export async function addSubscription(
  sql: Sql,
  s: NewSubscription,
): Promise<{ subscription: Subscription; secret: string }> {
  const secret = newSecret();
  const [row] = await sql<Subscription[]>`
    insert into subscriptions (url, secret, types, min_severity, pids, digest_only, format, lang, signing_secret,
                               allow_private, cursor_seq)
    values (${s.url}, ${secret}, ${s.types ?? []}::text[], ${s.minSeverity ?? 'low'}, ${s.pids ?? []}::text[],
            ${s.digestOnly ?? false}, ${s.format ?? 'standard'}, ${s.lang ?? 'zh'}, ${s.signingSecret ?? null},
            ${s.allowPrivate ?? false},
            ${s.fromSeq === undefined ? sql`(select coalesce(max(sequence), 0) from analytics.events)` : sql`${Math.max(0, s.fromSeq - 1)}`})
    returning ${LISTED(sql)}`;
  return { subscription: row as Subscription, secret };
}

export async function listSubscriptions(sql: Sql): Promise<Subscription[]> {
  return sql<Subscription[]>`select ${LISTED(sql)} from subscriptions order by id`;
}

export async function getSubscription(sql: Sql, id: number): Promise<Subscription | null> {
  const [row] = await sql<Subscription[]>`select ${LISTED(sql)} from subscriptions where id = ${id}`;
  return row ?? null;
}

/** Pauses (deliveries wait), resumes (a disabled one too), or removes a subscription. */
export async function setSubscriptionState(
  sql: Sql,
  id: number,
  state: 'active' | 'paused',
): Promise<Subscription | null> {
  const [row] = await sql<Subscription[]>`
    update subscriptions set state = ${state},
      disabled_reason = case when ${state} = 'active' then null else disabled_reason end,
      failing_since = case when ${state} = 'active' then null else failing_since end
    where id = ${id} returning ${LISTED(sql)}`;
  return row ?? null;
}

export async function removeSubscription(sql: Sql, id: number): Promise<boolean> {
  const rows = await sql`delete from subscriptions where id = ${id} returning id`;
  return rows.length > 0;
}

/** A new secret; the old one keeps signing beside it for `overlapMs` (receivers switch meanwhile). */
export async function rotateSecret(sql: Sql, id: number, overlapMs: number): Promise<string | null> {
  const secret = newSecret();
  const rows = await sql`
    update subscriptions set previous_secret = secret, secret = ${secret},
      previous_secret_until = now() + ${`${Math.round(overlapMs)} milliseconds`}::interval
    where id = ${id} returning id`;
  return rows.length > 0 ? secret : null;
}

/**
 * Whether subscription `s` takes event `e` (its type patterns, minimum severity, PIDs, digest).
 * A subscription read by people (chat, Slack, mail) with no type patterns takes a company's
 * changes, its related companies' (related.*) and the digest: operator events (cycles, entries, endpoints) and the bookkeeping of
 * companies (first seen, an outdated answer ignored) reach it only when it names them.
 */
const takes = (sql: Sql) => sql`
  (cardinality(s.types) > 0 or s.format = 'standard' or (
     e.type = 'digest.daily' or e.type like 'related.%' or
     (e.type like 'company.%' and e.type not in ('company.first_seen', 'company.stale_answer.ignored'))))
  and (cardinality(s.types) = 0 or exists (
     select 1 from unnest(s.types) p
     where e.type = p or p = '*' or (p like '%.*' and e.type like left(p, -1) || '%')))
  and (case e.severity when 'high' then 3 when 'medium' then 2 else 1 end)
      >= (case s.min_severity when 'high' then 3 when 'medium' then 2 else 1 end)
  and (cardinality(s.pids) = 0 or e.pid = any(s.pids))
  and (not s.digest_only or e.type = 'digest.daily')`;

/**
 * Queues again, for subscription `id`, the events it takes after sequence `after` (or found
 * since `since`), up to its cursor: delivered ones go again with the same webhook-id (receivers
 * deduplicate on it), failed ones get a fresh schedule. Returns how many were queued.
 */
export async function replay(
  sql: Sql,
  id: number,
  from: { after: number } | { since: Date },
): Promise<number | null> {
  const [sub] = await sql<
    Pick<SubscriptionCursor, 'id'>[]
  >`select id::int as id from subscriptions where id = ${id}`;
  if (!sub) return null;
  const rows = await sql`
    insert into delivery_queue (subscription_id, event_seq)
    select s.id, e.sequence from analytics.events e, subscriptions s
    where s.id = ${id} and e.sequence <= s.cursor_seq and ${takes(sql)}
      and ${'after' in from ? sql`e.sequence > ${from.after}` : sql`e.detected_at >= ${from.since}`}
    on conflict (subscription_id, event_seq) do update set
      state = 'pending', attempts = 0, next_attempt_at = now(), ${letGo(sql)}
      where delivery_queue.state <> 'delivering'
    returning id`;
  return rows.length;
}

/** A computed shape: what one round of the fan-out queued, and whether a cursor is still behind. */
interface FannedOut {
  queued: number;
  behind: boolean;
}

/**
 * Queues, for every subscription that is not disabled, the events written since its cursor
 * that its filters take, and moves the cursor. Events commit in sequence order (outbox.ts), so
 * a cursor never skips one. Returns how many deliveries were queued.
 *
 * One statement per round, whatever the number of subscriptions: it locks the subscriptions
 * behind the latest event (in id order, so two engines wait for each other rather than
 * deadlock, and fan one subscription out one after the other), queues up to `batch` events for
 * each from its cursor, and moves the cursors. Rounds go on while a cursor is still behind.
 */
export async function fanOut(sql: postgres.Sql, batch = 5000): Promise<number> {
  let queued = 0;
  for (;;) {
    const [round] = await sql<FannedOut[]>`
      with top as (select coalesce(max(sequence), 0) as max from analytics.events),
      behind as (
        select s.id, s.cursor_seq, least(top.max, s.cursor_seq + ${batch}) as upto, top.max
        from subscriptions s, top
        where s.state <> 'disabled' and s.cursor_seq < top.max
        order by s.id
        for update of s
      ),
      queued as (
        insert into delivery_queue (subscription_id, event_seq)
        select s.id, e.sequence from behind b
        join subscriptions s on s.id = b.id
        join analytics.events e on e.sequence > b.cursor_seq and e.sequence <= b.upto
        where ${takes(sql)}
        on conflict (subscription_id, event_seq) do nothing
        returning 1
      ),
      moved as (
        update subscriptions s set cursor_seq = b.upto from behind b where s.id = b.id
      )
      select (select count(*) from queued)::int as queued,
             exists (select 1 from behind where upto < max) as behind`;
    queued += round?.queued ?? 0;
    if (!round?.behind) return queued;
  }
}

/** A computed shape: milliseconds until a time, by the database's clock (null when there is none). */
interface MillisecondsLeft {
  ms: number | null;
}

/**
 * How long until the next delivery of an active subscription falls due, by the database's clock:
 * a retry, a vendor's window, a claim whose lease ends (0 or less when one is due now); null when
 * none waits. One index range per subscription (delivery_queue_due_idx).
 */
export async function nextDueInMs(sql: Sql): Promise<number | null> {
  const [row] = await sql<MillisecondsLeft[]>`
    select (extract(epoch from min(q.next_attempt_at) - now()) * 1000)::float8 as ms
    from subscriptions s
    cross join lateral (
      select q.next_attempt_at from delivery_queue q
      where q.subscription_id = s.id and q.state in ('pending', 'delivering')
      order by q.next_attempt_at limit 1
    ) q
    where s.state = 'active'`;
  return row?.ms ?? null;
}

/** Where and how one delivery goes: the endpoint, its format and language, its secrets. */
export interface Target {
  url: string;
  format: Format;
  lang: Lang;
  signing_secret: string | null;
  allow_private: boolean;
  secrets: string[];
}

/** A subscription's target with its id (read `::int`), as `deliveryTarget` reads it. */
export type SubscriptionTarget = Target & Pick<SubscriptionCursor, 'id'>;

/** A claimed delivery: what to send, where, signed with which secrets. */
export interface Claimed extends Target {
  id: number;
  subscription_id: number;
  event_seq: number;
  attempts: number;
  failing_since: Date | null;
  event: Envelope;
}

/**
 * Claims up to `limit` due deliveries of active subscriptions, at most `perSubscription` of
 * each and none of `busy` (subscriptions already at their share in this process): a slow
 * endpoint never takes the slots of others. A claim lasts `leaseMs` (src/db/lease.ts); its
 * delivery is due again when the lease ends (`next_attempt_at` is set to `lease_until`), so a
 * lapsed claim is taken over by the same scan that finds due work, and a live one is not.
 */
export async function claimDue(
  sql: Sql,
  o: {
    holder: string;
    limit: number;
    perSubscription: number;
    busy: readonly number[];
    leaseMs: number;
    /** Claim the subscriptions of rate-limited formats only (limits.ts), or (default) all others. */
    rateLimited?: boolean;
  },
): Promise<Claimed[]> {
  if (o.limit <= 0) return [];
  // Per subscription, the head of its due work (an index range), locked without waiting.
  const rows = await sql<Omit<Claimed, 'event'>[]>`
    with due as (
      select d.id from subscriptions s
      cross join lateral (
        select q.id from delivery_queue q
        where q.subscription_id = s.id and q.state in ('pending', 'delivering') and q.next_attempt_at <= now()
        order by q.next_attempt_at, q.id
        limit ${o.perSubscription}
        for update of q skip locked
      ) d
      where s.state = 'active' and not (s.id = any(${o.busy as number[]}::bigint[]))
        and (s.format = any(${RATE_LIMITED as unknown as string[]}::text[])) = ${o.rateLimited === true}
      limit ${o.limit}
    )
    update delivery_queue q set state = 'delivering', ${take(sql, o.holder, o.leaseMs)},
      next_attempt_at = ${leaseUntil(sql, o.leaseMs)}
    from due, subscriptions s
    where q.id = due.id and s.id = q.subscription_id
    returning q.id::int as id, q.subscription_id::int as subscription_id, q.event_seq::int as event_seq,
      q.attempts, s.url, s.format, s.lang, s.signing_secret, s.allow_private, s.failing_since,
      array_remove(array[s.secret, case when s.previous_secret_until > now() then s.previous_secret end], null) as secrets`;
  if (rows.length === 0) return [];
  const events = await readEventsBySeq(sql, [...new Set(rows.map((r) => r.event_seq))]);
  return rows.map((r) => ({ ...r, event: events.get(r.event_seq) as Envelope }));
}

export interface AttemptRecord {
  deliveryId: number;
  subscriptionId: number;
  eventSeq: number;
  attempt: number;
  /** The attempt does not count against the schedule (the vendor said wait). */
  keepAttempts?: boolean;
  attemptedAt: Date;
  latencyMs: number;
  httpStatus: number | null;
  outcome: 'succeeded' | 'retrying' | 'failed';
  error: string | null;
  response: string | null;
  /** When it goes again (`retrying`). */
  nextAttemptAt: Date | null;
  holder: string;
}

/**
 * Records an attempt and where its delivery now stands, if this holder still holds it (a claim
 * taken over after a lapsed lease is not overwritten). Returns whether it was recorded.
 */
export async function recordAttempt(sql: Sql, a: AttemptRecord): Promise<boolean> {
  const rows = await sql`
    update delivery_queue set
      state = ${a.outcome === 'retrying' ? 'pending' : a.outcome},
      attempts = ${a.keepAttempts ? a.attempt - 1 : a.attempt},
      next_attempt_at = coalesce(${a.nextAttemptAt}::timestamptz, now()),
      ${letGo(sql)},
      last_status = ${a.httpStatus}, last_error = ${a.error},
      delivered_at = case when ${a.outcome} = 'succeeded' then now() else delivered_at end
    where id = ${a.deliveryId} and ${stillHeld(sql, { holder: a.holder })} and state = 'delivering'
    returning id`;
  if (rows.length === 0) return false;
  await sql`
    insert into webhook_deliveries (delivery_id, subscription_id, event_seq, attempt, attempted_at, latency_ms,
                                    http_status, outcome, error, response)
    values (${a.deliveryId}, ${a.subscriptionId}, ${a.eventSeq}, ${a.attempt}, ${a.attemptedAt}, ${a.latencyMs},
            ${a.httpStatus}, ${a.outcome}, ${a.error}, ${a.response})`;
  return true;
}

/**
 * A success of a failing endpoint: it is failing no more. Returns since when it had been failing
 * (null when it was not, or another attempt recorded the recovery first).
 */
export async function markRecovered(tx: Sql, subscriptionId: number | string): Promise<Date | null> {
  const [s] = await tx<Pick<DriverRow<typeof subscriptions>, 'failing_since'>[]>`
      update subscriptions u set failing_since = null
      from (select id, failing_since from subscriptions where id = ${subscriptionId}
            and failing_since is not null for update) old
      where u.id = old.id returning old.failing_since`;
  return s?.failing_since ?? null;
}

/** A failed attempt: the endpoint is failing since now, unless it already was. Returns its state. */
export async function markFailing(
  tx: Sql,
  subscriptionId: number | string,
  at: Date,
): Promise<FailingState | undefined> {
  const [s] = await tx<FailingState[]>`
      update subscriptions set failing_since = coalesce(failing_since, ${at})
      where id = ${subscriptionId} returning failing_since, state`;
  return s;
}

/** Disables the endpoint, saying why (410 Gone, or failing too long). */
export async function disableSubscription(
  tx: Sql,
  subscriptionId: number | string,
  reason: string,
): Promise<void> {
  await tx`update subscriptions set state = 'disabled', disabled_reason = ${reason} where id = ${subscriptionId}`;
}

/** What sending to subscription `id` needs, secrets included (for `subscribe test`); null if none. */
export async function deliveryTarget(sql: Sql, id: number): Promise<SubscriptionTarget | null> {
  const [row] = await sql<SubscriptionTarget[]>`
    select id::int as id, url, format, lang, signing_secret, allow_private,
      array_remove(array[secret, case when previous_secret_until > now() then previous_secret end], null) as secrets
    from subscriptions where id = ${id}`;
  return row ?? null;
}

/**
 * Takes up to `want` sends of a rate-limited subscription's window: the sends of the last
 * `windowMs` are counted (a sliding window, as the vendors count), at most `perWindow`. Returns
 * how many were granted, and when the oldest counted send leaves the window (when more can go).
 */
export async function takeSends(
  sql: Sql,
  id: number,
  o: { want: number; perWindow: number; windowMs: number },
): Promise<{ granted: number; freeAt: Date }> {
  const w = sql`(${o.windowMs}::int * interval '1 millisecond')`;
  const [row] = await sql<WindowGrant[]>`
    with cur as (
      select id, array(select t from unnest(recent_sends) t where t > clock_timestamp() - ${w} order by t) as kept
      from subscriptions where id = ${id} for update
    ), g as (
      select id, kept, greatest(0, least(${o.want}::int, ${o.perWindow}::int - cardinality(kept)))::int as granted from cur
    )
    update subscriptions s
    set recent_sends = g.kept || array_fill(clock_timestamp(), array[g.granted])
    from g where s.id = g.id
    returning g.granted, coalesce(g.kept[1 + greatest(0, cardinality(g.kept) - ${o.perWindow}::int + g.granted)], clock_timestamp()) + ${w} as free_at`;
  return { granted: row?.granted ?? 0, freeAt: new Date(row?.free_at ?? Date.now()) };
}

/**
 * Dates the newest `n` sends taken by takeSends at now, once they are sent: a vendor counts a
 * message when it arrives, and the sends of a batch go one after another after the take. Counted
 * from the end of the batch, no send of it leaves the window before the vendor's count does.
 */
export async function settleSends(sql: Sql, id: number, n: number): Promise<void> {
  if (n <= 0) return;
  await sql`
    update subscriptions set recent_sends =
      recent_sends[1:greatest(0, cardinality(recent_sends) - ${n}::int)]
      || array_fill(clock_timestamp(), array[least(${n}::int, cardinality(recent_sends))])
    where id = ${id}`;
}

/** Gives back `n` sends taken by takeSends and not used (the newest). */
export async function returnSends(sql: Sql, id: number, n: number): Promise<void> {
  await sql`
    update subscriptions set recent_sends = recent_sends[1:greatest(0, cardinality(recent_sends) - ${n}::int)]
    where id = ${id}`;
}

/** Lets claimed deliveries go unattempted, due again at `at` (a rate-limited window is full). */
export async function releaseClaims(
  sql: Sql,
  ids: readonly number[],
  holder: string,
  at: Date,
): Promise<void> {
  if (ids.length === 0) return;
  await sql`
    update delivery_queue set state = 'pending', next_attempt_at = ${at}, ${letGo(sql)}
    where id = any(${ids as number[]}::bigint[]) and ${stillHeld(sql, { holder })} and state = 'delivering'`;
}

/** What waits to be sent to one subscription, and when the next of it goes. */
export interface Waiting {
  subscription_id: number;
  /** The receiver as stored: show it cut of its tokens (safeUrl), never as is. */
  url: string;
  format: Format;
  state: SubscriptionState;
  /** Every message not sent yet: the four below. */
  waiting: number;
  /** Never attempted, held back until later: a vendor's rate window, or its "too fast". */
  rate_window: number;
  /** Attempted and failed, waiting for the next try of the schedule. */
  retrying: number;
  /** Due now, not attempted yet: the next pass sends it. */
  due: number;
  /** Being sent by a process right now (claimed). */
  sending: number;
  /** When the next of them is due (for a claimed one: when its claim ends). */
  next_at: Date;
}

/**
 * The messages waiting to be sent, per subscription that is not disabled (a disabled one sends
 * nothing until resumed): how many, why, and when the next goes. Read only.
 */
export async function waitingDeliveries(sql: Sql): Promise<Waiting[]> {
  return sql<Waiting[]>`
    select s.id::int as subscription_id, s.url, s.format, s.state,
      count(*)::int as waiting,
      (count(*) filter (where q.state = 'pending' and q.attempts = 0 and q.next_attempt_at > now()))::int as rate_window,
      (count(*) filter (where q.state = 'pending' and q.attempts > 0))::int as retrying,
      (count(*) filter (where q.state = 'pending' and q.attempts = 0 and q.next_attempt_at <= now()))::int as due,
      (count(*) filter (where q.state = 'delivering'))::int as sending,
      min(q.next_attempt_at) as next_at
    from delivery_queue q join subscriptions s on s.id = q.subscription_id
    where q.state in ('pending', 'delivering') and s.state <> 'disabled'
    group by s.id order by s.id`;
}

/** A count of rows: a computed shape. */
interface Count {
  n: number;
}

/** How many subscriptions are active (0: nothing to deliver to). */
export async function activeSubscriptionCount(sql: Sql): Promise<number> {
  const [n] = await sql<Count[]>`select count(*)::int as n from subscriptions where state = 'active'`;
  return n?.n ?? 0;
}

/** How many subscriptions are in one state: a computed shape of `subscriptions`. */
export interface StateCount {
  state: string;
  n: number;
}

/** The subscriptions by state (active, paused, disabled). */
export async function subscriptionsByState(sql: Sql): Promise<StateCount[]> {
  return sql<StateCount[]>`
        select state, count(*)::int as n from subscriptions group by 1`;
}

/** An active subscription whose latest attempt failed, and since when (Unix time): a computed shape. */
export interface FailingSubscription {
  id: string;
  since: number;
}

/** The active subscriptions whose latest delivery attempt failed (few: one per endpoint at most). */
export async function failingSubscriptions(sql: Sql): Promise<FailingSubscription[]> {
  return sql<FailingSubscription[]>`
      select id::text as id, extract(epoch from failing_since)::float8 as since
      from subscriptions where state = 'active' and failing_since is not null`;
}

/** A delivery attempt as `daybook deliveries` lists it, with its event's id and type. */
export type AttemptLine = Pick<
  DriverRow<typeof webhookDeliveries>,
  'attempted_at' | 'attempt' | 'latency_ms' | 'outcome' | 'error'
> &
  Pick<DriverRow<typeof events>, 'type'> & {
    /** `subscription_id` as a number (`::int`). */
    subscription: number;
    /** The event's id. */
    event: string;
    /** `http_status`, renamed. */
    status: number | null;
  };

/** The attempt log, newest first: only failed attempts, of one subscription, as asked. */
export async function attemptLog(
  sql: Sql,
  options: { failed?: boolean; subscription?: number; limit: number },
) {
  return sql<AttemptLine[]>`
          select d.attempted_at, d.subscription_id::int as subscription, e.event_id as event, e.type, d.attempt,
                 d.http_status as status, d.latency_ms, d.outcome, d.error
          from webhook_deliveries d join analytics.events e on e.sequence = d.event_seq
          where true ${options.failed ? sql`and d.outcome <> 'succeeded'` : sql``}
            ${options.subscription ? sql`and d.subscription_id = ${options.subscription}` : sql``}
          order by d.id desc limit ${options.limit}`;
}
