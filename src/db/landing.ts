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
  /** The bytes as received, when the text cannot stand for them (see ResponseContext.bodyBytes). */
  bodyBytes?: Uint8Array | null;
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
    bodyBytes: exchange.bodyBytes ?? null,
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
    bodyBytes: error.response?.bodyBytes ?? null,
    outcome: error.code,
    fetchedAt: error.response?.fetchedAt ?? new Date(),
    durationMs: error.response?.durationMs ?? null,
  };
}

/**
 * Which column holds the body: JSON goes to body_json, parsed by Postgres from the text as
 * received, so numbers keep every digit (jsonb keeps them as numeric; a JavaScript parse would
 * round them); anything else goes to body_text verbatim. JSON that jsonb refuses (a \u0000
 * escape, nesting deeper than the server walks) lands as text too.
 */
function isJson(text: string | null): text is string {
  if (text === null || text.trim() === '') return false;
  if (text.includes('\\u0000')) return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** SQLSTATEs of a body jsonb will not hold: bad escape, too deep, too large a value. */
const JSONB_REFUSED = new Set(['22P02', '22P05', '54001', '54000', '22003', '2202E']);

/** A landed answer: its id and when it landed, by the database's clock. */
export interface Landed {
  id: number;
  landedAt: Date;
}

/**
 * Lands rows, each exactly as received, and returns their ids and landing times, in order. A
 * landing never fails for what an answer holds: a body jsonb refuses lands as text, and bytes
 * text cannot stand for (`bodyBytes`) land as bytes.
 */
export async function landRaw(sql: Sql, rows: readonly LandingRow[]): Promise<Landed[]> {
  const out: Landed[] = [];
  for (const r of rows) {
    const json = isJson(r.bodyText);
    try {
      out.push(await landOne(sql, r, json));
    } catch (err) {
      if (!json || !JSONB_REFUSED.has(String((err as { code?: unknown }).code))) throw err;
      out.push(await landOne(sql, r, false));
    }
  }
  return out;
}

async function landOne(sql: Sql, r: LandingRow, asJson: boolean): Promise<Landed> {
  const text = r.bodyText;
  const sha256 = text === null ? null : createHash('sha256').update(text).digest('hex');
  const bytes = r.bodyBytes ? Buffer.from(r.bodyBytes) : null;
  const land = async (q: Sql) => {
    const [row] = await q<{ id: string; landed_at: Date }[]>`
      insert into raw_responses (run_id, cycle, operation, params, http_status, body_json, body_text, body_bytes,
                                 sha256, outcome, fetched_at, duration_ms)
      values (${r.runId}, ${r.cycle}, ${r.operation}, ${q.json(r.params)}, ${r.httpStatus},
              ${asJson ? text : null}::text::jsonb, ${asJson ? null : text}, ${bytes}, ${sha256}, ${r.outcome},
              ${r.fetchedAt}, ${r.durationMs})
      returning id, landed_at`;
    return { id: Number(row?.id), landedAt: row?.landed_at as Date };
  };
  // In a savepoint when inside a transaction, so a refused jsonb does not abort it.
  if (!('begin' in sql)) return (sql as postgres.TransactionSql).savepoint((sp) => land(sp));
  return land(sql);
}
