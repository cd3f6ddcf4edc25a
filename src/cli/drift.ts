/** `daybook drift`: the format drift seen in upstream answers. */
import type { Command } from 'commander';
import { driftReport } from '../history/drift-store.ts';
import { command } from './about.ts';
import { configOrExit, openStore } from './context.ts';
import { DRIFT_COLUMNS, formatTable, jsonLines } from './terminal.ts';
import { choiceArg, dateOption } from './usage.ts';

export function driftCommand(): Command {
  return command('drift')
    .option(
      '--operation <op>',
      'enterprise-search or product-listing',
      choiceArg('--operation', ['enterprise-search', 'product-listing'] as const),
    )
    .addOption(dateOption('--since', 'drift last seen on or after this date (YYYY-MM-DD)'))
    .option('--json', 'print as JSON lines')
    .action(async (opts: { operation?: string; since?: string; json?: boolean }) => {
      const config = configOrExit();
      const db = await openStore(config);
      try {
        const rows = await driftReport(db.sql, {
          ...(opts.operation ? { operation: opts.operation } : {}),
          ...(opts.since ? { since: new Date(`${opts.since}T00:00:00Z`) } : {}),
        });
        if (opts.json) process.stdout.write(jsonLines(rows));
        else if (rows.length === 0) process.stdout.write('no format drift seen\n');
        else {
          const columns = [...DRIFT_COLUMNS];
          columns.splice(columns.indexOf('responses') + 1, 0, 'records');
          process.stdout.write(formatTable(rows, [...columns, 'example']));
        }
      } finally {
        await db.close();
      }
    });
}
