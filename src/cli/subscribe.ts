/** Webhook, chat and mail subscriptions: `subscribe add|list|pause|resume|remove|rotate-secret|test`. */
import type { Command } from 'commander';
import { command } from './about.ts';
import { subscribeAddCommand } from './subscribe-add.ts';
import { subscribeListCommand } from './subscribe-list.ts';
import { subscribePauseCommand } from './subscribe-pause.ts';
import { subscribeRemoveCommand } from './subscribe-remove.ts';
import { subscribeResumeCommand } from './subscribe-resume.ts';
import { subscribeRotateSecretCommand } from './subscribe-rotate-secret.ts';
import { subscribeTestCommand } from './subscribe-test.ts';

export function subscribeCommand(): Command {
  return command('subscribe')
    .addCommand(subscribeAddCommand())
    .addCommand(subscribeListCommand())
    .addCommand(subscribePauseCommand())
    .addCommand(subscribeResumeCommand())
    .addCommand(subscribeRemoveCommand())
    .addCommand(subscribeRotateSecretCommand())
    .addCommand(subscribeTestCommand());
}
