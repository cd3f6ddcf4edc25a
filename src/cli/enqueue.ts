/** `daybook enqueue`: a cycle's plan, or a date's product pull, put on the queue by hand. */
import { Command } from 'commander';
import { Queues, retryPolicy } from '../runtime/queues.ts';
import { cycleOf } from '../time/cycles.ts';
import { oneShotRedis } from './assemble.ts';
import { configOrExit } from './context.ts';
import { dateArg } from './usage.ts';

export function enqueueCommand(): Command {
  return new Command('enqueue')
    .description(
      "Put a cycle's plan (and optionally a date's product pull) on the queue by hand, for the workers. Deterministic job ids make a repeat harmless.",
    )
    .option('--cycle <date>', 'the enterprise cycle to plan (default: the current one)', dateArg('--cycle'))
    .option('--products <date>', 'also pull the trending list of this date', dateArg('--products'))
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
