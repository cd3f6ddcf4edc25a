/**
 * What history holds, counted: the totals `daybook demo` shows after its cycles, the changes by
 * severity, and the top of the latest trending list. Read only.
 */
import type { Sql } from '../db/connect.ts';

/** How many products, snapshots, enterprises and versions history holds: a computed shape. */
export interface HistoryTotals {
  products: number;
  snapshots: number;
  enterprises: number;
  versions: number;
}

/** The rows of the product and enterprise tables, counted. */
export async function historyTotals(sql: Sql): Promise<HistoryTotals | undefined> {
  const [totals] = await sql<HistoryTotals[]>`select (select count(*) from products)::int as products,
           (select count(*) from trending_snapshots)::int as snapshots,
           (select count(*) from enterprises)::int as enterprises,
           (select count(*) from enterprise_versions)::int as versions`;
  return totals;
}

/** How many changes were detected of one severity: a computed shape of `enterprise_changes`. */
export interface SeverityCount {
  severity: string;
  n: number;
}

/** The changes detected, by severity: high, medium, then low. */
export async function changesBySeverity(sql: Sql): Promise<SeverityCount[]> {
  return sql<SeverityCount[]>`
    select severity, count(*)::int as n from enterprise_changes group by severity
    order by array_position(array['high','medium','low'], severity)`;
}

/**
 * A product of the latest trending list, as `daybook demo` shows it: a row of the
 * `analytics.product_trending` view, a computed shape (a type alias: it prints as a plain record).
 */
export type TopProduct = {
  list_date: string;
  position: number;
  name: string | null;
  votes_count: number | null;
};

/** The first `limit` products of the latest day's list (analytics.product_trending). */
export async function topOfLatestList(sql: Sql, limit: number): Promise<TopProduct[]> {
  return sql<TopProduct[]>`
    select list_date::text, position, name, votes_count from analytics.product_trending
    where is_latest_pull and list_date = (select max(list_date) from trending_snapshots)
    order by position limit ${limit}`;
}
