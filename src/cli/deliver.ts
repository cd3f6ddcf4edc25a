/** `daybook deliver`: the webhook delivery engine, once or until stopped. */
import type { Command } from 'commander';
import { type PassSummary, shownReceiver } from '../delivery/engine.ts';
import type { Waiting } from '../delivery/store.ts';
import { waitingDeliveries } from '../delivery/store.ts';
import { lifecycle } from '../runtime/shutdown.ts';
import { command } from './about.ts';
import { deliveryEngine, loggerFor } from './assemble.ts';
import { configOrExit, openStore } from './context.ts';
import { forTerminal } from './terminal.ts';

function describePass(s: PassSummary): string {
  return `deliveries: ${s.queued} queued, ${s.attempted} attempted, ${s.delivered} delivered, ${s.retrying} to retry, ${s.failed} failed${s.disabled ? `, ${s.disabled} endpoint(s) disabled` : ''}`;
}

/** What waits for one subscription, as `run --json` and `deliver --json` print it. */
export interface WaitingShown {
  subscription: number;
  /** The receiver, cut of its tokens (a mail list as it is). */
  target: string;
  format: string;
  state: string;
  waiting: number;
  /** Held back by the vendor's rate window (or its "too fast"), never attempted yet. */
  rateWindow: number;
  /** Failed, waiting for the next try of the schedule. */
  retrying: number;
  /** Due now: the next pass sends them. */
  due: number;
  /** Being sent by another process now. */
  sending: number;
  /** When the next goes (ISO 8601). */
  nextAt: string;
}

export function shownWaiting(rows: readonly Waiting[]): WaitingShown[] {
  return rows.map((w) => ({
    subscription: w.subscription_id,
    target: shownReceiver(w.url),
    format: w.format,
    state: w.state,
    waiting: w.waiting,
    rateWindow: w.rate_window,
    retrying: w.retrying,
    due: w.due,
    sending: w.sending,
    nextAt: new Date(w.next_at).toISOString(),
  }));
}

/** A time as the Beijing date and time, to the second (a rate window is seconds long). */
function beijingSecond(at: Date): string {
  return `${new Date(at.getTime() + 8 * 3_600_000).toISOString().slice(0, 19).replace('T', ' ')} Beijing time`;
}

const messages = (n: number) => `${n} message${n === 1 ? '' : 's'}`;

/**
 * The lines that say what waits, per subscription: its id and receiver, how many wait and why,
 * and when the next goes. None when nothing waits.
 */
export function waitingLines(rows: readonly WaitingShown[], now: Date, indent: string): string[] {
  if (rows.length === 0) return [];
  const total = rows.reduce((n, w) => n + w.waiting, 0);
  const lines = [`${indent}not sent yet: ${messages(total)}`];
  for (const w of rows) {
    const why = [
      w.rateWindow > 0 && `${w.rateWindow} for the vendor's rate window`,
      w.retrying > 0 && `${w.retrying} to retry`,
      w.due > 0 && `${w.due} due now`,
      w.sending > 0 && `${w.sending} being sent`,
    ]
      .filter(Boolean)
      .join(', ');
    const next = Date.parse(w.nextAt);
    const when =
      w.state === 'paused'
        ? `paused: they go after daybook subscribe resume ${w.subscription}`
        : next <= now.getTime()
          ? 'the next goes now'
          : `the next goes at ${beijingSecond(new Date(next))}`;
    lines.push(
      `${indent}  subscription ${w.subscription} (${w.format}, ${forTerminal(w.target)}): ${messages(w.waiting)} (${why}); ${when}`,
    );
  }
  return lines;
}

export function deliverCommand(): Command {
  return command('deliver')
    .option('--watch', 'keep delivering as events come, until stopped')
    .option('--json', 'print the summary as JSON, with what waits per subscription')
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
        const engine = deliveryEngine(config, db.sql, log, db.embedded ? undefined : db.url);
        const running = engine.run(life.signal);
        life.closer.add('delivery', () => running);
        log.info('delivery started');
        return life.serve();
      }
      const db = await openStore(config);
      try {
        const summary = await deliveryEngine(config, db.sql, log).pass();
        const waiting = shownWaiting(await waitingDeliveries(db.sql));
        if (opts.json) process.stdout.write(`${JSON.stringify({ ...summary, waiting })}\n`);
        else {
          const lines = waitingLines(waiting, new Date(), '');
          // What waits goes with a later pass: a worker, `daybook deliver --watch`, or this again.
          if (lines.length > 0)
            lines.push(
              'left to a worker, daybook deliver --watch, or daybook deliver again when they are due',
            );
          process.stdout.write(`${[describePass(summary), ...lines].join('\n')}\n`);
        }
      } finally {
        await db.close();
      }
    });
}
