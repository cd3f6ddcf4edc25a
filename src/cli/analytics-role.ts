/** `daybook analytics-role`: a login role that reads the analytics views only. */
import type { Command } from 'commander';
import { ANALYTICS_STATEMENT_TIMEOUT_MS, grantAnalyticsRole, RoleNameError } from '../db/roles.ts';
import { command } from './about.ts';
import { configOrExit, withStore } from './context.ts';
import { secondsArg, UsageError } from './usage.ts';

export function analyticsRoleCommand(): Command {
  return command('analytics-role')
    .argument('<role>', 'role name, e.g. daybook_reader')
    .option('--password-env <var>', 'read the role password from this environment variable')
    .option(
      '--statement-timeout <seconds>',
      'cancel any statement of the role that runs longer than this (its statement_timeout; a number above 0, as 60 or 0.5)',
      secondsArg('--statement-timeout'),
      ANALYTICS_STATEMENT_TIMEOUT_MS / 1000,
    )
    .addHelpText(
      'after',
      `
The role's statement_timeout is set each time this runs (60 s unless --statement-timeout says
otherwise): a statement of the role that runs longer is cancelled. A session of the role may
still change it for itself (SET statement_timeout).

Example:
  READER_PASSWORD=… daybook analytics-role daybook_reader --password-env READER_PASSWORD`,
    )
    .action(async (role: string, opts: { passwordEnv?: string; statementTimeout: number }) => {
      let password: string | null = null;
      if (opts.passwordEnv) {
        password = process.env[opts.passwordEnv] ?? null;
        if (!password) throw new UsageError(`--password-env ${opts.passwordEnv}: that variable is not set`);
      }
      const config = configOrExit();
      await withStore(config, async ({ sql }) => {
        let left: string[];
        try {
          left = await grantAnalyticsRole(sql, role, password, Math.round(opts.statementTimeout * 1000));
        } catch (err) {
          if (err instanceof RoleNameError) throw new UsageError(err.message);
          throw err;
        }
        process.stdout.write(
          `role ${role} can read the analytics schema, and nothing else in this database\n` +
            `its statements are cancelled after ${opts.statementTimeout} s (statement_timeout; change it with --statement-timeout SECONDS)\n`,
        );
        // What Postgres does not let daybook take away (see the README).
        for (const note of left) process.stderr.write(`daybook: note: ${note}\n`);
      });
    });
}
