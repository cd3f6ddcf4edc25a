/** `daybook scheduler`: enqueues the daily work on cron ticks until stopped. */
import { Command } from 'commander';
import { startScheduler } from '../runtime/scheduler.ts';
import { configOrExit } from './context.ts';
import { startService } from './start.ts';

export function schedulerCommand(): Command {
  return new Command('scheduler')
    .description(
      'Enqueue the daily work on cron ticks (DAYBOOK_ENTERPRISE_CRON, DAYBOOK_PRODUCTS_CRON in DAYBOOK_CRON_TZ). Safe to run several: one instance is elected per tick, and job ids are deterministic. On start it catches up the latest tick it may have missed.',
    )
    .action(async () => {
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
