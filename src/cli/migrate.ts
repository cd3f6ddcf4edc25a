/** `daybook migrate`: applies the database migrations. */
import type { Command } from 'commander';
import { migrateDatabase } from '../db/migrate.ts';
import { command } from './about.ts';
import { configOrExit, withStore } from './context.ts';

export function migrateCommand(): Command {
  return command('migrate')
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
