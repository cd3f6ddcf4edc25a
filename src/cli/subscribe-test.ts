/** `daybook subscribe test`: a sample message sent now, and what the receiver answered. */
import type { Command } from 'commander';
import { dispatchEvents, SAMPLE_KNOWN, sampleEvent } from '../delivery/dispatch.ts';
import { deliveryTarget } from '../delivery/store.ts';
import { command } from './about.ts';
import { mailerFor } from './assemble.ts';
import { configOrExit, withStore } from './context.ts';
import { noSubscription } from './subscribe-shared.ts';
import { subscriptionIdArg } from './usage.ts';

export function subscribeTestCommand(): Command {
  return command('subscribe test')
    .argument('<id>', 'the subscription id', subscriptionIdArg)
    .option('--json', 'print the outcome as JSON')
    .action(async (id: number, opts: { json?: boolean }) => {
      const config = configOrExit();
      const at = new Date();
      const r = await withStore(config, async ({ sql }) => {
        const target = await deliveryTarget(sql, id);
        if (!target) return null;
        return dispatchEvents(target, [sampleEvent(target.lang, at)], SAMPLE_KNOWN, at, {
          timeoutMs: config.DAYBOOK_WEBHOOK_TIMEOUT_MS,
          publicUrl: config.DAYBOOK_PUBLIC_URL,
          mailer: mailerFor(config),
        });
      });
      if (!r) throw noSubscription(id);
      const outcome = r.ok ? 'delivered' : r.rateLimitedMs !== null ? 'rate limited' : 'refused';
      if (opts.json)
        process.stdout.write(
          `${JSON.stringify({ id, outcome, status: r.status, answer: r.response, error: r.error, latency_ms: r.latencyMs })}\n`,
        );
      else
        process.stdout.write(
          `subscription ${id}: ${outcome}${r.status !== null ? ` (HTTP ${r.status})` : ''} in ${r.latencyMs} ms\n` +
            `answer: ${r.response ?? '(none)'}\n${r.error ? `error: ${r.error}\n` : ''}`,
        );
      if (!r.ok) process.exitCode = 1;
    });
}
