/**
 * `daybook products get`: one product query by hand, in this process: a date's trending list
 * (`--date`, optionally `--limit`) or one product's detail (`--name`), never both, as the upstream
 * demands. The answer is landed and applied like a scheduled pull. Bad parameters are refused
 * before anything is sent or written.
 */
import { Command } from 'commander';
import { ProductsJobData, processProducts } from '../../jobs/products.ts';
import { acquire } from '../budget/limiter.ts';
import { databaseNow, finishRun, startRun } from '../db/runs.ts';
import { ingestFailure, ingestProductDetail } from '../history/ingest.ts';
import { realSleep, withRetries } from '../runtime/inline.ts';
import { cycleOf } from '../time/cycles.ts';
import { InvalidRequestError, UpstreamError } from '../upstream/errors.ts';
import { checkProductName } from '../upstream/params.ts';
import { clientFor, loggerFor, productCommandDeps } from './assemble.ts';
import { configOrExit, openStore } from './context.ts';
import { dateArg } from './pipeline.ts';
import { forTerminal } from './terminal.ts';
import { intArg, UsageError } from './usage.ts';

export const PRODUCT_DETAIL_RUN = 'product-detail';

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

export function productsGetCommand(): Command {
  return new Command('get')
    .description(
      'Query the product operation once, by hand: the trending list of a date (--date, --limit) or the detail of one product (--name), never both. The answer is landed and applied like a scheduled pull.',
    )
    .option('--date <date>', 'the list date (YYYY-MM-DD)', dateArg('--date'))
    .option(
      '--limit <n>',
      'items in the list (1-20; default DAYBOOK_PRODUCT_LIMIT)',
      intArg('--limit', 1, 20),
    )
    .option('--name <product>', 'a product name, for its detail')
    .option('--json', 'print the result as JSON')
    .addHelpText(
      'after',
      '\nExamples:\n  daybook products get --date 2026-11-21 --limit 5\n  daybook products get --name "Acme Notes"',
    )
    .action(async (opts: GetOptions) => {
      const query = productQuery(opts);
      const config = configOrExit();
      // A missing key or base URL is a usage error before anything opens.
      const client = clientFor(config);
      const log = loggerFor(config);
      const db = await openStore(config);
      const deps = productCommandDeps(config, client, db.sql, log);
      try {
        let result: {
          query: typeof query;
          outcome: string;
          detail?: string;
          counts?: Record<string, number>;
        };
        if ('date' in query) {
          const data = ProductsJobData.parse({
            date: query.date,
            pull: 'backfill',
            limit: query.limit ?? config.DAYBOOK_PRODUCT_LIMIT,
          });
          const r = await withRetries(
            deps,
            'product-listing',
            `products ${query.date}`,
            () => processProducts(deps, data, `get-${query.date}`),
            realSleep,
          );
          result = { query, ...r };
        } else {
          const r = await withRetries(
            deps,
            'product-listing',
            `product ${query.name}`,
            async () => {
              const cycle = cycleOf(await databaseNow(db.sql));
              const runId = await startRun(db.sql, { kind: PRODUCT_DETAIL_RUN, entity: query.name });
              await acquire(deps.limiter, 'product-listing');
              try {
                const got = await client.getProduct(query.name);
                const { summary } = await ingestProductDetail(db.sql, got, { runId, cycle });
                const counts = {
                  newVersions: summary.initial + summary.changed,
                  newComments: summary.newComments,
                };
                await finishRun(db.sql, runId, { outcome: 'succeeded', counts });
                return { outcome: 'succeeded' as const, entity: query.name, counts };
              } catch (err) {
                if (!(err instanceof UpstreamError)) throw err;
                await ingestFailure(db.sql, err, { runId, cycle });
                await finishRun(db.sql, runId, {
                  outcome: err.errorClass === 'permanent' ? 'failed' : 'retrying',
                  errorCode: err.code,
                  errorMessage: err.message,
                });
                throw err;
              }
            },
            realSleep,
          );
          result = { query, ...r };
        }
        if (opts.json) process.stdout.write(`${JSON.stringify(result)}\n`);
        else {
          const what = 'date' in query ? `list ${query.date}` : `product "${query.name}"`;
          process.stdout.write(
            `${forTerminal(
              `${what}: ${result.outcome}${result.detail ? ` (${result.detail})` : ''}${result.counts ? ` ${JSON.stringify(result.counts)}` : ''}`,
            )}\n`,
          );
        }
        if (result.outcome === 'failed') process.exitCode = 1;
      } finally {
        await db.close();
      }
    });
}
