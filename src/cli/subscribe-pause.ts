/** `daybook subscribe pause`: deliveries to a subscription wait until it is resumed. */
import type { Command } from 'commander';
import { command } from './about.ts';
import { setState } from './subscribe-shared.ts';
import { subscriptionIdArg } from './usage.ts';

export function subscribePauseCommand(): Command {
  return command('subscribe pause')
    .argument('<id>', 'the subscription id (subscribe list)', subscriptionIdArg)
    .action((id: number) => setState(id, 'paused'));
}
