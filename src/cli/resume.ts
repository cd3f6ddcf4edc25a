/** `daybook resume`: takes up enterprise work paused by insufficient credits. */
import type { Command } from 'commander';
import { resumeCycle } from '../purchase/credits.ts';
import { resumeInline, resumeQueued } from '../runtime/resume.ts';
import { cycleOf } from '../time/cycles.ts';
import { command } from './about.ts';
import { clientFor, loggerFor, oneShotRedis } from './assemble.ts';
import { configOrExit, withStore } from './context.ts';
import { cycleOption, intArg, UsageError } from './usage.ts';

export function resumeCommand(): Command {
  return command('resume')
    .addOption(cycleOption())
    .option(
      '--add-budget <credits>',
      'raise the cycle budget by this many credits',
      intArg('--add-budget', 0),
      0,
    )
    .option('--inline', 'run the deferred entries now in this process instead of enqueuing them')
    .action(async (opts: { cycle?: string; addBudget: number; inline?: boolean }) => {
      const config = configOrExit();
      await withStore(config, async (db) => {
        const cycle = opts.cycle ?? cycleOf(new Date());
        if (!(await resumeCycle(db.sql, cycle, opts.addBudget))) {
          throw new UsageError(`cycle ${cycle} has no budget yet: nothing was planned for it`);
        }
        const work = { sql: db.sql, config, log: loggerFor(config), now: () => new Date() };
        if (opts.inline) {
          const summary = await resumeInline({ ...work, client: clientFor(config) }, cycle);
          process.stdout.write(`cycle ${cycle} resumed inline: ${JSON.stringify(summary.enterprises)}\n`);
        } else {
          const redis = await oneShotRedis(config);
          try {
            const r = await resumeQueued(work, redis, cycle);
            process.stdout.write(
              `cycle ${cycle} resumed: ${r.selected} entries planned and enqueued (${r.rerun} of them deferred earlier); ${r.deferred} still deferred\n`,
            );
          } finally {
            await redis.quit();
          }
        }
      });
    });
}
