/** The analytics views as a rebuild must leave them, for the tests that replay a history. */
import type { Sql } from '../../src/db/connect.ts';

/** Every analytics view a replay reproduces, ordered, and the surrogate id it numbers anew. */
export const REPLAYED_VIEWS: readonly { view: string; order: string; omit?: string }[] = [
  { view: 'enterprise_current', order: 'pid' },
  { view: 'enterprise_history', order: 'pid, version' },
  // change_id is a surrogate: live ingestion numbers changes in commit order, replay in landing order.
  {
    view: 'enterprise_changes',
    order: 'pid, detected_at, category, field, kind, before, after',
    omit: 'change_id',
  },
  { view: 'enterprise_events', order: 'pid, observed_at, kind, raw_response_id', omit: 'event_id' },
  { view: 'product_current', order: 'product_id' },
  { view: 'product_trending', order: 'list_date, raw_response_id, position' },
  { view: 'format_drift', order: 'operation, field, kind, seen' },
  { view: 'credit_usage', order: 'cycle, operation' },
];

/** The rows of the named views (all of REPLAYED_VIEWS by default), by view, without their surrogate ids. */
export async function viewRows(
  sql: Sql,
  views: readonly string[] = REPLAYED_VIEWS.map((v) => v.view),
): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const { view, order, omit } of REPLAYED_VIEWS.filter((v) => views.includes(v.view))) {
    const rows = [...(await sql.unsafe(`select * from analytics.${view} order by ${order}`))];
    out[view] = rows.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => k !== omit)));
  }
  return out;
}
