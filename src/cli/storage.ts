/** `daybook migrate` and `daybook rebuild`. */
import { Command } from 'commander';
import { migrateDatabase } from '../db/migrate.ts';
import { rebuild } from '../history/rebuild.ts';
import { configOrExit, withStore } from './context.ts';

export function migrateCommand(): Command {
  return new Command('migrate')
    .description('Apply the database migrations (safe to run twice, and from several processes at once).')
    .option('--json', 'print the result as JSON')
    .action(async (opts: { json?: boolean }) => {
      const config = configOrExit();
      const applied = config.DATABASE_URL
        ? await migrateDatabase(config.DATABASE_URL)
        : await withStore(config, async () => 0);
      if (opts.json) process.stdout.write(`${JSON.stringify({ applied })}\n`);
      else
        process.stdout.write(
          applied === 0 ? 'database is up to date\n' : `applied ${applied} migration(s)\n`,
        );
    });
}

export function rebuildCommand(): Command {
  return new Command('rebuild')
    .description(
      'Empty the normalized tables and replay raw_responses in fetch order, in one transaction. The result equals the state before.',
    )
    .option('--batch-size <n>', 'raw answers per batch', (v) => Number(v), 1000)
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
            `rebuilt from ${summary.rawRead} raw answers: ${summary.enterprises} enterprise answers, ${summary.productPulls} product lists, ${summary.productDetails} product details, ${summary.disappeared} disappearances; ${summary.unreadable} unreadable\n`,
          );
        }
      });
    });
}
