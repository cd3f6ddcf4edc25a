/** `daybook subscribe remove`: a subscription removed, with its pending deliveries and attempt log. */
import type { Command } from 'commander';
import { removeSubscription } from '../delivery/store.ts';
import { command } from './about.ts';
import { configOrExit, withStore } from './context.ts';
import { noSubscription } from './subscribe-shared.ts';
import { subscriptionIdArg } from './usage.ts';

export function subscribeRemoveCommand(): Command {
  return command('subscribe remove')
    .argument('<id>', 'the subscription id', subscriptionIdArg)
    .action(async (id: number) => {
      if (!(await withStore(configOrExit(), ({ sql }) => removeSubscription(sql, id))))
        throw noSubscription(id);
      process.stdout.write(`subscription ${id} removed\n`);
    });
}
