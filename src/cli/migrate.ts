/** `daybook migrate`: applies the database migrations. */
import { Command } from 'commander';
import { migrateDatabase } from '../db/migrate.ts';
import { configOrExit, withStore } from './context.ts';

export function migrateCommand(): Command {
  return new Command('migrate')
    .description('Apply the database migrations (safe to run twice, and from several processes at once).')
    .option('--json', 'print the result as JSON')
    .action(async (opts: { json?: boolean }) => {
      const config = configOrExit();
      const applied = config.DATABASE_URL
        ? await migrateDatabase(config.DATABASE_URL)
        : await withStore(config, async (store) => store.migrated);
      if (opts.json) process.stdout.write(`${JSON.stringify({ applied })}\n`);
      else
        process.stdout.write(
          applied === 0 ? 'database is up to date\n' : `applied ${applied} migration(s)\n`,
        );
    });
}
