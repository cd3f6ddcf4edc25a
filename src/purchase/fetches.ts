/**
 * The state machine of a cycle fetch: one `cycle_fetches` row per (cycle, watch entry), the one
 * owner of buying that entry in that cycle. Every transition is a named function here; jobs, the
 * plan and the CLI call them and never write the status themselves. The states and the moves
 * between them are the table of src/purchase/states.ts: the status each write stores is the one
 * the table moves the claim to, and a move the table does not have throws before it writes. A
 * CHECK constraint holds the statuses.
 *
 * The row is the claim (src/db/lease.ts, whose rule this follows): `claimFetch` sets a holder, a
 * lease and a new fence in one transaction, whatever mode the buyer runs in (a worker, `daybook
 * run`, `resume --inline`). A lease that lapsed (its holder died or starved) is taken over; a job's
 * retry takes its own claim again. Right before the upstream call, `startCall` checks the fence:
 * a holder that lost its claim does not buy. A call sent and never settled (the process died
 * after sending) is presumed billed by the next holder: its reserved credits are booked as
 * `presumed` in the ledger until an answer proves otherwise. Nothing here holds a session-level
 * lock, so it works through PgBouncer in transaction mode.
 */

import { inTransaction, type Sql } from '../db/connect.ts';
import { leaseLive, letGo, mayTake, renew, stillHeld, take } from '../db/lease.ts';
import type { DriverRow, NonNull, Recast } from '../db/rows.ts';
import type { cycleFetches, ledgerEntries, watchlist } from '../db/schema.ts';
import { appendEvents } from '../events/outbox.ts';
import { PERMANENT_ERROR_QUIET_DAYS, PERMANENT_OUTCOMES } from '../terms/outcomes.ts';
import { addDays, cycleStart } from '../time/cycles.ts';
import { noteFailure, noteRefreshed } from '../watch/store.ts';
import { type ReserveOutcome, reserveCredits, settleCredits } from './credits.ts';
import {
  type BuyState,
  enter,
  FETCH_STATUSES,
  type FetchStatus,
  SETTLED,
  statesBefore,
  statusAfter,
  statusOf,
  transition,
} from './states.ts';

export { FETCH_STATUSES, type FetchStatus, SETTLED };

/** What a buyer may claim: planned by the plan, or left to retry, or held by a lapsed lease. */
const CLAIMABLE: readonly FetchStatus[] = statesBefore('claim').flatMap((s) => statusOf(s) ?? []);

/** A computed shape: how many calls of an entry went unanswered (`count(*)::int`). */
interface UnansweredCount {
  n: number;
}

/**
 * A computed shape: whether a cycle is still open (rows unsettled, or none, or paused) and the
 * mark of its latest change (`settledMark`).
 */
interface SettledState {
  open: boolean;
  mark: string | null;
}

/** The call a fetch has under way (its fence) and the credits it holds reserved. */
type CallState = Pick<DriverRow<typeof cycleFetches>, 'call_fence' | 'credits_reserved'>;

/**
 * The ledger row of a call. Its credits are read as set: the row is looked at only when it is
 * `presumed`, and a takeover writes a presumed row with the credits it reserved.
 */
type LedgerCall = NonNull<Pick<DriverRow<typeof ledgerEntries>, 'id' | 'status' | 'credits'>, 'credits'>;

/**
 * The ledger subject of these words (`ledger_subjects`: operation, enterprise, keyword, remark),
 * found or added by the database in the statement that writes the entry.
 */
function subject(
  sql: Sql,
  operation: string,
  pid: string | null,
  keyword: string | null,
  remark: string | null,
) {
  return sql`daybook_ledger_subject(${operation}::text, ${pid}::text, ${keyword}::text, ${remark}::text)`;
}

/** A claim whose holder's lease lapsed (`holder is not null`), its cycle read `::text`. */
type LapsedClaim = NonNull<
  Recast<Pick<DriverRow<typeof cycleFetches>, 'cycle' | 'watch_id' | 'holder'>, 'cycle', string>,
  'holder'
>;

/** A claim on one cycle fetch. `fence` is the token checked before the call. */
export interface Claim {
  cycle: string;
  watchId: number;
  holder: string;
  fence: number;
  keyword: string;
  /** The PID the entry resolved to before. */
  pid: string | null;
  active: boolean;
  /** Credits already reserved on the row (a reservation carried over from a claim that lapsed before its call). */
  creditsReserved: number;
  /** A call of an earlier holder that was sent and never settled: its outcome is unknown. */
  lapsedCall: { fence: number; reserved: number; startedAt: Date } | null;
  /** Where the buy stands, as this holder knows it (src/purchase/states.ts); each step moves it. */
  state: BuyState;
}

export type ClaimResult =
  | { kind: 'claimed'; claim: Claim }
  | { kind: 'settled'; status: FetchStatus }
  | { kind: 'not_planned'; status: FetchStatus | null }
  | { kind: 'held'; holder: string; leaseUntil: Date }
  | { kind: 'missing' };

/** A claim's row under its lock, with the entry it buys and whether its lease is live. */
type FetchRow = Recast<
  Pick<
    DriverRow<typeof cycleFetches>,
    'status' | 'holder' | 'lease_until' | 'fence' | 'call_fence' | 'call_started_at' | 'credits_reserved'
  >,
  'status',
  FetchStatus
> &
  Pick<DriverRow<typeof watchlist>, 'keyword' | 'pid' | 'active'> & { live: boolean };

/**
 * Claims the fetch of `watchId` in `cycle` for `holder` for `leaseMs`: the row is updated in one
 * transaction under its lock, so of any number of claimers at once exactly one gets it.
 */
export async function claimFetch(
  sql: Sql,
  cycle: string,
  watchId: number,
  holder: string,
  leaseMs: number,
): Promise<ClaimResult> {
  return inTransaction(sql, async (tx) => {
    const [row] = await tx<FetchRow[]>`
      select f.status, f.holder, f.lease_until, ${leaseLive(tx, 'f.lease_until')} as live,
             f.fence, f.call_fence, f.call_started_at, f.credits_reserved, w.keyword, w.pid, w.active
      from cycle_fetches f join published.watch_entries w on w.id = f.watch_id
      where f.cycle = ${cycle} and f.watch_id = ${watchId}
      for update of f`;
    if (!row) {
      const [w] = await tx`select 1 from published.watch_entries where id = ${watchId}`;
      return w ? { kind: 'not_planned', status: null } : { kind: 'missing' };
    }
    if (SETTLED.includes(row.status)) return { kind: 'settled', status: row.status };
    if (!CLAIMABLE.includes(row.status)) return { kind: 'not_planned', status: row.status };
    if (row.holder !== null && !mayTake(row, holder, { reentrant: true })) {
      return { kind: 'held', holder: row.holder, leaseUntil: row.lease_until ?? new Date() };
    }
    // The state the row is claimed from: planned, left to retry, or a `fetching` row let go.
    const from = statesBefore('claim').find((s) => statusOf(s) === row.status) ?? 'lapsed';
    const [claimed] = await tx<Pick<DriverRow<typeof cycleFetches>, 'fence'>[]>`
      update cycle_fetches set status = ${statusAfter(from, 'claim')}, ${take(tx, holder, leaseMs, { fence: true })},
        attempts = attempts + 1, updated_at = now()
      where cycle = ${cycle} and watch_id = ${watchId}
      returning fence`;
    const claim: Claim = {
      cycle,
      watchId,
      holder,
      fence: Number(claimed?.fence),
      keyword: row.keyword,
      pid: row.pid,
      active: row.active,
      creditsReserved: row.call_fence === null ? row.credits_reserved : 0,
      lapsedCall:
        row.call_fence === null
          ? null
          : {
              fence: Number(row.call_fence),
              reserved: row.credits_reserved,
              startedAt: row.call_started_at ?? new Date(0),
            },
      state: from,
    };
    enter(claim, 'claim');
    return { kind: 'claimed', claim };
  });
}

/** Extends the lease while the holder works; false when the claim was lost. */
export async function renewLease(sql: Sql, claim: Claim, leaseMs: number): Promise<boolean> {
  const rows = await sql`
    update cycle_fetches set ${renew(sql, leaseMs)}
    where cycle = ${claim.cycle} and watch_id = ${claim.watchId} and ${stillHeld(sql, claim)}
    returning 1`;
  return rows.length > 0;
}

/**
 * Books the call of an earlier holder that was sent and never settled as presumed spent: its
 * reservation moves to `spent` and the ledger gets a `presumed` row keyed by that call, which an
 * answer of that call, should one still land, turns into a booked row (`settleCall`).
 */
export async function presumeLapsedCall(sql: Sql, claim: Claim, now: Date): Promise<void> {
  const call = claim.lapsedCall;
  if (!call) return;
  await inTransaction(sql, async (tx) => {
    const [row] = await tx<Pick<CallState, 'call_fence'>[]>`
      select call_fence from cycle_fetches where cycle = ${claim.cycle} and watch_id = ${claim.watchId}
      for update`;
    if (row?.call_fence === null || Number(row?.call_fence) !== call.fence) return;
    const inserted = await tx`
      insert into ledger_entries (cycle, subject_id, credits, status, watch_id, call_fence, billed_at)
      values (${claim.cycle},
              ${subject(tx, 'enterprise-search', claim.pid, claim.keyword, `the call sent at ${call.startedAt.toISOString()} never settled (its process died or lost its claim): presumed billed`)},
              ${call.reserved}, 'presumed', ${claim.watchId}, ${call.fence}, ${now})
      on conflict do nothing returning 1`;
    await settleCredits(tx, claim.cycle, call.reserved, inserted.length > 0 ? call.reserved : 0);
    await tx`update cycle_fetches set call_fence = null, call_started_at = null, credits_reserved = 0
             where cycle = ${claim.cycle} and watch_id = ${claim.watchId}`;
  });
  claim.lapsedCall = null;
  claim.creditsReserved = 0;
}

export type ReserveResult = ReserveOutcome | { ok: false; reason: 'lost'; detail: string };

/**
 * Reserves `cost` credits against the cycle's budget for the holder's call (a reservation already
 * on the row is used instead), atomically with the note on the row, and only while the claim holds.
 */
export async function reserveForCall(sql: Sql, claim: Claim, cost: number): Promise<ReserveResult> {
  return inTransaction(sql, async (tx) => {
    const [row] = await tx<Pick<CallState, 'credits_reserved'>[]>`
      select credits_reserved from cycle_fetches
      where cycle = ${claim.cycle} and watch_id = ${claim.watchId} and ${stillHeld(tx, claim)}
      for update`;
    if (!row) return { ok: false, reason: 'lost', detail: lostMessage(claim) };
    if (row.credits_reserved > 0) {
      claim.creditsReserved = row.credits_reserved;
      return { ok: true };
    }
    const taken = await reserveCredits(tx, claim.cycle, cost);
    if (!taken.ok) return taken;
    await tx`update cycle_fetches set credits_reserved = ${cost}, updated_at = now()
             where cycle = ${claim.cycle} and watch_id = ${claim.watchId}`;
    claim.creditsReserved = cost;
    return { ok: true };
  });
}

/**
 * The fencing check right before the upstream call: true when the claim still holds, and the
 * call is then recorded as sent (its outcome unknown until `settleCall`). False: do not buy.
 */
export async function startCall(sql: Sql, claim: Claim, leaseMs: number): Promise<boolean> {
  const rows = await sql`
    update cycle_fetches set call_fence = fence, call_started_at = now(), ${renew(sql, leaseMs)},
      updated_at = now()
    where cycle = ${claim.cycle} and watch_id = ${claim.watchId} and ${stillHeld(sql, claim)}
    returning 1`;
  return rows.length > 0;
}

/** What the upstream billed for one call, when it did. */
export interface Billing {
  credits: number;
  remark: string | null;
  pid: string | null;
  rawResponseId: number;
  billedAt: Date;
  runId: number | null;
}

/**
 * Settles the call made under fence `callFence`: books what it billed (null: nothing, the answer
 * said so), releases its reservation, and turns a `presumed` row of that call, written by a holder
 * that took over meanwhile, into what the answer proved. Runs in the caller's transaction.
 */
export async function settleCall(
  tx: Sql,
  claim: Pick<Claim, 'cycle' | 'watchId' | 'keyword'>,
  callFence: number,
  billing: Billing | null,
): Promise<void> {
  const [row] = await tx<CallState[]>`
    select call_fence, credits_reserved from cycle_fetches
    where cycle = ${claim.cycle} and watch_id = ${claim.watchId} for update`;
  const [prior] = await tx<LedgerCall[]>`
    select id, status, credits from ledger_entries
    where cycle = ${claim.cycle} and watch_id = ${claim.watchId} and call_fence = ${callFence}
    for update`;
  const billed = billing?.credits ?? 0;
  let spentDelta = 0;
  let releaseReserved = 0;
  // The row's reservation is this call's unless another holder's call is in flight now.
  const ours = row !== undefined && (row.call_fence === null || Number(row.call_fence) === callFence);
  if (ours) releaseReserved = row.credits_reserved;
  if (prior?.status === 'presumed') {
    // A takeover presumed this call spent; its answer now says what it cost.
    spentDelta = billed - prior.credits;
    await tx`
      update ledger_entries e set status = 'booked', credits = ${billed},
        subject_id = daybook_ledger_subject(s.operation, coalesce(${billing?.pid ?? null}, s.pid), s.keyword,
          ${billing ? billing.remark : 'presumed billed by a takeover; the answer showed nothing was billed'}),
        raw_response_id = ${billing?.rawResponseId ?? null},
        run_id = ${billing?.runId ?? null}, billed_at = ${billing?.billedAt ?? new Date()}
      from ledger_subjects s
      where e.id = ${prior.id} and s.id = e.subject_id`;
  } else if (!prior && billing) {
    const inserted = await tx`
      insert into ledger_entries (cycle, subject_id, credits, run_id, raw_response_id, billed_at, status,
                                  watch_id, call_fence)
      values (${claim.cycle}, ${subject(tx, 'enterprise-search', billing.pid, claim.keyword, billing.remark)},
              ${billed}, ${billing.runId}, ${billing.rawResponseId}, ${billing.billedAt}, 'booked', ${claim.watchId},
              ${callFence})
      on conflict do nothing returning 1`;
    if (inserted.length > 0) spentDelta = billed;
  }
  if (spentDelta !== 0 || releaseReserved !== 0)
    await settleCredits(tx, claim.cycle, releaseReserved, spentDelta);
  if (ours) {
    await tx`update cycle_fetches set call_fence = null, call_started_at = null, credits_reserved = 0,
             credits_billed = credits_billed + ${billed}, updated_at = now()
             where cycle = ${claim.cycle} and watch_id = ${claim.watchId}`;
  } else if (billed > 0) {
    await tx`update cycle_fetches set credits_billed = credits_billed + ${billed}
             where cycle = ${claim.cycle} and watch_id = ${claim.watchId}`;
  }
}

/**
 * The calls of an entry in a cycle that went unanswered before the entry fails for the cycle:
 * the first is tried once more; after the second the entry waits for the next cycle.
 */
export const MAX_UNANSWERED_CALLS = 2;

/** What a call sent and never answered is booked at (`settleUnanswered`). */
export interface Unanswered {
  /** The configured cost of a query: the upstream may have billed it, and said nothing. */
  credits: number;
  remark: string;
  /** The landed record of the failure, when it landed. */
  rawResponseId: number | null;
  billedAt: Date;
  runId: number | null;
}

/**
 * Settles the call made under fence `callFence` whose request was sent and which got no complete
 * answer (a timeout, a connection cut after sending): the upstream may have billed it, so it is
 * booked `unconfirmed` at `credits`, counted as spent, and its reservation released, in one
 * transaction. An `unconfirmed` row is never turned into a booked one: a later answer is another
 * call, booked on its own. A row this call already has (presumed by a holder that took over) is
 * left as it is: its credits are counted. Returns how many unanswered calls the entry has in the
 * cycle, this one included (counted in the ledger, whichever process made them).
 */
export async function settleUnanswered(
  sql: Sql,
  claim: Pick<Claim, 'cycle' | 'watchId' | 'keyword' | 'pid'>,
  callFence: number,
  u: Unanswered,
): Promise<number> {
  return inTransaction(sql, async (tx) => {
    const [row] = await tx<CallState[]>`
      select call_fence, credits_reserved from cycle_fetches
      where cycle = ${claim.cycle} and watch_id = ${claim.watchId} for update`;
    const inserted = await tx`
      insert into ledger_entries (cycle, subject_id, credits, run_id, raw_response_id, billed_at, status,
                                  watch_id, call_fence)
      values (${claim.cycle}, ${subject(tx, 'enterprise-search', claim.pid, claim.keyword, u.remark)}, ${u.credits},
              ${u.runId}, ${u.rawResponseId}, ${u.billedAt}, 'unconfirmed', ${claim.watchId}, ${callFence})
      on conflict do nothing returning 1`;
    const ours = row !== undefined && (row.call_fence === null || Number(row.call_fence) === callFence);
    const release = ours ? row.credits_reserved : 0;
    const spent = inserted.length > 0 ? u.credits : 0;
    if (release !== 0 || spent !== 0) await settleCredits(tx, claim.cycle, release, spent);
    if (ours)
      await tx`update cycle_fetches set call_fence = null, call_started_at = null, credits_reserved = 0,
               updated_at = now()
               where cycle = ${claim.cycle} and watch_id = ${claim.watchId}`;
    const [n] = await tx<UnansweredCount[]>`
      select count(*)::int as n from ledger_entries
      where cycle = ${claim.cycle} and watch_id = ${claim.watchId} and status = 'unconfirmed'`;
    return n?.n ?? 0;
  });
}

/** How many calls of the entry went unanswered in the cycle (its `unconfirmed` ledger rows). */
export async function unansweredCalls(sql: Sql, claim: Pick<Claim, 'cycle' | 'watchId'>): Promise<number> {
  const [n] = await sql<UnansweredCount[]>`
    select count(*)::int as n from ledger_entries
    where cycle = ${claim.cycle} and watch_id = ${claim.watchId} and status = 'unconfirmed'`;
  return n?.n ?? 0;
}

/**
 * Completes the fetch with the answer landed as `rawResponseId` for `pid`: succeeded, or
 * duplicate when another entry already brought that PID in this cycle. Runs in the caller's
 * transaction; the watch entry notes the refresh.
 */
export async function completeFetch(
  tx: Sql,
  claim: Pick<Claim, 'cycle' | 'watchId' | 'state'>,
  done: {
    pid: string;
    rawResponseId: number;
    refreshedAt: Date;
  },
): Promise<FetchStatus> {
  const [dup] = await tx`select 1 from cycle_fetches where cycle = ${claim.cycle} and pid = ${done.pid}
                         and status = 'succeeded' and watch_id <> ${claim.watchId}`;
  const step = dup ? 'duplicate' : 'complete';
  const status = statusAfter(claim.state, step);
  await tx`update cycle_fetches set status = ${status}, pid = ${done.pid}, raw_response_id = ${done.rawResponseId},
             ${letGo(tx)}, error_code = null, error_message = null, updated_at = now()
           where cycle = ${claim.cycle} and watch_id = ${claim.watchId}`;
  await noteRefreshed(tx, claim.watchId, {
    pid: done.pid,
    refreshedAt: done.refreshedAt,
    cycle: claim.cycle,
  });
  enter(claim, step);
  return status;
}

/** The steps that end an attempt in failure: `retry` leaves the entry to retry, the others fail it. */
export type FailStep = 'retry' | 'fail' | 'unanswered' | 'unusable' | 'refuse' | 'abandon';

/**
 * A failed attempt, by `failure.step` from where the claim stands: `retrying` (the claim is let
 * go, so the retry can take it at once) or `failed` for the cycle (final), as the table of
 * src/purchase/states.ts says. The watch entry keeps the error where users see it. A final
 * failure gives back a reservation left on the row by a claim that lapsed before its call: no
 * call will use it in this cycle.
 */
export async function failFetch(
  sql: Sql,
  claim: Claim,
  failure: { step: FailStep; code: string; message: string; entryError: string },
): Promise<void> {
  const status = statusAfter(claim.state, failure.step);
  const final = status === statusOf('failed');
  await inTransaction(sql, async (tx) => {
    if (final) {
      const [left] = await tx<Pick<CallState, 'credits_reserved'>[]>`
        select credits_reserved from cycle_fetches
        where cycle = ${claim.cycle} and watch_id = ${claim.watchId} and fence = ${claim.fence}
          and status = 'fetching' and call_fence is null and credits_reserved > 0
        for update`;
      if (left) {
        await settleCredits(tx, claim.cycle, left.credits_reserved, 0);
        await tx`update cycle_fetches set credits_reserved = 0
                 where cycle = ${claim.cycle} and watch_id = ${claim.watchId}`;
        claim.creditsReserved = 0;
      }
    }
    const moved = await tx`update cycle_fetches set status = ${status}, ${letGo(tx)},
               error_code = ${failure.code}, error_message = ${failure.message}, updated_at = now()
             where cycle = ${claim.cycle} and watch_id = ${claim.watchId} and fence = ${claim.fence}
               and status = 'fetching' returning watch_id`;
    // A permanent error rests for PERMANENT_ERROR_QUIET_DAYS: the entry is due again after them,
    // so it does not sit at the head of the plan order meanwhile.
    const restUntil =
      final && PERMANENT_OUTCOMES.has(failure.code)
        ? cycleStart(addDays(claim.cycle, PERMANENT_ERROR_QUIET_DAYS))
        : null;
    const keyword = await noteFailure(tx, claim.watchId, {
      code: failure.code,
      error: failure.entryError,
      cycle: claim.cycle,
      restUntil,
    });
    if (final && moved.length > 0)
      await appendEvents(tx, [
        {
          type: 'entry.failed',
          severity: 'medium',
          pid: null,
          cycle: claim.cycle,
          detectedAt: new Date(),
          rawResponseId: null,
          data: {
            watch_id: claim.watchId,
            keyword: keyword ?? '',
            reason: failure.code,
            message: failure.message,
          },
        },
      ]);
  });
  enter(claim, failure.step);
}

/**
 * Not bought in this attempt: `defer` (no credits, a paused cycle before the call) and `pause`
 * (out of credits, the upstream said) set it `deferred`, `remove` (entry removed) `skipped`.
 */
export async function setAside(
  sql: Sql,
  claim: Claim,
  step: 'defer' | 'pause' | 'remove',
  code: string,
  message: string,
): Promise<void> {
  await sql`update cycle_fetches set status = ${statusAfter(claim.state, step)}, ${letGo(sql)},
              error_code = ${code}, error_message = ${message}, updated_at = now()
            where cycle = ${claim.cycle} and watch_id = ${claim.watchId} and fence = ${claim.fence}
              and status = 'fetching'`;
  enter(claim, step);
}

/**
 * Lets go of a claim the holder did not settle (an error it did not expect): the row stays
 * claimable at once; a call it sent and did not settle stays recorded, for the next holder to
 * presume billed.
 */
export async function releaseClaim(sql: Sql, claim: Claim): Promise<void> {
  const held = await sql`update cycle_fetches set ${letGo(sql)}, updated_at = now()
            where cycle = ${claim.cycle} and watch_id = ${claim.watchId} and ${stillHeld(sql, claim)}
            returning 1`;
  // A claim its holder had settled, or lost, is no longer held: nothing moves.
  if (held.length > 0) enter(claim, 'let go');
}

/** The text kept with a deferral by the plan. */
export function deferralMessage(reason: string): string {
  return `deferred by the planner: ${reason.replaceAll('_', ' ')}`;
}

/** What a plan decided about the entries it read (src/plan/planner.ts makes one). */
export interface PlanDecisions {
  cycle: string;
  selected: readonly { id: number }[];
  skipped: readonly { entry: { id: number }; reason: string; detail?: string }[];
  deferReason: string;
}

/**
 * Writes the plan's decisions, in the plan's transaction: the selected entries become `planned`;
 * the entries it skipped become `skipped` with the reason; rows an earlier plan of this cycle had
 * planned that this one does not select become `deferred`. Rows a buyer has taken (fetching,
 * retrying, succeeded, duplicate, failed) are left alone. Deferred entries without a row stay
 * without one.
 */
export async function recordPlan(tx: Sql, plan: PlanDecisions): Promise<void> {
  const { cycle } = plan;
  const selected = plan.selected.map((e) => e.id);
  await tx`
    update cycle_fetches set status = ${statusOf(transition('planned', 'defer'))}, error_code = ${plan.deferReason},
      error_message = ${deferralMessage(plan.deferReason)}, updated_at = now()
    where cycle = ${cycle} and status = 'planned' and holder is null
      and not (watch_id = any(${selected}::bigint[]))`;
  if (selected.length > 0) {
    await tx`
      insert into cycle_fetches (cycle, watch_id, status)
      select ${cycle}::date, w, ${statusOf(transition('unplanned', 'plan'))} from unnest(${selected}::bigint[]) as t(w)
      on conflict (cycle, watch_id) do update set status = ${statusOf(transition('deferred', 'plan'))}, error_code = null,
        error_message = null, updated_at = now()
      where cycle_fetches.status in ('planned', 'deferred', 'skipped')`;
  }
  const skipped = plan.skipped.filter((s) => s.reason !== 'already_fetched_this_cycle');
  if (skipped.length > 0) {
    await tx`
      insert into cycle_fetches (cycle, watch_id, status, error_code, error_message)
      select ${cycle}::date, w, ${statusOf(transition('unplanned', 'skip'))}, c, m
      from unnest(${skipped.map((s) => s.entry.id)}::bigint[], ${skipped.map((s) => s.reason)}::text[],
                  ${skipped.map((s) => `skipped by the planner: ${s.detail ?? s.reason.replaceAll('_', ' ')}`)}::text[])
        as t(w, c, m)
      on conflict (cycle, watch_id) do update set status = ${statusOf(transition('planned', 'skip'))}, error_code = excluded.error_code,
        error_message = excluded.error_message, updated_at = now()
      where cycle_fetches.status in ('planned', 'deferred', 'skipped')`;
  }
}

/** `daybook resume`: the cycle's deferred rows are planned again; returns their watch ids. */
export async function replanDeferred(tx: Sql, cycle: string): Promise<number[]> {
  const rows = await tx<Pick<DriverRow<typeof cycleFetches>, 'watch_id'>[]>`
    update cycle_fetches set status = ${statusOf(transition('deferred', 'resume'))}, error_code = null,
      error_message = null, updated_at = now()
    where cycle = ${cycle} and status = 'deferred' returning watch_id`;
  return rows.map((r) => Number(r.watch_id));
}

/** The entries of the cycle a buyer took and did not settle (their jobs may need enqueuing again). */
export async function fetchesInFlight(sql: Sql, cycle: string): Promise<number[]> {
  const rows = await sql<Pick<DriverRow<typeof cycleFetches>, 'watch_id'>[]>`
    select watch_id from cycle_fetches where cycle = ${cycle} and status in ('fetching', 'retrying')`;
  return rows.map((r) => Number(r.watch_id));
}

/**
 * The claims whose holder's lease lapsed with the entry unsettled (`fetching`): their holder died
 * or starved, and nothing has taken them over yet. A job's claim names its job (src/db/lease.ts
 * `jobOfHolder`), so the runtime can ask the queue what became of it. Only the week up to the
 * latest cycle daybook has rows for is looked at (an index range, however long the history): by
 * the cycles themselves, not the database's calendar, so a past cycle run by hand (or a clock
 * that disagrees) is swept like today's.
 */
export async function lapsedClaims(sql: Sql): Promise<{ cycle: string; watchId: number; holder: string }[]> {
  const rows = await sql<LapsedClaim[]>`
    select cycle::text as cycle, watch_id, holder from cycle_fetches
    where cycle >= (select max(cycle) from cycle_fetches) - 7 and status = 'fetching' and holder is not null
      and not ${leaseLive(sql, 'lease_until')}
    order by cycle, watch_id limit 1000`;
  return rows.map((r) => ({ cycle: r.cycle, watchId: Number(r.watch_id), holder: r.holder }));
}

function lostMessage(claim: Claim): string {
  return `watch entry ${claim.watchId} of cycle ${claim.cycle}: the claim was taken over by another holder`;
}

/**
 * Whether every row of the cycle is settled (none planned or in a buyer's hands) and the cycle
 * is not paused. When it is, returns a mark of that state: the time of the latest change to the
 * cycle's rows, in microseconds; else null. Two processes that settle the last entries at once
 * read the same mark once both have committed.
 */
export async function settledMark(sql: Sql, cycle: string): Promise<string | null> {
  const [row] = await sql<SettledState[]>`
    select exists (select 1 from cycle_fetches where cycle = ${cycle} and status in ('planned', 'fetching', 'retrying'))
        or not exists (select 1 from cycle_fetches where cycle = ${cycle})
        or exists (select 1 from cycle_budgets where cycle = ${cycle} and paused_at is not null) as open,
      (select (extract(epoch from max(updated_at)) * 1000000)::bigint::text
         from cycle_fetches where cycle = ${cycle}) as mark`;
  return row && !row.open ? (row.mark ?? '0') : null;
}

/**
 * Deletes the rows of cycles before `before`: the claims and progress of cycles long finished
 * (what was bought is in the ledger, what was answered in the landing). Returns how many.
 */
export async function compactFetches(tx: Sql, before: string): Promise<number> {
  const fetches = await tx`delete from cycle_fetches where cycle < ${before}`;
  return fetches.count;
}

/**
 * Moves the booked entries of enterprise calls of cycles before `before` (whose claims
 * `compactFetches` deleted: no call of theirs can be settled or presumed again) from
 * `ledger_entries` to `ledger_compacted`, each with its id, values and load_xid as they were;
 * `credit_ledger` reads both, the same rows. Only an entry billed for a successful answer moves
 * (retention never drops that answer, so nothing needs to find the entry by it); presumed,
 * unconfirmed and product entries stay where they are, and so does an entry whose values do not
 * fit the narrower columns. Each answer is looked up by its key (a day's entries, not the
 * landing, are read). Returns how many moved.
 */
export async function compactLedger(tx: Sql, before: string): Promise<number> {
  const moved = await tx`
    with moved as (
      delete from ledger_entries e
      where e.cycle < ${before} and e.status = 'booked' and e.watch_id is not null and e.call_fence is not null
        and e.run_id is not null and e.raw_response_id is not null and e.credits is not null
        and e.watch_id between 1 and 2147483647 and e.call_fence between 0 and 32767 and e.credits between 0 and 32767
        and (select r.outcome from raw_answers r where r.id = e.raw_response_id) = 'success'
      returning id, run_id, raw_response_id, billed_at, load_xid, cycle, watch_id, call_fence, subject_id, credits)
    insert into ledger_compacted (id, run_id, raw_response_id, billed_at, load_xid, cycle, watch_id, call_fence,
                                  subject_id, credits)
    select id, run_id, raw_response_id, billed_at, load_xid, cycle, watch_id, call_fence, subject_id, credits
    from moved order by cycle, id`;
  return moved.count;
}

/** What a product call cost, as src/purchase/products.ts reads it (credits null: unpriced). */
export interface ProductBooking {
  cycle: string;
  operation: string;
  keyword: string;
  credits: number | null;
  status: 'booked' | 'unconfirmed' | 'presumed';
  remark: string;
  runId: number;
  landed: { id: number; landedAt: Date } | null;
}

/**
 * Books the product call of run `b.runId` (one row per run: a run makes one call), in the
 * caller's transaction: a row a recovery presumed while the call was still under way becomes what
 * its answer proved (`b` null: nothing was billed); else a new row. Returns the change to the
 * cycle's spent credits.
 */
export async function bookProductCall(
  tx: Sql,
  where: { cycle: string; operation: string; runId: number },
  b: ProductBooking | null,
): Promise<number> {
  const [prior] = await tx<Pick<DriverRow<typeof ledgerEntries>, 'id' | 'credits'>[]>`
    select e.id, e.credits from ledger_entries e join ledger_subjects s on s.id = e.subject_id
    where e.cycle = ${where.cycle} and s.operation = ${where.operation} and e.watch_id is null
      and e.run_id = ${where.runId} for update of e`;
  if (prior) {
    const credits = b ? b.credits : 0;
    await tx`
      update ledger_entries e set credits = ${credits}, status = ${b?.status ?? 'booked'},
        subject_id = daybook_ledger_subject(s.operation, s.pid, s.keyword,
          ${b?.remark ?? 'presumed billed by a recovery; the answer showed nothing was billed'}),
        raw_response_id = coalesce(${b?.landed?.id ?? null}, e.raw_response_id),
        billed_at = coalesce(${b?.landed?.landedAt ?? null}::timestamptz, e.billed_at)
      from ledger_subjects s
      where e.id = ${prior.id} and s.id = e.subject_id`;
    return (credits ?? 0) - (prior.credits ?? 0);
  }
  if (!b) return 0;
  const inserted = await tx`
    insert into ledger_entries (cycle, subject_id, credits, run_id, raw_response_id, billed_at, status)
    values (${b.cycle}, ${subject(tx, b.operation, null, b.keyword, b.remark)}, ${b.credits}, ${b.runId},
            ${b.landed?.id ?? null}, coalesce(${b.landed?.landedAt ?? null}::timestamptz, now()), ${b.status})
    on conflict do nothing returning 1`;
  return inserted.length > 0 ? (b.credits ?? 0) : 0;
}

/** How many claims: a computed shape of `cycle_fetches`. */
interface ClaimTotal {
  n: number;
}

/**
 * How many of `cycle`'s claims will reserve credits they do not hold yet: held by a buyer that has
 * not called, or left to retry. A plan counts them as owed, so a top-up plans beside them.
 */
export async function claimsOwingCredits(sql: Sql, cycle: string): Promise<number> {
  const [row] = await sql<ClaimTotal[]>`
    select count(*)::int as n from cycle_fetches
    where cycle = ${cycle} and credits_reserved = 0
      and (status = 'retrying' or (status = 'fetching' and credits_billed = 0 and call_fence is null))`;
  return row?.n ?? 0;
}

/** How many of a cycle's claims are in each status: a computed shape of `cycle_fetches`. */
export interface ClaimCount {
  status: string;
  n: number;
}

/** A cycle's claims by status, by the (cycle, status) index: as many rows as the cycle planned. */
export async function claimCounts(sql: Sql, cycle: string): Promise<ClaimCount[]> {
  return sql<ClaimCount[]>`
    select status, count(*)::int as n from cycle_fetches where cycle = ${cycle} group by status order by status`;
}

/** A claim that failed for good, with its entry's keyword, as `daybook status` lists it. */
export type FailedClaim = Pick<DriverRow<typeof watchlist>, 'keyword'> &
  Pick<DriverRow<typeof cycleFetches>, 'attempts' | 'updated_at'> & {
    /** `watch_id` as a number (`::int`). */
    watch_id: number;
    /** `error_code`, renamed. */
    reason: string | null;
    /** `error_message`, renamed. */
    detail: string | null;
  };

/** The watch entries that failed for good in `cycle`: permanent errors, or retries used up. */
export async function failedClaims(sql: Sql, cycle: string) {
  return sql<FailedClaim[]>`
    select w.keyword, f.watch_id::int as watch_id, f.error_code as reason, f.error_message as detail,
           f.attempts, f.updated_at
    from cycle_fetches f join published.watch_entries w on w.id = f.watch_id
    where f.cycle = ${cycle} and f.status = 'failed'
    order by f.error_code, w.keyword`;
}
