/** `daybook run`: one cycle in this process, without Redis. */
import type { Command } from 'commander';
import type postgres from 'postgres';
import type { Config } from '../config/config.ts';
import type { PassSummary } from '../delivery/engine.ts';
import type { Logger } from '../log/log.ts';
import { budgetOf } from '../purchase/credits.ts';
import { runInline } from '../runtime/inline.ts';
import { cycleOf } from '../time/cycles.ts';
import { command } from './about.ts';
import { clientFor, deliveryEngine, limiterFor, loggerFor } from './assemble.ts';
import { configOrExit, openStore } from './context.ts';
import { forTerminal } from './terminal.ts';
import { choiceArg, dateOption } from './usage.ts';

/** After an inline run: one delivery pass when anything is subscribed. */
async function deliverAfterRun(config: Config, sql: postgres.Sql, log: Logger): Promise<PassSummary | null> {
  const [n] = await sql<{ n: number }[]>`select count(*)::int as n from subscriptions where state = 'active'`;
  if (!n?.n) return null;
  return deliveryEngine(config, sql, log).pass();
}

export function runCommand(): Command {
  return command('run')
    .addOption(
      dateOption('--cycle', 'the enterprise cycle (default: the current one, by the 03:00 Beijing refresh)'),
    )
    .option(
      '--only <what>',
      'products or enterprises',
      choiceArg('--only', ['products', 'enterprises'] as const),
    )
    .option('--json', 'print the summary as JSON')
    .action(async (opts: { cycle?: string; only?: 'products' | 'enterprises'; json?: boolean }) => {
      const config = configOrExit();
      const client = clientFor(config);
      const log = loggerFor(config);
      const db = await openStore(config, { max: config.DAYBOOK_WORKER_CONCURRENCY + 2 });
      try {
        const cycle = opts.cycle ?? cycleOf(new Date());
        const summary = await runInline(
          { sql: db.sql, client, limiter: limiterFor(config, db.sql), config, log, now: () => new Date() },
          {
            cycle,
            concurrency: config.DAYBOOK_WORKER_CONCURRENCY,
            ...(opts.only ? { only: opts.only } : {}),
          },
        );
        const budget = await budgetOf(db.sql, cycle);
        // What the cycle found goes out to the subscribed endpoints now (queue mode: workers).
        const delivered = await deliverAfterRun(config, db.sql, log);
        if (opts.json)
          process.stdout.write(`${JSON.stringify({ ...summary, budget, deliveries: delivered })}\n`);
        else {
          const e =
            Object.entries(summary.enterprises)
              .map(([k, v]) => `${v} ${k}`)
              .join(', ') || 'none';
          process.stdout.write(
            `cycle ${cycle}: products ${summary.productPulls.map((p) => `${p.date} ${p.outcome}`).join(', ') || 'skipped'}; enterprises ${e}` +
              (budget
                ? `; credits ${budget.spent}/${budget.budget}${budget.pausedAt ? ` (paused: ${forTerminal(String(budget.pausedReason))})` : ''}`
                : '') +
              '\n',
          );
          for (const f of summary.failures)
            process.stdout.write(`  failed: watch entry ${forTerminal(f.entity)}: ${forTerminal(f.error)}\n`);
          if (delivered)
            process.stdout.write(
              `  webhooks: ${delivered.delivered} delivered, ${delivered.retrying} to retry (daybook deliver), ${delivered.failed} failed\n`,
            );
        }
        if (summary.failures.length > 0 || summary.productPulls.some((p) => p.outcome === 'failed'))
          process.exitCode = 1;
      } finally {
        await db.close();
      }
    });
}
