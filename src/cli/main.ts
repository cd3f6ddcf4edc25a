/**
 * The `daybook` command. Exit codes: 0 success, 1 a failure at run time, 2 bad input or usage.
 * A person's own mistake gets a one-line message, never a stack trace.
 */
import { Command, CommanderError } from 'commander';
import { demoCommand } from './demo.ts';
import {
  enqueueCommand,
  productsCommand,
  resumeCommand,
  runCommand,
  schedulerCommand,
  serveCommand,
  workerCommand,
} from './pipeline.ts';
import { changesCommand, statusCommand } from './report.ts';
import { simCommand } from './sim.ts';
import { sqlCommand } from './sql.ts';
import { analyticsRoleCommand, migrateCommand, rebuildCommand } from './storage.ts';
import { UsageError } from './usage.ts';
import { watchCommand } from './watch.ts';

export function buildProgram(): Command {
  const program = new Command('daybook')
    .description(
      'Scheduled batch ingestion of an enterprise registry and a product trending list into Postgres, with full history and a change log.',
    )
    .version('0.1.0')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  program.addCommand(simCommand());
  program.addCommand(migrateCommand());
  program.addCommand(rebuildCommand());
  program.addCommand(analyticsRoleCommand());
  program.addCommand(watchCommand());
  program.addCommand(runCommand());
  program.addCommand(workerCommand());
  program.addCommand(schedulerCommand());
  program.addCommand(resumeCommand());
  program.addCommand(enqueueCommand());
  program.addCommand(serveCommand());
  program.addCommand(productsCommand());
  program.addCommand(statusCommand());
  program.addCommand(changesCommand());
  program.addCommand(sqlCommand());
  program.addCommand(demoCommand());
  const override = (cmd: Command): void => {
    cmd.exitOverride();
    for (const sub of cmd.commands) override(sub);
  };
  override(program);
  return program;
}

async function main(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv);
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Commander already printed its message (or the help/version text).
      return err.exitCode === 0 ? 0 : 2;
    }
    if (err instanceof UsageError) {
      process.stderr.write(`daybook: ${err.message}\n`);
      return 2;
    }
    process.stderr.write(`daybook: ${err instanceof Error ? err.message : String(err)}\n`);
    if (process.env.DAYBOOK_DEBUG) process.stderr.write(`${err instanceof Error ? err.stack : ''}\n`);
    return 1;
  }
}

process.exitCode = await main(process.argv);
