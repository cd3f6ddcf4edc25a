/**
 * `daybook run`: one cycle in this process, without Redis; then one delivery pass of what the
 * cycle found, for DAYBOOK_RUN_DELIVERY_WAIT at most, and what is left is said (per subscription:
 * how many wait, why, and when the next goes) for a worker or `daybook deliver`.
 */
import type { Command } from 'commander';
import type postgres from 'postgres';
import type { Config } from '../config/config.ts';
import type { PassSummary } from '../delivery/engine.ts';
import { activeSubscriptionCount, waitingDeliveries } from '../delivery/store.ts';
import type { Logger } from '../log/log.ts';
import { budgetOf, type LedgerCredits, ledgerCredits } from '../purchase/credits.ts';
import { runInline } from '../runtime/inline.ts';
import { CREDIT_LABELS } from '../terms/fields.ts';
import { cycleOf } from '../time/cycles.ts';
import { command } from './about.ts';
import { clientFor, deliveryEngine, loggerFor } from './assemble.ts';
import { configOrExit, openStore } from './context.ts';
import { shownWaiting, type WaitingShown, waitingLines } from './deliver.ts';
import { forTerminal } from './terminal.ts';
import { choiceArg, cycleOption } from './usage.ts';

/** What `run` delivered, and what it left. */
type RunDeliveries = PassSummary & {
  /** DAYBOOK_RUN_DELIVERY_WAIT: the longest run waits for deliveries. */
  waitMs: number;
  /** What is not sent yet, per subscription: for a worker or `daybook deliver`. */
  waiting: WaitingShown[];
};

/**
 * After an inline run: one delivery pass when anything is subscribed, stopped after
 * DAYBOOK_RUN_DELIVERY_WAIT (a receiver that never answers holds run no longer: its send is
 * closed then), and what waits still.
 */
async function deliverAfterRun(
  config: Config,
  sql: postgres.Sql,
  log: Logger,
): Promise<RunDeliveries | null> {
  if ((await activeSubscriptionCount(sql)) === 0) return null;
  const waitMs = config.DAYBOOK_RUN_DELIVERY_WAIT;
  const summary = await deliveryEngine(config, sql, log).pass({ until: new Date(Date.now() + waitMs) });
  return { ...summary, waitMs, waiting: shownWaiting(await waitingDeliveries(sql)) };
}

const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;

/** The delivery lines of run's report. */
function deliveryLines(d: RunDeliveries): string[] {
  const lines = [`  webhooks: ${d.delivered} delivered, ${d.retrying} to retry, ${d.failed} failed`];
  if (d.stopped)
    lines.push(
      `  stopped waiting for deliveries after ${seconds(d.waitMs)} (DAYBOOK_RUN_DELIVERY_WAIT)${d.abandoned > 0 ? `: ${d.abandoned} send${d.abandoned === 1 ? '' : 's'} had no answer yet and go${d.abandoned === 1 ? 'es' : ''} again` : ''}`,
    );
  const waiting = waitingLines(d.waiting, new Date(), '  ');
  if (waiting.length > 0) lines.push(...waiting, '  left to a worker or daybook deliver');
  return lines;
}

/**
 * The credits spent told apart when some are not confirmed: confirmed (answered and billed) and
 * unconfirmed (sent and never answered, or cut off by a process that died), and product calls
 * booked without an amount.
 */
function creditsApart(c: LedgerCredits): string {
  const w = CREDIT_LABELS;
  const apart =
    c.unconfirmed > 0
      ? ` (${c.confirmed} ${w.confirmed.en}, ${c.unconfirmed} ${w.unconfirmed.en}: ${w.unconfirmedNote.en})`
      : '';
  return c.unpricedCalls > 0 ? `${apart}; ${w.unpriced.en}: ${c.unpricedCalls}` : apart;
}

/** What `--only` may name: one side of the run. */
const ONLY = ['products', 'enterprises'] as const;

export function runCommand(): Command {
  return command('run')
    .addOption(cycleOption('the enterprise cycle', 'the current one, by the 03:00 Beijing refresh'))
    .option('--only <what>', 'products or enterprises', choiceArg('--only', ONLY))
    .option('--json', 'print the summary as JSON')
    .action(async (opts: { cycle?: string; only?: (typeof ONLY)[number]; json?: boolean }) => {
      const config = configOrExit();
      const client = clientFor(config);
      const log = loggerFor(config);
      const db = await openStore(config, { max: config.DAYBOOK_WORKER_CONCURRENCY + 2 });
      try {
        const cycle = opts.cycle ?? cycleOf(new Date());
        const summary = await runInline(
          { sql: db.sql, client, config, log, now: () => new Date() },
          {
            cycle,
            concurrency: config.DAYBOOK_WORKER_CONCURRENCY,
            ...(opts.only ? { only: opts.only } : {}),
          },
        );
        const budget = await budgetOf(db.sql, cycle);
        const credits = await ledgerCredits(db.sql, cycle);
        // What the cycle found goes out to the subscribed endpoints now (queue mode: workers).
        const delivered = await deliverAfterRun(config, db.sql, log);
        if (opts.json)
          process.stdout.write(`${JSON.stringify({ ...summary, budget, credits, deliveries: delivered })}\n`);
        else {
          const e =
            Object.entries(summary.enterprises)
              .map(([k, v]) => `${v} ${k}`)
              .join(', ') || 'none';
          process.stdout.write(
            `cycle ${cycle}: products ${summary.productPulls.map((p) => `${p.date} ${p.outcome}`).join(', ') || 'skipped'}; enterprises ${e}` +
              (budget
                ? `; credits ${budget.spent}/${budget.budget}${creditsApart(credits)}${budget.pausedAt ? ` (paused: ${forTerminal(String(budget.pausedReason))})` : ''}`
                : '') +
              '\n',
          );
          for (const f of summary.failures)
            process.stdout.write(`  failed: watch entry ${forTerminal(f.entity)}: ${forTerminal(f.error)}\n`);
          if (delivered) process.stdout.write(`${deliveryLines(delivered).join('\n')}\n`);
        }
        if (summary.failures.length > 0 || summary.productPulls.some((p) => p.outcome === 'failed'))
          process.exitCode = 1;
      } finally {
        await db.close();
      }
    });
}
