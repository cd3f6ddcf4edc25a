/**
 * The storage core's entry points: land an upstream outcome, then normalize and persist it.
 * Landing commits on its own first, so the raw answer survives whatever happens next; the
 * normalized writes of one batch then go in one transaction. Jobs, rebuilds and tests all
 * come through here. History is ordered by the landing time (the database's clock), never by the
 * clock of the machine that made the call.
 */

import type postgres from 'postgres';
import type { Sql } from '../db/connect.ts';
import { type Landed, landingOfError, landingOfExchange, landRaw } from '../landing/landing.ts';
import { cohortKey } from '../normalize/cohort.ts';
import { normalizeEnterprise } from '../normalize/enterprise.ts';
import { normalizeProduct, normalizeProductList } from '../normalize/product.ts';
import type { Exchange, UpstreamResult } from '../upstream/client.ts';
import { NotFoundError, UnexpectedResponseError, type UpstreamError } from '../upstream/errors.ts';
import type { EnterpriseSuccess, ProductDetailSuccess, ProductListSuccess } from '../upstream/schemas.ts';
import { recordDrift } from './drift-store.ts';
import { applyEnterprises, disappearKeyword, type EnterpriseApplySummary } from './enterprise-store.ts';
import { applyProductPulls, type ProductApplySummary } from './product-store.ts';
import { resolutionVerdict } from './resolution.ts';
import { type Mismatch, recordResolutionMismatch } from './resolution-mismatches.ts';

export interface IngestContext {
  runId: number | null;
  cycle: string;
}

export interface EnterpriseIngestResult {
  rawResponseId: number;
  /** When the answer landed, by the database's clock. */
  landedAt: Date;
  pid: string | null;
  /** The answer's UNCID (cleaned; null when it carries none). */
  uncid: string | null;
  summary: EnterpriseApplySummary | null;
  /** Set when the answer was refused (not applied): it names another enterprise than expected. */
  mismatch?: Mismatch;
  /** The enterprise's change-rate cohort (src/plan/estimate.ts), as the answer shows it. */
  cohort: string;
  /** Its last approval (APPRDATE) and establishment (ESDATE) dates, YYYY-MM-DD, for the estimate. */
  approval: string | null;
  established: string | null;
}

/** What the watch entry an answer was bought for expects of it. */
export interface Expectation {
  watchId: number | null;
  /** The unified social credit code the answer must carry; null accepts any. */
  uscc: string | null;
  /** The PID it must be about (a watched shareholder's); null or absent accepts any. */
  pid?: string | null;
}

/** Lands an enterprise answer and applies it to history. */
export async function ingestEnterpriseSuccess(
  sql: postgres.Sql,
  result: UpstreamResult<EnterpriseSuccess>,
  keyword: string,
  ctx: IngestContext,
): Promise<EnterpriseIngestResult> {
  const landed = await landExchange(sql, result.exchange, ctx);
  return applyEnterpriseAnswer(sql, result, landed, keyword, ctx);
}

/** Lands a successful exchange exactly as received (commits on its own). */
export async function landExchange(
  sql: postgres.Sql,
  exchange: Exchange,
  ctx: IngestContext,
): Promise<Landed> {
  const [landed] = await landRaw(sql, [landingOfExchange(exchange, ctx.runId, ctx.cycle)]);
  return landed as Landed;
}

/**
 * Records the drift of a landed enterprise answer and applies it to history, in one transaction,
 * unless the resolution decision (src/history/resolution.ts) refuses it for naming an enterprise
 * with another code than `expect.uscc`: then the refusal and its event are recorded instead, and
 * nothing of the answer reaches history.
 */
export async function applyEnterpriseAnswer(
  sql: postgres.Sql,
  result: UpstreamResult<EnterpriseSuccess>,
  landed: Landed,
  keyword: string,
  ctx: IngestContext,
  expect: Expectation = { watchId: null, uscc: null },
): Promise<EnterpriseIngestResult> {
  const { id: rawId, landedAt } = landed;
  await recordDriftOf(sql, rawId, result.exchange);
  const normalized = normalizeEnterprise(result.data.metadata.content);
  const base = {
    rawResponseId: rawId,
    landedAt,
    pid: normalized.pid,
    uncid: normalized.uncid,
    cohort: cohortKey(normalized),
    approval: normalized.apprDate,
    established: normalized.esDate,
  };
  const verdict = resolutionVerdict(expect, normalized);
  if (verdict.kind === 'mismatch') {
    await sql.begin((tx) =>
      recordResolutionMismatch(tx, expect.watchId, {
        rawResponseId: rawId,
        landedAt,
        cycle: ctx.cycle,
        keyword,
        verdict,
      }),
    );
    return { ...base, summary: null, mismatch: verdict };
  }
  const summary = await sql.begin((tx) =>
    applyEnterprises(tx, [
      { normalized, fetchedAt: landedAt, rawResponseId: rawId, cycle: ctx.cycle, keyword },
    ]),
  );
  return { ...base, summary };
}

/**
 * Lands a failed call. When it is not_found for a keyword that resolved to an enterprise before,
 * that enterprise is recorded as disappeared.
 */
export async function ingestFailure(
  sql: postgres.Sql,
  error: UpstreamError,
  ctx: IngestContext,
): Promise<Landed> {
  const [landed] = await landRaw(sql, [landingOfError(error, ctx.runId, ctx.cycle)]);
  const rawId = (landed as Landed).id;
  // A JSON success the schema refused (a required field gone) is drift too.
  if (error instanceof UnexpectedResponseError && error.response?.bodyText) {
    await recordDriftOf(sql, rawId as number, {
      operation: error.request.operation,
      params: error.request.params,
      bodyJson: parseJsonOrUndefined(error.response.bodyText),
      fetchedAt: error.response.fetchedAt,
      bodyBytes: error.response.bodyBytes ?? null,
    });
  }
  const keyword = error.request.params.ent_name;
  if (error instanceof NotFoundError && keyword !== undefined) {
    await sql.begin((tx) =>
      disappearKeyword(tx, {
        keyword,
        fetchedAt: (landed as Landed).landedAt,
        rawResponseId: rawId,
        cycle: ctx.cycle,
      }),
    );
  }
  return landed as Landed;
}

/** Lands a day's list and applies its products, snapshots and comments. */
export async function ingestProductList(
  sql: postgres.Sql,
  result: UpstreamResult<ProductListSuccess>,
  listDate: string,
  ctx: IngestContext,
): Promise<{ rawResponseId: number; summary: ProductApplySummary }> {
  const landed = await landExchange(sql, result.exchange, ctx);
  return applyProductListAnswer(sql, result, listDate, landed);
}

/** Records the drift of a landed list and applies its products, snapshots and comments. */
export async function applyProductListAnswer(
  sql: postgres.Sql,
  result: UpstreamResult<ProductListSuccess>,
  listDate: string,
  landed: Landed,
): Promise<{ rawResponseId: number; summary: ProductApplySummary }> {
  const { id: rawId, landedAt } = landed;
  await recordDriftOf(sql, rawId, result.exchange);
  const list = normalizeProductList(result.data.metadata, listDate, landedAt);
  const summary = await sql.begin((tx) =>
    applyProductPulls(tx, [{ ...list, fetchedAt: landedAt, rawResponseId: rawId }]),
  );
  return { rawResponseId: rawId, summary };
}

/** Lands a product detail and applies it (a version, comments; no trending snapshot). */
export async function ingestProductDetail(
  sql: postgres.Sql,
  result: UpstreamResult<ProductDetailSuccess>,
  ctx: IngestContext,
): Promise<{ rawResponseId: number; summary: ProductApplySummary }> {
  const landed = await landExchange(sql, result.exchange, ctx);
  return applyProductDetailAnswer(sql, result, landed);
}

/** Records the drift of a landed product detail and applies it (a version, comments). */
export async function applyProductDetailAnswer(
  sql: postgres.Sql,
  result: UpstreamResult<ProductDetailSuccess>,
  landed: Landed,
): Promise<{ rawResponseId: number; summary: ProductApplySummary }> {
  const { id: rawId, landedAt } = landed;
  await recordDriftOf(sql, rawId, result.exchange);
  const product = normalizeProduct(result.data.metadata);
  const summary = await sql.begin((tx) =>
    applyProductPulls(tx, [
      { products: [product], snapshots: [], fetchedAt: landedAt, rawResponseId: rawId },
    ]),
  );
  return { rawResponseId: rawId, summary };
}

/** Records the format drift of a landed answer (nothing is written when it has none). */
async function recordDriftOf(
  sql: postgres.Sql,
  rawResponseId: number,
  exchange: Pick<Exchange, 'operation' | 'params' | 'bodyJson' | 'fetchedAt' | 'bodyBytes'>,
): Promise<void> {
  await recordDrift(sql, [
    {
      rawResponseId,
      operation: exchange.operation,
      params: exchange.params,
      body: exchange.bodyJson,
      fetchedAt: exchange.fetchedAt,
      bytesKept: Boolean(exchange.bodyBytes),
    },
  ]);
}

function parseJsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

export type { Sql };
