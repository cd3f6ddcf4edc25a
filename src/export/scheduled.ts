/**
 * The export after a cycle (DAYBOOK_EXPORT_DIR): the process whose job completes a cycle writes
 * the package, so a nightly load needs no other orchestrator. It never fails the job: a failure
 * is logged, and the next export (the next cycle's, or `daybook export`) carries what this one
 * did not, since a package holds everything since the last complete one.
 */
import type postgres from 'postgres';
import type { Config } from '../config/config.ts';
import type { Logger } from '../log/log.ts';
import { ExportBusy, exportPackages } from './package.ts';

export async function exportAfterCycle(
  sql: postgres.Sql,
  config: Pick<Config, 'DAYBOOK_EXPORT_DIR' | 'DAYBOOK_EXPORT_FORMAT'>,
  log: Logger,
  cycle: string,
): Promise<void> {
  const to = config.DAYBOOK_EXPORT_DIR;
  if (!to) return;
  try {
    const written = await exportPackages(sql, { to, format: config.DAYBOOK_EXPORT_FORMAT, wait: false });
    for (const p of written)
      log.info(
        { cycle, load_id: p.loadId, kind: p.kind, rows: p.rows, dir: p.dir },
        'export package written',
      );
    if (written.length === 0) log.info({ cycle, dir: to }, 'export: nothing new since the last package');
  } catch (err) {
    if (err instanceof ExportBusy) {
      log.info({ cycle, dir: to }, `export skipped: ${err.message}; the next export carries this cycle`);
      return;
    }
    log.error(
      { cycle, dir: to, err: err instanceof Error ? err.message : String(err) },
      'export after the cycle failed; the next export (or daybook export) carries what it would have written',
    );
  }
}
