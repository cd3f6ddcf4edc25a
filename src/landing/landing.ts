/**
 * The raw landing: every upstream answer (success or error) is written before anything else
 * happens to it, so nothing is lost when a later step fails or the format drifts: one row per call
 * in raw_responses, pointing at its body in raw_bodies, where each distinct body is stored once
 * (an unchanged enterprise answers the same body every day), and at its parameters in raw_params,
 * each distinct set stored once (the database finds or adds it: `daybook_raw_params`). The API key
 * is a header and is never part of what is landed.
 */
import { createHash } from 'node:crypto';
import type postgres from 'postgres';
import type { Sql } from '../db/connect.ts';
import type { DriverRow } from '../db/rows.ts';
import type { rawBodies, rawResponses } from '../db/schema.ts';
import type { Exchange } from '../upstream/client.ts';
import type { Operation, UpstreamError } from '../upstream/errors.ts';

/** A stored body's id, with its key computed as hex (`encode(sha256, 'hex') as sha`). */
type BodyKey = Pick<DriverRow<typeof rawBodies>, 'id'> & { sha: string };

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
  const refused = (err: unknown) => JSONB_REFUSED.has(String((err as { code?: unknown }).code));
  const batch = await landBatch(sql, rows, false).catch((err: unknown) => {
    if (refused(err)) return null;
    throw err;
  });
  if (batch) return batch;
  // A body jsonb refuses: the rows land one by one, that one as text.
  const out: Landed[] = [];
  for (const r of rows) {
    const one = await landBatch(sql, [r], false).catch(async (err: unknown) => {
      if (!refused(err)) throw err;
      return landBatch(sql, [r], true);
    });
    out.push(...one);
  }
  return out;
}

/** The sha256 that keys a body: of its bytes when they are kept, else of its UTF-8 text. */
function bodyKey(text: string | null, bytes: Buffer | null): Buffer {
  return createHash('sha256')
    .update(bytes ?? Buffer.from(text ?? '', 'utf8'))
    .digest();
}

/**
 * Rows in a few statements: the bodies not stored yet in one insert (each distinct body once, by
 * its sha256; a body another landing stores meanwhile is waited for and read), the calls in
 * another, in order. `asText` lands every body as text. Throws what Postgres throws (a body
 * jsonb refuses: the caller lands that one as text); in a transaction, inside a savepoint, so the
 * transaction goes on.
 */
async function landBatch(sql: Sql, rows: readonly LandingRow[], asText: boolean): Promise<Landed[]> {
  const items = rows.map((r) => {
    const bytes = r.bodyBytes ? Buffer.from(r.bodyBytes) : null;
    const hasBody = r.bodyText !== null || bytes !== null;
    return {
      r,
      bytes,
      asJson: !asText && isJson(r.bodyText),
      sha: hasBody ? bodyKey(r.bodyText, bytes).toString('hex') : null,
    };
  });
  const run = async (q: Sql): Promise<Landed[]> => {
    const shas = [...new Set(items.flatMap((i) => (i.sha ? [i.sha] : [])))];
    const ids = new Map<string, number>();
    const find = async (wanted: string[]) => {
      if (wanted.length === 0) return;
      const found = await q<BodyKey[]>`
        select id, encode(sha256, 'hex') as sha from raw_bodies
        where sha256 = any(select decode(x, 'hex') from unnest(${wanted}::text[]) x)`;
      for (const f of found) ids.set(f.sha, Number(f.id));
    };
    await find(shas);
    const seen = new Set<string>();
    const missing = items.filter((i) => {
      if (i.sha === null || ids.has(i.sha) || seen.has(i.sha)) return false;
      seen.add(i.sha);
      return true;
    });
    if (missing.length > 0) {
      const made = await q<BodyKey[]>`
        insert into raw_bodies (sha256, body_json, body_text, body_bytes)
        select decode(sha, 'hex'), j::jsonb, t, decode(b, 'base64')
        from unnest(${missing.map((i) => i.sha as string)}::text[],
                    ${missing.map((i) => (i.asJson ? i.r.bodyText : null))}::text[],
                    ${missing.map((i) => (i.asJson ? null : i.r.bodyText))}::text[],
                    ${missing.map((i) => (i.bytes ? i.bytes.toString('base64') : null))}::text[]) as u(sha, j, t, b)
        on conflict (sha256) do nothing
        returning id, encode(sha256, 'hex') as sha`;
      for (const m of made) ids.set(m.sha, Number(m.id));
      // Stored meanwhile by another landing (committed: the insert waited for it).
      await find(missing.flatMap((i) => (i.sha && !ids.has(i.sha) ? [i.sha] : [])));
    }
    const col = <T>(f: (i: (typeof items)[number]) => T) => items.map(f);
    const landed = await q<Pick<DriverRow<typeof rawResponses>, 'id' | 'landed_at'>[]>`
      insert into raw_responses (run_id, cycle, operation, params_id, http_status, body_id, outcome, fetched_at, duration_ms)
      select run_id, cycle, operation, daybook_raw_params(params::jsonb), http_status, body_id, outcome, fetched_at,
             duration_ms
      from unnest(${col((i) => i.r.runId)}::bigint[], ${col((i) => i.r.cycle)}::date[], ${col((i) => i.r.operation)}::text[],
                  ${col((i) => JSON.stringify(i.r.params))}::text[], ${col((i) => i.r.httpStatus)}::smallint[],
                  ${col((i) => (i.sha ? (ids.get(i.sha) ?? null) : null))}::bigint[], ${col((i) => i.r.outcome)}::text[],
                  ${col((i) => i.r.fetchedAt.toISOString())}::timestamptz[], ${col((i) => i.r.durationMs)}::int[])
           with ordinality as u(run_id, cycle, operation, params, http_status, body_id, outcome, fetched_at, duration_ms, n)
      order by n
      returning id, landed_at`;
    return landed.map((l) => ({ id: Number(l.id), landedAt: l.landed_at })).sort((a, b) => a.id - b.id);
  };
  if (!('begin' in sql)) return (sql as postgres.TransactionSql).savepoint((sp) => run(sp));
  return run(sql);
}

/** The outcomes a rebuild replays (src/history/rebuild.ts): never dropped by retention. */
const REPLAYED = ['success', 'not_found', 'unexpected_response'];

/**
 * Every column that points at a landed call: a call one of them names is never dropped. (Kept in
 * step with the schema by test/history/storage.test.ts, which compares it with the foreign keys.)
 */
export const RAW_REFERENCES: readonly (readonly [string, string])[] = [
  ['enterprise_versions', 'raw_response_id'],
  ['enterprise_observations', 'raw_response_id'],
  ['enterprises', 'last_seen_raw_id'],
  ['product_versions', 'raw_response_id'],
  ['product_comments', 'raw_response_id'],
  ['trending_snapshots', 'raw_response_id'],
  ['ledger_entries', 'raw_response_id'],
  ['cycle_fetches', 'raw_response_id'],
  ['resolution_mismatches', 'raw_response_id'],
  ['keyword_resolutions', 'raw_response_id'],
  ['raw_response_drift', 'raw_response_id'],
  ['format_drift', 'first_raw_response_id'],
  ['format_drift', 'last_raw_response_id'],
  ['events', 'raw_response_id'],
];

/**
 * Retention of redundant error answers: calls of cycles before `before` whose outcome is an error a
 * rebuild does not replay (a rate limit, a server error, a timeout …), that were not billed and
 * that nothing points to, are dropped, with the error bodies no other call holds. An answer a
 * version, change, observation, event or ledger row points to is never dropped, and neither is
 * anything a rebuild reads, so a rebuild after retention equals one before.
 */
export async function dropErrorAnswers(tx: Sql, before: string): Promise<{ calls: number; bodies: number }> {
  const notPointedTo = RAW_REFERENCES.map(
    ([table, column]) => `not exists (select 1 from ${table} x where x.${column} = r.id)`,
  ).join(' and ');
  const gone = await tx.unsafe<Pick<DriverRow<typeof rawResponses>, 'body_id'>[]>(
    `delete from raw_responses r
     where r.id in (
       select id from raw_responses
       where outcome <> 'success' and outcome not in (${REPLAYED.map((o) => `'${o}'`).join(', ')})
         and cycle < $1::date
       limit 100000)
       and ${notPointedTo}
     returning r.body_id`,
    [before],
  );
  const bodies = [...new Set(gone.flatMap((g) => (g.body_id === null ? [] : [g.body_id])))];
  if (bodies.length === 0) return { calls: gone.length, bodies: 0 };
  // A body goes when no call holds it any more: no unsuccessful call (by the partial index), and
  // it is no success's (a success is success-shaped; such a body is never dropped).
  const dropped = await tx`
    delete from raw_bodies b where b.id = any(${bodies}::bigint[])
      and not exists (select 1 from raw_responses r where r.outcome <> 'success' and r.body_id = b.id)
      and coalesce(b.body_json->>'status', '') <> 'success' and coalesce(b.body_json->>'result', '') <> 'success'`;
  return { calls: gone.length, bodies: dropped.count };
}

/** A count of rows: a computed shape. */
interface Count {
  n: number;
}

/** How many answers landed with one of `outcomes` (a rebuild's progress counts them first). */
export async function countLanded(sql: Sql, outcomes: readonly string[]): Promise<number> {
  const [count] = await sql<Count[]>`
      select count(*)::int as n from raw_responses where outcome in ${sql(outcomes as string[])}`;
  return count?.n ?? 0;
}
