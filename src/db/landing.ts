/**
 * The raw landing: every upstream answer (success or error) is written to raw_responses before
 * anything else happens to it, so nothing is lost when a later step fails or the format drifts.
 * The API key is a header and is never part of what is landed.
 */
import { createHash } from 'node:crypto';
import type postgres from 'postgres';
import type { Exchange } from '../upstream/client.ts';
import type { Operation, UpstreamError } from '../upstream/errors.ts';
import type { Sql } from './connect.ts';

export interface LandingRow {
  runId: number | null;
  /** The enterprise cycle the call belongs to, when it belongs to one. */
  cycle: string | null;
  operation: Operation;
  params: Record<string, string>;
  httpStatus: number | null;
  /** The body as received; null when nothing arrived. */
  bodyText: string | null;
  /** success, or the error code daybook read from the answer. */
  outcome: string;
  fetchedAt: Date;
  durationMs: number | null;
}

/** The landing row of a successful exchange. */
export function landingOfExchange(
  exchange: Exchange,
  runId: number | null,
  cycle: string | null,
): LandingRow {
  return {
    runId,
    cycle,
    operation: exchange.operation,
    params: exchange.params,
    httpStatus: exchange.httpStatus,
    bodyText: exchange.bodyText,
    outcome: 'success',
    fetchedAt: exchange.fetchedAt,
    durationMs: exchange.durationMs,
  };
}

/** The landing row of a failed call (any error class), with whatever arrived. */
export function landingOfError(error: UpstreamError, runId: number | null, cycle: string | null): LandingRow {
  return {
    runId,
    cycle,
    operation: error.request.operation,
    params: error.request.params,
    httpStatus: error.response?.httpStatus ?? null,
    bodyText: error.response?.bodyText ?? null,
    outcome: error.code,
    fetchedAt: error.response?.fetchedAt ?? new Date(),
    durationMs: error.response?.durationMs ?? null,
  };
}

/** JSON bodies go to body_json; anything else (or JSON that jsonb cannot hold) to body_text. */
function splitBody(text: string | null): { json: unknown; text: string | null } {
  if (text === null || text.trim() === '') return { json: null, text };
  // jsonb cannot hold \u0000; keep such bodies verbatim as text.
  if (text.includes('\\u0000')) return { json: null, text };
  try {
    return { json: JSON.parse(text), text: null };
  } catch {
    return { json: null, text };
  }
}

/** Lands rows in one statement; returns their ids in order. */
export async function landRaw(sql: Sql, rows: readonly LandingRow[]): Promise<number[]> {
  if (rows.length === 0) return [];
  const values = rows.map((r) => {
    const body = splitBody(r.bodyText);
    return {
      run_id: r.runId,
      cycle: r.cycle,
      operation: r.operation,
      params: sql.json(r.params),
      http_status: r.httpStatus,
      body_json: body.json === null ? null : sql.json(body.json as postgres.JSONValue),
      body_text: body.text,
      sha256: r.bodyText === null ? null : createHash('sha256').update(r.bodyText).digest('hex'),
      outcome: r.outcome,
      fetched_at: r.fetchedAt,
      duration_ms: r.durationMs,
    };
  });
  const ids = await sql<{ id: string }[]>`insert into raw_responses ${sql(values)} returning id`;
  return ids.map((r) => Number(r.id));
}
