/** `daybook events`: the event outbox from any point of its history (the pull feed). */
import type { Command } from 'commander';
import { readEvents } from '../events/feed.ts';
import { command } from './about.ts';
import { configOrExit, withStore } from './context.ts';
import { eventsReplayCommand } from './events-replay.ts';
import { listOutput } from './terminal.ts';
import { checkEventTypes, collect, intArg } from './usage.ts';

export function eventsCommand(): Command {
  return (
    command('events')
      // Its --after is its own: `events replay --after N` is the replay's.
      .enablePositionalOptions()
      .option(
        '--after <seq>',
        'events after this sequence number (default 0: from the start)',
        intArg('--after', 0),
        0,
      )
      .option('--limit <n>', 'at most this many events', intArg('--limit', 1, 100_000), 100)
      .option(
        '--type <pattern>',
        'only this type, or a family such as company.status.* (repeatable)',
        collect,
        [] as string[],
      )
      .option('--pid <pid>', 'only events of this enterprise')
      .option('--json', 'print one JSON event per line (the shape webhooks send)')
      .addCommand(eventsReplayCommand())
      .action(
        async (opts: { after: number; limit: number; type: string[]; pid?: string; json?: boolean }) => {
          checkEventTypes(opts.type);
          await withStore(configOrExit(), async ({ sql }) => {
            const events = await readEvents(sql, {
              after: opts.after,
              limit: opts.limit,
              types: opts.type,
              ...(opts.pid ? { pid: opts.pid } : {}),
            });
            process.stdout.write(
              listOutput(events, opts.json, {
                cells: (e) => {
                  // A related company's event: its change, and whose it is.
                  const related = e.type.startsWith('related.')
                    ? (e.data.related as { name?: string | null; pid?: string } | undefined)
                    : undefined;
                  const d = related ? ((e.data.change ?? {}) as Record<string, unknown>) : e.data;
                  const name = e.name ?? e.pid;
                  return {
                    seq: e.sequence,
                    type: e.type,
                    severity: e.severity,
                    cycle: e.cycle,
                    name: related ? `${name} (shareholder ${related.name ?? related.pid ?? ''})` : name,
                    previous: (d.previous as string | null | undefined) ?? null,
                    current: (d.current as string | null | undefined) ?? null,
                  };
                },
                columns: ['seq', 'type', 'severity', 'cycle', 'name', 'previous', 'current'],
              }),
            );
            // A hint for the table only: --json writes the events and nothing else.
            const last = events.at(-1);
            if (!opts.json && last && events.length === opts.limit)
              process.stderr.write(`more may follow: daybook events --after ${last.sequence}\n`);
          });
        },
      )
  );
}
