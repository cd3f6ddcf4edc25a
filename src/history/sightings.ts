/**
 * Where each compaction of sightings stood: the newest sighting ids when the plan of a cycle ran.
 * A sighting superseded by a later one of the same company is dropped once the mark of a cycle
 * older than the bookkeeping window covers it (src/history/enterprise-store.ts and
 * product-store.ts drop their own).
 */
import type { Sql } from '../db/connect.ts';
import type { DriverRow } from '../db/rows.ts';
import type { compactionMarks } from '../db/schema.ts';

export interface SightingMark {
  enterprise: string;
  product: string;
}

/** A mark's row, its two ids read under short names (`e`, `p`). */
interface MarkRow {
  e: DriverRow<typeof compactionMarks>['enterprise_sighting_id'];
  p: DriverRow<typeof compactionMarks>['product_sighting_id'];
}

/** Marks where the sightings stand now, for `cycle` (once per cycle). */
export async function markSightings(tx: Sql, cycle: string): Promise<void> {
  await tx`
      insert into compaction_marks (cycle, enterprise_sighting_id, product_sighting_id)
      values (${cycle}, (select coalesce(max(id), 0) from enterprise_sightings),
              (select coalesce(max(id), 0) from product_sightings))
      on conflict (cycle) do nothing`;
}

/** The mark of the newest cycle on or before `before`, if any. */
export async function sightingMarkBefore(tx: Sql, before: string): Promise<SightingMark | null> {
  const [mark] = await tx<MarkRow[]>`
      select enterprise_sighting_id as e, product_sighting_id as p from compaction_marks
      where cycle <= ${before} order by cycle desc limit 1`;
  return mark ? { enterprise: mark.e, product: mark.p } : null;
}
