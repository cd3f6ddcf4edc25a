/**
 * `daybook enqueue`: a cycle's plan, or a top-up of it, or a date's product pull, put on the
 * queue by hand.
 *
 * The cycle's plan has one id per cycle: asked for again it adds nothing, unless Redis lost it
 * (then it runs again and brings back the jobs Postgres says are not done). Once the cycle was
 * planned, what is due in it and not planned (entries added since, by `watch add` or `watch
 * import`) is planned by a top-up (src/plan/topup.ts), under an id of its own: asked for twice
 * in the same state it is added once, and after it ran nothing it planned is planned again.
 */
import type { Command } from 'commander';
import type { Config } from '../config/config.ts';
import type { Waiting } from '../plan/topup.ts';
import { topUpOf } from '../plan/topup.ts';
import { Queues, retryPolicy } from '../runtime/queues.ts';
import { cycleOf } from '../time/cycles.ts';
import { command } from './about.ts';
import { oneShotRedis } from './assemble.ts';
import { configOrExit, withStore } from './context.ts';
import { forTerminal } from './terminal.ts';
import { cycleOption, dateOption } from './usage.ts';

/** What was put on the queue, and what the user should know about it. */
interface Enqueued {
  ids: string[];
  notes: string[];
}

const count = (n: number, one: string, many: string) => `${n.toLocaleString('en')} ${n === 1 ? one : many}`;

const WAIT_WORDS: Record<string, string> = {
  credit_budget: 'the credit budget (daybook resume --add-budget adds credits',
  rate_window: 'room in the rate limit (the rest of the cycle is taken',
  max_entries: 'room under the cap on entries per cycle (',
  related_share: "room in the shareholders' share of the cycle (DAYBOOK_RELATED_SHARE",
};

/** The entries due that the cycle cannot take, and what they wait for. */
function waitingNote(w: Waiting): string[] {
  if (w.entries === 0) return [];
  const one = w.entries === 1;
  const words = WAIT_WORDS[w.reason] ?? `${w.reason.replaceAll('_', ' ')} (`;
  return [
    `${count(w.entries, 'entry', 'entries')} due ${one ? 'waits' : 'wait'} for ${words}${words.endsWith('(') ? '' : '; '}daybook status lists ${one ? 'it' : 'them'})`,
  ];
}

/**
 * The cycle's plan, and a top-up of it when the cycle was planned and entries due in it are
 * not (read from Postgres when DATABASE_URL names it; the workers share no other).
 */
async function enqueuePlan(config: Config, queues: Queues, cycle: string): Promise<Enqueued> {
  const id = await queues.addPlan({ cycle });
  const state = await queues.plan.getJobState(id);
  // A plan that ran is not added again: only a plan waiting or running is news.
  const own = state === 'completed' ? [] : [id];
  const failed =
    state === 'failed'
      ? [`the plan of cycle ${cycle} failed (daybook status says why; Bull Board can retry it)`]
      : [];
  if (!config.DATABASE_URL) return { ids: own, notes: failed };
  let topUp: Awaited<ReturnType<typeof topUpOf>>;
  try {
    topUp = await withStore(
      config,
      (db) => topUpOf({ sql: db.sql, config, now: () => new Date() }, cycle),
      2,
    );
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    return {
      ids: own,
      notes: [...failed, forTerminal(`could not see what the plan of cycle ${cycle} left out: ${why}`)],
    };
  }
  switch (topUp.kind) {
    case 'unplanned':
      return { ids: own, notes: failed };
    case 'none':
      return {
        ids: own,
        notes: [
          ...failed,
          `nothing to top up: every entry due in cycle ${cycle} that it can take is planned, in flight or done`,
          ...waitingNote(topUp.waiting),
        ],
      };
    case 'due': {
      const top = await queues.addPlan({ cycle, topUp: topUp.mark });
      return {
        ids: [...own, top],
        notes: [
          ...failed,
          `a top-up of cycle ${cycle}'s plan: ${count(topUp.entries.length, 'entry', 'entries')} due and not planned yet`,
          ...waitingNote(topUp.waiting),
        ],
      };
    }
  }
}

export function enqueueCommand(): Command {
  return command('enqueue')
    .addOption(cycleOption('the enterprise cycle to plan'))
    .addOption(dateOption('--products', 'also pull the trending list of this date'))
    .option('--no-plan', 'do not enqueue the cycle plan')
    .action(async (opts: { cycle?: string; products?: string; plan: boolean }) => {
      const config = configOrExit();
      const redis = await oneShotRedis(config);
      const queues = new Queues(redis, config.DAYBOOK_REDIS_PREFIX, retryPolicy(config));
      try {
        const done: Enqueued = { ids: [], notes: [] };
        if (opts.plan) {
          const plan = await enqueuePlan(config, queues, opts.cycle ?? cycleOf(new Date()));
          done.ids.push(...plan.ids);
          done.notes.push(...plan.notes);
        }
        if (opts.products) {
          done.ids.push(
            await queues.addProducts({
              date: opts.products,
              pull: 'd1',
              limit: config.DAYBOOK_PRODUCT_LIMIT,
            }),
          );
        }
        process.stdout.write(`enqueued ${done.ids.join(', ') || 'nothing'}\n`);
        for (const note of done.notes) process.stdout.write(`  ${note}\n`);
      } finally {
        await queues.close();
        await redis.quit();
      }
    });
}
