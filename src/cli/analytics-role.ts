/** `daybook analytics-role`: a login role that reads the analytics views only. */
import type { Command } from 'commander';
import { grantAnalyticsRole, RoleNameError } from '../db/roles.ts';
import { command } from './about.ts';
import { configOrExit, withStore } from './context.ts';
import { UsageError } from './usage.ts';

export function analyticsRoleCommand(): Command {
  return command('analytics-role')
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
