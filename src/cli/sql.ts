/** `daybook sql "<query>"`: a read-only query against the configured database (embedded or not). */
import { Command } from 'commander';
import { configOrExit, withStore } from './context.ts';
import { formatTable } from './report.ts';
import { UsageError } from './usage.ts';

/** One CSV field (RFC 4180). */
function csvField(v: unknown): string {
  if (v === null || v === undefined) return '';
  const s = v instanceof Date ? v.toISOString() : typeof v === 'object' ? JSON.stringify(v) : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function sqlCommand(): Command {
  return new Command('sql')
    .description(
      'Run a read-only SQL query and print the rows (the analytics.* views are the stable contract).',
    )
    .argument('<query>', 'the SQL, e.g. "select * from analytics.product_trending limit 5"')
    .option('--json', 'print rows as a JSON array')
    .option('--csv', 'print rows as CSV with a header')
    .addHelpText(
      'after',
      `
Examples:
  daybook sql "select list_date, position, name, votes_count from analytics.product_trending where is_latest_pull order by list_date desc, position limit 10"
  daybook sql --csv "select * from analytics.enterprise_changes where severity = 'high'" > high.csv`,
    )
    .action(async (query: string, opts: { json?: boolean; csv?: boolean }) => {
      if (opts.json && opts.csv) throw new UsageError('choose one of --json and --csv');
      if (query.trim() === '') throw new UsageError('the query is empty');
      const config = configOrExit();
      await withStore(config, async ({ sql }) => {
        let rows: Record<string, unknown>[];
        let columns: string[];
        try {
          const result = await sql.begin('read only', async (tx) => tx.unsafe(query));
          rows = [...result] as Record<string, unknown>[];
          columns =
            (result as unknown as { columns?: { name: string }[] }).columns?.map((c) => c.name) ??
            Object.keys(rows[0] ?? {});
        } catch (err) {
          const e = err as { message?: string; code?: string; position?: string };
          if (e.code) {
            // A person's SQL mistake: the server's message, no stack.
            throw new UsageError(
              `query failed: ${e.message}${e.position ? ` (at character ${e.position})` : ''}`,
            );
          }
          throw err;
        }
        if (opts.json) process.stdout.write(`${JSON.stringify(rows)}\n`);
        else if (opts.csv) {
          process.stdout.write(`${columns.map(csvField).join(',')}\n`);
          for (const r of rows) process.stdout.write(`${columns.map((c) => csvField(r[c])).join(',')}\n`);
        } else {
          process.stdout.write(formatTable(rows, columns));
          process.stdout.write(`(${rows.length} row${rows.length === 1 ? '' : 's'})\n`);
        }
      });
    });
}
