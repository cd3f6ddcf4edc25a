/** `daybook scheduler`: enqueues the daily work on cron ticks until stopped. */
import type { Command } from 'commander';
import { startScheduler } from '../runtime/scheduler.ts';
import { command } from './about.ts';
import { configOrExit } from './context.ts';
import { startService } from './start.ts';

export function schedulerCommand(): Command {
  return command('scheduler').action(async () => {
    const config = configOrExit();
    const { log, life, redis, queues } = startService(config, {
      what: 'scheduler',
      timeoutMs: Math.min(config.DAYBOOK_STOP_TIMEOUT_MS, 10_000),
    });
    // With Redis down, the catch-up below waits for it: commands are queued until it is back.
    const scheduler = await life.starting(() =>
      startScheduler({ config, queues, redis, log, now: () => new Date() }),
    );
    life.closer.add('scheduler', scheduler.stop);
    log.info(
      {
        enterprise: config.DAYBOOK_ENTERPRISE_CRON,
        products: config.DAYBOOK_PRODUCTS_CRON,
        tz: config.DAYBOOK_CRON_TZ,
      },
      'scheduler started',
    );
    return life.serve();
  });
}
