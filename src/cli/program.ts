/** The `daybook` command tree (the CLI is part of the public contract). */

import { Command } from 'commander';
import { demoCommand } from './demo.ts';
import { digestCommand, eventsCommand } from './events.ts';
import { exportCommand } from './export.ts';
import {
  enqueueCommand,
  productsCommand,
  resumeCommand,
  runCommand,
  schedulerCommand,
  serveCommand,
  workerCommand,
} from './pipeline.ts';
import { planCommand } from './plan.ts';
import { changesCommand, driftCommand, statusCommand } from './report.ts';
import { simCommand } from './sim.ts';
import { sqlCommand } from './sql.ts';
import { analyticsRoleCommand, compactCommand, migrateCommand, rebuildCommand } from './storage.ts';
import { deliverCommand, deliveriesCommand, subscribeCommand } from './subscribe.ts';
import { watchCommand } from './watch.ts';

export function buildProgram(): Command {
  const program = new Command('daybook')
    .enablePositionalOptions()
    .description(
      'Scheduled batch ingestion of an enterprise registry and a product trending list into Postgres, with full history and a change log.',
    )
    .version('0.1.0')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  program.addCommand(simCommand());
  program.addCommand(migrateCommand());
  program.addCommand(rebuildCommand());
  program.addCommand(compactCommand());
  program.addCommand(analyticsRoleCommand());
  program.addCommand(watchCommand());
  program.addCommand(runCommand());
  program.addCommand(workerCommand());
  program.addCommand(schedulerCommand());
  program.addCommand(resumeCommand());
  program.addCommand(planCommand());
  program.addCommand(enqueueCommand());
  program.addCommand(serveCommand());
  program.addCommand(productsCommand());
  program.addCommand(statusCommand());
  program.addCommand(changesCommand());
  program.addCommand(eventsCommand());
  program.addCommand(digestCommand());
  program.addCommand(subscribeCommand());
  program.addCommand(deliverCommand());
  program.addCommand(deliveriesCommand());
  program.addCommand(exportCommand());
  program.addCommand(driftCommand());
  program.addCommand(sqlCommand());
  program.addCommand(demoCommand());
  const override = (cmd: Command): void => {
    cmd.exitOverride();
    for (const sub of cmd.commands) override(sub);
  };
  override(program);
  return program;
}
