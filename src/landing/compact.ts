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
 *   deleted (the latest state of each stays; a warehouse loading exports has had them).
 *
 * Kept forever, never compacted: the raw landing (every call and every distinct body), the credit
 * ledger, versions, changes, observations, events, the watchlist. The plan job runs this after
 * each plan; `daybook storage compact` runs it by hand. It is idempotent and safe beside workers
 * (it only touches finished cycles).
 */
import { addDays } from '../time/cycles.ts';
import { inTransaction, type Sql } from '../db/connect.ts';

export interface CompactionSummary {
  /** Cycles before this one were compacted. */
  before: string;
  cycleFetches: number;
  runs: number;
  summaries: number;
  sightings: number;
  /** Error answers dropped by retention, and the error bodies only they held. */
  errorCalls: number;
  errorBodies: number;
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
  ['credit_ledger', 'raw_response_id'],
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
async function dropErrorAnswers(tx: Sql, before: string): Promise<{ calls: number; bodies: number }> {
  const notPointedTo = RAW_REFERENCES.map(
    ([table, column]) => `not exists (select 1 from ${table} x where x.${column} = r.id)`,
  ).join(' and ');
  const gone = await tx.unsafe<{ body_id: string | null }[]>(
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
    const fetches = await tx`delete from cycle_fetches where cycle < ${before}`;
    summary.cycleFetches = fetches.count;
    // The runs counted are those deleted (an upsert returns a summary's total, not what it added).
    const [summed] = await tx<{ runs: number; summaries: number }[]>`
      with gone as (
        delete from runs
        where cycle < ${before} and kind = 'enterprise' and outcome in ('succeeded', 'skipped', 'deferred', 'abandoned', 'paused')
        returning cycle, kind, outcome, credits, started_at, finished_at
      ), summed as (
      insert into run_summaries as s (cycle, kind, outcome, runs, credits, first_started_at, last_finished_at, seconds)
      select cycle, kind, outcome, count(*), sum(credits), min(started_at), max(finished_at),
             coalesce(sum(extract(epoch from finished_at - started_at)), 0)
      from gone group by cycle, kind, outcome
      on conflict (cycle, kind, outcome) do update set runs = s.runs + excluded.runs,
        credits = s.credits + excluded.credits,
        first_started_at = least(s.first_started_at, excluded.first_started_at),
        last_finished_at = greatest(s.last_finished_at, excluded.last_finished_at),
        seconds = s.seconds + excluded.seconds, compacted_at = now()
      returning 1)
      select (select count(*) from gone)::int as runs, (select count(*) from summed)::int as summaries`;
    summary.runs = summed?.runs ?? 0;
    summary.summaries = summed?.summaries ?? 0;
    // Sightings: where they stand now is marked for this cycle; the superseded ones written before
    // the mark of the newest cycle older than the window go.
    await tx`
      insert into compaction_marks (cycle, enterprise_sighting_id, product_sighting_id)
      values (${cycle}, (select coalesce(max(id), 0) from enterprise_sightings),
              (select coalesce(max(id), 0) from product_sightings))
      on conflict (cycle) do nothing`;
    const [mark] = await tx<{ e: string; p: string }[]>`
      select enterprise_sighting_id as e, product_sighting_id as p from compaction_marks
      where cycle <= ${before} order by cycle desc limit 1`;
    if (mark) {
      const ent = await tx`
        delete from enterprise_sightings s using (
          select id, row_number() over (partition by pid order by id desc) as newer
          from enterprise_sightings) o
        where s.id = o.id and o.newer > 1 and s.id <= ${mark.e}::bigint`;
      const prod = await tx`
        delete from product_sightings s using (
          select id, row_number() over (partition by product_id order by id desc) as newer
          from product_sightings) o
        where s.id = o.id and o.newer > 1 and s.id <= ${mark.p}::bigint`;
      summary.sightings = ent.count + prod.count;
    }
  });
  return summary;
}
