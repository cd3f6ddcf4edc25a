/**
 * The start the long-running commands share (worker, scheduler, serve): the logger, the watch
 * on their dependencies, one bounded stop on SIGTERM/SIGINT, and the Redis connection with its
 * queues; then, for those that use it, the database, waited for while it is down.
 */
import type { Config } from '../config/config.ts';
import { type Database, openDatabase } from '../db/connect.ts';
import { migrateDatabase } from '../db/migrate.ts';
import { isConnectionLoss } from '../db/outage.ts';
import type { Logger } from '../log/log.ts';
import { closeRedis, Queues, retryPolicy } from '../runtime/queues.ts';
import { Reachability, untilReachable, watchRedis } from '../runtime/reachability.ts';
import { type Lifecycle, lifecycle } from '../runtime/shutdown.ts';
import { loggerFor, redisFor } from './assemble.ts';

/** A long-running command as started: what it runs with, and its stop. */
export interface Service {
  config: Config;
  log: Logger;
  reach: Reachability;
  life: Lifecycle;
  redis: ReturnType<typeof redisFor>;
  queues: Queues;
}

export interface ServiceOptions {
  /** The process, for the log lines ("worker", "scheduler", "admin server"). */
  what: string;
  /** The whole stop, closing included. */
  timeoutMs: number;
  /** The Postgres server it uses, watched with Redis; none for a command without a database. */
  postgresUrl?: string;
}

/**
 * Starts a long-running command: from now on a stop closes what it opened, in reverse order.
 * Redis being down does not hold this up: its clients reconnect for as long as it takes.
 */
export function startService(config: Config, options: ServiceOptions): Service {
  const log = loggerFor(config);
  const reach = new Reachability(log, {
    urls: options.postgresUrl === undefined ? {} : { postgres: options.postgresUrl },
    redis: config,
  });
  const life = lifecycle({
    what: options.what,
    timeoutMs: options.timeoutMs,
    degraded: () => reach.down().length > 0,
    log,
  });
  const redis = redisFor(config);
  watchRedis(reach, [redis], (err) => log.error({ err: err.message }, 'redis error'));
  life.closer.add('redis', () => closeRedis(redis));
  const queues = new Queues(redis, config.DAYBOOK_REDIS_PREFIX, retryPolicy(config));
  watchRedis(reach, queues.all(), (err) => log.error({ err: err.message }, 'queue error'));
  life.closer.add('queues', () => queues.close());
  return { config, log, reach, life, redis, queues };
}

/**
 * The database of a started command, migrated, with at most `max` connections, closed on the
 * stop. A database that is down at start is waited for (a stop ends the wait).
 */
export async function serviceDatabase(service: Service, url: string, max: number): Promise<Database> {
  const { config, reach, life } = service;
  await life.starting(() =>
    untilReachable(reach, 'postgres', isConnectionLoss, life.signal, () => migrateDatabase(url)),
  );
  const db = openDatabase(url, { max, prepare: config.DAYBOOK_DB_PREPARE });
  life.closer.add('database', db.close);
  return db;
}
