/**
 * `daybook events replay`: a subscription's events sent again from a point of the outbox (a
 * sequence number or a date); the next delivery sends them.
 */
import type { Command } from 'commander';
import { replay } from '../delivery/store.ts';
import { command } from './about.ts';
import { configOrExit, withStore } from './context.ts';
import { dateOption, intArg, UsageError } from './usage.ts';

export function eventsReplayCommand(): Command {
  return command('events replay')
    .requiredOption('--subscription <id>', 'the subscription (subscribe list)', intArg('--subscription', 1))
    .option('--after <seq>', 'events after this sequence number', intArg('--after', 0))
    .addOption(dateOption('--since', 'events found on or after this date, UTC (YYYY-MM-DD)'))
    .action(async (opts: { subscription: number; after?: number; since?: string }) => {
      if ((opts.after === undefined) === (opts.since === undefined))
        throw new UsageError('give one of --after <seq> and --since <date>');
      await withStore(configOrExit(), async ({ sql }) => {
        const n = await replay(
          sql,
          opts.subscription,
          opts.after !== undefined ? { after: opts.after } : { since: new Date(`${opts.since}T00:00:00Z`) },
        );
        if (n === null)
          throw new UsageError(`there is no subscription ${opts.subscription} (subscribe list shows them)`);
        process.stdout.write(`subscription ${opts.subscription}: ${n} events queued again\n`);
      });
    });
}
