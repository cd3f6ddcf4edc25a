/** `daybook changes`: the change log, newest first. */
import type { Command } from 'commander';
import { command } from './about.ts';
import { configOrExit, withStore } from './context.ts';
import { listOutput } from './terminal.ts';
import { choiceArg, dateOption, intArg, UsageError } from './usage.ts';

export function changesCommand(): Command {
  return command('changes')
    .addOption(dateOption('--since', 'changes of this cycle or later (YYYY-MM-DD)'))
    .addOption(dateOption('--until', 'changes of this cycle or earlier (YYYY-MM-DD)'))
    .addOption(
      dateOption('--detected-since', 'changes daybook found on or after this date, UTC (YYYY-MM-DD)'),
    )
    .option(
      '--severity <level>',
      'high, medium or low (and above)',
      choiceArg('--severity', ['high', 'medium', 'low'] as const),
    )
    .option('--pid <pid>', 'only this enterprise')
    .option('--limit <n>', 'at most this many rows', intArg('--limit', 1, 100_000), 100)
    .option('--json', 'print as JSON lines')
    .action(
      async (opts: {
        since?: string;
        until?: string;
        detectedSince?: string;
        severity?: 'high' | 'medium' | 'low';
        pid?: string;
        limit: number;
        json?: boolean;
      }) => {
        if (opts.since && opts.until && opts.since > opts.until)
          throw new UsageError(`--since ${opts.since} is after --until ${opts.until}`);
        await withStore(configOrExit(), async ({ sql }) => {
          const levels = { high: ['high'], medium: ['high', 'medium'], low: ['high', 'medium', 'low'] };
          const severities = levels[opts.severity ?? 'low'];
          const rows = await sql`
          select cycle::text, detected_at, pid, current_name as name, category, field, kind, before, after, severity
          from analytics.enterprise_changes
          where severity = any(${severities})
            ${opts.since ? sql`and cycle >= ${opts.since}::date` : sql``}
            ${opts.until ? sql`and cycle <= ${opts.until}::date` : sql``}
            ${opts.detectedSince ? sql`and detected_at >= ${`${opts.detectedSince}T00:00:00Z`}::timestamptz` : sql``}
            ${opts.pid ? sql`and pid = ${opts.pid}` : sql``}
          order by detected_at desc, change_id desc limit ${opts.limit}`;
          process.stdout.write(
            listOutput(rows, opts.json, {
              columns: ['cycle', 'name', 'category', 'field', 'kind', 'before', 'after', 'severity'],
            }),
          );
        });
      },
    );
}
