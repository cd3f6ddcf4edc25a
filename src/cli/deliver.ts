/** `daybook deliver`: the webhook delivery engine, once or until stopped. */
import type { Command } from 'commander';
import type { PassSummary } from '../delivery/engine.ts';
import { lifecycle } from '../runtime/shutdown.ts';
import { command } from './about.ts';
import { deliveryEngine, loggerFor } from './assemble.ts';
import { configOrExit, openStore } from './context.ts';

function describePass(s: PassSummary): string {
  return `deliveries: ${s.queued} queued, ${s.attempted} attempted, ${s.delivered} delivered, ${s.retrying} to retry, ${s.failed} failed${s.disabled ? `, ${s.disabled} endpoint(s) disabled` : ''}`;
}

export function deliverCommand(): Command {
  return command('deliver')
    .option('--watch', 'keep delivering as events come, until stopped')
    .option('--json', 'print the summary as JSON')
    .action(async (opts: { watch?: boolean; json?: boolean }) => {
      const config = configOrExit();
      const log = loggerFor(config);
      if (opts.watch) {
        const life = lifecycle({
          what: 'delivery',
          timeoutMs: Math.min(config.DAYBOOK_STOP_TIMEOUT_MS, 30_000),
          log,
        });
        const db = await openStore(config);
        life.closer.add('database', db.close);
        const engine = deliveryEngine(config, db.sql, log);
        const running = engine.run(life.signal);
        life.closer.add('delivery', () => running);
        log.info('delivery started');
        return life.serve();
      }
      const db = await openStore(config);
      try {
        const summary = await deliveryEngine(config, db.sql, log).pass();
        process.stdout.write(opts.json ? `${JSON.stringify(summary)}\n` : `${describePass(summary)}\n`);
      } finally {
        await db.close();
      }
    });
}
