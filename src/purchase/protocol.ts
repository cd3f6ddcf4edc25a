/**
 * Buying one watched enterprise in one cycle: the whole protocol, step by step, for the job that
 * runs it (jobs/enterprise.ts). At most one upstream call per attempt, and the entry bought at
 * most once in the cycle, whatever runs at once (workers, `daybook run`, `resume --inline`).
 *
 *   claimEntry ─> holdingLease ─> buyEntry ─┬─> done     (removed, deferred, paused: a report)
 *                                           ├─> apply    (an answer bought and booked, or recovered)
 *                                           │     └─> history applies it, then one of
 *                                           │         completePurchase · refuseAnswer · failUnusable
 *                                           └─> failed   (an answer that is not a usable success)
 *                                                 └─> history lands it, then settleFailure
 *
 * `buyEntry` runs the steps of the claim in order: set aside a removed entry; open the run;
 * finish from an answer already bought in the cycle (`recoverLanded`); presume billed a call a
 * holder before this one sent and never settled; give up after two unanswered calls; reserve
 * credits; wait for the rate limit; check the fence (`startCall`); call; land the answer and
 * book what it cost, each commit on its own. The steps that need history (applying an answer,
 * landing a failed one with its drift) are the job's: this module is below history and hands
 * them back as the next step. Each write is a named function of src/purchase/fetches.ts (the
 * cycle fetch state machine and the ledger) or src/purchase/credits.ts. The claim carries the
 * state of the buy (src/purchase/states.ts): fetches.ts moves it where it writes the status, and
 * this module through the steps that keep the row `fetching` (presume, reserve, call, land, book,
 * recover, apply); a step out of order throws.
 */

import type { Config } from '../config/config.ts';
import { inTransaction, type Sql } from '../db/connect.ts';
import { holderOf } from '../db/lease.ts';
import { whileUnreachable } from '../db/outage.ts';
import type { DriverRow } from '../db/rows.ts';
import type { rawResponses } from '../db/schema.ts';
import { type Landed, landingOfExchange, landRaw } from '../landing/landing.ts';
import { finishRun, startRun } from '../landing/runs.ts';
import type { Logger } from '../log/log.ts';
import { FinalForCycleError, LostClaimError } from '../terms/job-errors.ts';
import type { JobReport } from '../terms/report.ts';
import {
  presumedBillingOf,
  type UpstreamClient,
  type UpstreamResult,
  unansweredCallOf,
} from '../upstream/client.ts';
import { RateLimitedError, UpstreamError } from '../upstream/errors.ts';
import { parseJsonExact, stringifyExact } from '../upstream/json.ts';
import { EnterpriseSuccess, readStored } from '../upstream/schemas.ts';
import { flagResolutionMismatch, noteAcceptedResolution, noteFailure } from '../watch/store.ts';
import { normalizeUscc } from '../watch/uscc.ts';
import { billingOfFailure, costOfAnswer } from './billing.ts';
import { pauseCycle } from './credits.ts';
import {
  type Claim,
  claimFetch,
  completeFetch,
  failFetch,
  MAX_UNANSWERED_CALLS,
  presumeLapsedCall,
  releaseClaim,
  renewLease,
  reserveForCall,
  setAside,
  settleCall,
  settleUnanswered,
  startCall,
  unansweredCalls,
} from './fetches.ts';
import { acquire, type LimitedOperation, type RateLimiter } from './limiter.ts';
import { enter } from './states.ts';

/** The kind of an enterprise purchase's runs (and of its job). */
export const ENTERPRISE_KIND = 'enterprise';

/** How long a bought answer waits for an unreachable database before the purchase gives up on it. */
export const LANDING_PATIENCE_MS = 120_000;

/** The code an entry fails with when its calls went unanswered twice in the cycle. */
export const UNANSWERED = 'unanswered';
const NO_ANSWER_TWICE = 'no answer twice; may have been billed; waits for the next cycle';

/** The code an entry fails with when its job's worker died too many times while buying it. */
export const WORKER_DIED = 'worker_died';

/** What a purchase is handed (a job's dependencies are a superset). */
export interface BuyerDeps {
  sql: Sql;
  client: UpstreamClient;
  limiter: RateLimiter;
  config: Pick<Config, 'DAYBOOK_JOB_LOCK_MS' | 'DAYBOOK_CREDITS_PER_QUERY'>;
  log: Logger;
  now: () => Date;
  /** Called when an upstream call was made (metrics hooks). */
  onUpstreamCall?: (op: LimitedOperation, outcome: string, durationMs: number) => void;
}

/** What became of a purchase, as the job reports it. */
export type PurchaseReport = JobReport;

/** An answer bought and booked, to apply. */
export interface Bought {
  rawResponseId: number;
  landedAt: Date;
  result: UpstreamResult<EnterpriseSuccess>;
  credits: number;
}

/** The claimed call being made: its claim, its run, and whether a retry follows a failure. */
export interface Attempt {
  claim: Claim;
  runId: number;
  lastAttempt: boolean;
}

/** What the job does next with a claimed entry. */
export type Next =
  | { step: 'done'; report: PurchaseReport }
  | { step: 'apply'; runId: number; bought: Bought; recovered: boolean }
  | { step: 'failed'; runId: number; err: UpstreamError };

/** Another holder's live claim on the entry: ask again once its lease lapses, `until`. */
export interface HeldElsewhere {
  holder: string;
  until: Date;
  detail: string;
}

/** What claiming an entry found: the claim, the report of why there is nothing to buy, or its holder. */
export type ClaimOutcome = { claim: Claim } | { report: PurchaseReport } | { held: HeldElsewhere };

/**
 * Claims the fetch of `watchId` in `cycle` for the job `jobId`: the claim, the report of why
 * there is nothing to buy, or, when another holder's claim is live, who holds it and until when.
 */
export async function claimEntry(
  deps: Pick<BuyerDeps, 'sql' | 'config'>,
  cycle: string,
  watchId: number,
  jobId: string,
): Promise<ClaimOutcome> {
  const got = await claimFetch(deps.sql, cycle, watchId, holderOf(jobId), deps.config.DAYBOOK_JOB_LOCK_MS);
  switch (got.kind) {
    case 'claimed':
      return { claim: got.claim };
    case 'missing':
      return { report: { outcome: 'skipped', detail: `watch entry ${watchId} does not exist` } };
    case 'settled':
      return { report: { outcome: 'skipped', detail: `already ${got.status} in cycle ${cycle}` } };
    case 'not_planned':
      // The plan decided: a deferred or skipped entry (or one it never planned) is not bought.
      return {
        report: {
          outcome: got.status === 'deferred' ? 'deferred' : 'skipped',
          detail: `not bought: the plan of cycle ${cycle} ${got.status === null ? 'did not plan it' : `marked it ${got.status}`}`,
        },
      };
    case 'held':
      return {
        held: {
          holder: got.holder,
          until: got.leaseUntil,
          detail: `watch entry ${watchId} of cycle ${cycle} is being bought by ${got.holder} (lease until ${got.leaseUntil.toISOString()})`,
        },
      };
  }
}

/**
 * Runs `fn` holding the claim: its lease is renewed while `fn` works, however long the call or the
 * landing takes (`lost()` says whether a renewal found it taken over). Every transition lets the
 * claim go; one `fn` did not reach (an error it did not expect) is let go here, so the retry can
 * take it at once.
 */
export async function holdingLease<T>(
  sql: Sql,
  claim: Claim,
  leaseMs: number,
  fn: (lost: () => boolean) => Promise<T>,
): Promise<T> {
  let lost = false;
  const heartbeat = setInterval(
    () => {
      renewLease(sql, claim, leaseMs).then(
        (held) => {
          if (!held) lost = true;
        },
        () => {},
      );
    },
    Math.max(500, Math.floor(leaseMs / 3)),
  );
  heartbeat.unref();
  try {
    return await fn(() => lost);
  } catch (err) {
    await releaseClaim(sql, claim).catch(() => {});
    throw err;
  } finally {
    clearInterval(heartbeat);
  }
}

/**
 * The steps of a claimed entry up to an answer (see the module comment): the answer to apply,
 * the failure to land, or the report of a purchase that stops here.
 */
export async function buyEntry(
  deps: BuyerDeps,
  claim: Claim,
  jobId: string,
  lostLease: () => boolean,
): Promise<Next> {
  const { sql, config } = deps;
  const { cycle, watchId, keyword } = claim;
  const cost = config.DAYBOOK_CREDITS_PER_QUERY;
  const entity = keyword;
  if (!claim.active) {
    await setAside(sql, claim, 'remove', 'inactive', 'the watch entry was removed');
    return { step: 'done', report: { outcome: 'skipped', entity, detail: 'watch entry removed' } };
  }

  const runId = await startRun(sql, { kind: ENTERPRISE_KIND, cycle, entity, jobId });
  // An answer of this entry already bought in this cycle (booked, or landed by a holder that died
  // before booking it) is finished from, and nothing is bought.
  const recovered = await recoverLanded(deps, claim);
  if (recovered) {
    enter(claim, 'recover');
    return { step: 'apply', runId, bought: recovered, recovered: true };
  }
  // A call a holder before this one sent and never settled may have been billed: it counts.
  await presume(deps, claim);
  // Two calls already went unanswered (a holder that booked the second died before failing it).
  if ((await unansweredCalls(sql, claim)) >= MAX_UNANSWERED_CALLS) {
    const reason = `${NO_ANSWER_TWICE} (${MAX_UNANSWERED_CALLS} unconfirmed calls in the ledger)`;
    await failForCycle(sql, claim, runId, 'unanswered', { code: UNANSWERED, message: reason });
    throw new FinalForCycleError(reason);
  }

  const reserved = await reserveForCall(sql, claim, cost);
  if (reserved.ok) enter(claim, 'reserve');
  else {
    if (reserved.reason === 'lost') throw new LostClaimError(reserved.detail);
    await setAside(sql, claim, 'defer', reserved.reason, reserved.detail);
    const outcome = reserved.reason === 'paused' ? 'paused' : 'deferred';
    await finishRun(sql, runId, { outcome, errorCode: reserved.reason, errorMessage: reserved.detail });
    return { step: 'done', report: { outcome, entity, detail: reserved.detail } };
  }

  await acquire(deps.limiter, 'enterprise-search');
  // The fencing check: a holder that lost its claim meanwhile does not buy.
  if (lostLease() || !(await startCall(sql, claim, config.DAYBOOK_JOB_LOCK_MS))) {
    await finishRun(sql, runId, { outcome: 'retrying', errorCode: 'claim_lost' });
    throw new LostClaimError(
      `watch entry ${watchId} of cycle ${cycle}: the claim lapsed before the call; nothing was bought`,
    );
  }
  enter(claim, 'call');
  let result: UpstreamResult<EnterpriseSuccess>;
  try {
    result = await deps.client.searchEnterprise(keyword);
    deps.onUpstreamCall?.('enterprise-search', 'success', result.exchange.durationMs);
  } catch (err) {
    if (!(err instanceof UpstreamError)) throw err;
    deps.onUpstreamCall?.('enterprise-search', err.code, err.response?.durationMs ?? 0);
    return { step: 'failed', runId, err };
  }

  // The answer is bought. It is landed exactly as received and booked first, each commit on its
  // own: whatever happens after, the purchase is on record and is never made again this cycle.
  // A database that drops or refuses connections meanwhile is waited for (the job's retry would
  // buy the answer again), finishing from what landed when a lost connection had committed it.
  const bought = result;
  const paid = costOfAnswer(bought.data.metadata.usage, cost);
  const landed = await patiently(deps, jobId, claim, async (retry) => {
    const before = retry > 0 ? await bookedAnswer(sql, claim) : null;
    if (before) return before;
    const [l] = (await landRaw(sql, [landingOfExchange(bought.exchange, runId, cycle)])) as [Landed];
    await inTransaction(sql, (tx) =>
      settleCall(tx, claim, claim.fence, {
        credits: paid.credits,
        remark: paid.remark,
        pid: bought.data.metadata.content.PID ?? null,
        rawResponseId: l.id,
        billedAt: l.landedAt,
        runId,
      }),
    );
    return { rawResponseId: l.id, landedAt: l.landedAt };
  });
  enter(claim, 'land');
  enter(claim, 'book');
  return {
    step: 'apply',
    runId,
    bought: { ...landed, result: bought, credits: paid.credits },
    recovered: false,
  };
}

/**
 * Completes the purchase of an answer history accepted, in the caller's transaction: the fetch
 * succeeds, a `--pin` entry's code is pinned from the answer, and the run is closed (a worker dying
 * after this commit must not leave it "running").
 */
export async function completePurchase(
  tx: Sql,
  claim: Claim,
  runId: number,
  b: Bought,
  accepted: { pid: string | null; uncid: string | null; counts: Record<string, number> },
): Promise<void> {
  enter(claim, 'apply');
  await completeFetch(tx, claim, {
    pid: accepted.pid ?? '',
    rawResponseId: b.rawResponseId,
    refreshedAt: b.landedAt,
  });
  await noteAcceptedResolution(
    tx,
    claim.watchId,
    accepted.uncid === null ? null : normalizeUscc(accepted.uncid),
  );
  await finishRun(tx, runId, { outcome: 'succeeded', credits: b.credits, counts: accepted.counts });
}

/**
 * An answer that cannot be applied (a value Postgres refuses, a key too long for an index, a list
 * longer than a column counts) is a permanent failure of the entry for this cycle, with the
 * reason: it was paid for, so it is not bought again, and its raw answer stays landed.
 */
export async function failUnusable(
  sql: Sql,
  claim: Claim,
  runId: number,
  b: Bought,
  err: unknown,
): Promise<never> {
  const reason =
    `billed, landed (raw response ${b.rawResponseId}), not applicable: ${err instanceof Error ? err.message : String(err)}`.slice(
      0,
      1000,
    );
  await failForCycle(sql, claim, runId, 'unusable', {
    code: 'unusable_answer',
    message: reason,
    credits: b.credits,
  });
  throw new FinalForCycleError(reason, { cause: err });
}

/** What history found an answer to name instead of the entry's expected company. */
export interface Refusal {
  message: string;
  found: string | null;
  foundName: string;
}

/**
 * An answer refused for naming another enterprise than the entry's expected code: it stays
 * landed and booked (it was billed), the entry fails for the cycle (final: not bought again) and
 * is flagged with what its keyword resolved to.
 */
export async function refuseAnswer(
  sql: Sql,
  claim: Claim,
  runId: number,
  b: Bought,
  m: Refusal,
): Promise<never> {
  const reason = `billed, landed (raw response ${b.rawResponseId}), refused: ${m.message}`;
  // The code first: `watch list` cuts long cells, and the code is what tells the companies apart.
  const flag = `${m.found ?? '(no UNCID)'} ${m.foundName} (cycle ${claim.cycle})`;
  await inTransaction(sql, async (tx) => {
    await flagResolutionMismatch(tx, claim.watchId, flag);
    await failFetch(tx, claim, {
      step: 'refuse',
      code: 'resolution_mismatch',
      message: reason,
      entryError: m.message,
    });
  });
  await finishRun(sql, runId, {
    outcome: 'failed',
    errorCode: 'resolution_mismatch',
    errorMessage: reason,
    credits: b.credits,
  });
  throw new FinalForCycleError(reason);
}

/**
 * An answer that is not a usable success, landed by history as `landed`: books what it may have
 * cost and decides. Billed (or presumed billed) is final for the cycle; a call sent and not
 * answered is booked unconfirmed and tried once more at most; out of credits pauses the cycle;
 * any other failure is retried unless this is the last attempt (a rate limit never is).
 */
export async function settleFailure(
  deps: BuyerDeps,
  attempt: Attempt,
  err: UpstreamError,
  landed: Landed,
): Promise<PurchaseReport> {
  const { claim, runId, lastAttempt } = attempt;
  const { cycle, keyword } = claim;
  const { sql, config } = deps;
  // History landed the failed answer (the job's step before this one).
  enter(claim, 'land');
  const billing = billingOfFailure(err, config.DAYBOOK_CREDITS_PER_QUERY, landed.id, landed.landedAt, runId);
  // A call sent and not answered may have been billed: booked unconfirmed, tried once more at most.
  const unanswered = billing === null ? unansweredCallOf(err) : null;
  let unbooked = 0;
  if (unanswered) {
    const cost = config.DAYBOOK_CREDITS_PER_QUERY;
    unbooked = cost;
    const calls = await settleUnanswered(sql, claim, claim.fence, {
      credits: cost,
      remark: `${unanswered.what}: may have been billed; booked unconfirmed at the configured ${cost} credits`,
      rawResponseId: landed.id,
      billedAt: landed.landedAt,
      runId,
    });
    if (calls >= MAX_UNANSWERED_CALLS) {
      const reason = `${NO_ANSWER_TWICE}: ${err.message}`;
      await failForCycle(sql, claim, runId, 'unanswered', {
        code: UNANSWERED,
        message: reason,
        credits: cost,
      });
      throw new FinalForCycleError(reason, { cause: err });
    }
  } else await inTransaction(sql, (tx) => settleCall(tx, claim, claim.fence, billing));
  // An answer the upstream billed (or is presumed to have billed) is never bought again in the
  // cycle: it is final.
  const final =
    err.errorClass === 'permanent' || billing !== null || (lastAttempt && !(err instanceof RateLimitedError));
  const reason =
    billing !== null
      ? `${presumedBillingOf(err) ? 'presumed billed' : 'billed'}, not usable, not bought again this cycle: ${err.message}`
      : err.errorClass === 'transient' && final
        ? `gave up after the last attempt${unanswered ? ' (no answer; may have been billed)' : ''}: ${err.message}`
        : err.message;
  if (err.errorClass === 'budget') {
    await setAside(sql, claim, 'pause', err.code, err.message);
    await noteFailure(sql, claim.watchId, { code: err.code, error: err.message, cycle });
    await pauseCycle(sql, cycle, `insufficient_credits at ${deps.now().toISOString()}: ${err.message}`);
    await finishRun(sql, runId, { outcome: 'paused', errorCode: err.code, errorMessage: err.message });
    return { outcome: 'paused', entity: keyword, detail: err.message };
  }
  await failFetch(sql, claim, {
    step: final ? 'fail' : 'retry',
    code: err.code,
    message: reason,
    entryError: err.message,
  });
  await finishRun(sql, runId, {
    outcome: final ? 'failed' : 'retrying',
    errorCode: err.code,
    errorMessage: reason,
    credits: billing?.credits ?? unbooked,
  });
  // A transient error whose answer was billed is final all the same: no retry buys it again.
  if (final && err.errorClass === 'transient') throw new FinalForCycleError(reason, { cause: err });
  throw err;
}

/** What became of an entry whose job the queue gave up on. */
export type AbandonOutcome =
  | { outcome: 'failed'; entity: string; credits: number; detail: string }
  | { outcome: 'skipped'; detail: string }
  | { outcome: 'held'; detail: string; leaseUntil: Date };

/**
 * The queue gave up on the entry's job: its worker died while running it more often than the
 * queue allows (an OOM loop, an answer that kills the process). The entry fails for the cycle
 * with `reason`, as a final failure of any other kind: its claim is taken over, a call a dead
 * holder sent and never settled is presumed billed (so the ledger holds every credit it may have
 * cost), and it is not bought again in the cycle. `held`: another holder's live claim buys it
 * now; ask again once that lease lapses.
 */
export async function abandonEntry(
  deps: Pick<BuyerDeps, 'sql' | 'config' | 'now'>,
  cycle: string,
  watchId: number,
  jobId: string,
  reason: string,
): Promise<AbandonOutcome> {
  const { sql } = deps;
  const got = await claimEntry(deps, cycle, watchId, jobId);
  if ('held' in got) return { outcome: 'held', leaseUntil: got.held.until, detail: got.held.detail };
  if ('report' in got) return { outcome: 'skipped', detail: got.report.detail ?? '' };
  const claim = got.claim;
  const presumed = claim.lapsedCall?.reserved ?? 0;
  const runId = await startRun(sql, { kind: ENTERPRISE_KIND, cycle, entity: claim.keyword, jobId });
  await presume(deps, claim);
  const detail =
    presumed > 0 ? `${reason}; its last call never settled: ${presumed} credits presumed billed` : reason;
  await failForCycle(sql, claim, runId, 'abandon', {
    code: WORKER_DIED,
    message: detail,
    entryError: reason,
    credits: presumed,
  });
  return { outcome: 'failed', entity: claim.keyword, credits: presumed, detail };
}

/** Runs `fn` until the database answers (up to LANDING_PATIENCE_MS), logging each wait. */
export function patiently<T>(
  deps: Pick<BuyerDeps, 'log'>,
  jobId: string,
  claim: Claim,
  fn: (retry: number) => Promise<T>,
): Promise<T> {
  return whileUnreachable(fn, {
    maxMs: LANDING_PATIENCE_MS,
    onWait: (err, waitMs) =>
      deps.log.warn(
        {
          kind: ENTERPRISE_KIND,
          jobId,
          cycle: claim.cycle,
          entity: claim.keyword,
          waitMs,
          error: (err as Error).message,
        },
        'database unreachable with a bought answer in hand: waiting for it',
      ),
  });
}

/** A call a holder before this one sent and never settled is presumed billed (`presumeLapsedCall`). */
async function presume(deps: Pick<BuyerDeps, 'sql' | 'now'>, claim: Claim): Promise<void> {
  if (!claim.lapsedCall) return;
  await presumeLapsedCall(deps.sql, claim, deps.now());
  enter(claim, 'presume');
}

/**
 * Fails the entry for the cycle by `step` (final: not bought again in it) and closes its run as
 * failed, with `code` and `message`; `credits`: what the run's call cost, for its report.
 */
async function failForCycle(
  sql: Sql,
  claim: Claim,
  runId: number,
  step: 'unanswered' | 'unusable' | 'abandon',
  f: { code: string; message: string; entryError?: string; credits?: number },
): Promise<void> {
  await failFetch(sql, claim, {
    step,
    code: f.code,
    message: f.message,
    entryError: f.entryError ?? f.message,
  });
  await finishRun(sql, runId, {
    outcome: 'failed',
    errorCode: f.code,
    errorMessage: f.message,
    ...(f.credits === undefined ? {} : { credits: f.credits }),
  });
}

/** The booked answer of this entry's call under the claim's fence, if the booking committed. */
async function bookedAnswer(
  sql: Sql,
  claim: Claim,
): Promise<{ rawResponseId: number; landedAt: Date } | null> {
  const [row] = await sql<Pick<DriverRow<typeof rawResponses>, 'id' | 'landed_at'>[]>`
    select r.id, r.landed_at from credit_ledger l join raw_answers r on r.id = l.raw_response_id
    where l.cycle = ${claim.cycle} and l.watch_id = ${claim.watchId} and l.call_fence = ${claim.fence}`;
  return row ? { rawResponseId: Number(row.id), landedAt: row.landed_at } : null;
}

/** A landed answer's body: jsonb, or the text jsonb refused. */
interface LandedBody {
  id: string;
  body_json: unknown;
  body_text: string | null;
  landed_at: Date;
}

/** Text as JSON (numbers exact), or null when it is not JSON. */
function jsonOrNull(text: string): unknown {
  try {
    return parseJsonExact(text);
  } catch {
    return null;
  }
}

/**
 * A success of this entry already bought in this cycle and not applied: one booked in the ledger
 * (a holder died, or lost its database, after booking it), or one a holder landed and died
 * before booking (its call unsettled; booked now, under that call). Null when there is none.
 */
async function recoverLanded(deps: Pick<BuyerDeps, 'sql' | 'config'>, claim: Claim): Promise<Bought | null> {
  const { sql } = deps;
  const [booked] = await sql<(LandedBody & { credits: number })[]>`
    select r.id, r.body_json, case when r.body_json is null then r.body_text end as body_text,
           r.landed_at, l.credits from credit_ledger l
    join raw_answers r on r.id = l.raw_response_id
    where l.cycle = ${claim.cycle} and l.watch_id = ${claim.watchId} and l.status = 'booked' and r.outcome = 'success'
    order by l.id desc limit 1`;
  let raw: LandedBody | undefined = booked;
  if (!raw && claim.lapsedCall) {
    [raw] = await sql<LandedBody[]>`
      select id, body_json, case when body_json is null then body_text end as body_text, landed_at
      from raw_answers
      where operation = 'enterprise-search' and cycle = ${claim.cycle} and outcome = 'success'
        and params->>'ent_name' = ${claim.keyword} and landed_at >= ${claim.lapsedCall.startedAt}
      order by id desc limit 1`;
  }
  if (!raw) return null;
  // JSON jsonb refused (a \u0000 escape) landed as text: it is read from there.
  const body = raw.body_json ?? (raw.body_text === null ? null : jsonOrNull(raw.body_text));
  const parsed = readStored(EnterpriseSuccess, body);
  if (!parsed.success) return null;
  const paid = costOfAnswer(parsed.data.metadata.usage, deps.config.DAYBOOK_CREDITS_PER_QUERY);
  const rawResponseId = Number(raw.id);
  if (!booked && claim.lapsedCall) {
    const call = claim.lapsedCall.fence;
    await inTransaction(sql, (tx) =>
      settleCall(tx, claim, call, {
        credits: paid.credits,
        remark: paid.remark,
        pid: parsed.data.metadata.content.PID ?? null,
        rawResponseId,
        billedAt: raw.landed_at,
        runId: null,
      }),
    );
    claim.lapsedCall = null;
  }
  const text = raw.body_text ?? stringifyExact(body);
  // The run that finishes the purchase reports its credits (the one that bought it was cut short).
  return {
    rawResponseId,
    landedAt: raw.landed_at,
    credits: booked ? booked.credits : paid.credits,
    result: {
      data: parsed.data,
      exchange: {
        operation: 'enterprise-search',
        params: { ent_name: claim.keyword },
        httpStatus: 200,
        bodyText: text,
        bodyJson: body,
        durationMs: 0,
        fetchedAt: raw.landed_at,
      },
    },
  };
}
