/** `daybook resume`: takes up enterprise work paused by insufficient credits. */
import type { Command } from 'commander';
import { processPlan } from '../../jobs/plan.ts';
import type { Sql } from '../db/connect.ts';
import { resumeCycle } from '../purchase/credits.ts';
import { replanDeferred } from '../purchase/fetches.ts';
import { runInline } from '../runtime/inline.ts';
import { Queues, retryPolicy } from '../runtime/queues.ts';
import { coordinationKey } from '../runtime/redis.ts';
import { cycleOf } from '../time/cycles.ts';
import { command } from './about.ts';
import { clientFor, limiterFor, loggerFor, oneShotRedis } from './assemble.ts';
import { configOrExit, withStore } from './context.ts';
import { dateOption, intArg, UsageError } from './usage.ts';

export function resumeCommand(): Command {
  return command('resume')
    .addOption(dateOption('--cycle', 'the cycle (default: the current one)'))
    .option(
      '--add-budget <credits>',
      'raise the cycle budget by this many credits',
      intArg('--add-budget', 0),
      0,
    )
    .option('--inline', 'run the deferred entries now in this process instead of enqueuing them')
    .action(async (opts: { cycle?: string; addBudget: number; inline?: boolean }) => {
      const config = configOrExit();
      await withStore(config, async (db) => {
        const cycle = opts.cycle ?? cycleOf(new Date());
        if (!(await resumeCycle(db.sql, cycle, opts.addBudget))) {
          throw new UsageError(`cycle ${cycle} has no budget yet: nothing was planned for it`);
        }
        // Entries deferred with a row (by a worker refused credits, or a re-plan) are planned again,
        // in the plan's own transaction under its lock; their jobs ran already, so they are
        // enqueued under new ids (a resume round). The plan then decides over these and the
        // entries it deferred without a row, within the budget.
        let again = new Set<number>();
        const replan = async (tx: Sql) => {
          again = new Set(await replanDeferred(tx, cycle));
        };
        if (opts.inline) {
          const log = loggerFor(config);
          const summary = await runInline(
            {
              sql: db.sql,
              client: clientFor(config),
              limiter: limiterFor(config, db.sql),
              config,
              log,
              now: () => new Date(),
            },
            {
              cycle,
              only: 'enterprises',
              concurrency: config.DAYBOOK_WORKER_CONCURRENCY,
              beforePlan: replan,
            },
          );
          process.stdout.write(`cycle ${cycle} resumed inline: ${JSON.stringify(summary.enterprises)}\n`);
        } else {
          const redis = await oneShotRedis(config);
          const queues = new Queues(redis, config.DAYBOOK_REDIS_PREFIX, retryPolicy(config));
          let rerun = 0;
          let report: Awaited<ReturnType<typeof processPlan>>;
          try {
            const round = Number(
              await redis.incr(coordinationKey(config.DAYBOOK_REDIS_PREFIX, 'resume', cycle)),
            );
            report = await processPlan(
              {
                sql: db.sql,
                config,
                log: loggerFor(config),
                now: () => new Date(),
                enqueue: {
                  async enterprises(c, ids) {
                    const before = ids.filter((id) => again.has(id));
                    rerun += before.length;
                    return (
                      (await queues.enterprises(
                        c,
                        ids.filter((id) => !again.has(id)),
                      )) + (await queues.enterprises(c, before, round))
                    );
                  },
                },
              },
              { cycle },
              `resume-${cycle}-r${round}`,
              replan,
            );
          } finally {
            await queues.close();
            await redis.quit();
          }
          const c = report.counts ?? {};
          process.stdout.write(
            `cycle ${cycle} resumed: ${c.selected ?? 0} entries planned and enqueued (${rerun} of them deferred earlier); ${c.deferred ?? 0} still deferred\n`,
          );
        }
      });
    });
}
