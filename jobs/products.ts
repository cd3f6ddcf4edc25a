/**
 * Pull one day's product trending list: fetch (configured limit, at most 20), land, book the call
 * in the credit ledger (src/purchase/products.ts), normalize, snapshot.
 */
import { z } from 'zod';
import { isConnectionLoss } from '../src/db/outage.ts';
import { applyProductListAnswer, ingestFailure, landExchange } from '../src/history/ingest.ts';
import { databaseNow, finishRun, startRun } from '../src/landing/runs.ts';
import {
  chargeOfAnswer,
  chargeOfFailure,
  neverSent,
  openPricedCall,
  recoverDetailCalls,
  recoverProductCalls,
  settleProductCall,
} from '../src/purchase/products.ts';
import { FinalForCycleError } from '../src/terms/job-errors.ts';
import { addDays, cycleOf, isCalendarDate } from '../src/time/cycles.ts';
import { RateLimitedError, UpstreamError } from '../src/upstream/errors.ts';
import type { JobDeps, JobReport } from './deps.ts';

export const PRODUCTS_JOB = 'products';

export const ProductsJobData = z.object({
  date: z.string().refine(isCalendarDate, 'date must be a real calendar date YYYY-MM-DD'),
  /**
   * Which pull of the date this is: `d1` the day after (the first pull), `d2` the re-pull a day
   * later, and so on; `backfill` for a backfill. It makes the job id, so each is done once.
   */
  pull: z.string().regex(/^(d\d{1,2}|backfill)$/),
  limit: z.number().int().min(1).max(20),
  /**
   * The enterprise cycle the pull belongs to (its tick's, or the run's). Absent (a backfill, a
   * `products get`), it is the cycle of the database's clock, never of the machine's.
   */
  cycle: z.string().refine(isCalendarDate, 'cycle must be a real calendar date YYYY-MM-DD').optional(),
});
export type ProductsJobData = z.infer<typeof ProductsJobData>;

/** Deterministic job id: one pull of each kind per date. */
export function productsJobId(date: string, pull: string): string {
  return `products-${date}-${pull}`;
}

/** The scheduled pulls on `today` (a Pacific date): yesterday's first pull and re-pulls of older days. */
export function scheduledPulls(today: string, lookbackDays: number): { date: string; pull: string }[] {
  return Array.from({ length: lookbackDays }, (_, i) => ({
    date: addDays(today, -(i + 1)),
    pull: `d${i + 1}`,
  }));
}

/**
 * Runs one pull; on the `lastAttempt` a transient failure is final and the run says so.
 * `onApplied` is told the raw response of a list landed and applied (for a command that shows it).
 */
export async function processProducts(
  deps: JobDeps,
  data: ProductsJobData,
  jobId: string,
  lastAttempt = false,
  onApplied?: (rawResponseId: number) => void,
): Promise<JobReport> {
  const { sql, config } = deps;
  const cycle = data.cycle ?? cycleOf(await databaseNow(sql));
  const runId = await startRun(sql, { kind: PRODUCTS_JOB, listDate: data.date, entity: data.pull, jobId });
  // Calls of earlier runs cut short with their call under way (this job's, or another's) are
  // booked first: each once, from what they landed.
  await recoverProductCalls(sql, PRODUCTS_JOB);
  await recoverDetailCalls(sql);
  // A priced call the cycle's budget cannot take is not made: the pull fails, saying why.
  const price = await openPricedCall(
    sql,
    deps.limiter,
    config,
    { runId, cycle, keyword: data.date, date: data.date },
    'pulled',
  );
  const call = { runId, cycle };
  let result: Awaited<ReturnType<typeof deps.client.listProducts>>;
  try {
    result = await deps.client.listProducts(data.date, data.limit);
  } catch (err) {
    if (neverSent(err)) await settleProductCall(sql, call, null, null);
    if (!(err instanceof UpstreamError)) throw err;
    deps.onUpstreamCall?.('product-listing', err.code, err.response?.durationMs ?? 0);
    const landed = await ingestFailure(sql, err, { runId, cycle });
    const charge = chargeOfFailure(err, price);
    await settleProductCall(sql, call, charge, landed);
    const final = err.errorClass === 'permanent' || (lastAttempt && !(err instanceof RateLimitedError));
    await finishRun(sql, runId, {
      outcome: final ? 'failed' : 'retrying',
      errorCode: err.code,
      errorMessage:
        err.errorClass === 'transient' && final
          ? `gave up after the last attempt: ${err.message}`
          : err.message,
      credits: charge?.credits ?? 0,
    });
    throw err;
  }
  deps.onUpstreamCall?.('product-listing', 'success', result.exchange.durationMs);
  const landed = await landExchange(sql, result.exchange, { runId, cycle });
  const charge = chargeOfAnswer(result.exchange.bodyJson, price);
  await settleProductCall(sql, call, charge, landed);
  const credits = charge.credits ?? 0;
  let summary: Awaited<ReturnType<typeof applyProductListAnswer>>['summary'];
  try {
    ({ summary } = await applyProductListAnswer(sql, result, data.date, landed));
  } catch (err) {
    if (isConnectionLoss(err)) throw err;
    // A list daybook cannot store (a value Postgres refuses): landed as received, booked,
    // reported, and not pulled again by a retry, which would only meet it again.
    const reason =
      `landed (raw response ${landed.id}), not applicable: ${err instanceof Error ? err.message : String(err)}`.slice(
        0,
        1000,
      );
    await finishRun(sql, runId, {
      outcome: 'failed',
      errorCode: 'unusable_answer',
      errorMessage: reason,
      credits,
    });
    throw new FinalForCycleError(reason, { cause: err });
  }
  onApplied?.(landed.id);
  const counts = {
    products: summary.products,
    newVersions: summary.initial + summary.changed,
    snapshots: summary.snapshots,
    newComments: summary.newComments,
  };
  await finishRun(sql, runId, { outcome: 'succeeded', counts, credits });
  return { outcome: 'succeeded', entity: data.date, counts, ...(charge.credits === null ? {} : { credits }) };
}
