/**
 * The daily digest of a cycle: its changes and company events, grouped by company and ordered by
 * severity, as Markdown (for people, and language-model tools alike) and as a structured list.
 * `renderDigest` is pure; `cycleDigest` reads the cycle's events.
 */
import type { Sql } from '../db/connect.ts';
import type { DriverRow } from '../db/rows.ts';
import type { events as eventsTable } from '../db/schema.ts';
import { type Envelope, readEvents } from './feed.ts';

export interface DigestCompany {
  pid: string;
  name: string | null;
  changes: {
    type: string;
    severity: Envelope['severity'];
    field: string | null;
    previous: string | null;
    current: string | null;
    event_id: string;
    /** For a related company's change (`related.*`): that company, and the chain to it. */
    related?: unknown;
    path?: unknown;
  }[];
}

export interface Digest {
  cycle: string;
  markdown: string;
  companies: DigestCompany[];
}

const RANK = { high: 0, medium: 1, low: 2 } as const;

/** The digest of `events` (the company events of one cycle). */
export function renderDigest(cycle: string, events: readonly Envelope[]): Digest {
  const byPid = new Map<string, DigestCompany>();
  for (const e of events) {
    const related = e.type.startsWith('related.');
    if (!e.pid || !(e.type.startsWith('company.') || related) || e.type === 'company.first_seen') continue;
    const c = byPid.get(e.pid) ?? { pid: e.pid, name: e.name, changes: [] };
    c.name = e.name ?? c.name;
    const str = (v: unknown) => (v === undefined || v === null ? null : String(v));
    // A related company's event carries its change under `change`.
    const d = related ? ((e.data.change ?? {}) as Record<string, unknown>) : e.data;
    c.changes.push({
      type: e.type,
      severity: e.severity,
      field: str(d.field),
      previous: str(d.previous),
      current: str(d.current),
      event_id: e.id,
      ...(related ? { related: e.data.related, path: e.data.path } : {}),
    });
    byPid.set(e.pid, c);
  }
  const worst = (c: DigestCompany) => Math.min(...c.changes.map((x) => RANK[x.severity]));
  const companies = [...byPid.values()]
    .map((c) => ({ ...c, changes: [...c.changes].sort((a, b) => RANK[a.severity] - RANK[b.severity]) }))
    .sort((a, b) => worst(a) - worst(b) || (a.name ?? a.pid).localeCompare(b.name ?? b.pid));
  const counts = { high: 0, medium: 0, low: 0 };
  for (const c of companies) for (const x of c.changes) counts[x.severity]++;
  const lines: string[] = [`# daybook digest, cycle ${cycle}`, ''];
  if (companies.length === 0) lines.push('No changes at the watched companies in this cycle.');
  else {
    lines.push(
      `${companies.length} ${companies.length === 1 ? 'company' : 'companies'} changed: ${counts.high} high, ${counts.medium} medium, ${counts.low} low.`,
    );
    const md = (s: string) => s.replace(/([\\`*_[\]|<>#])/g, '\\$1').replace(/\s+/g, ' ');
    for (const severity of ['high', 'medium', 'low'] as const) {
      const group = companies.filter(
        (c) => c.changes.some((x) => x.severity === severity) && worst(c) === RANK[severity],
      );
      if (group.length === 0) continue;
      lines.push('', `## ${severity[0]?.toUpperCase()}${severity.slice(1)}`);
      for (const c of group) {
        lines.push('', `### ${md(c.name ?? c.pid)} (${md(c.pid)})`);
        for (const x of c.changes) {
          const values =
            x.previous !== null || x.current !== null
              ? `: ${md(x.previous ?? '∅')} → ${md(x.current ?? '∅')}`
              : '';
          const of = x.related as { name?: string | null; pid?: string } | undefined;
          const holder = of ? ` of shareholder ${md(of.name ?? of.pid ?? '')}` : '';
          lines.push(
            `- **${x.severity}** ${x.type}${x.field ? ` (${md(x.field)}${holder})` : holder}${values}`,
          );
        }
      }
    }
  }
  return { cycle, markdown: `${lines.join('\n')}\n`, companies };
}

/** The digest of cycle `cycle`, from the outbox. */
export async function cycleDigest(sql: Sql, cycle: string): Promise<Digest> {
  const rows = await sql<
    Pick<DriverRow<typeof eventsTable>, 'seq'>[]
  >`select seq from events where cycle = ${cycle} and pid is not null order by seq`;
  const seqs = rows.map((r) => Number(r.seq));
  const events = seqs.length ? await readEvents(sql, { after: 0, limit: seqs.length, seqs }) : [];
  return renderDigest(cycle, events);
}

/**
 * What the digest's list leaves out of a change event: its kind, its refinement and its two
 * versions. A computed shape of an event's `data`.
 */
export interface ChangeExtra {
  kind: string | null;
  detail: string | null;
  from_version: number | null;
  to_version: number | null;
}

/** A change event's extra, with the event's id and PID (a change event always names its company). */
export type EventChangeExtra = ChangeExtra & { id: string; pid: string };

/** The change events of `ids`, each with its id, PID and what the digest's list leaves out. */
export async function changeExtras(sql: Sql, ids: string[]) {
  return sql<EventChangeExtra[]>`
        select id, pid, data->>'kind' as kind, data->>'detail' as detail,
               (data->>'from_version')::int as from_version, (data->>'to_version')::int as to_version
        from events where id = any(${ids}::text[])`;
}

/** When the cycle's `cycle.completed` event was written: a computed shape of `events`. */
interface CompletedAt {
  at: Date;
}

/** When `cycle` completed (its first `cycle.completed` event), or null while it runs. */
export async function cycleCompletedAt(sql: Sql, cycle: string): Promise<Date | null> {
  const [done] = await sql<CompletedAt[]>`
    select min(created_at) as at from events where cycle = ${cycle} and type = 'cycle.completed'
    having count(*) > 0`;
  return done?.at ?? null;
}
