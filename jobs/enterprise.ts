/**
 * Refresh one watched enterprise in one cycle: at most one upstream call per attempt, and the
 * entry bought at most once in the cycle, whatever runs at once (workers, `daybook run`,
 * `resume --inline`). The attempt claims the cycle fetch (src/purchase/fetches.ts), keeps its
 * lease while it works, reserves credits, checks its fence right before the call, lands the
 * answer, applies it to history, and books what it cost and completes the fetch in one
 * transaction. A claim taken over from a holder that died first looks for an answer that holder
 * landed, so a completed purchase is never bought twice; a call that holder sent and never
 * settled is presumed billed.
 */

import { z } from 'zod';
import { holderOf } from '../src/db/lease.ts';
import { isConnectionLoss, whileUnreachable } from '../src/db/outage.ts';
import {
  applyEnterpriseAnswer,
  type EnterpriseIngestResult,
  ingestFailure,
  landExchange,
} from '../src/history/ingest.ts';
import type { Mismatch } from '../src/history/resolution-mismatches.ts';
import { finishRun, startRun } from '../src/landing/runs.ts';
import { noteRefresh, type RefreshObservation } from '../src/plan/store.ts';
import { costOfAnswer, isBilledSuccess, usageOf } from '../src/purchase/billing.ts';
import { pauseCycle } from '../src/purchase/credits.ts';
import {
  type Billing,
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
  settledMark,
  settleUnanswered,
  startCall,
  unansweredCalls,
} from '../src/purchase/fetches.ts';
import { acquire } from '../src/purchase/limiter.ts';
import type { Severity } from '../src/terms/changes.ts';
import { ClaimHeldError, FinalForCycleError, LostClaimError } from '../src/terms/job-errors.ts';
import { presumedBillingOf, type UpstreamResult, unansweredCallOf } from '../src/upstream/client.ts';
import {
  BodyTooDeepError,
  BodyTooLargeError,
  NetworkError,
  RateLimitedError,
  TimeoutError,
  UnexpectedResponseError,
  UpstreamError,
} from '../src/upstream/errors.ts';
import { parseJsonExact, stringifyExact } from '../src/upstream/json.ts';
import { EnterpriseSuccess, readStored } from '../src/upstream/schemas.ts';
import { rootsAround, syncRelated } from '../src/watch/related.ts';
import {
  expectedOf,
  flagResolutionMismatch,
  noteAcceptedResolution,
  noteFailure,
} from '../src/watch/store.ts';
import { normalizeUscc } from '../src/watch/uscc.ts';
import type { JobDeps, JobReport } from './deps.ts';

export const ENTERPRISE_JOB = 'enterprise';

/** How long a bought answer waits for an unreachable database before the job gives up on it. */
export const LANDING_PATIENCE_MS = 120_000;

export const EnterpriseJobData = z.object({
  cycle: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  watchId: z.number().int().positive(),
});
export type EnterpriseJobData = z.infer<typeof EnterpriseJobData>;

/**
 * Deterministic job id (BullMQ ids may not contain ':'). `round` > 0 after a resume; a string
 * names the top-up of the cycle's plan that planned the entry (jobs/plan.ts `topUpJobId`).
 */
export function enterpriseJobId(cycle: string, watchId: number, round: number | string = 0): string {
  if (typeof round === 'string') return `enterprise-${cycle}-${watchId}-${round}`;
  return `enterprise-${cycle}-${watchId}${round > 0 ? `-r${round}` : ''}`;
}

/**
 * Runs one attempt. `lastAttempt`: no retry follows, so a transient failure is final for the
 * cycle and is recorded as `failed` with its reason (a rate limit never is: it uses no attempt).
 */
export async function processEnterprise(
  deps: JobDeps,
  data: EnterpriseJobData,
  jobId: string,
  lastAttempt = false,
): Promise<JobReport> {
  try {
    return await refreshEntry(deps, data, jobId, lastAttempt);
  } finally {
    // Settling the last entry of the cycle asks for the cycle-complete step (digest, export).
    await askCycleComplete(deps, data.cycle);
  }
}

/** The code an entry fails with when its job's worker died too many times while buying it. */
export const WORKER_DIED = 'worker_died';

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
 * now; ask again once that lease lapses. Settling the last entry asks for the cycle-complete step.
 */
export async function abandonEnterprise(
  deps: JobDeps,
  data: EnterpriseJobData,
  jobId: string,
  reason: string,
): Promise<AbandonOutcome> {
  const { sql, config } = deps;
  const { cycle, watchId } = data;
  try {
    const got = await claimFetch(sql, cycle, watchId, holderOf(jobId), config.DAYBOOK_JOB_LOCK_MS);
    switch (got.kind) {
      case 'missing':
        return { outcome: 'skipped', detail: `watch entry ${watchId} does not exist` };
      case 'settled':
        return { outcome: 'skipped', detail: `already ${got.status} in cycle ${cycle}` };
      case 'not_planned':
        return { outcome: 'skipped', detail: `not planned in cycle ${cycle}` };
      case 'held':
        return {
          outcome: 'held',
          leaseUntil: got.leaseUntil,
          detail: `being bought by ${got.holder} (lease until ${got.leaseUntil.toISOString()})`,
        };
    }
    const claim = got.claim;
    const presumed = claim.lapsedCall?.reserved ?? 0;
    const runId = await startRun(sql, { kind: ENTERPRISE_JOB, cycle, entity: claim.keyword, jobId });
    await presumeLapsedCall(sql, claim, deps.now());
    const detail =
      presumed > 0 ? `${reason}; its last call never settled: ${presumed} credits presumed billed` : reason;
    await failForCycle(sql, claim, runId, {
      code: WORKER_DIED,
      message: detail,
      entryError: reason,
      credits: presumed,
    });
    return { outcome: 'failed', entity: claim.keyword, credits: presumed, detail };
  } finally {
    await askCycleComplete(deps, cycle);
  }
}

/** Asks for the cycle-complete step when the cycle's work looks settled; never fails the job. */
async function askCycleComplete(deps: JobDeps, cycle: string): Promise<void> {
  try {
    const mark = await settledMark(deps.sql, cycle);
    if (mark !== null) await deps.enqueue.cycleComplete(cycle, mark);
  } catch (err) {
    deps.log.warn(
      { cycle, err: err instanceof Error ? err.message : String(err) },
      'could not check whether the cycle is complete; the next job will',
    );
  }
}

async function refreshEntry(
  deps: JobDeps,
  data: EnterpriseJobData,
  jobId: string,
  lastAttempt: boolean,
): Promise<JobReport> {
  const { sql, config } = deps;
  const { cycle, watchId } = data;
  const leaseMs = config.DAYBOOK_JOB_LOCK_MS;
  const got = await claimFetch(sql, cycle, watchId, holderOf(jobId), leaseMs);
  switch (got.kind) {
    case 'missing':
      return { outcome: 'skipped', detail: `watch entry ${watchId} does not exist` };
    case 'settled':
      return { outcome: 'skipped', detail: `already ${got.status} in cycle ${cycle}` };
    case 'not_planned':
      // The plan decided: a deferred or skipped entry (or one it never planned) is not bought.
      return {
        outcome: got.status === 'deferred' ? 'deferred' : 'skipped',
        detail: `not bought: the plan of cycle ${cycle} ${got.status === null ? 'did not plan it' : `marked it ${got.status}`}`,
      };
    case 'held':
      throw new ClaimHeldError(
        `watch entry ${watchId} of cycle ${cycle} is being bought by ${got.holder} (lease until ${got.leaseUntil.toISOString()})`,
        got.leaseUntil,
      );
  }
  const claim = got.claim;
  // The lease is renewed while this attempt works, however long the call or the landing takes.
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
    return await refresh(deps, claim, jobId, lastAttempt, () => lost);
  } catch (err) {
    // Every transition lets the claim go; one the attempt did not reach (an error it did not
    // expect) is let go here, so the retry can take it at once.
    await releaseClaim(sql, claim).catch(() => {});
    throw err;
  } finally {
    clearInterval(heartbeat);
  }
}

async function refresh(
  deps: JobDeps,
  claim: Claim,
  jobId: string,
  lastAttempt: boolean,
  lostLease: () => boolean,
): Promise<JobReport> {
  const { sql, config } = deps;
  const { cycle, watchId, keyword } = claim;
  const cost = config.DAYBOOK_CREDITS_PER_QUERY;
  const entity = keyword;
  if (!claim.active) {
    await setAside(sql, claim, 'skipped', 'inactive', 'the watch entry was removed');
    return { outcome: 'skipped', entity, detail: 'watch entry removed' };
  }

  const runId = await startRun(sql, { kind: ENTERPRISE_JOB, cycle, entity, jobId });
  // An answer of this entry already bought in this cycle (booked, or landed by a holder that died
  // before booking it) is finished from, and nothing is bought.
  const recovered = await recoverLanded(deps, claim);
  if (recovered) {
    await useAnswer(deps, claim, runId, recovered);
    return {
      outcome: 'succeeded',
      entity,
      credits: recovered.credits,
      detail: 'recovered from a landed answer',
    };
  }
  // A call a holder before this one sent and never settled may have been billed: it counts.
  await presumeLapsedCall(sql, claim, deps.now());
  // Two calls already went unanswered (a holder that booked the second died before failing it).
  if ((await unansweredCalls(sql, claim)) >= MAX_UNANSWERED_CALLS) {
    const reason = `${NO_ANSWER_TWICE} (${MAX_UNANSWERED_CALLS} unconfirmed calls in the ledger)`;
    await failForCycle(sql, claim, runId, { code: UNANSWERED, message: reason });
    throw new FinalForCycleError(reason);
  }

  const reserved = await reserveForCall(sql, claim, cost);
  if (!reserved.ok) {
    if (reserved.reason === 'lost') throw new LostClaimError(reserved.detail);
    await setAside(sql, claim, 'deferred', reserved.reason, reserved.detail);
    const outcome = reserved.reason === 'paused' ? 'paused' : 'deferred';
    await finishRun(sql, runId, { outcome, errorCode: reserved.reason, errorMessage: reserved.detail });
    return { outcome, entity, detail: reserved.detail };
  }

  await acquire(deps.limiter, 'enterprise-search');
  // The fencing check: a holder that lost its claim meanwhile does not buy.
  if (lostLease() || !(await startCall(sql, claim, config.DAYBOOK_JOB_LOCK_MS))) {
    await finishRun(sql, runId, { outcome: 'retrying', errorCode: 'claim_lost' });
    throw new LostClaimError(
      `watch entry ${watchId} of cycle ${cycle}: the claim lapsed before the call; nothing was bought`,
    );
  }
  let result: Awaited<ReturnType<typeof deps.client.searchEnterprise>>;
  try {
    result = await deps.client.searchEnterprise(keyword);
    deps.onUpstreamCall?.('enterprise-search', 'success', result.exchange.durationMs);
  } catch (err) {
    if (!(err instanceof UpstreamError)) throw err;
    return failed(deps, { claim, runId, lastAttempt }, err);
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
    const l = await landExchange(sql, bought.exchange, { runId, cycle });
    await sql.begin((tx) =>
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
  const outcome = await useAnswer(deps, claim, runId, { ...landed, result: bought, credits: paid.credits });
  return { ...outcome, entity, credits: paid.credits };
}

/** An answer bought and booked, to apply. */
interface Bought {
  rawResponseId: number;
  landedAt: Date;
  result: UpstreamResult<EnterpriseSuccess>;
  credits: number;
}

/**
 * Applies a booked answer to history and completes the fetch. An answer that cannot be applied
 * (a value Postgres refuses, a key too long for an index, a list longer than a column counts)
 * is a permanent failure of the entry for this cycle, with the reason: it was paid for, so it is
 * not bought again, and its raw answer stays landed. So is an answer about another enterprise
 * than the entry's expected credit code (`resolution_mismatch`): it is not applied, and the
 * entry is flagged for a better keyword. An accepted answer pins the code of a `--pin` entry.
 */
async function useAnswer(
  deps: JobDeps,
  claim: Claim,
  runId: number,
  b: Bought,
): Promise<{ outcome: 'succeeded'; counts: Record<string, number> }> {
  const { sql } = deps;
  const ctx = { runId, cycle: claim.cycle };
  let ingest: Awaited<ReturnType<typeof applyEnterpriseAnswer>>;
  try {
    ingest = await patiently(deps, `run-${runId}`, claim, async () => {
      const expected = await expectedOf(sql, claim.watchId, b.rawResponseId);
      return applyEnterpriseAnswer(
        sql,
        b.result,
        { id: b.rawResponseId, landedAt: b.landedAt },
        claim.keyword,
        ctx,
        { watchId: claim.watchId, ...expected },
      );
    });
  } catch (err) {
    if (isConnectionLoss(err)) throw err;
    const reason =
      `billed, landed (raw response ${b.rawResponseId}), not applicable: ${err instanceof Error ? err.message : String(err)}`.slice(
        0,
        1000,
      );
    await failForCycle(sql, claim, runId, { code: 'unusable_answer', message: reason, credits: b.credits });
    throw new FinalForCycleError(reason, { cause: err });
  }
  if (ingest.mismatch) return refuse(deps, claim, runId, b, ingest.mismatch);
  const counts: Record<string, number> = ingest.summary
    ? { versions: ingest.summary.initial + ingest.summary.changed, changes: ingest.summary.changes }
    : {};
  const accepted = ingest;
  await sql.begin(async (tx) => {
    // What the answer says of the entry's change rate is noted before its refresh time moves.
    await noteRefresh(
      tx,
      claim.watchId,
      claim.cycle,
      observationOf(accepted),
      deps.config.DAYBOOK_MAX_STALENESS_DAYS,
    );
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
    // In the same transaction: a worker dying after this commit must not leave the run "running".
    await finishRun(tx, runId, { outcome: 'succeeded', credits: b.credits, counts });
  });
  if (accepted.pid !== null) await followShareholders(deps, accepted.pid);
  return { outcome: 'succeeded', counts };
}

/**
 * The chains of shareholders through `pid` (src/watch/related.ts), rewritten from its new
 * version: shareholders new on them are watched (and planned by a top-up), those gone are not.
 * A failure here is logged, not the entry's: the next refresh on the chain rewrites it.
 */
async function followShareholders(deps: JobDeps, pid: string): Promise<void> {
  try {
    const roots = await rootsAround(deps.sql, pid);
    if (roots.length === 0) return;
    const r = await syncRelated(deps.sql, roots);
    if (r.watched.length > 0 || r.unwatched > 0 || r.conflicts.length > 0)
      deps.log.info(
        { pid, watched: r.watched.length, unwatched: r.unwatched, conflicts: r.conflicts.length },
        `shareholders of ${pid}: ${r.watched.length} watched anew, ${r.unwatched} no longer held`,
      );
  } catch (err) {
    deps.log.warn(
      { pid, err: err instanceof Error ? err.message : String(err) },
      'could not follow the shareholders',
    );
  }
}

/** What an applied answer says of the entry's change rate (src/plan/store.ts). */
function observationOf(r: EnterpriseIngestResult): RefreshObservation {
  const s = r.summary;
  const changed = s !== null && s.changed + s.reappeared > 0;
  const severity: Severity | null = !changed
    ? null
    : s.bySeverity.high > 0
      ? 'high'
      : s.bySeverity.medium > 0
        ? 'medium'
        : 'low';
  return {
    refreshedAt: r.landedAt,
    changed,
    severity,
    cohort: r.cohort,
    usable: s !== null && s.stale === 0,
    approval: r.approval,
    established: r.established,
  };
}

/**
 * An answer refused for naming another enterprise than the entry's expected code: it stays
 * landed and booked (it was billed), the entry fails for the cycle (final: not bought again) and
 * is flagged with what its keyword resolved to.
 */
async function refuse(deps: JobDeps, claim: Claim, runId: number, b: Bought, m: Mismatch): Promise<never> {
  const { sql } = deps;
  const reason = `billed, landed (raw response ${b.rawResponseId}), refused: ${m.message}`;
  // The code first: `watch list` cuts long cells, and the code is what tells the companies apart.
  const flag = `${m.found ?? '(no UNCID)'} ${m.foundName} (cycle ${claim.cycle})`;
  await sql.begin(async (tx) => {
    await flagResolutionMismatch(tx, claim.watchId, flag);
    await failFetch(tx, claim, {
      final: true,
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

/** Runs `fn` until the database answers (up to LANDING_PATIENCE_MS), logging each wait. */
function patiently<T>(
  deps: JobDeps,
  jobId: string,
  claim: Claim,
  fn: (retry: number) => Promise<T>,
): Promise<T> {
  return whileUnreachable(fn, {
    maxMs: LANDING_PATIENCE_MS,
    onWait: (err, waitMs) =>
      deps.log.warn(
        {
          kind: ENTERPRISE_JOB,
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

/**
 * Fails the entry for the cycle (final: not bought again in it) and closes its run as failed,
 * with `code` and `message`; `credits`: what the run's call cost, for its report.
 */
async function failForCycle(
  sql: JobDeps['sql'],
  claim: Claim,
  runId: number,
  f: { code: string; message: string; entryError?: string; credits?: number },
): Promise<void> {
  await failFetch(sql, claim, {
    final: true,
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

/** The code an entry fails with when its calls went unanswered twice in the cycle. */
export const UNANSWERED = 'unanswered';
const NO_ANSWER_TWICE = 'no answer twice; may have been billed; waits for the next cycle';

/** The claimed call being made: its claim, its run, and whether a retry follows a failure. */
interface Attempt {
  claim: Claim;
  runId: number;
  lastAttempt: boolean;
}

/** An answer that is not a usable success: land it, book what it may have cost, decide. */
async function failed(deps: JobDeps, attempt: Attempt, err: UpstreamError): Promise<JobReport> {
  const { claim, runId, lastAttempt } = attempt;
  const { cycle, keyword } = claim;
  const { sql, config } = deps;
  deps.onUpstreamCall?.('enterprise-search', err.code, err.response?.durationMs ?? 0);
  const landed = await ingestFailure(sql, err, { runId, cycle });
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
      await failForCycle(sql, claim, runId, { code: UNANSWERED, message: reason, credits: cost });
      throw new FinalForCycleError(reason, { cause: err });
    }
  } else await sql.begin((tx) => settleCall(tx, claim, claim.fence, billing));
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
    await setAside(sql, claim, 'deferred', err.code, err.message);
    await noteFailure(sql, claim.watchId, { code: err.code, error: err.message, cycle });
    await pauseCycle(sql, cycle, `insufficient_credits at ${deps.now().toISOString()}: ${err.message}`);
    await finishRun(sql, runId, { outcome: 'paused', errorCode: err.code, errorMessage: err.message });
    return { outcome: 'paused', entity: keyword, detail: err.message };
  }
  await failFetch(sql, claim, { final, code: err.code, message: reason, entryError: err.message });
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

/**
 * What a failed call cost. Error answers are not billed (the upstream bills once content is
 * processed); a success is, whether it broke off in transit or failed validation, at the amount
 * it stated or the configured cost (src/purchase/billing.ts). An HTTP 200 answer that began to
 * arrive and could not complete is presumed billed unless its bytes prove it an error
 * (src/upstream/client.ts `presumedBillingOf`), and booked at once.
 */
export function billingOfFailure(
  err: UpstreamError,
  configuredCost: number,
  rawResponseId: number,
  landedAt: Date,
  runId: number | null,
): Billing | null {
  let usage: unknown;
  let pid: string | null = null;
  let note: string;
  // A 200 that arrived in part (cut off in transit, by the timeout, or at the size limit) or
  // could not be read (too deep, not parseable).
  const broken = presumedBillingOf(err);
  if (broken) {
    usage = broken.credits === null ? {} : { credits: broken.credits };
    pid = broken.pid;
    const bytes = err.response?.bodyBytes?.length ?? Buffer.byteLength(err.response?.bodyText ?? '');
    const presumed = 'presumed billed, not bought again this cycle';
    note =
      err instanceof BodyTooDeepError
        ? `a success nested deeper than daybook reads; ${presumed}`
        : err instanceof BodyTooLargeError
          ? `a success larger than daybook reads, cut off after its first ${bytes} bytes; ${presumed}`
          : err instanceof TimeoutError
            ? `a success cut off by the timeout after its first ${bytes} bytes; ${presumed}`
            : err instanceof NetworkError
              ? `the answer broke off in transit after its first ${bytes} bytes; ${presumed}`
              : `the answer broke off or came malformed after its first ${bytes} bytes; ${presumed}`;
  } else if (err instanceof UnexpectedResponseError && err.response?.bodyText) {
    let body: unknown;
    try {
      body = JSON.parse(err.response.bodyText);
    } catch {
      return null;
    }
    if (!isBilledSuccess(body)) return null;
    usage = usageOf(body);
    const content = (body as { metadata?: { content?: { PID?: unknown } } }).metadata?.content;
    pid = typeof content?.PID === 'string' && content.PID.trim() !== '' ? content.PID.trim() : null;
    note = 'a success in an undocumented shape (not applied)';
  } else {
    return null;
  }
  const paid = costOfAnswer(usage, configuredCost);
  return {
    credits: paid.credits,
    remark: paid.remark ? `${note}; ${paid.remark}` : note,
    pid,
    rawResponseId,
    billedAt: landedAt,
    runId,
  };
}

/** The booked answer of this entry's call under the claim's fence, if the booking committed. */
async function bookedAnswer(
  sql: JobDeps['sql'],
  claim: Claim,
): Promise<{ rawResponseId: number; landedAt: Date } | null> {
  const [row] = await sql<{ id: string; landed_at: Date }[]>`
    select r.id, r.landed_at from credit_ledger l join raw_responses r on r.id = l.raw_response_id
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
async function recoverLanded(deps: JobDeps, claim: Claim): Promise<Bought | null> {
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
    await sql.begin((tx) =>
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
