/** `daybook enqueue`: a cycle's plan, or a date's product pull, put on the queue by hand. */
import type { Command } from 'commander';
import { Queues, retryPolicy } from '../runtime/queues.ts';
import { cycleOf } from '../time/cycles.ts';
import { command } from './about.ts';
import { oneShotRedis } from './assemble.ts';
import { configOrExit } from './context.ts';
import { dateOption } from './usage.ts';

export function enqueueCommand(): Command {
  return command('enqueue')
    .addOption(dateOption('--cycle', 'the enterprise cycle to plan (default: the current one)'))
    .addOption(dateOption('--products', 'also pull the trending list of this date'))
    .option('--no-plan', 'do not enqueue the cycle plan')
    .action(async (opts: { cycle?: string; products?: string; plan: boolean }) => {
      const config = configOrExit();
      const redis = await oneShotRedis(config);
      const queues = new Queues(redis, config.DAYBOOK_REDIS_PREFIX, retryPolicy(config));
      try {
        const ids: string[] = [];
        if (opts.plan) ids.push(await queues.addPlan({ cycle: opts.cycle ?? cycleOf(new Date()) }));
        if (opts.products) {
          ids.push(
            await queues.addProducts({
              date: opts.products,
              pull: 'd1',
              limit: config.DAYBOOK_PRODUCT_LIMIT,
            }),
          );
        }
        process.stdout.write(`enqueued ${ids.join(', ') || 'nothing'}\n`);
      } finally {
        await queues.close();
        await redis.quit();
      }
    });
}
