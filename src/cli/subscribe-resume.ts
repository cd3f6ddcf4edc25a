/** `daybook subscribe resume`: a paused or disabled subscription delivered to again. */
import type { Command } from 'commander';
import { command } from './about.ts';
import { setState } from './subscribe-shared.ts';
import { subscriptionIdArg } from './usage.ts';

export function subscribeResumeCommand(): Command {
  return command('subscribe resume')
    .argument('<id>', 'the subscription id (subscribe list)', subscriptionIdArg)
    .action((id: number) => setState(id, 'active'));
}
