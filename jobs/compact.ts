/**
 * Bookkeeping compaction: what daybook needs row by row only for a while. Every fetch writes a run,
 * a `cycle_fetches` row and a sighting; at 100,000 watched companies that is 300,000 rows a day
 * that nothing reads row by row once their cycle is over. After DAYBOOK_BOOKKEEPING_DAYS (cycles
 * older than that many days before the current one):
 *
 * - `cycle_fetches` rows are deleted: they are the claims and progress of a cycle long finished
 *   (what was bought is in the ledger, what was answered in the landing);
 * - enterprise runs that ended without a failure are added up into `run_summaries` (one row per
 *   cycle, kind and outcome) and deleted; failed runs stay, and so do all other kinds;
 * - enterprise and product sightings superseded by a later sighting of the same company are
 *   deleted (the latest state of each stays; a warehouse loading exports has had them);
 * - the booked ledger entries of enterprise calls move, each as it was, to their narrow compacted
 *   form (`ledger_compacted`): their claims are gone, so nothing writes them again, and the
 *   unique key and lookups a running cycle needs are not kept for them. `credit_ledger` reads
 *   both; every entry stays.
 *
 * Kept forever, never compacted away: the raw landing (every call and every distinct body), every
 * credit ledger entry, versions, changes, observations, events, the watchlist. The plan job runs
 * this after each plan; `daybook storage compact` runs it by hand. It is idempotent and safe beside workers
 * (it only touches finished cycles). Each table's rows are removed by the module that owns it;
 * this step only orders them, under one lock.
 */
import { inTransaction, type Sql } from '../src/db/connect.ts';
import { dropSupersededEnterpriseSightings } from '../src/history/enterprise-store.ts';
import { dropSupersededProductSightings } from '../src/history/product-store.ts';
import { markSightings, sightingMarkBefore } from '../src/history/sightings.ts';
import { dropErrorAnswers } from '../src/landing/landing.ts';
import { summarizeRuns } from '../src/landing/runs.ts';
import { compactFetches, compactLedger } from '../src/purchase/fetches.ts';
import { addDays } from '../src/time/cycles.ts';

export interface CompactionSummary {
  /** Cycles before this one were compacted. */
  before: string;
  cycleFetches: number;
  /** Booked enterprise entries moved to their compacted form (`ledger_compacted`). */
  ledgerEntries: number;
  runs: number;
  summaries: number;
  sightings: number;
  /** Error answers dropped by retention, and the error bodies only they held. */
  errorCalls: number;
  errorBodies: number;
}

/** Compacts the bookkeeping of cycles older than `keepDays` before `cycle` (0: keep everything). */
export async function compactBookkeeping(
  sql: Sql,
  cycle: string,
  keepDays: number,
  errorRetentionDays = 0,
): Promise<CompactionSummary> {
  const before = addDays(cycle, -keepDays);
  const summary: CompactionSummary = {
    before,
    cycleFetches: 0,
    ledgerEntries: 0,
    runs: 0,
    summaries: 0,
    sightings: 0,
    errorCalls: 0,
    errorBodies: 0,
  };
  if (errorRetentionDays > 0) {
    const dropped = await inTransaction(sql, async (tx) => {
      await tx`select pg_advisory_xact_lock(hashtext('daybook:compact'))`;
      return dropErrorAnswers(tx, addDays(cycle, -errorRetentionDays));
    });
    summary.errorCalls = dropped.calls;
    summary.errorBodies = dropped.bodies;
  }
  if (keepDays <= 0) return summary;
  await inTransaction(sql, async (tx) => {
    // One compaction at a time (two plan jobs of two cycles may end together).
    await tx`select pg_advisory_xact_lock(hashtext('daybook:compact'))`;
    summary.cycleFetches = await compactFetches(tx, before);
    summary.ledgerEntries = await compactLedger(tx, before);
    const summed = await summarizeRuns(tx, before);
    summary.runs = summed.runs;
    summary.summaries = summed.summaries;
    // Sightings: where they stand now is marked for this cycle; the superseded ones written before
    // the mark of the newest cycle older than the window go.
    await markSightings(tx, cycle);
    const mark = await sightingMarkBefore(tx, before);
    if (mark)
      summary.sightings =
        (await dropSupersededEnterpriseSightings(tx, mark.enterprise)) +
        (await dropSupersededProductSightings(tx, mark.product));
  });
  return summary;
}
