/** `daybook compact`: the per-fetch bookkeeping of old cycles compacted. */
import type { Command } from 'commander';
import { compactNow } from '../runtime/maintenance.ts';
import { cycleOf } from '../time/cycles.ts';
import { command } from './about.ts';
import { configOrExit, withStore } from './context.ts';
import { cycleOption, fromConfig, intArg, UsageError } from './usage.ts';

export function compactCommand(): Command {
  return command('compact')
    .addOption(cycleOption('count the days back from this cycle'))
    .option(
      '--keep-days <n>',
      fromConfig('days kept row by row', 'DAYBOOK_BOOKKEEPING_DAYS'),
      intArg('--keep-days', 1, 3650),
    )
    .option('--json', 'print the summary as JSON')
    .action(async (opts: { keepDays?: number; cycle?: string; json?: boolean }) => {
      const config = configOrExit();
      const keep = opts.keepDays ?? config.DAYBOOK_BOOKKEEPING_DAYS;
      if (keep === 0)
        throw new UsageError(
          'DAYBOOK_BOOKKEEPING_DAYS is 0 (keep everything): give --keep-days to compact anyway',
        );
      await withStore(config, async ({ sql }) => {
        const s = await compactNow(sql, config, opts.cycle ?? cycleOf(new Date()), keep);
        if (opts.json) process.stdout.write(`${JSON.stringify(s)}\n`);
        else
          process.stdout.write(
            `compacted the cycles before ${s.before}: ${s.cycleFetches} cycle_fetches rows deleted, ${s.ledgerEntries} ledger entries compacted, ${s.runs} runs added up into ${s.summaries} run_summaries rows, ${s.sightings} superseded sightings deleted; ${s.errorCalls} error answers dropped (DAYBOOK_ERROR_RETENTION_DAYS), with ${s.errorBodies} bodies only they held\n`,
          );
      });
    });
}
