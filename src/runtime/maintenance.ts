/**
 * The bookkeeping compaction run by hand (`daybook storage compact`), in this process: the same
 * step the plan job runs after each plan (jobs/compact.ts), under the same lock.
 */
import { type CompactionSummary, compactBookkeeping } from '../../jobs/compact.ts';
import type { Config } from '../config/config.ts';
import type { Sql } from '../db/connect.ts';

export type { CompactionSummary } from '../../jobs/compact.ts';

/**
 * Compacts the bookkeeping of the cycles more than `keepDays` before `cycle`, and drops error
 * answers past DAYBOOK_ERROR_RETENTION_DAYS.
 */
export function compactNow(
  sql: Sql,
  config: Config,
  cycle: string,
  keepDays: number,
): Promise<CompactionSummary> {
  return compactBookkeeping(sql, cycle, keepDays, config.DAYBOOK_ERROR_RETENTION_DAYS);
}
