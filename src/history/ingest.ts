/**
 * The storage core's entry points: land an upstream outcome, then normalize and persist it.
 * Landing commits on its own first, so the raw answer survives whatever happens next; the
 * normalized writes of one batch then go in one transaction. Jobs, rebuilds and tests all
 * come through here.
 */
import type postgres from 'postgres';
import type { Sql } from '../db/connect.ts';
import { landingOfError, landingOfExchange, landRaw } from '../db/landing.ts';
import { normalizeEnterprise } from '../normalize/enterprise.ts';
import { normalizeProduct, normalizeProductList } from '../normalize/product.ts';
import type { Exchange, UpstreamResult } from '../upstream/client.ts';
import { NotFoundError, UnexpectedResponseError, type UpstreamError } from '../upstream/errors.ts';
import type { EnterpriseSuccess, ProductDetailSuccess, ProductListSuccess } from '../upstream/schemas.ts';
import { recordDrift } from './drift-store.ts';
import { applyEnterprises, type EnterpriseApplySummary, markDisappeared } from './enterprise-store.ts';
import { applyProductPulls, type ProductApplySummary } from './product-store.ts';

export interface IngestContext {
  runId: number | null;
  cycle: string;
}

export interface EnterpriseIngestResult {
  rawResponseId: number;
  pid: string | null;
  credits: number;
  summary: EnterpriseApplySummary | null;
}

/** Lands an enterprise answer and applies it to history. */
export async function ingestEnterpriseSuccess(
  sql: postgres.Sql,
  result: UpstreamResult<EnterpriseSuccess>,
  keyword: string,
  ctx: IngestContext,
): Promise<EnterpriseIngestResult> {
  const [rawId] = await landRaw(sql, [landingOfExchange(result.exchange, ctx.runId, ctx.cycle)]);
  await recordDriftOf(sql, rawId as number, result.exchange);
  const normalized = normalizeEnterprise(result.data.metadata.content);
  const summary = await sql.begin((tx) =>
    applyEnterprises(tx, [
      {
        normalized,
        fetchedAt: result.exchange.fetchedAt,
        rawResponseId: rawId ?? null,
        cycle: ctx.cycle,
        keyword,
      },
    ]),
  );
  return {
    rawResponseId: rawId as number,
    pid: normalized.pid,
    credits: result.data.metadata.usage?.credits ?? 0,
    summary,
  };
}

/**
 * Lands a failed call. When it is not_found for a keyword that resolved to `knownPid` before,
 * the enterprise is recorded as disappeared.
 */
export async function ingestFailure(
  sql: postgres.Sql,
  error: UpstreamError,
  ctx: IngestContext,
  knownPid: string | null = null,
): Promise<number> {
  const [rawId] = await landRaw(sql, [landingOfError(error, ctx.runId, ctx.cycle)]);
  // A JSON success the schema refused (a required field gone) is drift too.
  if (error instanceof UnexpectedResponseError && error.response?.bodyText) {
    await recordDriftOf(sql, rawId as number, {
      operation: error.request.operation,
      params: error.request.params,
      bodyJson: parseJsonOrUndefined(error.response.bodyText),
      fetchedAt: error.response.fetchedAt,
    });
  }
  if (error instanceof NotFoundError && knownPid !== null) {
    await markDisappeared(sql, [
      {
        pid: knownPid,
        keyword: error.request.params.ent_name ?? null,
        fetchedAt: error.response?.fetchedAt ?? new Date(),
        rawResponseId: rawId ?? null,
        cycle: ctx.cycle,
      },
    ]);
  }
  return rawId as number;
}

/** Lands a day's list and applies its products, snapshots and comments. */
export async function ingestProductList(
  sql: postgres.Sql,
  result: UpstreamResult<ProductListSuccess>,
  listDate: string,
  ctx: IngestContext,
): Promise<{ rawResponseId: number; summary: ProductApplySummary }> {
  const [rawId] = await landRaw(sql, [landingOfExchange(result.exchange, ctx.runId, ctx.cycle)]);
  await recordDriftOf(sql, rawId as number, result.exchange);
  const list = normalizeProductList(result.data.metadata, listDate, result.exchange.fetchedAt);
  const summary = await sql.begin((tx) =>
    applyProductPulls(tx, [
      { ...list, fetchedAt: result.exchange.fetchedAt, rawResponseId: rawId as number },
    ]),
  );
  return { rawResponseId: rawId as number, summary };
}

/** Lands a product detail and applies it (a version, comments; no trending snapshot). */
export async function ingestProductDetail(
  sql: postgres.Sql,
  result: UpstreamResult<ProductDetailSuccess>,
  ctx: IngestContext,
): Promise<{ rawResponseId: number; summary: ProductApplySummary }> {
  const [rawId] = await landRaw(sql, [landingOfExchange(result.exchange, ctx.runId, ctx.cycle)]);
  await recordDriftOf(sql, rawId as number, result.exchange);
  const product = normalizeProduct(result.data.metadata);
  const summary = await sql.begin((tx) =>
    applyProductPulls(tx, [
      {
        products: [product],
        snapshots: [],
        fetchedAt: result.exchange.fetchedAt,
        rawResponseId: rawId as number,
      },
    ]),
  );
  return { rawResponseId: rawId as number, summary };
}

/** Records the format drift of a landed answer (nothing is written when it has none). */
async function recordDriftOf(
  sql: postgres.Sql,
  rawResponseId: number,
  exchange: Pick<Exchange, 'operation' | 'params' | 'bodyJson' | 'fetchedAt'>,
): Promise<void> {
  await recordDrift(sql, [
    {
      rawResponseId,
      operation: exchange.operation,
      params: exchange.params,
      body: exchange.bodyJson,
      fetchedAt: exchange.fetchedAt,
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
