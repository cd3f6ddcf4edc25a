/** `daybook changes`: the change log, newest first. */
import { Command } from 'commander';
import { configOrExit, openStore } from './context.ts';
import { formatTable, jsonLines } from './terminal.ts';
import { choiceArg, dateArg, intArg, UsageError } from './usage.ts';

export function changesCommand(): Command {
  return new Command('changes')
    .description(
      'Read the change log (analytics.enterprise_changes), newest first. --since and --until select by the cycle shown (the Beijing date of the refresh the change was found in); --detected-since by when daybook found it.',
    )
    .option('--since <date>', 'changes of this cycle or later (YYYY-MM-DD)', dateArg('--since'))
    .option('--until <date>', 'changes of this cycle or earlier (YYYY-MM-DD)', dateArg('--until'))
    .option(
      '--detected-since <date>',
      'changes daybook found on or after this date, UTC (YYYY-MM-DD)',
      dateArg('--detected-since'),
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
        const config = configOrExit();
        const db = await openStore(config);
        try {
          const levels = { high: ['high'], medium: ['high', 'medium'], low: ['high', 'medium', 'low'] };
          const severities = levels[opts.severity ?? 'low'];
          const rows = await db.sql`
          select cycle::text, detected_at, pid, current_name as name, category, field, kind, before, after, severity
          from analytics.enterprise_changes
          where severity = any(${severities})
            ${opts.since ? db.sql`and cycle >= ${opts.since}::date` : db.sql``}
            ${opts.until ? db.sql`and cycle <= ${opts.until}::date` : db.sql``}
            ${opts.detectedSince ? db.sql`and detected_at >= ${`${opts.detectedSince}T00:00:00Z`}::timestamptz` : db.sql``}
            ${opts.pid ? db.sql`and pid = ${opts.pid}` : db.sql``}
          order by detected_at desc, change_id desc limit ${opts.limit}`;
          if (opts.json) process.stdout.write(jsonLines(rows));
          else
            process.stdout.write(
              formatTable(rows, [
                'cycle',
                'name',
                'category',
                'field',
                'kind',
                'before',
                'after',
                'severity',
              ]),
            );
        } finally {
          await db.close();
        }
      },
    );
}
