/** `daybook products backfill`: the trending lists of a range of dates, in this process. */
import type { Command } from 'commander';
import type { Config } from '../config/config.ts';
import type { Sql } from '../db/connect.ts';
import type { JobProcess } from '../runtime/process.ts';
import { pullProductList } from '../runtime/products.ts';
import { addDays, daysBetween, pacificDayOver } from '../time/cycles.ts';
import { command } from './about.ts';
import { clientFor, clockFor, loggerFor } from './assemble.ts';
import { configOrExit, openStore, type Store } from './context.ts';
import { forTerminal } from './terminal.ts';
import { dateOption, intArg, notAfterToday, UsageError } from './usage.ts';

export function productsBackfillCommand(): Command {
  return command('products backfill')
    .addOption(dateOption('--from', 'first date (YYYY-MM-DD)').makeOptionMandatory())
    .addOption(
      dateOption(
        '--to',
        "last date (YYYY-MM-DD), a US-Pacific day: today's at the latest",
      ).makeOptionMandatory(),
    )
    .option('--limit <n>', 'items per list (1-20; default DAYBOOK_PRODUCT_LIMIT)', intArg('--limit', 1, 20))
    .option('--force', 'pull dates that were already landed again')
    .option('--json', 'print the summary as JSON')
    .action(async (opts: { from: string; to: string; limit?: number; force?: boolean; json?: boolean }) => {
      const days = daysBetween(opts.from, opts.to);
      if (days < 0) throw new UsageError(`--from ${opts.from} is after --to ${opts.to}`);
      if (days > 3660) throw new UsageError('a backfill covers at most ten years at a time');
      const config = configOrExit();
      const now = clockFor(config);
      // A day that has not begun has no list yet: refused, not landed as an empty one.
      notAfterToday('--to', opts.to, now());
      // A missing key or base URL is a usage error before anything opens.
      const client = clientFor(config, now);
      const log = loggerFor(config, false);
      const db = await openStore(config);
      // Whatever fails from here, the database is closed before the error is reported.
      const { result, notFinal } = await pullRange(
        db,
        { ...opts, days },
        { config, client, log, now },
      ).finally(() => db.close());
      if (opts.json) process.stdout.write(`${JSON.stringify(result)}\n`);
      else {
        process.stdout.write(
          `backfill ${opts.from}..${opts.to}: ${result.pulled} pulled, ${result.skipped} already landed, ${result.failed.length} failed\n`,
        );
        for (const f of result.failed) process.stdout.write(`  failed ${forTerminal(f)}\n`);
        for (const d of notFinal)
          process.stdout.write(
            `  ${d}: empty, and its US-Pacific day is not over (the list may not be published yet): not counted as landed, a later backfill pulls it again\n`,
          );
      }
      if (result.failed.length > 0) process.exitCode = 1;
    });
}

/** Pulls the dates of the range not landed yet (all with --force), with progress on stderr. */
async function pullRange(
  db: Store,
  opts: { from: string; to: string; days: number; limit?: number; force?: boolean },
  ctx: {
    config: Config;
    client: ReturnType<typeof clientFor>;
    log: ReturnType<typeof loggerFor>;
    now: () => Date;
  },
) {
  const { config, client, log, now } = ctx;
  const days = opts.days;
  const work: JobProcess = { sql: db.sql, client, config, log, now };
  const landed = await landedListDates(db.sql, opts.from, opts.to);
  const dates = Array.from({ length: days + 1 }, (_, i) => addDays(opts.from, i));
  const todo = opts.force ? dates : dates.filter((d) => !landed.has(d));
  const tty = process.stderr.isTTY === true;
  const bar = tty
    ? new (await import('cli-progress')).SingleBar({
        format: 'backfill [{bar}] {value}/{total} {date}',
        hideCursor: true,
      })
    : null;
  bar?.start(todo.length, 0, { date: '' });
  const result = {
    requested: dates.length,
    skipped: dates.length - todo.length,
    pulled: 0,
    failed: [] as string[],
  };
  // Dates pulled empty before their US-Pacific day was over: not landed, pulled again next time.
  const notFinal: string[] = [];
  try {
    for (const [i, date] of todo.entries()) {
      const r = await pullProductList(
        work,
        { date, ...(opts.limit === undefined ? {} : { limit: opts.limit }) },
        { jobId: `backfill-${date}`, label: `backfill ${date}` },
      );
      if (r.outcome === 'failed') result.failed.push(`${date}: ${r.detail ?? 'failed'}`);
      else result.pulled++;
      if (r.outcome === 'succeeded' && r.counts?.products === 0 && !pacificDayOver(date, now()))
        notFinal.push(date);
      if (bar) bar.update(i + 1, { date });
      else process.stderr.write(`backfill: ${i + 1}/${todo.length} ${date}\n`);
    }
  } finally {
    bar?.stop();
  }
  return { result, notFinal };
}

/**
 * A computed shape: a list answer landed, by its date (`params->>'date'`), whether its list was
 * empty, and when it was answered (the earlier of `fetched_at` and `landed_at`).
 */
interface ListAnswer {
  date: string;
  empty: boolean;
  answered_at: Date;
}

/**
 * The list dates from `from` to `to` a backfill skips: those with a successful answer landed. An
 * empty list counts only when it was answered after its US-Pacific day was over, by the calling
 * process's clock (`fetched_at`) and the database's (`landed_at`) both: before that, the list may
 * not have been published yet, and the date is pulled again.
 */
export async function landedListDates(sql: Sql, from: string, to: string): Promise<Set<string>> {
  const answers = await sql<ListAnswer[]>`
    select params->>'date' as date,
           case when jsonb_typeof(body_json->'metadata') = 'array'
                then jsonb_array_length(body_json->'metadata') = 0 else false end as empty,
           least(fetched_at, landed_at) as answered_at
    from raw_answers
    where operation = 'product-listing' and outcome = 'success' and params ? 'date'
      and params->>'date' between ${from} and ${to}`;
  return new Set(answers.filter((a) => !a.empty || pacificDayOver(a.date, a.answered_at)).map((a) => a.date));
}
