/**
 * The `daybook` command. Exit codes: 0 success, 1 a failure at run time, 2 bad input or usage.
 * A person's own mistake gets a one-line message, never a stack trace.
 */
import { CommanderError } from 'commander';
import { buildProgram } from './program.ts';
import { UsageError } from './usage.ts';

async function main(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv);
    // A command that ran but failed (a run with failed entries, say) has set exit code 1.
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
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
