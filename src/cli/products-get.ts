/**
 * `daybook products get`: one product query by hand, in this process: a date's trending list
 * (`--date`, optionally `--limit`) or one product's detail (`--name`), never both, as the upstream
 * demands. The answer is landed and applied like a scheduled pull, then shown: a table of the
 * products as normalized (or JSON with `--json`), and a summary line with the counts. Bad
 * parameters, and a date after today's US-Pacific date, are refused before anything is sent or
 * written.
 */

import type { Command } from 'commander';
import type postgres from 'postgres';
import type { JobProcess } from '../runtime/process.ts';
import { type DetailSeen, type PullReport, pullProductDetail, pullProductList } from '../runtime/products.ts';
import { pacificDayOver } from '../time/cycles.ts';
import { InvalidRequestError } from '../upstream/errors.ts';
import { checkProductName } from '../upstream/params.ts';
import { command } from './about.ts';
import { clientFor, clockFor, loggerFor } from './assemble.ts';
import { configOrExit, openStore } from './context.ts';
import { formatTable, forTerminal } from './terminal.ts';
import { dateOption, intArg, notAfterToday, UsageError } from './usage.ts';

interface GetOptions {
  date?: string;
  name?: string;
  limit?: number;
  json?: boolean;
}

/** The checked query, or a usage error naming the problem. Pure. */
export function productQuery(opts: GetOptions): { date: string; limit?: number } | { name: string } {
  if (opts.date !== undefined && opts.name !== undefined) {
    throw new UsageError(
      '--date and --name cannot be used together: the upstream takes a date (a trending list) or a product name (a detail), not both',
    );
  }
  if (opts.name !== undefined) {
    if (opts.limit !== undefined) throw new UsageError('--limit applies only to a list: use it with --date');
    try {
      return { name: checkProductName(opts.name) };
    } catch (err) {
      if (err instanceof InvalidRequestError)
        throw new UsageError(err.message.replace(/^product_name/, '--name'));
      throw err;
    }
  }
  if (opts.date === undefined)
    throw new UsageError('give --date YYYY-MM-DD (a list) or --name NAME (a detail)');
  return opts.limit === undefined ? { date: opts.date } : { date: opts.date, limit: opts.limit };
}

/** A product as shown: from the normalized rows (its current version) and the pull's snapshot. */
export interface ShownProduct {
  /** Its place in the list; null for a detail. */
  position: number | null;
  product_id: string;
  name: string | null;
  tagline: string | null;
  votes_count: number | null;
  comments_count: number | null;
  topics: string[];
}

/** The products of one list pull (the raw response it landed as), in list order. */
function productsOfPull(sql: postgres.Sql, date: string, rawResponseId: number): Promise<ShownProduct[]> {
  // The date lets the view's window (partitioned by list date) read that date's snapshots only.
  return sql<ShownProduct[]>`
    select t.position, t.product_id, t.name, t.tagline, t.votes_count, t.comments_count,
           coalesce(c.topics, '{}') as topics
    from analytics.product_trending t
    left join analytics.product_current c on c.product_id = t.product_id
    where t.list_date = ${date} and t.raw_response_id = ${rawResponseId}
    order by t.position`;
}

/** The product a detail answer was applied to, with the votes and comments the answer gave. */
async function productOfDetail(
  sql: postgres.Sql,
  productId: string,
  votes: number | null,
  comments: number | null,
): Promise<ShownProduct[]> {
  const rows = await sql<ShownProduct[]>`
    select null::int as position, c.product_id, c.name, c.tagline, null::int as votes_count,
           null::int as comments_count, c.topics
    from analytics.product_current c where c.product_id = ${productId}`;
  return rows.map((r) => ({ ...r, votes_count: votes, comments_count: comments }));
}

/** The products as a text table; every cell is escaped for the terminal (formatTable). */
export function productTable(products: readonly ShownProduct[], list: boolean): string {
  return formatTable(
    products.map((p) => ({
      ...(list ? { position: p.position } : {}),
      name: p.name,
      votes: p.votes_count,
      comments: p.comments_count,
      topics: p.topics.join(', '),
      product_id: p.product_id,
    })),
  );
}

/** What `products get` prints with --json: the query, its outcome and the products shown. */
interface GetResult {
  query: ReturnType<typeof productQuery>;
  outcome: string;
  detail?: string;
  counts?: Record<string, number>;
  products?: ShownProduct[];
}

/** What one query came to: the job's outcome, and the products to show when it landed. */
interface Pulled {
  report: PullReport;
  shown: ShownProduct[] | null;
}

/** The trending list of a date, pulled and applied like a scheduled pull. */
async function pullList(work: JobProcess, query: { date: string; limit?: number }): Promise<Pulled> {
  let rawResponseId: number | null = null;
  const r = await pullProductList(
    work,
    query,
    { jobId: `get-${query.date}`, label: `products ${query.date}` },
    (id) => {
      rawResponseId = id;
    },
  );
  // Set inside the retried body, which TypeScript's flow analysis does not follow.
  const landedId = rawResponseId as number | null;
  const shown =
    r.outcome === 'succeeded' && landedId !== null
      ? await productsOfPull(work.sql, query.date, landedId)
      : null;
  return { report: r, shown };
}

/** One product's detail, asked once, with the retries of a scheduled pull. */
async function pullDetail(work: JobProcess, name: string): Promise<Pulled> {
  let detail: DetailSeen | null = null;
  const r = await pullProductDetail(work, name, (d) => {
    detail = d;
  });
  // Set inside the retried body, which TypeScript's flow analysis does not follow.
  const d = detail as DetailSeen | null;
  const shown =
    r.outcome === 'succeeded' && d !== null
      ? await productOfDetail(work.sql, d.productId, d.votes, d.comments)
      : null;
  return { report: r, shown };
}

/** The result for a person: the products as a table, a summary line, and a note on an unfinished day. */
function writeResult(result: GetResult, shown: ShownProduct[] | null, unfinished: boolean): void {
  const { query } = result;
  if (shown && shown.length > 0) process.stdout.write(productTable(shown, 'date' in query));
  const what = 'date' in query ? `list ${query.date}` : `product "${query.name}"`;
  process.stdout.write(
    `${forTerminal(
      `${what}: ${result.outcome}${result.detail ? ` (${result.detail})` : ''}${result.counts ? ` ${JSON.stringify(result.counts)}` : ''}`,
    )}\n`,
  );
  if (unfinished && 'date' in query) {
    process.stdout.write(
      `note: the list is empty and ${query.date} is not over yet in US Pacific time: it may not be published yet. It does not count as landed: a backfill pulls it again.\n`,
    );
  }
}

export function productsGetCommand(): Command {
  return command('products get')
    .addOption(dateOption('--date', "the list date (YYYY-MM-DD), a US-Pacific day: today's at the latest"))
    .option(
      '--limit <n>',
      'items in the list (1-20; default DAYBOOK_PRODUCT_LIMIT)',
      intArg('--limit', 1, 20),
    )
    .option('--name <product>', 'a product name, for its detail')
    .option('--json', 'print the result as JSON, the products included')
    .addHelpText(
      'after',
      '\nExamples:\n  daybook products get --date 2026-11-21 --limit 5\n  daybook products get --name "Acme Notes"',
    )
    .action(async (opts: GetOptions) => {
      const query = productQuery(opts);
      const config = configOrExit();
      const now = clockFor(config);
      // A day that has not begun has no list yet: refused, not landed as an empty one.
      if ('date' in query) notAfterToday('--date', query.date, now());
      // A missing key or base URL is a usage error before anything opens.
      const client = clientFor(config, now);
      const log = loggerFor(config);
      const db = await openStore(config);
      const work: JobProcess = { sql: db.sql, client, config, log, now };
      try {
        const { report, shown } =
          'date' in query ? await pullList(work, query) : await pullDetail(work, query.name);
        const result: GetResult = { query, ...report };
        if (shown) result.products = shown;
        // An empty list of a day not over yet may be one not published yet: it counts as no landing.
        const unfinished =
          'date' in query &&
          result.outcome === 'succeeded' &&
          shown?.length === 0 &&
          !pacificDayOver(query.date, now());
        if (opts.json) process.stdout.write(`${JSON.stringify(result)}\n`);
        else writeResult(result, shown, unfinished);
        if (result.outcome === 'failed') process.exitCode = 1;
      } finally {
        await db.close();
      }
    });
}
