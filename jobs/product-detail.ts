/**
 * One product's detail, asked once by hand (`daybook products get --name`): a run of its own,
 * booked in the credit ledger like a list pull (src/purchase/products.ts), landed, and applied to
 * the product's history. A detail call of a killed command is booked before this one is made.
 */
import { applyProductDetailAnswer, ingestFailure, landExchange } from '../src/history/ingest.ts';
import { databaseNow, finishRun, startRun } from '../src/landing/runs.ts';
import {
  chargeOfAnswer,
  chargeOfFailure,
  neverSent,
  openPricedCall,
  PRODUCT_DETAIL_RUN,
  recoverDetailCalls,
  settleProductCall,
} from '../src/purchase/products.ts';
import { cycleOf } from '../src/time/cycles.ts';
import type { UpstreamClient } from '../src/upstream/client.ts';
import { UpstreamError } from '../src/upstream/errors.ts';
import type { JobDeps, JobReport } from './deps.ts';

/** What a detail answer said of its product. */
export interface DetailSeen {
  productId: string;
  votes: number | null;
  comments: number | null;
}

/** Asks for the detail of `name` once; `seen` is told what the answer said of the product. */
export async function processProductDetail(
  deps: JobDeps,
  name: string,
  seen: (detail: DetailSeen) => void,
): Promise<JobReport> {
  const { config, sql, client } = deps;
  const cycle = cycleOf(await databaseNow(sql));
  await recoverDetailCalls(sql);
  const runId = await startRun(sql, { kind: PRODUCT_DETAIL_RUN, entity: name });
  const price = await openPricedCall(
    sql,
    deps.limiter,
    config,
    { runId, cycle, keyword: name, date: null },
    'asked',
  );
  const call = { runId, cycle };
  let got: Awaited<ReturnType<UpstreamClient['getProduct']>>;
  try {
    got = await client.getProduct(name);
  } catch (err) {
    if (neverSent(err)) await settleProductCall(sql, call, null, null);
    if (!(err instanceof UpstreamError)) throw err;
    const landed = await ingestFailure(sql, err, { runId, cycle });
    const charge = chargeOfFailure(err, price);
    await settleProductCall(sql, call, charge, landed);
    await finishRun(sql, runId, {
      outcome: err.errorClass === 'permanent' ? 'failed' : 'retrying',
      errorCode: err.code,
      errorMessage: err.message,
      credits: charge?.credits ?? 0,
    });
    throw err;
  }
  const landed = await landExchange(sql, got.exchange, { runId, cycle });
  const charge = chargeOfAnswer(got.exchange.bodyJson, price);
  await settleProductCall(sql, call, charge, landed);
  const { summary } = await applyProductDetailAnswer(sql, got, landed);
  const p = got.data.metadata;
  seen({
    productId: p.product_id.trim(),
    votes: p.votes_count ?? null,
    comments: p.comments_count ?? null,
  });
  const counts = {
    newVersions: summary.initial + summary.changed,
    newComments: summary.newComments,
  };
  await finishRun(sql, runId, { outcome: 'succeeded', counts, credits: charge.credits ?? 0 });
  return { outcome: 'succeeded' as const, entity: name, counts };
}
