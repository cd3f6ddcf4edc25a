/** `daybook deliveries`: the webhook attempt log. */
import type { Command } from 'commander';
import { command } from './about.ts';
import { configOrExit, withStore } from './context.ts';
import { formatTable, jsonLines } from './terminal.ts';
import { intArg, subscriptionIdArg } from './usage.ts';

export function deliveriesCommand(): Command {
  return command('deliveries')
    .option('--failed', 'only attempts that did not deliver')
    .option('--subscription <id>', 'only this subscription', subscriptionIdArg)
    .option('--limit <n>', 'at most this many attempts', intArg('--limit', 1, 100_000), 50)
    .option('--json', 'print as JSON lines')
    .action(async (opts: { failed?: boolean; subscription?: number; limit: number; json?: boolean }) => {
      const rows = await withStore(
        configOrExit(),
        ({ sql }) => sql`
          select d.attempted_at, d.subscription_id::int as subscription, e.id as event, e.type, d.attempt,
                 d.http_status as status, d.latency_ms, d.outcome, d.error
          from webhook_deliveries d join events e on e.seq = d.event_seq
          where true ${opts.failed ? sql`and d.outcome <> 'succeeded'` : sql``}
            ${opts.subscription ? sql`and d.subscription_id = ${opts.subscription}` : sql``}
          order by d.id desc limit ${opts.limit}`,
      );
      if (opts.json) process.stdout.write(jsonLines(rows));
      else process.stdout.write(formatTable(rows));
    });
}
