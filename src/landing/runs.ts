/** The `runs` table: one row per job run, opened when it starts and closed with its outcome. */
import type { Sql } from '../db/connect.ts';
import type { DriverRow } from '../db/rows.ts';
import type { runs } from '../db/schema.ts';

/** A computed shape: the database's clock (`now()`). */
interface DatabaseNow {
  now: Date;
}

/** A computed shape: how many runs a compaction deleted and summaries it wrote (counts `::int`). */
interface Summarized {
  runs: number;
  summaries: number;
}

export type RunOutcome =
  | 'running'
  | 'succeeded'
  | 'failed'
  | 'skipped'
  | 'deferred'
  | 'paused'
  | 'retrying'
  | 'abandoned';

export interface RunStart {
  kind: string;
  cycle?: string | null;
  listDate?: string | null;
  entity?: string | null;
  jobId?: string | null;
}

/**
 * Opens a run. Earlier runs of the same job still marked running were cut short (their worker
 * died, or lost its database): they are closed as `abandoned`, so no run stays "running" forever.
 */
export async function startRun(sql: Sql, run: RunStart): Promise<number> {
  if (run.jobId) {
    await sql`
      update runs set outcome = 'abandoned', finished_at = now(),
        error_message = 'cut short (the worker stopped or lost its connection); the job ran again'
      where kind = ${run.kind} and started_at > now() - interval '31 days'
        and job_id = ${run.jobId} and outcome = 'running'`;
  }
  const [row] = await sql<Pick<DriverRow<typeof runs>, 'id'>[]>`
    insert into runs (kind, cycle, list_date, entity, job_id)
    values (${run.kind}, ${run.cycle ?? null}, ${run.listDate ?? null}, ${run.entity ?? null}, ${run.jobId ?? null})
    returning id`;
  return Number(row?.id);
}

export interface RunFinish {
  outcome: RunOutcome;
  counts?: Record<string, number | string>;
  credits?: number;
  errorCode?: string | null;
  errorMessage?: string | null;
}

export async function finishRun(sql: Sql, id: number, finish: RunFinish): Promise<void> {
  await sql`
    update runs set finished_at = now(), outcome = ${finish.outcome}, counts = ${sql.json(finish.counts ?? {})},
      credits = ${finish.credits ?? 0}, error_code = ${finish.errorCode ?? null}, error_message = ${finish.errorMessage ?? null}
    where id = ${id}`;
}

/** The database's clock: what every machine agrees on, whatever its own clock says. */
export async function databaseNow(sql: Sql): Promise<Date> {
  const [row] = await sql<DatabaseNow[]>`select now() as now`;
  return row?.now ?? new Date();
}

/**
 * Enterprise runs of cycles before `before` that ended without a failure are added up into
 * `run_summaries` (one row per cycle, kind and outcome) and deleted; failed runs stay, and so do
 * all other kinds. Returns the runs deleted and the summaries written.
 */
export async function summarizeRuns(tx: Sql, before: string): Promise<{ runs: number; summaries: number }> {
  // The runs counted are those deleted (an upsert returns a summary's total, not what it added).
  const [summed] = await tx<Summarized[]>`
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
  return { runs: summed?.runs ?? 0, summaries: summed?.summaries ?? 0 };
}

/**
 * Marks run `id` with the call it has under way (`call`: what settling it needs), so that a run
 * cut short before it settled the call can be found and settled later (`clearRunCall`).
 */
export async function markRunCall(tx: Sql, id: number, key: string, call: object): Promise<void> {
  await tx`update runs set counts = counts || ${tx.json({ [key]: call } as never)} where id = ${id}`;
}

/** Clears the call mark `key` of run `id`: its call is settled. */
export async function clearRunCall(tx: Sql, id: number, key: string): Promise<void> {
  await tx`update runs set counts = counts - ${key}::text where id = ${id}`;
}

/**
 * Closes as `abandoned` the runs of `kind` that have no job (a one-off command's) and still say
 * running although they started more than `olderThanMs` ago: their process was killed, since no
 * run of that kind lasts so long. Returns how many.
 */
export async function abandonStaleRuns(sql: Sql, kind: string, olderThanMs: number): Promise<number> {
  const rows = await sql`
    update runs set outcome = 'abandoned', finished_at = now(),
      error_message = 'cut short (its process stopped before it finished)'
    where kind = ${kind} and job_id is null and outcome = 'running'
      and started_at > now() - interval '31 days'
      and started_at < now() - make_interval(secs => ${olderThanMs / 1000})
    returning 1`;
  return rows.length;
}

/** A failed run, as `daybook status` lists it: the job, what it was for, why and when it ended. */
export type FailedRun = Pick<
  DriverRow<typeof runs>,
  'kind' | 'error_code' | 'error_message' | 'finished_at'
> & {
  /** The entry the run was for, else its list date (a computed column). */
  entity: string | null;
};

/** The runs that failed in the last 7 days, the latest 20, latest first. */
export async function recentFailedRuns(sql: Sql) {
  return sql<FailedRun[]>`
    select r.kind, coalesce(r.entity, r.list_date::text) as entity, r.error_code, r.error_message, r.finished_at
    from runs r
    where r.outcome = 'failed' and r.started_at > now() - interval '7 days'
    order by r.finished_at desc limit 20`;
}

/**
 * The latest run of a product pull, when it failed: its date (the list date, else its entity),
 * kind, pull, outcome, reason, detail and end. A computed shape of `runs`.
 */
export interface FailedPull {
  date: string | null;
  kind: string;
  pull: string | null;
  outcome: string;
  reason: string | null;
  detail: string | null;
  finished_at: Date | null;
}

/**
 * Product pulls of the last 7 days whose latest run failed (a later success clears it), by
 * date.
 */
export async function failedProductPulls(sql: Sql) {
  return sql<FailedPull[]>`
    select * from (
      select distinct on (coalesce(r.list_date::text, r.entity), r.kind)
        coalesce(r.list_date::text, r.entity) as date, r.kind, r.entity as pull, r.outcome,
        r.error_code as reason, r.error_message as detail, r.finished_at
      from runs r
      where r.kind = 'products' and r.outcome in ('succeeded', 'failed')
        and r.started_at > now() - interval '7 days'
      order by coalesce(r.list_date::text, r.entity), r.kind, r.started_at desc, r.id desc) latest
    where outcome = 'failed' order by date`;
}

/** Durations of one kind of run, in seconds: a computed shape of `runs`. */
export interface RunDurations {
  kind: string;
  avg: number;
  p95: number;
  max: number;
}

/**
 * Durations of the runs finished in the last 24 hours, by kind (avg, p95, max; of the latest
 * 5,000 of each kind).
 */
export async function runDurations(sql: Sql): Promise<RunDurations[]> {
  return sql<RunDurations[]>`
        select kind,
          avg(extract(epoch from finished_at - started_at))::float8 as avg,
          percentile_cont(0.95) within group (order by extract(epoch from finished_at - started_at))::float8 as p95,
          max(extract(epoch from finished_at - started_at))::float8 as max
        from (
          -- The kinds, read from the index on (kind, started_at) one at a time; then each kind's
          -- runs started in the last two days, by the same index (a job outlasts no day).
          with recursive kinds as (
            select min(kind) as k from runs
            union all
            select (select min(kind) from runs where kind > kinds.k) from kinds where kinds.k is not null
          )
          select kinds.k as kind, r.started_at, r.finished_at from kinds
          cross join lateral (
            select started_at, finished_at from runs
            where kind = kinds.k and started_at > now() - interval '48 hours'
            order by started_at desc limit 5000) r
          where kinds.k is not null
        ) recent
        where finished_at > now() - interval '24 hours' group by kind`;
}

/** A run's call mark, as `markRunCall` wrote it: a computed shape of `runs.counts`. */
interface RunMark<T> {
  mark: T | null;
}

/**
 * The call mark `key` of run `id` (null: none, or settled), its row locked for the settling
 * transaction `tx`.
 */
export async function lockRunCall<T>(tx: Sql, id: number, key: string): Promise<T | null> {
  const [run] = await tx<RunMark<T>[]>`
        select counts->${key}::text as mark from runs where id = ${id} for update`;
  return run?.mark ?? null;
}

/**
 * The finished runs of `kind` of the last 31 days that still hold the call mark `key`: their call
 * was cut short before it settled. A finished run keeps no mark otherwise.
 */
export async function runsWithCall(sql: Sql, kind: string, key: string): Promise<number[]> {
  const cut = await sql<Pick<DriverRow<typeof runs>, 'id'>[]>`
    select id from runs
    where kind = ${kind} and started_at > now() - interval '31 days'
      and outcome <> 'running' and counts ? ${key}::text`;
  return cut.map(({ id }) => Number(id));
}

/** The latest run of a kind with the cycle's count of such runs: a computed shape of `runs`. */
type LatestRun = Pick<DriverRow<typeof runs>, 'started_at'> & {
  counts: Record<string, unknown>;
  runs: number;
  first: Date;
};

/**
 * The latest successful run of `kind` in `cycle` whose counts record `key`, with how many such
 * runs the cycle had and when the first began; null when there was none.
 */
export async function latestRunWith(
  sql: Sql,
  kind: string,
  cycle: string,
  key: string,
): Promise<{ startedAt: Date; counts: Record<string, unknown>; runs: number; firstStartedAt: Date } | null> {
  const [row] = await sql<LatestRun[]>`
    select started_at, counts, count(*) over ()::int as runs, min(started_at) over () as first
    from runs
    where kind = ${kind} and cycle = ${cycle} and outcome = 'succeeded' and counts ? ${key}
    order by started_at desc, id desc limit 1`;
  return row
    ? { startedAt: row.started_at, counts: row.counts, runs: row.runs, firstStartedAt: row.first }
    : null;
}
