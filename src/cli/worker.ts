/** `daybook worker`: processes queued jobs until stopped. */
import type { Command } from 'commander';
import { isConnectionLoss } from '../db/outage.ts';
import { limitHeapGrowth } from '../runtime/heap.ts';
import { startWorkers } from '../runtime/worker.ts';
import { command } from './about.ts';
import { clientFor, deliveryEngine } from './assemble.ts';
import { configOrExit, sharedDatabaseUrl } from './context.ts';
import { serviceDatabase, startService } from './start.ts';
import { fromConfig, intArg } from './usage.ts';

export function workerCommand(): Command {
  return command('worker')
    .option(
      '-c, --concurrency <n>',
      fromConfig('enterprise jobs at once in this process', 'DAYBOOK_WORKER_CONCURRENCY'),
      intArg('concurrency', 1, 256),
    )
    .action(async (opts: { concurrency?: number }) => {
      const config = configOrExit();
      const client = clientFor(config);
      const url = sharedDatabaseUrl(config, 'daybook worker');
      // A worker runs for days: it keeps its heap near what is live (see heap.ts).
      const heapGrowingPercent = limitHeapGrowth();
      const service = startService(config, {
        what: 'worker',
        timeoutMs: config.DAYBOOK_STOP_TIMEOUT_MS,
        postgresUrl: url,
      });
      const { log, reach, life, redis, queues } = service;
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
      const db = await serviceDatabase(service, url, concurrency + 3);
      const running = startWorkers(
        {
          sql: db.sql,
          client,
          config,
          log,
          now: () => new Date(),
        },
        queues,
        redis,
        {
          concurrency,
          upstreamTimeoutMs: config.DAYBOOK_HTTP_TIMEOUT_MS,
          lockMs: config.DAYBOOK_JOB_LOCK_MS,
          maxStalledCount: config.DAYBOOK_JOB_MAX_STALLS,
          reach,
        },
      );
      // Jobs in flight cannot complete without Redis: when it is down, they are not waited for.
      life.closer.add('workers', () => running.close(reach.down().some((d) => d.dependency === 'redis')));
      // Webhooks go out from every worker: deliveries are claimed in Postgres, so they share the work.
      const delivering = deliveryEngine(config, db.sql, log, url).run(life.signal);
      life.closer.add('delivery', () => delivering);
      log.info({ concurrency, heapGrowingPercent }, 'worker started');
      return life.serve();
    });
}
