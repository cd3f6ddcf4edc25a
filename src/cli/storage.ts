/** `daybook migrate` and `daybook rebuild`. */
import { Command } from 'commander';
import { compactBookkeeping } from '../landing/compact.ts';
import { migrateDatabase } from '../db/migrate.ts';
import { grantAnalyticsRole, RoleNameError } from '../db/roles.ts';
import { rebuild } from '../history/rebuild.ts';
import { cycleOf } from '../time/cycles.ts';
import { configOrExit, withStore } from './context.ts';
import { dateArg } from './pipeline.ts';
import { intArg, UsageError } from './usage.ts';

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

export function rebuildCommand(): Command {
  return new Command('rebuild')
    .description(
      'Empty the normalized tables and replay the raw landing (raw_responses and their bodies) in landing order, in one transaction, with the rules of live ingestion: every event is derived again, and answers live ingestion rejected as stale stay rejected. The result equals the state before.',
    )
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

export function compactCommand(): Command {
  return new Command('compact')
    .description(
      'Compact the per-fetch bookkeeping of cycles older than DAYBOOK_BOOKKEEPING_DAYS (the plan job does it after every plan): delete their cycle_fetches rows, add their finished enterprise runs up into run_summaries, and delete superseded sightings; with DAYBOOK_ERROR_RETENTION_DAYS set, drop the error answers older than that which nothing points to. The ledger and all history are kept forever.',
    )
    .option(
      '--keep-days <n>',
      'days kept row by row (default DAYBOOK_BOOKKEEPING_DAYS)',
      intArg('--keep-days', 1, 3650),
    )
    .option(
      '--cycle <date>',
      'count the days back from this cycle (default: the current one)',
      dateArg('--cycle'),
    )
    .option('--json', 'print the summary as JSON')
    .action(async (opts: { keepDays?: number; cycle?: string; json?: boolean }) => {
      const config = configOrExit();
      const keep = opts.keepDays ?? config.DAYBOOK_BOOKKEEPING_DAYS;
      if (keep === 0)
        throw new UsageError(
          'DAYBOOK_BOOKKEEPING_DAYS is 0 (keep everything): give --keep-days to compact anyway',
        );
      await withStore(config, async ({ sql }) => {
        const s = await compactBookkeeping(
          sql,
          opts.cycle ?? cycleOf(new Date()),
          keep,
          config.DAYBOOK_ERROR_RETENTION_DAYS,
        );
        if (opts.json) process.stdout.write(`${JSON.stringify(s)}\n`);
        else
          process.stdout.write(
            `compacted the cycles before ${s.before}: ${s.cycleFetches} cycle_fetches rows deleted, ${s.runs} runs added up into ${s.summaries} run_summaries rows, ${s.sightings} superseded sightings deleted; ${s.errorCalls} error answers dropped (DAYBOOK_ERROR_RETENTION_DAYS), with ${s.errorBodies} bodies only they held\n`,
          );
      });
    });
}

export function analyticsRoleCommand(): Command {
  return new Command('analytics-role')
    .description(
      'Create (or update) a login role that can SELECT the analytics views and nothing else: no writes, no raw landing, no internal tables, no temporary tables or large objects (taken from PUBLIC in this database). Says on stderr what Postgres still allows it.',
    )
    .argument('<role>', 'role name, e.g. daybook_reader')
    .option('--password-env <var>', 'read the role password from this environment variable')
    .addHelpText(
      'after',
      '\nExample:\n  READER_PASSWORD=… daybook analytics-role daybook_reader --password-env READER_PASSWORD',
    )
    .action(async (role: string, opts: { passwordEnv?: string }) => {
      let password: string | null = null;
      if (opts.passwordEnv) {
        password = process.env[opts.passwordEnv] ?? null;
        if (!password) throw new UsageError(`--password-env ${opts.passwordEnv}: that variable is not set`);
      }
      const config = configOrExit();
      await withStore(config, async ({ sql }) => {
        let left: string[];
        try {
          left = await grantAnalyticsRole(sql, role, password);
        } catch (err) {
          if (err instanceof RoleNameError) throw new UsageError(err.message);
          throw err;
        }
        process.stdout.write(
          `role ${role} can read the analytics schema, and nothing else in this database\n`,
        );
        // What Postgres does not let daybook take away (see the README).
        for (const note of left) process.stderr.write(`daybook: note: ${note}\n`);
      });
    });
}
