/**
 * Writing to the event outbox (`events`). Each write runs in the caller's transaction, the one
 * that writes what the events report, so an event exists exactly when its fact does.
 *
 * Order: `seq` comes from a sequence, and every writer takes one transaction-level advisory lock
 * before it inserts and keeps it to its commit. Writers therefore commit in `seq` order, and a
 * reader paging by `seq` never sees a later event before an earlier one commits. Events are
 * appended at the end of their transaction, so the lock is held only from there to the commit.
 *
 * Each write also notifies EVENTS_CHANNEL, in the same transaction: Postgres delivers the
 * notification when the events commit, and the delivery engine wakes on it.
 *
 * A rebuild replays history without re-emitting it: it sets `daybook.rebuilding` for its
 * transaction (`suppressEvents`), and writes in it emit nothing.
 */
import type postgres from 'postgres';
import type { Sql } from '../db/connect.ts';
import type { DriverRow } from '../db/rows.ts';
import type { cycleBudgets, cycleFetches } from '../db/schema.ts';
import type { EnterpriseChangeCategory, Severity } from '../terms/changes.ts';
import { changeEventType, type EventType, observationEventType, severityOfEvent } from './catalogue.ts';
import { cycleDigest } from './digest.ts';

/** A computed shape: how many of a cycle's fetches are in each status (`count(*)::int` by status). */
type StatusCount = Pick<DriverRow<typeof cycleFetches>, 'status'> & { n: number };

/** The advisory lock key of outbox writers ('dbevents' as 64-bit ASCII, taken by nothing else). */
export const EVENTS_LOCK = 7_233_174_018_574_889_587n;

/**
 * The channel every write of events notifies (`pg_notify`, sent by Postgres when the write
 * commits, never when it rolls back): the delivery engine listens on it and wakes at once.
 */
export const EVENTS_CHANNEL = 'daybook_events';

/** An event to append; `name` and `effective_date` come from `versionId`, else the company's current version. */
export interface NewEvent {
  type: EventType;
  severity: Severity;
  pid: string | null;
  cycle: string | null;
  detectedAt: Date;
  rawResponseId: number | null;
  /** The version the event is about, for the company's name and APPRDATE at that version. */
  versionId?: number | null;
  /** The name to give when no version of the company is kept (an answer kept out of history). */
  name?: string | null;
  /**
   * The version whose APPRDATE is the event's effective date when it is another company's: a
   * related event is dated by the change of the company it is about, not by its holder's.
   */
  datedBy?: number | null;
  data: Record<string, unknown>;
}

/** Makes writes in transaction `tx` emit no events (a rebuild). */
export async function suppressEvents(tx: Sql): Promise<void> {
  await tx`select set_config('daybook.rebuilding', 'on', true)`;
}

/** Appends `events` in order, in the caller's transaction. */
export async function appendEvents(sql: Sql, events: readonly NewEvent[]): Promise<void> {
  if (events.length === 0) return;
  const rows = events.map((e, ord) => ({
    ord,
    type: e.type,
    severity: e.severity,
    pid: e.pid,
    cycle: e.cycle,
    detected_at: e.detectedAt.toISOString(),
    raw_response_id: e.rawResponseId,
    version_id: e.versionId ?? null,
    dated_by: e.datedBy ?? null,
    name: e.name ?? null,
    data: e.data,
  }));
  const on = sql`coalesce(current_setting('daybook.rebuilding', true), '') <> 'on'`;
  // The lock and the notification in one statement: Postgres sends it at the commit.
  await sql`
    select pg_advisory_xact_lock(${EVENTS_LOCK.toString()}::bigint), pg_notify(${EVENTS_CHANNEL}, '')
    where ${on}`;
  await sql`
    insert into events (type, severity, pid, name, company_seq, cycle, detected_at, effective_date,
                        raw_response_id, data)
    select x.type, x.severity, x.pid, coalesce(v.ent_name, c.ent_name, x.name),
           case when x.pid is null then null
                else coalesce((select max(e.company_seq) from events e where e.pid = x.pid), 0)
                     + row_number() over (partition by x.pid order by x.ord) end,
           x.cycle::date, x.detected_at::timestamptz,
           case when x.dated_by is not null then d.appr_date
                when x.version_id is not null then v.appr_date else c.appr_date end, x.raw_response_id, x.data
    from jsonb_to_recordset(${sql.json(rows as never)}) as x(
           ord int, type text, severity text, pid text, cycle text, detected_at text,
           raw_response_id bigint, version_id bigint, dated_by bigint, name text, data jsonb)
    left join analytics.enterprise_current c on c.pid = x.pid and x.version_id is null
    left join published.enterprise_version_names v on v.id = x.version_id
    left join published.enterprise_version_names d on d.id = x.dated_by
    where ${on}
    order by x.ord`;
}

/** The event of one `enterprise_changes` row. */
export function changeEvent(c: {
  pid: string;
  cycle: string;
  category: EnterpriseChangeCategory;
  field: string;
  kind: 'added' | 'removed' | 'modified';
  before: string | null;
  after: string | null;
  detail: string | null;
  severity: Severity;
  detectedAt: Date;
  rawResponseId: number | null;
  versionId: number;
  fromVersion: number | null;
  toVersion: number;
}): NewEvent {
  const type = changeEventType(c.category, c.field, c.detail);
  return {
    type,
    severity: severityOfEvent(type, c.severity),
    pid: c.pid,
    cycle: c.cycle,
    detectedAt: c.detectedAt,
    rawResponseId: c.rawResponseId,
    versionId: c.versionId,
    data: {
      category: c.category,
      field: c.field,
      kind: c.kind,
      previous: c.before,
      current: c.after,
      detail: c.detail,
      from_version: c.fromVersion,
      to_version: c.toVersion,
    },
  };
}

/** The event of one `enterprise_observations` row; null for a kind that makes none. */
export function observationEvent(o: {
  pid: string;
  kind: string;
  cycle: string;
  keyword: string | null;
  detail: string | null;
  observedAt: Date;
  rawResponseId: number | null;
}): NewEvent | null {
  const type = observationEventType(o.kind);
  if (!type) return null;
  return {
    type,
    severity: severityOfEvent(type),
    pid: o.pid,
    cycle: o.cycle,
    detectedAt: o.observedAt,
    rawResponseId: o.rawResponseId,
    data: { kind: o.kind, keyword: o.keyword, detail: o.detail },
  };
}

/**
 * Writes `cycle.completed` and `digest.daily` of a cycle whose work has settled (the caller
 * checks that: src/purchase/fetches.ts `settledMark`), once per cycle: it runs under the outbox
 * lock, so two processes completing a cycle at once write them once. Returns whether it wrote
 * them.
 */
export async function writeCycleCompletion(sql: postgres.Sql, cycle: string, now: Date): Promise<boolean> {
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${EVENTS_LOCK.toString()}::bigint)`;
    const [done] = await tx`select 1 from events where type = 'cycle.completed' and cycle = ${cycle} limit 1`;
    if (done) return false;
    const counts = await tx<StatusCount[]>`
      select status, count(*)::int as n from published.cycle_claims where cycle = ${cycle} group by status`;
    const [budget] = await tx<
      Pick<DriverRow<typeof cycleBudgets>, 'spent'>[]
    >`select spent from published.cycle_spent where cycle = ${cycle}`;
    const digest = await cycleDigest(tx, cycle);
    await appendEvents(tx, [
      {
        type: 'cycle.completed',
        severity: 'low',
        pid: null,
        cycle,
        detectedAt: now,
        rawResponseId: null,
        data: {
          cycle,
          counts: Object.fromEntries(counts.map((c) => [c.status, c.n])),
          credits: budget?.spent ?? null,
          reason: null,
        },
      },
      {
        type: 'digest.daily',
        severity: 'low',
        pid: null,
        cycle,
        detectedAt: now,
        rawResponseId: null,
        data: { cycle, markdown: digest.markdown, companies: digest.companies },
      },
    ]);
    return true;
  }) as Promise<boolean>;
}
