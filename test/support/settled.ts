/**
 * Where a queued cycle stands, read in one statement (one snapshot), for the tests that wait for
 * a cycle to finish. Waiting for "nothing pending" alone is a race: it holds before the plan
 * job has written any row. These wait for the plan to have run, and then for its rows.
 */
import type { Database } from '../../src/db/connect.ts';

export interface CycleProgress {
  /** The cycle's plan job has finished (its rows were committed first), and none is running. */
  planned: boolean;
  /** The cycle's cycle_fetches rows, by status. */
  statuses: Record<string, number>;
  /** All of them. */
  total: number;
  /** Rows still to be bought: planned, fetching or retrying. */
  pending: number;
}

export async function cycleProgress(sql: Database['sql'], cycle: string): Promise<CycleProgress> {
  const [r] = await sql<{ planned: boolean; statuses: Record<string, number> | null }[]>`
    select exists (select 1 from runs where kind = 'plan' and cycle = ${cycle} and outcome = 'succeeded')
             and not exists (select 1 from runs where kind = 'plan' and cycle = ${cycle} and outcome = 'running')
             as planned,
           (select jsonb_object_agg(status, n) from (
              select status, count(*)::int as n from cycle_fetches where cycle = ${cycle} group by status) s)
             as statuses`;
  const statuses = r?.statuses ?? {};
  const count = (...of: string[]) => of.reduce((n, s) => n + (statuses[s] ?? 0), 0);
  return {
    planned: r?.planned === true,
    statuses,
    total: Object.values(statuses).reduce((a, b) => a + b, 0),
    pending: count('planned', 'fetching', 'retrying'),
  };
}

/** True once the cycle's plan has run and none of the rows it wrote is still to be bought. */
export async function cycleSettled(sql: Database['sql'], cycle: string): Promise<boolean> {
  const p = await cycleProgress(sql, cycle);
  return p.planned && p.pending === 0;
}
