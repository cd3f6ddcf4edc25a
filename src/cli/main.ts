/**
 * The `daybook` command. Exit codes: 0 success, 1 a failure at run time, 2 bad input or usage.
 * A person's own mistake gets a one-line message, never a stack trace.
 */
import { CommanderError } from 'commander';
import { loadConfig } from '../config/config.ts';
import { databaseProblem } from './database-errors.ts';
import { buildProgram } from './program.ts';
import { forTerminal } from './terminal.ts';
import { suggestSubcommands } from './unknown-command.ts';
import { UsageError } from './usage.ts';

/** A message for the terminal: data it quotes (a value, an upstream error) cannot drive it. */
const say = (message: string) => message.split('\n').map(forTerminal).join('\n');

/** DATABASE_URL, for a message about the database it names (the message never holds its password). */
function databaseUrl(): string | undefined {
  try {
    return loadConfig().DATABASE_URL;
  } catch {
    return undefined;
  }
}

async function main(argv: string[]): Promise<number> {
  try {
    await suggestSubcommands(buildProgram()).parseAsync(argv);
    // A command that ran but failed (a run with failed entries, say) has set exit code 1.
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Commander already printed its message (or the help/version text).
      return err.exitCode === 0 ? 0 : 2;
    }
    if (err instanceof UsageError) {
      process.stderr.write(`daybook: ${say(err.message)}\n`);
      return 2;
    }
    // A database that cannot be used (it does not exist): what to do about it, exit 1.
    const problem = databaseProblem(err, databaseUrl());
    if (problem !== null) {
      process.stderr.write(`daybook: ${say(problem)}\n`);
      return 1;
    }
    process.stderr.write(`daybook: ${say(err instanceof Error ? err.message : String(err))}\n`);
    if (process.env.DAYBOOK_DEBUG) process.stderr.write(`${err instanceof Error ? err.stack : ''}\n`);
    return 1;
  }
}

// A reader that stops early (`daybook sql … | head`) closes the pipe: that is not an error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw err;
  });
}

process.exitCode = await main(process.argv);
