/** The `daybook` command tree (the CLI is part of the public contract). */

import type { Command } from 'commander';
import { command } from './about.ts';
import { analyticsRoleCommand } from './analytics-role.ts';
import { changesCommand } from './changes.ts';
import { compactCommand } from './compact.ts';
import { deliverCommand } from './deliver.ts';
import { deliveriesCommand } from './deliveries.ts';
import { demoCommand } from './demo.ts';
import { digestCommand } from './digest.ts';
import { doctorCommand } from './doctor.ts';
import { driftCommand } from './drift.ts';
import { enqueueCommand } from './enqueue.ts';
import { eventsCommand } from './events.ts';
import { exportCommand } from './export.ts';
import { migrateCommand } from './migrate.ts';
import { planCommand } from './plan.ts';
import { productsCommand } from './products.ts';
import { rebuildCommand } from './rebuild.ts';
import { resumeCommand } from './resume.ts';
import { runCommand } from './run.ts';
import { schedulerCommand } from './scheduler.ts';
import { serveCommand } from './serve.ts';
import { simCommand } from './sim.ts';
import { sqlCommand } from './sql.ts';
import { statusCommand } from './status.ts';
import { subscribeCommand } from './subscribe.ts';
import { watchCommand } from './watch.ts';
import { workerCommand } from './worker.ts';

export function buildProgram(): Command {
  const program = command('daybook')
    .enablePositionalOptions()
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
  program.addCommand(doctorCommand());
  const override = (cmd: Command): void => {
    cmd.exitOverride();
    for (const sub of cmd.commands) override(sub);
  };
  override(program);
  return program;
}
