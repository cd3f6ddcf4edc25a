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
import type { JobDeps, JobReport } from '../../jobs/deps.ts';
import { ProductsJobData, processProducts } from '../../jobs/products.ts';
import { applyProductDetailAnswer, ingestFailure, landExchange } from '../history/ingest.ts';
import { databaseNow, finishRun, startRun } from '../landing/runs.ts';
import { acquire } from '../purchase/limiter.ts';
import {
  chargeOfAnswer,
  chargeOfFailure,
  neverSent,
  openProductCall,
  PRODUCT_DETAIL_RUN,
  recoverDetailCalls,
  settleProductCall,
} from '../purchase/products.ts';
import { realSleep, withRetries } from '../runtime/inline.ts';
import { FinalForCycleError } from '../terms/job-errors.ts';
import { cycleOf, pacificDayOver } from '../time/cycles.ts';
import type { UpstreamClient } from '../upstream/client.ts';
import { InvalidRequestError, UpstreamError } from '../upstream/errors.ts';
import { checkProductName } from '../upstream/params.ts';
import { command } from './about.ts';
import { clientFor, clockFor, loggerFor, productCommandDeps } from './assemble.ts';
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

/** What a detail answer said of its product. */
interface DetailSeen {
  productId: string;
  votes: number | null;
  comments: number | null;
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
  report: Awaited<ReturnType<typeof withRetries>>;
  shown: ShownProduct[] | null;
}

/** The trending list of a date, pulled and applied like a scheduled pull. */
async function pullList(
  deps: JobDeps,
  sql: postgres.Sql,
  query: { date: string; limit?: number },
): Promise<Pulled> {
  const data = ProductsJobData.parse({
    date: query.date,
    pull: 'backfill',
    limit: query.limit ?? deps.config.DAYBOOK_PRODUCT_LIMIT,
  });
  let rawResponseId: number | null = null;
  const r = await withRetries(
    deps,
    'product-listing',
    `products ${query.date}`,
    (last) =>
      processProducts(deps, data, `get-${query.date}`, last, (id) => {
        rawResponseId = id;
      }),
    realSleep,
  );
  // Set inside the retried body, which TypeScript's flow analysis does not follow.
  const landedId = rawResponseId as number | null;
  const shown =
    r.outcome === 'succeeded' && landedId !== null ? await productsOfPull(sql, query.date, landedId) : null;
  return { report: r, shown };
}

/**
 * One product's detail, asked once (a run of its own), booked in the credit ledger like a list
 * pull (src/purchase/products.ts), and applied to its history.
 */
async function detailRun(
  deps: JobDeps,
  client: UpstreamClient,
  sql: postgres.Sql,
  name: string,
  seen: (detail: DetailSeen) => void,
): Promise<JobReport> {
  const { config } = deps;
  const cycle = cycleOf(await databaseNow(sql));
  // A detail call of a killed `products get` is booked before this one is made.
  await recoverDetailCalls(sql);
  const runId = await startRun(sql, { kind: PRODUCT_DETAIL_RUN, entity: name });
  await acquire(deps.limiter, 'product-listing');
  const price = config.DAYBOOK_PRODUCT_CREDITS ?? null;
  const opened = await openProductCall(sql, {
    runId,
    cycle,
    price,
    budget: config.DAYBOOK_CREDIT_BUDGET,
    keyword: name,
    date: null,
  });
  if (!opened.ok) {
    const reason = `not asked: the product call costs ${price} credits (DAYBOOK_PRODUCT_CREDITS) and ${opened.reason === 'paused' ? `the cycle is paused: ${opened.detail}` : `the credit budget cannot take it: ${opened.detail}`}`;
    await finishRun(sql, runId, { outcome: 'failed', errorCode: opened.reason, errorMessage: reason });
    throw new FinalForCycleError(reason);
  }
  const call = { runId, cycle };
  let got: Awaited<ReturnType<UpstreamClient['getProduct']>>;
  try {
    got = await client.getProduct(name);
  } catch (err) {
    if (neverSent(err)) await settleProductCall(sql, call, null, null);
    if (!(err instanceof UpstreamError)) throw err;
    const landed = await ingestFailure(sql, err, { runId, cycle });
    const charge = chargeOfFailure(err, price);
    await settleProductCall(sql, call, charge, landed);
    await finishRun(sql, runId, {
      outcome: err.errorClass === 'permanent' ? 'failed' : 'retrying',
      errorCode: err.code,
      errorMessage: err.message,
      credits: charge?.credits ?? 0,
    });
    throw err;
  }
  const landed = await landExchange(sql, got.exchange, { runId, cycle });
  const charge = chargeOfAnswer(got.exchange.bodyJson, price);
  await settleProductCall(sql, call, charge, landed);
  const { summary } = await applyProductDetailAnswer(sql, got, landed);
  const p = got.data.metadata;
  seen({
    productId: p.product_id.trim(),
    votes: p.votes_count ?? null,
    comments: p.comments_count ?? null,
  });
  const counts = {
    newVersions: summary.initial + summary.changed,
    newComments: summary.newComments,
  };
  await finishRun(sql, runId, { outcome: 'succeeded', counts, credits: charge.credits ?? 0 });
  return { outcome: 'succeeded' as const, entity: name, counts };
}

/** One product's detail, with the retries of a scheduled pull. */
async function pullDetail(
  deps: JobDeps,
  client: UpstreamClient,
  sql: postgres.Sql,
  name: string,
): Promise<Pulled> {
  let detail: DetailSeen | null = null;
  const r = await withRetries(
    deps,
    'product-listing',
    `product ${name}`,
    () =>
      detailRun(deps, client, sql, name, (d) => {
        detail = d;
      }),
    realSleep,
  );
  // Set inside the retried body, which TypeScript's flow analysis does not follow.
  const d = detail as DetailSeen | null;
  const shown =
    r.outcome === 'succeeded' && d !== null
      ? await productOfDetail(sql, d.productId, d.votes, d.comments)
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
      const deps = productCommandDeps(config, client, db.sql, log, now);
      try {
        const { report, shown } =
          'date' in query
            ? await pullList(deps, db.sql, query)
            : await pullDetail(deps, client, db.sql, query.name);
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
