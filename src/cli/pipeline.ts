/** The pipeline commands: worker, scheduler, run, resume, products backfill. */

import { Command, InvalidArgumentError } from 'commander';
import { processPlan } from '../../jobs/plan.ts';
import { ProductsJobData, processProducts } from '../../jobs/products.ts';
import { budgetOf, resumeCycle } from '../purchase/credits.ts';
import type { Sql } from '../db/connect.ts';
import { openDatabase } from '../db/connect.ts';
import { replanDeferred } from '../purchase/fetches.ts';
import { migrateDatabase } from '../db/migrate.ts';
import { isConnectionLoss } from '../db/outage.ts';
import { limitHeapGrowth } from '../runtime/heap.ts';
import { realSleep, runInline, withRetries } from '../runtime/inline.ts';
import { closeRedis, Queues, retryPolicy } from '../runtime/queues.ts';
import { Reachability, untilReachable, watchRedis } from '../runtime/reachability.ts';
import { coordinationKey } from '../runtime/redis.ts';
import { startScheduler } from '../runtime/scheduler.ts';
import { lifecycle } from '../runtime/shutdown.ts';
import { startWorkers } from '../runtime/worker.ts';
import { addDays, cycleOf, daysBetween, isCalendarDate, pacificDayOver } from '../time/cycles.ts';
import {
  clientFor,
  clockFor,
  limiterFor,
  loggerFor,
  oneShotRedis,
  productCommandDeps,
  redisFor,
} from './assemble.ts';
import { configOrExit, openStore, sharedDatabaseUrl } from './context.ts';
import { notAfterToday, productsGetCommand } from './products-get.ts';
import { deliverAfterRun, deliveryEngine } from './subscribe.ts';
import { forTerminal } from './terminal.ts';
import { choiceArg, intArg, UsageError } from './usage.ts';

export function dateArg(what: string) {
  return (raw: string): string => {
    if (!isCalendarDate(raw.trim()))
      throw new InvalidArgumentError(`${what} "${raw}" is not a real calendar date YYYY-MM-DD.`);
    return raw.trim();
  };
}

export function workerCommand(): Command {
  return new Command('worker')
    .description(
      'Process queued jobs (products, plan, enterprise) until SIGTERM/SIGINT. Run as many as you like, on any machines: they share one rate limit per upstream operation and one credit budget.',
    )
    .option(
      '-c, --concurrency <n>',
      'enterprise jobs at once in this process (default DAYBOOK_WORKER_CONCURRENCY)',
      intArg('concurrency', 1, 256),
    )
    .action(async (opts: { concurrency?: number }) => {
      const config = configOrExit();
      const client = clientFor(config);
      const url = sharedDatabaseUrl(config, 'daybook worker');
      // A worker runs for days: it keeps its heap near what is live (see heap.ts).
      const heapGrowingPercent = limitHeapGrowth();
      const log = loggerFor(config);
      const reach = new Reachability(log, { urls: { postgres: url }, redis: config });
      const life = lifecycle({
        what: 'worker',
        timeoutMs: config.DAYBOOK_STOP_TIMEOUT_MS,
        degraded: () => reach.down().length > 0,
        log,
      });
      // The driver can reject a promise nobody awaits when the database drops a connection under
      // it (seen with pg_terminate_backend, test/faults/postgres-outage.test.ts); the query that
      // needed the connection has failed on its own path, so the worker carries on. Anything else
      // unhandled is a bug: logged, and the process ends as Node would end it.
      process.on('unhandledRejection', (err) => {
        if (isConnectionLoss(err)) return reach.failed('postgres', err);
        log.fatal(
          { err: err instanceof Error ? (err.stack ?? err.message) : String(err) },
          'unhandled rejection',
        );
        log.flush?.();
        process.exit(1);
      });
      const concurrency = opts.concurrency ?? config.DAYBOOK_WORKER_CONCURRENCY;
      const redis = redisFor(config);
      watchRedis(reach, [redis], (err) => log.error({ err: err.message }, 'redis error'));
      life.closer.add('redis', () => closeRedis(redis));
      const queues = new Queues(redis, config.DAYBOOK_REDIS_PREFIX, retryPolicy(config));
      watchRedis(reach, queues.all(), (err) => log.error({ err: err.message }, 'queue error'));
      life.closer.add('queues', () => queues.close());
      // A database that is down at start is waited for (a stop ends the wait).
      await life.starting(() =>
        untilReachable(reach, 'postgres', isConnectionLoss, life.signal, () => migrateDatabase(url)),
      );
      const db = openDatabase(url, { max: concurrency + 3, prepare: config.DAYBOOK_DB_PREPARE });
      life.closer.add('database', db.close);
      const running = startWorkers(
        {
          sql: db.sql,
          client,
          limiter: limiterFor(config, db.sql),
          config,
          log,
          enqueue: queues,
          now: () => new Date(),
        },
        queues,
        redis,
        {
          concurrency,
          upstreamTimeoutMs: config.DAYBOOK_HTTP_TIMEOUT_MS,
          lockMs: config.DAYBOOK_JOB_LOCK_MS,
          reach,
        },
      );
      // Jobs in flight cannot complete without Redis: when it is down, they are not waited for.
      life.closer.add('workers', () => running.close(reach.down().some((d) => d.dependency === 'redis')));
      // Webhooks go out from every worker: deliveries are claimed in Postgres, so they share the work.
      const delivering = deliveryEngine(config, db.sql, log).run(life.signal);
      life.closer.add('delivery', () => delivering);
      log.info({ concurrency, heapGrowingPercent }, 'worker started');
      return life.serve();
    });
}

export function schedulerCommand(): Command {
  return new Command('scheduler')
    .description(
      'Enqueue the daily work on cron ticks (DAYBOOK_ENTERPRISE_CRON, DAYBOOK_PRODUCTS_CRON in DAYBOOK_CRON_TZ). Safe to run several: one instance is elected per tick, and job ids are deterministic. On start it catches up the latest tick it may have missed.',
    )
    .action(async () => {
      const config = configOrExit();
      const log = loggerFor(config);
      const reach = new Reachability(log, { urls: {}, redis: config });
      const life = lifecycle({
        what: 'scheduler',
        timeoutMs: Math.min(config.DAYBOOK_STOP_TIMEOUT_MS, 10_000),
        degraded: () => reach.down().length > 0,
        log,
      });
      const redis = redisFor(config);
      watchRedis(reach, [redis], (err) => log.error({ err: err.message }, 'redis error'));
      life.closer.add('redis', () => closeRedis(redis));
      const queues = new Queues(redis, config.DAYBOOK_REDIS_PREFIX, retryPolicy(config));
      watchRedis(reach, queues.all(), (err) => log.error({ err: err.message }, 'queue error'));
      life.closer.add('queues', () => queues.close());
      // With Redis down, the catch-up below waits for it: commands are queued until it is back.
      const scheduler = await life.starting(() =>
        startScheduler({ config, queues, redis, log, now: () => new Date() }),
      );
      life.closer.add('scheduler', scheduler.stop);
      log.info(
        {
          enterprise: config.DAYBOOK_ENTERPRISE_CRON,
          products: config.DAYBOOK_PRODUCTS_CRON,
          tz: config.DAYBOOK_CRON_TZ,
        },
        'scheduler started',
      );
      return life.serve();
    });
}

export function runCommand(): Command {
  return new Command('run')
    .description(
      "Run a cycle once, in this process, without Redis: the products pulls and the enterprise refreshes, within the rate limit and the cycle's credit budget.",
    )
    .option(
      '--cycle <date>',
      'the enterprise cycle (default: the current one, by the 03:00 Beijing refresh)',
      dateArg('--cycle'),
    )
    .option(
      '--only <what>',
      'products or enterprises',
      choiceArg('--only', ['products', 'enterprises'] as const),
    )
    .option('--json', 'print the summary as JSON')
    .action(async (opts: { cycle?: string; only?: 'products' | 'enterprises'; json?: boolean }) => {
      const config = configOrExit();
      const client = clientFor(config);
      const log = loggerFor(config);
      const db = await openStore(config, { max: config.DAYBOOK_WORKER_CONCURRENCY + 2 });
      try {
        const cycle = opts.cycle ?? cycleOf(new Date());
        const summary = await runInline(
          { sql: db.sql, client, limiter: limiterFor(config, db.sql), config, log, now: () => new Date() },
          {
            cycle,
            concurrency: config.DAYBOOK_WORKER_CONCURRENCY,
            ...(opts.only ? { only: opts.only } : {}),
          },
        );
        const budget = await budgetOf(db.sql, cycle);
        // What the cycle found goes out to the subscribed endpoints now (queue mode: workers).
        const delivered = await deliverAfterRun(config, db.sql, log);
        if (opts.json)
          process.stdout.write(`${JSON.stringify({ ...summary, budget, deliveries: delivered })}\n`);
        else {
          const e =
            Object.entries(summary.enterprises)
              .map(([k, v]) => `${v} ${k}`)
              .join(', ') || 'none';
          process.stdout.write(
            `cycle ${cycle}: products ${summary.productPulls.map((p) => `${p.date} ${p.outcome}`).join(', ') || 'skipped'}; enterprises ${e}` +
              (budget
                ? `; credits ${budget.spent}/${budget.budget}${budget.pausedAt ? ` (paused: ${forTerminal(String(budget.pausedReason))})` : ''}`
                : '') +
              '\n',
          );
          for (const f of summary.failures)
            process.stdout.write(`  failed: watch entry ${forTerminal(f.entity)}: ${forTerminal(f.error)}\n`);
          if (delivered)
            process.stdout.write(
              `  webhooks: ${delivered.delivered} delivered, ${delivered.retrying} to retry (daybook deliver), ${delivered.failed} failed\n`,
            );
        }
        if (summary.failures.length > 0 || summary.productPulls.some((p) => p.outcome === 'failed'))
          process.exitCode = 1;
      } finally {
        await db.close();
      }
    });
}

export function resumeCommand(): Command {
  return new Command('resume')
    .description(
      'Resume enterprise work paused by insufficient_credits (or a refusing upstream): clears the pause, re-enqueues the entries deferred by the workers and plans the cycle again, so entries the plan deferred are taken within the credits left.',
    )
    .option('--cycle <date>', 'the cycle (default: the current one)', dateArg('--cycle'))
    .option(
      '--add-budget <credits>',
      'raise the cycle budget by this many credits',
      intArg('--add-budget', 0),
      0,
    )
    .option('--inline', 'run the deferred entries now in this process instead of enqueuing them')
    .action(async (opts: { cycle?: string; addBudget: number; inline?: boolean }) => {
      const config = configOrExit();
      const db = await openStore(config);
      try {
        const cycle = opts.cycle ?? cycleOf(new Date());
        if (!(await resumeCycle(db.sql, cycle, opts.addBudget))) {
          throw new UsageError(`cycle ${cycle} has no budget yet: nothing was planned for it`);
        }
        // Entries deferred with a row (by a worker refused credits, or a re-plan) are planned again,
        // in the plan's own transaction under its lock; their jobs ran already, so they are
        // enqueued under new ids (a resume round). The plan then decides over these and the
        // entries it deferred without a row, within the budget.
        let again = new Set<number>();
        const replan = async (tx: Sql) => {
          again = new Set(await replanDeferred(tx, cycle));
        };
        if (opts.inline) {
          const log = loggerFor(config);
          const summary = await runInline(
            {
              sql: db.sql,
              client: clientFor(config),
              limiter: limiterFor(config, db.sql),
              config,
              log,
              now: () => new Date(),
            },
            {
              cycle,
              only: 'enterprises',
              concurrency: config.DAYBOOK_WORKER_CONCURRENCY,
              beforePlan: replan,
            },
          );
          process.stdout.write(`cycle ${cycle} resumed inline: ${JSON.stringify(summary.enterprises)}\n`);
        } else {
          const redis = await oneShotRedis(config);
          const queues = new Queues(redis, config.DAYBOOK_REDIS_PREFIX, retryPolicy(config));
          let rerun = 0;
          let report: Awaited<ReturnType<typeof processPlan>>;
          try {
            const round = Number(
              await redis.incr(coordinationKey(config.DAYBOOK_REDIS_PREFIX, 'resume', cycle)),
            );
            report = await processPlan(
              {
                sql: db.sql,
                config,
                log: loggerFor(config),
                now: () => new Date(),
                enqueue: {
                  async enterprises(c, ids) {
                    const before = ids.filter((id) => again.has(id));
                    rerun += before.length;
                    return (
                      (await queues.enterprises(
                        c,
                        ids.filter((id) => !again.has(id)),
                      )) + (await queues.enterprises(c, before, round))
                    );
                  },
                },
              },
              { cycle },
              `resume-${cycle}-r${round}`,
              replan,
            );
          } finally {
            await queues.close();
            await redis.quit();
          }
          const c = report.counts ?? {};
          process.stdout.write(
            `cycle ${cycle} resumed: ${c.selected ?? 0} entries planned and enqueued (${rerun} of them deferred earlier); ${c.deferred ?? 0} still deferred\n`,
          );
        }
      } finally {
        await db.close();
      }
    });
}

export function productsCommand(): Command {
  const products = new Command('products').description('Product trending lists.');
  products.addCommand(productsGetCommand());
  products
    .command('backfill')
    .description(
      'Pull the trending lists of a range of dates, in this process. Resumable: dates already landed are skipped unless --force (an empty list answered before its US-Pacific day was over does not count as landed: it may not have been published yet).',
    )
    .requiredOption('--from <date>', 'first date (YYYY-MM-DD)', dateArg('--from'))
    .requiredOption(
      '--to <date>',
      "last date (YYYY-MM-DD), a US-Pacific day: today's at the latest",
      dateArg('--to'),
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
      const deps = productCommandDeps(config, client, db.sql, log, now);
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
          const data = ProductsJobData.parse({
            date,
            pull: 'backfill',
            limit: opts.limit ?? config.DAYBOOK_PRODUCT_LIMIT,
          });
          const r = await withRetries(
            deps,
            'product-listing',
            `backfill ${date}`,
            (last) => processProducts(deps, data, `backfill-${date}`, last),
            realSleep,
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
        await db.close();
      }
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
  return products;
}

/**
 * The list dates from `from` to `to` a backfill skips: those with a successful answer landed. An
 * empty list counts only when it was answered after its US-Pacific day was over, by the calling
 * process's clock (`fetched_at`) and the database's (`landed_at`) both: before that, the list may
 * not have been published yet, and the date is pulled again.
 */
export async function landedListDates(sql: Sql, from: string, to: string): Promise<Set<string>> {
  const answers = await sql<{ date: string; empty: boolean; answered_at: Date }[]>`
    select params->>'date' as date,
           case when jsonb_typeof(body_json->'metadata') = 'array'
                then jsonb_array_length(body_json->'metadata') = 0 else false end as empty,
           least(fetched_at, landed_at) as answered_at
    from raw_answers
    where operation = 'product-listing' and outcome = 'success' and params ? 'date'
      and params->>'date' between ${from} and ${to}`;
  return new Set(answers.filter((a) => !a.empty || pacificDayOver(a.date, a.answered_at)).map((a) => a.date));
}

export function enqueueCommand(): Command {
  return new Command('enqueue')
    .description(
      "Put a cycle's plan (and optionally a date's product pull) on the queue by hand, for the workers. Deterministic job ids make a repeat harmless.",
    )
    .option('--cycle <date>', 'the enterprise cycle to plan (default: the current one)', dateArg('--cycle'))
    .option('--products <date>', 'also pull the trending list of this date', dateArg('--products'))
    .option('--no-plan', 'do not enqueue the cycle plan')
    .action(async (opts: { cycle?: string; products?: string; plan: boolean }) => {
      const config = configOrExit();
      const redis = await oneShotRedis(config);
      const queues = new Queues(redis, config.DAYBOOK_REDIS_PREFIX, retryPolicy(config));
      try {
        const ids: string[] = [];
        if (opts.plan) ids.push(await queues.addPlan({ cycle: opts.cycle ?? cycleOf(new Date()) }));
        if (opts.products) {
          ids.push(
            await queues.addProducts({
              date: opts.products,
              pull: 'd1',
              limit: config.DAYBOOK_PRODUCT_LIMIT,
            }),
          );
        }
        process.stdout.write(`enqueued ${ids.join(', ') || 'nothing'}\n`);
      } finally {
        await queues.close();
        await redis.quit();
      }
    });
}

export function serveCommand(): Command {
  return new Command('serve')
    .description(
      'The admin server: Bull Board at /queues, Prometheus metrics at /metrics, /healthz (Postgres and Redis). Bound to 127.0.0.1 unless --host; elsewhere a token (DAYBOOK_ADMIN_TOKEN) is required.',
    )
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option('-p, --port <port>', 'port', intArg('port', 0, 65535), 9464)
    .action(async (opts: { host: string; port: number }) => {
      const config = configOrExit();
      const url = sharedDatabaseUrl(config, 'daybook serve');
      // Fastify, Bull Board and prom-client load only here: workers never pay for them.
      const { AdminConfigError, checkBinding, startAdminServer } = await import('../runtime/admin.ts');
      try {
        checkBinding(opts.host, config.DAYBOOK_ADMIN_TOKEN ?? null);
      } catch (err) {
        if (err instanceof AdminConfigError) throw new UsageError(err.message);
        throw err;
      }
      const log = loggerFor(config);
      const reach = new Reachability(log, { urls: { postgres: url }, redis: config });
      const life = lifecycle({
        what: 'admin server',
        timeoutMs: Math.min(config.DAYBOOK_STOP_TIMEOUT_MS, 10_000),
        degraded: () => reach.down().length > 0,
        log,
      });
      const redis = redisFor(config);
      watchRedis(reach, [redis], (err) => log.error({ err: err.message }, 'redis error'));
      life.closer.add('redis', () => closeRedis(redis));
      const queues = new Queues(redis, config.DAYBOOK_REDIS_PREFIX, retryPolicy(config));
      watchRedis(reach, queues.all(), (err) => log.error({ err: err.message }, 'queue error'));
      life.closer.add('queues', () => queues.close());
      await life.starting(() =>
        untilReachable(reach, 'postgres', isConnectionLoss, life.signal, () => migrateDatabase(url)),
      );
      const db = openDatabase(url, { max: 3, prepare: config.DAYBOOK_DB_PREPARE });
      life.closer.add('database', db.close);
      try {
        const admin = await startAdminServer({
          sql: db.sql,
          redis,
          queues,
          host: opts.host,
          port: opts.port,
          token: config.DAYBOOK_ADMIN_TOKEN ?? null,
          allowedHosts: config.DAYBOOK_ADMIN_HOSTS ?? [],
        });
        life.closer.add('admin server', admin.close);
        log.info({ url: admin.url }, `admin server on ${admin.url} (/queues, /metrics, /healthz)`);
      } catch (err) {
        await life.closer.closeAll(5_000);
        if (err instanceof AdminConfigError) throw new UsageError(err.message);
        throw err;
      }
      return life.serve();
    });
}
