/**
 * The enterprise job: refresh one watched enterprise in one cycle. The purchase protocol
 * (src/purchase/protocol.ts) claims the entry, buys at most one answer and books it; this job
 * asks it for the next step, hands each answer to history (src/history/ingest.ts), tells the
 * planner what the answer says of the entry's change rate, follows its shareholders, and reports.
 * It writes no table and holds no SQL of its own.
 */

import { z } from 'zod';
import { isConnectionLoss } from '../src/db/outage.ts';
import { applyEnterpriseAnswer, type EnterpriseIngestResult, ingestFailure } from '../src/history/ingest.ts';
import { noteRefresh, refreshObservation } from '../src/plan/store.ts';
import type { Claim } from '../src/purchase/fetches.ts';
import { settledMark } from '../src/purchase/fetches.ts';
import {
  type AbandonOutcome,
  abandonEntry,
  type Bought,
  buyEntry,
  claimEntry,
  completePurchase,
  ENTERPRISE_KIND,
  failUnusable,
  holdingLease,
  type PurchaseReport,
  patiently,
  refuseAnswer,
  settleFailure,
} from '../src/purchase/protocol.ts';
import { ClaimHeldError } from '../src/terms/job-errors.ts';
import { followShareholders } from '../src/watch/related.ts';
import { expectedOf } from '../src/watch/store.ts';
import type { JobDeps, JobReport } from './deps.ts';

export const ENTERPRISE_JOB = ENTERPRISE_KIND;

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
    const got = await claimEntry(deps, data.cycle, data.watchId, jobId);
    if ('report' in got) return got.report;
    // Another holder buys it now: the runtime looks again once its lease lapses (no attempt used).
    if ('held' in got) throw new ClaimHeldError(got.held.detail, got.held.until);
    const { claim } = got;
    return await holdingLease(deps.sql, claim, deps.config.DAYBOOK_JOB_LOCK_MS, (lost) =>
      refresh(deps, claim, jobId, lastAttempt, lost),
    );
  } finally {
    // Settling the last entry of the cycle asks for the cycle-complete step (digest, export).
    await askCycleComplete(deps, data.cycle);
  }
}

/**
 * The queue gave up on the entry's job (its worker died too often): the entry fails for the cycle
 * (src/purchase/protocol.ts `abandonEntry`). Settling the last entry asks for the cycle-complete step.
 */
export async function abandonEnterprise(
  deps: JobDeps,
  data: EnterpriseJobData,
  jobId: string,
  reason: string,
): Promise<AbandonOutcome> {
  try {
    return await abandonEntry(deps, data.cycle, data.watchId, jobId, reason);
  } finally {
    await askCycleComplete(deps, data.cycle);
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

/** The claimed entry bought (or recovered), its answer handed to history, the outcome reported. */
async function refresh(
  deps: JobDeps,
  claim: Claim,
  jobId: string,
  lastAttempt: boolean,
  lostLease: () => boolean,
): Promise<PurchaseReport> {
  const next = await buyEntry(deps, claim, jobId, lostLease);
  const entity = claim.keyword;
  switch (next.step) {
    case 'done':
      return next.report;
    case 'failed': {
      // History lands the failure (its drift, a keyword that found nothing any more), then the
      // protocol books what it may have cost and decides.
      const landed = await ingestFailure(deps.sql, next.err, { runId: next.runId, cycle: claim.cycle });
      return settleFailure(deps, { claim, runId: next.runId, lastAttempt }, next.err, landed);
    }
    case 'apply': {
      const { bought, runId } = next;
      const outcome = await useAnswer(deps, claim, runId, bought);
      if (next.recovered)
        return {
          outcome: 'succeeded',
          entity,
          credits: bought.credits,
          detail: 'recovered from a landed answer',
        };
      return { ...outcome, entity, credits: bought.credits };
    }
  }
}

/**
 * Applies a booked answer to history and completes the purchase. An answer history cannot apply
 * fails the entry for the cycle (`failUnusable`); one about another enterprise than the entry's
 * expected company is refused (`refuseAnswer`).
 */
async function useAnswer(
  deps: JobDeps,
  claim: Claim,
  runId: number,
  b: Bought,
): Promise<{ outcome: 'succeeded'; counts: Record<string, number> }> {
  const { sql } = deps;
  let ingest: EnterpriseIngestResult;
  try {
    ingest = await patiently(deps, `run-${runId}`, claim, async () => {
      const expected = await expectedOf(sql, claim.watchId, b.rawResponseId);
      return applyEnterpriseAnswer(
        sql,
        b.result,
        { id: b.rawResponseId, landedAt: b.landedAt },
        claim.keyword,
        { runId, cycle: claim.cycle },
        { watchId: claim.watchId, ...expected },
      );
    });
  } catch (err) {
    if (isConnectionLoss(err)) throw err;
    return failUnusable(sql, claim, runId, b, err);
  }
  if (ingest.mismatch) return refuseAnswer(sql, claim, runId, b, ingest.mismatch);
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
      refreshObservation(accepted),
      deps.config.DAYBOOK_MAX_STALENESS_DAYS,
    );
    await completePurchase(tx, claim, runId, b, { pid: accepted.pid, uncid: accepted.uncid, counts });
  });
  if (accepted.pid !== null) await followShareholders(sql, deps.log, accepted.pid);
  return { outcome: 'succeeded', counts };
}
