/**
 * Reading the outbox from any point of its history: the pull feed (`daybook events`, and the
 * recovery path for webhooks). Events are returned in `seq` order as envelopes, the shape every
 * consumer sees (catalogue.ts, schemas/events/).
 */
import type { Sql } from '../db/connect.ts';
import type { DriverRow, Recast } from '../db/rows.ts';
import type { events } from '../db/schema.ts';
import type { EventType } from './catalogue.ts';

/** One event as the feed and webhooks send it. */
export interface Envelope {
  id: string;
  type: EventType;
  sequence: number;
  company_sequence: number | null;
  severity: 'high' | 'medium' | 'low';
  pid: string | null;
  name: string | null;
  cycle: string | null;
  detected_at: string;
  effective_date: string | null;
  raw_response_id: number | null;
  data: Record<string, unknown>;
}

/** An event as `readEvents` reads it: its dates read `::text`, its type and severity as named. */
type EventRow = Recast<
  Recast<
    Recast<
      Recast<
        Pick<
          DriverRow<typeof events>,
          | 'seq'
          | 'id'
          | 'type'
          | 'company_seq'
          | 'severity'
          | 'pid'
          | 'name'
          | 'cycle'
          | 'detected_at'
          | 'effective_date'
          | 'raw_response_id'
          | 'data'
        >,
        'type',
        EventType
      >,
      'severity',
      Envelope['severity']
    >,
    'cycle' | 'effective_date',
    string
  >,
  'data',
  Record<string, unknown>
>;

export interface FeedQuery {
  /** Events after this sequence number (0: from the start). */
  after: number;
  limit: number;
  /** Type patterns: an exact type, or a prefix ending in `.*` (`company.status.*`). */
  types?: readonly string[];
  pid?: string;
  /** Only these sequence numbers. */
  seqs?: readonly number[];
}

/** Whether `type` matches `pattern` (exact, `*`, or `prefix.*`). */
export function typeMatches(pattern: string, type: string): boolean {
  if (pattern === '*') return true;
  if (pattern.endsWith('.*')) return type.startsWith(pattern.slice(0, -1));
  return pattern === type;
}

/** Up to `limit` events after `after`, oldest first. */
export async function readEvents(sql: Sql, q: FeedQuery): Promise<Envelope[]> {
  const exact = (q.types ?? []).filter((t) => !t.endsWith('*'));
  // A prefix is matched by LIKE with its own `%`, `_` and `\` escaped: `company.legal_*` means
  // what it says, and a caller's text is never a pattern.
  const prefixes = (q.types ?? [])
    .filter((t) => t.endsWith('*'))
    .map((t) => `${t.slice(0, -1).replace(/[\\%_]/g, '\\$&')}%`);
  const byType = q.types?.length
    ? sql`and (type = any(${exact}::text[]) or type like any(${prefixes}::text[]))`
    : sql``;
  const rows = await sql<EventRow[]>`
    select seq, id, type, company_seq, severity, pid, name, cycle::text as cycle, detected_at,
           effective_date::text as effective_date, raw_response_id, data
    from events
    where seq > ${q.after} ${byType} ${q.pid ? sql`and pid = ${q.pid}` : sql``}
      ${q.seqs ? sql`and seq = any(${q.seqs as number[]}::bigint[])` : sql``}
    order by seq
    limit ${q.limit}`;
  return rows.map((r) => ({
    id: r.id,
    type: r.type,
    sequence: Number(r.seq),
    company_sequence: r.company_seq,
    severity: r.severity,
    pid: r.pid,
    name: r.name,
    cycle: r.cycle,
    detected_at: new Date(r.detected_at).toISOString(),
    effective_date: r.effective_date,
    raw_response_id: r.raw_response_id === null ? null : Number(r.raw_response_id),
    data: r.data,
  }));
}

/** The events of the given sequence numbers, by sequence. */
export async function readEventsBySeq(sql: Sql, seqs: readonly number[]): Promise<Map<number, Envelope>> {
  const events = await readEvents(sql, { after: 0, limit: seqs.length, seqs });
  return new Map(events.map((e) => [e.sequence, e]));
}
