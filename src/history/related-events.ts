/**
 * Risk from related companies: a change of a company that watched companies hold, directly or
 * through their shareholders within the depth they asked for (`watch add --with-shareholders`,
 * src/watch/related.ts), written as an event on each of them, with the chain. The change's own
 * event stays on the company that changed; these say what it means for those that hold it.
 * Written in the transaction of the change, as every event is (src/events/outbox.ts).
 */
import type { Sql } from '../db/connect.ts';
import { type ChangeData, type RelatedData, relatedEventType, relatedSeverity } from '../events/catalogue.ts';
import type { NewEvent } from '../events/outbox.ts';
import { holdersOf } from '../watch/related.ts';

/** A changed company as its new version names it. */
export interface ChangedCompany {
  name: string | null;
  uscc: string | null;
}

/**
 * The events the company events `changes` make on the watched companies that hold the changed
 * ones (`about` names them by PID); none for a change no chain reaches or that does not carry.
 */
export async function relatedEvents(
  sql: Sql,
  changes: readonly NewEvent[],
  about: ReadonlyMap<string, ChangedCompany>,
): Promise<NewEvent[]> {
  const carried = changes.flatMap((e) => {
    const data = e.data as Partial<ChangeData>;
    const type = e.pid === null ? null : relatedEventType(e.type, data.detail ?? null);
    return type === null ? [] : [{ e, type, data, pid: e.pid as string }];
  });
  if (carried.length === 0) return [];
  const holders = await holdersOf(sql, [...new Set(carried.map((c) => c.pid))]);
  const out: NewEvent[] = [];
  for (const { e, type, data, pid } of carried) {
    const company = about.get(pid) ?? { name: null, uscc: null };
    for (const h of holders.get(pid) ?? []) {
      const hops = h.pathPids.length - 1;
      const related: RelatedData = {
        related: { pid, name: company.name, uscc: company.uscc },
        hops,
        path: h.pathPids.map((p, i) => ({ pid: p, name: h.pathNames[i] ?? null })),
        change: {
          category: data.category ?? '',
          field: data.field ?? '',
          kind: data.kind ?? 'modified',
          previous: data.previous ?? null,
          current: data.current ?? null,
          detail: data.detail ?? null,
        },
      };
      out.push({
        type,
        severity: relatedSeverity(type, hops),
        pid: h.pid,
        cycle: e.cycle,
        detectedAt: e.detectedAt,
        rawResponseId: e.rawResponseId,
        // The holder's name; the date of the changed company's version.
        versionId: null,
        datedBy: e.versionId ?? null,
        data: related,
      });
    }
  }
  return out;
}
