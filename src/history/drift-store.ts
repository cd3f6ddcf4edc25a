/**
 * Records the format drift of landed answers: one row per answer and drift item in
 * raw_response_drift, and the running summary in format_drift, in one statement. The per-answer
 * key makes it idempotent (a recovered or replayed answer counts once), and only the rows that
 * were new feed the summary. Answers without drift cost nothing: no statement is sent.
 */
import { truncateTables } from '../db/bulk.ts';
import type { Sql } from '../db/connect.ts';
import { type DriftItem, detectDrift } from '../normalize/drift.ts';
import type { Operation } from '../upstream/errors.ts';

/** A landed answer to check for drift. */
export interface LandedAnswer {
  rawResponseId: number;
  operation: Operation;
  params: Record<string, string>;
  body: unknown;
  fetchedAt: Date;
  /** The answer's bytes were kept apart (body_bytes): its text is not the UTF-8 the upstream documents. */
  bytesKept?: boolean;
}

/** The drift of an answer whose text could not stand for its bytes. */
const BYTES_KEPT: DriftItem = {
  field: '$body',
  kind: 'type_variant',
  seen: 'bytes that are not UTF-8 text (kept in body_bytes)',
  expected: 'UTF-8 JSON',
  records: 1,
  example: null,
};

/** Detects and records the drift of `answers`; returns how many of them showed drift. */
export async function recordDrift(sql: Sql, answers: readonly LandedAnswer[]): Promise<number> {
  let drifted = 0;
  const rows = answers.flatMap((a) => {
    const items = [...(a.bytesKept ? [BYTES_KEPT] : []), ...detectDrift(a.operation, a.params, a.body)];
    if (items.length > 0) drifted++;
    return items.map((d: DriftItem) => ({
      raw_response_id: a.rawResponseId,
      operation: a.operation,
      field: d.field,
      kind: d.kind,
      seen: d.seen,
      expected: d.expected,
      records: d.records,
      example: d.example,
      fetched_at: a.fetchedAt.toISOString(),
    }));
  });
  if (rows.length === 0) return 0;
  // Ordered inserts take the summary rows' locks in one order: concurrent workers cannot deadlock.
  await sql`
    with incoming as (
      select * from jsonb_to_recordset(${sql.json(rows)}::jsonb) as r(
        raw_response_id bigint, operation text, field text, kind text, seen text, expected text,
        records int, example text, fetched_at timestamptz)
    ), fresh as (
      insert into raw_response_drift
        (raw_response_id, operation, field, kind, seen, expected, records, example, fetched_at)
      select raw_response_id, operation, field, kind, seen, expected, records, example, fetched_at
      from incoming
      on conflict do nothing
      returning *
    )
    insert into format_drift as d (operation, field, kind, seen, expected, responses, records,
      first_seen_at, last_seen_at, first_raw_response_id, last_raw_response_id, example)
    select operation, field, kind, seen, max(expected), count(*)::int, sum(records)::int,
      min(fetched_at), max(fetched_at),
      (array_agg(raw_response_id order by fetched_at, raw_response_id))[1],
      (array_agg(raw_response_id order by fetched_at desc, raw_response_id desc))[1],
      (array_agg(example order by fetched_at desc, raw_response_id desc))[1]
    from fresh
    group by operation, field, kind, seen
    order by operation, field, kind, seen
    on conflict (operation, field, kind, seen) do update set
      expected = excluded.expected,
      responses = d.responses + excluded.responses,
      records = d.records + excluded.records,
      first_raw_response_id = case
        when (excluded.first_seen_at, excluded.first_raw_response_id) < (d.first_seen_at, d.first_raw_response_id)
        then excluded.first_raw_response_id else d.first_raw_response_id end,
      first_seen_at = least(d.first_seen_at, excluded.first_seen_at),
      last_raw_response_id = case
        when (excluded.last_seen_at, excluded.last_raw_response_id) > (d.last_seen_at, d.last_raw_response_id)
        then excluded.last_raw_response_id else d.last_raw_response_id end,
      example = case
        when (excluded.last_seen_at, excluded.last_raw_response_id) > (d.last_seen_at, d.last_raw_response_id)
        then excluded.example else d.example end,
      last_seen_at = greatest(d.last_seen_at, excluded.last_seen_at)`;
  return drifted;
}

/** One row of the drift report (a type alias: it prints as a plain record). */
export type DriftRow = {
  operation: string;
  field: string;
  kind: string;
  seen: string;
  expected: string;
  responses: number;
  records: number;
  first_seen_at: Date;
  last_seen_at: Date;
  example: string | null;
};

/** The drift seen, newest first; `since` keeps what was last seen on or after it. */
export async function driftReport(
  sql: Sql,
  options: { operation?: string; since?: Date; limit?: number } = {},
): Promise<DriftRow[]> {
  return sql<DriftRow[]>`
    select operation, field, kind, seen, expected, responses, records, first_seen_at, last_seen_at, example
    from format_drift
    where true
      ${options.operation ? sql`and operation = ${options.operation}` : sql``}
      ${options.since ? sql`and last_seen_at >= ${options.since}` : sql``}
    order by last_seen_at desc, operation, kind, field, seen
    ${options.limit ? sql`limit ${options.limit}` : sql``}`;
}

/** The drift tables, derived from the raw landing: what a rebuild empties before it replays. */
export const DRIFT_DERIVED_TABLES = ['raw_response_drift', 'format_drift'] as const;

/** Empties the drift tables for a rebuild (in its transaction; it writes them all again). */
export async function emptyDrift(tx: Sql): Promise<void> {
  await truncateTables(tx, DRIFT_DERIVED_TABLES);
}

/** The drift seen, counted by kind, and when it was last seen: a computed shape of `format_drift`. */
export interface DriftTotals {
  unknown: number;
  missing: number;
  variants: number;
  last_seen_at: Date | null;
}

/** The drift seen in all: fields not in the spec, fields missing, values of another type. */
export async function driftTotals(sql: Sql): Promise<DriftTotals | undefined> {
  const [totals] = await sql<DriftTotals[]>`
    select count(*) filter (where kind = 'unknown_field')::int as unknown,
           count(*) filter (where kind = 'missing_field')::int as missing,
           count(*) filter (where kind = 'type_variant')::int as variants,
           max(last_seen_at) as last_seen_at
    from format_drift`;
  return totals;
}
