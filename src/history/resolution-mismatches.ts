/**
 * Answers refused by the resolution decision (src/history/resolution.ts): the decision, kept in
 * `resolution_mismatches` (not derived from the landing: `daybook rebuild` reads it back), and
 * its `resolution_mismatch` event in `enterprise_observations` (derived: rebuild writes it again
 * with `insertMismatchEvent`).
 */

import type { Sql } from '../db/connect.ts';
import type { DriverRow } from '../db/rows.ts';
import type { resolutionMismatches } from '../db/schema.ts';
import { appendEvents, observationEvent } from '../events/outbox.ts';
import { insertObservations } from './enterprise-store.ts';
import type { Expected, ResolutionVerdict } from './resolution.ts';

export type Mismatch = Extract<ResolutionVerdict, { kind: 'mismatch' }>;

export interface RefusedAnswer {
  rawResponseId: number;
  /** When it landed, by the database's clock: the event's `observed_at`. */
  landedAt: Date;
  cycle: string;
  keyword: string;
  verdict: Mismatch;
}

/** The event's detail: both codes and the name found. */
export function mismatchDetail(v: Mismatch): string {
  const wanted = [
    ...(v.expected === null ? [] : [`UNCID ${v.expected}`]),
    ...(v.expectedPid === null ? [] : [`PID ${v.expectedPid}`]),
  ].join(' and ');
  return `expected ${wanted}; the answer names ${v.foundName} (${v.found === null ? 'no UNCID' : `UNCID ${v.found}`}${v.expectedPid === null ? '' : `, PID ${v.foundPid}`})`;
}

/**
 * Records a refused answer of watch entry `watchId`, once: the decision and its event. Returns
 * false when this answer's refusal was recorded already (a retry of the same answer).
 */
export async function recordResolutionMismatch(
  sql: Sql,
  watchId: number | null,
  a: RefusedAnswer,
): Promise<boolean> {
  const inserted = await sql`
    insert into resolution_mismatches (raw_response_id, watch_id, cycle, keyword, expected_uscc, expected_pid,
                                       found_uscc, found_name, found_pid)
    values (${a.rawResponseId}, ${watchId}, ${a.cycle}, ${a.keyword}, ${a.verdict.expected}, ${a.verdict.expectedPid},
            ${a.verdict.found},
            ${a.verdict.foundName}, ${a.verdict.foundPid})
    on conflict (raw_response_id) do nothing
    returning 1`;
  if (inserted.length === 0) return false;
  await insertMismatchEvent(sql, a);
  return true;
}

/** Writes the `resolution_mismatch` event of a refused answer. */
export async function insertMismatchEvent(sql: Sql, a: RefusedAnswer): Promise<void> {
  await insertObservations(sql, [
    {
      pid: a.verdict.foundPid,
      kind: 'resolution_mismatch',
      cycle: a.cycle,
      keyword: a.keyword,
      detail: mismatchDetail(a.verdict),
      raw_response_id: a.rawResponseId,
      observed_at: a.landedAt,
    },
  ]);
  const e = observationEvent({
    pid: a.verdict.foundPid,
    kind: 'resolution_mismatch',
    cycle: a.cycle,
    keyword: a.keyword,
    detail: mismatchDetail(a.verdict),
    observedAt: a.landedAt,
    rawResponseId: a.rawResponseId,
  });
  if (e) await appendEvents(sql, [{ ...e, name: a.verdict.foundName }]);
}

/** What was expected when each refused answer was refused (a code, a PID), by raw response id. */
export async function refusedAnswerCodes(sql: Sql): Promise<Map<number, Expected>> {
  const rows = await sql<
    Pick<DriverRow<typeof resolutionMismatches>, 'raw_response_id' | 'expected_uscc' | 'expected_pid'>[]
  >`
    select raw_response_id, expected_uscc, expected_pid from resolution_mismatches`;
  return new Map(
    rows.map((r) => [Number(r.raw_response_id), { uscc: r.expected_uscc, pid: r.expected_pid }]),
  );
}
