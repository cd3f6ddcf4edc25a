/** `daybook deliveries`: the webhook attempt log. */
import type { Command } from 'commander';
import { attemptLog } from '../delivery/store.ts';
import { command } from './about.ts';
import { configOrExit, withStore } from './context.ts';
import { formatTable, jsonLines } from './terminal.ts';
import { intArg, subscriptionIdArg } from './usage.ts';

export function deliveriesCommand(): Command {
  return command('deliveries')
    .option('--failed', 'only attempts that did not deliver')
    .option('--subscription <id>', 'only this subscription', subscriptionIdArg)
    .option('--limit <n>', 'at most this many attempts', intArg('--limit', 1, 100_000), 50)
    .option('--json', 'print as JSON lines')
    .action(async (opts: { failed?: boolean; subscription?: number; limit: number; json?: boolean }) => {
      const rows = await withStore(configOrExit(), ({ sql }) => attemptLog(sql, opts));
      if (opts.json) process.stdout.write(jsonLines(rows));
      else process.stdout.write(formatTable(rows));
    });
}
