/**
 * `daybook subscribe rotate-secret`: a new signing secret, shown once; the old one keeps signing
 * beside it for --overlap.
 */
import type { Command } from 'commander';
import { rotateSecret } from '../delivery/store.ts';
import { parseDuration } from '../retry/schedule.ts';
import { command } from './about.ts';
import { configOrExit, withStore } from './context.ts';
import { noSubscription } from './subscribe-shared.ts';
import { subscriptionIdArg, UsageError } from './usage.ts';

export function subscribeRotateSecretCommand(): Command {
  return command('subscribe rotate-secret')
    .argument('<id>', 'the subscription id', subscriptionIdArg)
    .option('--overlap <duration>', 'how long the old secret keeps signing (such as 24h, 30m, 0)', '24h')
    .option('--json', 'print as JSON')
    .action(async (id: number, opts: { overlap: string; json?: boolean }) => {
      let overlap: number;
      try {
        overlap = parseDuration(opts.overlap);
      } catch (err) {
        throw new UsageError(`--overlap: ${(err as Error).message}`);
      }
      const secret = await withStore(configOrExit(), ({ sql }) => rotateSecret(sql, id, overlap));
      if (!secret) throw noSubscription(id);
      if (opts.json) process.stdout.write(`${JSON.stringify({ id, secret, overlap_ms: overlap })}\n`);
      else process.stdout.write(`subscription ${id}: new signing secret (shown once; keep it): ${secret}\n`);
    });
}
