/** `daybook rebuild`: the normalized tables replayed from the raw landing. */
import type { Command } from 'commander';
import { rebuild } from '../history/rebuild.ts';
import { command } from './about.ts';
import { configOrExit, withStore } from './context.ts';
import { intArg } from './usage.ts';

export function rebuildCommand(): Command {
  return command('rebuild')
    .option('--batch-size <n>', 'raw answers per batch (1-100000)', intArg('--batch-size', 1, 100_000), 1000)
    .option('--json', 'print the summary as JSON')
    .action(async (opts: { batchSize: number; json?: boolean }) => {
      const config = configOrExit();
      await withStore(config, async ({ sql }) => {
        const tty = process.stderr.isTTY;
        const summary = await rebuild(sql, {
          batchSize: opts.batchSize,
          onProgress: (done, total) => {
            if (tty) process.stderr.write(`\rrebuild: ${done}/${total} raw answers replayed`);
            else process.stderr.write(`rebuild: ${done}/${total} raw answers replayed\n`);
          },
        });
        if (tty) process.stderr.write('\n');
        if (opts.json) process.stdout.write(`${JSON.stringify(summary)}\n`);
        else {
          process.stdout.write(
            `rebuilt from ${summary.rawRead} raw answers: ${summary.enterprises} enterprise answers, ${summary.productPulls} product lists, ${summary.productDetails} product details, ${summary.disappeared} disappearances; ${summary.unreadable} unreadable; ${summary.staleKept} answers kept unapplied as live ingestion rejected them (stale)\n`,
          );
        }
      });
    });
}
