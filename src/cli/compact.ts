/** `daybook compact`: the per-fetch bookkeeping of old cycles compacted. */
import { Command } from 'commander';
import { compactBookkeeping } from '../../jobs/compact.ts';
import { cycleOf } from '../time/cycles.ts';
import { configOrExit, withStore } from './context.ts';
import { dateArg, intArg, UsageError } from './usage.ts';

export function compactCommand(): Command {
  return new Command('compact')
    .description(
      'Compact the per-fetch bookkeeping of cycles older than DAYBOOK_BOOKKEEPING_DAYS (the plan job does it after every plan): delete their cycle_fetches rows, add their finished enterprise runs up into run_summaries, and delete superseded sightings; with DAYBOOK_ERROR_RETENTION_DAYS set, drop the error answers older than that which nothing points to. The ledger and all history are kept forever.',
    )
    .option(
      '--keep-days <n>',
      'days kept row by row (default DAYBOOK_BOOKKEEPING_DAYS)',
      intArg('--keep-days', 1, 3650),
    )
    .option(
      '--cycle <date>',
      'count the days back from this cycle (default: the current one)',
      dateArg('--cycle'),
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
        const s = await compactBookkeeping(
          sql,
          opts.cycle ?? cycleOf(new Date()),
          keep,
          config.DAYBOOK_ERROR_RETENTION_DAYS,
        );
        if (opts.json) process.stdout.write(`${JSON.stringify(s)}\n`);
        else
          process.stdout.write(
            `compacted the cycles before ${s.before}: ${s.cycleFetches} cycle_fetches rows deleted, ${s.runs} runs added up into ${s.summaries} run_summaries rows, ${s.sightings} superseded sightings deleted; ${s.errorCalls} error answers dropped (DAYBOOK_ERROR_RETENTION_DAYS), with ${s.errorBodies} bodies only they held\n`,
          );
      });
    });
}
