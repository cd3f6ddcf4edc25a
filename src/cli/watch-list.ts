/**
 * `daybook watch list`: the watched enterprises, highest priority first, as a table (the first
 * 1,000 unless --limit says otherwise), a JSON array or CSV that `watch import` reads back.
 */
import type { Command } from 'commander';
import { LISTED_COLUMNS } from '../watch/csv.ts';
import { countWatches, listWatches, RELATED_PRIORITY, type WatchRow } from '../watch/store.ts';
import { command } from './about.ts';
import { configOrExit, withStore } from './context.ts';
import { formatTable } from './terminal.ts';
import { intArg, UsageError } from './usage.ts';

/** The expected code of an entry as `watch list` shows it. */
function expectedText(r: WatchRow): string | null {
  return r.expected_uscc ?? (r.pin_uscc ? '(pinned at the next refresh)' : null);
}

/** The table shows at most this many entries unless --limit says otherwise. */
const LIST_TABLE_LIMIT = 1_000;

/** The columns of `--csv` (src/watch/csv.ts, which reads them back), each a key of `--json`. */
const COLUMNS = LISTED_COLUMNS satisfies readonly (keyof WatchRow)[];

/** A count as a person reads it: 100,000. */
const count = (n: number) => n.toLocaleString('en-US');

/**
 * An entry watched only as a shareholder has no priority of the user's: null (its place in the
 * plan is after every entry of theirs; `direct` is false).
 */
function withoutRelatedPriority(r: WatchRow): Omit<WatchRow, 'priority'> & { priority: number | null } {
  return r.priority <= RELATED_PRIORITY ? { ...r, priority: null } : r;
}

/** One CSV field (RFC 4180): quoted when it holds a quote, a comma or a line break. */
function csvField(v: unknown): string {
  if (v === null || v === undefined) return '';
  const s = v instanceof Date ? v.toISOString() : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** An entry as a row of the table. */
function tableRow(r: WatchRow, all: boolean): Record<string, unknown> {
  return {
    id: r.id,
    keyword: r.keyword,
    // An entry watched only as a shareholder of a watched company has no priority of the user's.
    priority: r.priority <= RELATED_PRIORITY ? 'shareholder' : r.priority,
    pid: r.pid,
    'last refreshed': r.last_refreshed_at,
    'last outcome': r.last_outcome,
    'resolved name': r.resolved_name,
    'resolved code': r.resolved_uscc,
    match: r.match,
    'expected code': expectedText(r),
    mismatch: r.resolution_mismatch,
    'changes/month': r.changes_per_month === null ? null : r.changes_per_month.toFixed(2),
    'next due': r.due_at,
    // Why a shareholder is watched: through whom.
    'shareholder of': r.watched_through,
    ...(all ? { active: r.active } : {}),
  };
}

interface ListOptions {
  all?: boolean;
  json?: boolean;
  csv?: boolean;
  limit?: number;
}

export function watchListCommand(): Command {
  return command('watch list')
    .option('--all', 'include removed entries (with an active column)')
    .option(
      '--limit <n>',
      `at most this many entries, highest priority first (the table: ${count(LIST_TABLE_LIMIT)} unless given; --json and --csv: every entry unless given)`,
      intArg('--limit', 1),
    )
    .option('--json', 'print a JSON array of the entries')
    .option('--csv', 'print the entries as CSV with a header row (the keys of --json as columns)')
    .addHelpText(
      'after',
      `
The table shows the first ${count(LIST_TABLE_LIMIT)} entries unless --limit says otherwise, and ends with a line
saying how many more there are. --json and --csv print every entry unless --limit is given (then
how many more is said on stderr).

Examples:
  daybook watch list
  daybook watch list --limit 50
  daybook watch list --all --json
  daybook watch list --csv > watchlist.csv`,
    )
    .action(async (opts: ListOptions) => {
      if (opts.json && opts.csv) throw new UsageError('choose one of --json and --csv');
      const limit = opts.limit ?? (opts.json || opts.csv ? undefined : LIST_TABLE_LIMIT);
      const config = configOrExit();
      await withStore(config, async ({ sql }) => {
        const all = opts.all === true;
        const rows = await listWatches(sql, { all, ...(limit === undefined ? {} : { limit }) });
        const counts = rows.length === limit ? await countWatches(sql) : null;
        const total =
          counts === null ? rows.length : Math.max(rows.length, all ? counts.total : counts.active);
        const more = total - rows.length;
        const entries = (n: number) => `${count(n)} entr${n === 1 ? 'y' : 'ies'}`;
        if (opts.json || opts.csv) {
          if (opts.json) process.stdout.write(`${JSON.stringify(rows.map(withoutRelatedPriority))}\n`);
          else {
            const lines = [
              COLUMNS.join(','),
              ...rows.map((r) => COLUMNS.map((c) => csvField(withoutRelatedPriority(r)[c])).join(',')),
            ];
            process.stdout.write(`${lines.join('\n')}\n`);
          }
          if (more > 0)
            process.stderr.write(
              `daybook: printed the first ${count(rows.length)} of ${entries(total)}: ${count(more)} more (a higher --limit, or none, prints them)\n`,
            );
          return;
        }
        if (rows.length === 0) {
          process.stdout.write('nothing is watched (daybook watch add NAME, or daybook watch import FILE)\n');
          return;
        }
        process.stdout.write(formatTable(rows.map((r) => tableRow(r, all))));
        if (more > 0)
          process.stdout.write(
            `(showing the first ${count(rows.length)} of ${entries(total)}, highest priority first: ${count(more)} more; --limit N shows more, --csv or --json prints every entry)\n`,
          );
      });
    });
}
