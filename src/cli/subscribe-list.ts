/** `daybook subscribe list`: the subscriptions and their state, never their secrets. */
import type { Command } from 'commander';
import { listSubscriptions } from '../delivery/store.ts';
import { command } from './about.ts';
import { configOrExit, withStore } from './context.ts';
import { shownUrl } from './subscribe-shared.ts';
import { listOutput } from './terminal.ts';

export function subscribeListCommand(): Command {
  return command('subscribe list')
    .option('--json', 'print as JSON lines')
    .action(async (opts: { json?: boolean }) => {
      const subs = await withStore(configOrExit(), ({ sql }) => listSubscriptions(sql));
      process.stdout.write(
        listOutput(
          subs.map((s) => ({ ...s, url: shownUrl(s.url) })),
          opts.json,
          {
            cells: (s) => ({
              id: s.id,
              url: shownUrl(s.url),
              state: s.state + (s.disabled_reason ? ` (${s.disabled_reason})` : ''),
              types: s.digest_only
                ? 'digest.daily'
                : s.types.join(',') || (s.format === 'standard' ? '*' : 'changes, digest.daily'),
              'min severity': s.min_severity,
              pids: s.pids.join(','),
              format: s.format,
              lang: s.lang,
              private: s.allow_private ? 'allowed' : '',
            }),
          },
        ),
      );
    });
}
