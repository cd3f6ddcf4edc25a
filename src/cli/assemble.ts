/**
 * Builds what the pipeline commands need from the configuration: client, limiter, logger, the
 * delivery engine.
 */

import type postgres from 'postgres';
import type { Config } from '../config/config.ts';
import { DeliveryEngine } from '../delivery/engine.ts';
import { type Mailer, smtpMailer, smtpSecrets } from '../delivery/mailer.ts';
import { createLogger, type Logger } from '../log/log.ts';
import { backoffMs } from '../retry/backoff.ts';
import { redisConnection } from '../runtime/queues.ts';
import { ONE_SHOT_DISCONNECT_MS, redisPlace, redisVariable } from '../runtime/redis.ts';
import { UpstreamClient } from '../upstream/client.ts';
import { UsageError } from './usage.ts';

export function loggerFor(config: Config, pretty?: boolean): Logger {
  return createLogger({
    level: config.LOG_LEVEL,
    secrets: [
      config.DAYBOOK_API_KEY,
      config.DAYBOOK_ADMIN_TOKEN,
      ...(config.DAYBOOK_SMTP_URL ? smtpSecrets(config.DAYBOOK_SMTP_URL) : []),
    ].filter((s): s is string => Boolean(s)),
    ...(pretty === undefined ? {} : { pretty }),
  });
}

/**
 * daybook's clock: the system clock, or the time DAYBOOK_CLOCK sets, running on at the real pace
 * from the moment this is called.
 */
export function clockFor(config: Config): () => Date {
  const at = config.DAYBOOK_CLOCK;
  if (at === undefined) return () => new Date();
  const offsetMs = at - Date.now();
  return () => new Date(Date.now() + offsetMs);
}

/**
 * The upstream client, or a usage error naming what is missing. `now` is the clock its calls are
 * timed by (`fetched_at`), the system clock by default.
 */
export function clientFor(config: Config, now?: () => Date): UpstreamClient {
  if (!config.DAYBOOK_API_BASE_URL || !config.DAYBOOK_API_KEY) {
    const missing = [
      !config.DAYBOOK_API_BASE_URL && 'DAYBOOK_API_BASE_URL',
      !config.DAYBOOK_API_KEY && 'DAYBOOK_API_KEY',
    ]
      .filter(Boolean)
      .join(' and ');
    throw new UsageError(
      `${missing} ${missing.includes(' and ') ? 'are' : 'is'} not set. Set ${missing.includes(' and ') ? 'them' : 'it'} for the real upstream, or start the simulator (daybook sim) and point DAYBOOK_API_BASE_URL at it.`,
    );
  }
  return new UpstreamClient({
    baseUrl: config.DAYBOOK_API_BASE_URL,
    apiKey: config.DAYBOOK_API_KEY,
    timeoutMs: config.DAYBOOK_HTTP_TIMEOUT_MS,
    maxBodyBytes: config.DAYBOOK_MAX_BODY_BYTES,
    ...(now ? { now } : {}),
  });
}

/** The long-lived connection of workers and schedulers: it reconnects for as long as it takes. */
export function redisFor(config: Config) {
  return redisConnection(config);
}

/**
 * A connection for a command that runs once (enqueue, resume): it gives up after a few seconds
 * with a message naming the Redis it could not reach, instead of retrying forever.
 */
export async function oneShotRedis(config: Config) {
  let lastError = '';
  const redis = redisConnection(config, {
    lazyConnect: true,
    connectTimeout: 5_000,
    maxRetriesPerRequest: 1,
    retryStrategy: (attempt) => (attempt > 3 ? null : backoffMs(attempt - 1, { baseMs: 250 })),
    disconnectTimeout: ONE_SHOT_DISCONNECT_MS,
  });
  redis.on('error', (err: Error) => {
    lastError = err.message;
  });
  try {
    await redis.connect();
  } catch (err) {
    redis.disconnect();
    const why = lastError || (err instanceof Error ? err.message : String(err));
    throw new Error(
      `${redisPlace(config)} did not answer (${why}). Is it running? Check ${redisVariable(config)}.`,
    );
  }
  return redis;
}

/**
 * The delivery engine as configured. `databaseUrl`: the Postgres its `run` listens on for new
 * events, unless DAYBOOK_LISTEN_URL names a direct way to it (none for the embedded database,
 * whose one process looks on a timer).
 */
export function deliveryEngine(
  config: Config,
  sql: postgres.Sql,
  log: Logger,
  databaseUrl?: string,
): DeliveryEngine {
  const listenUrl = databaseUrl === undefined ? undefined : (config.DAYBOOK_LISTEN_URL ?? databaseUrl);
  return new DeliveryEngine(sql, log, {
    ...(listenUrl ? { listen: { url: listenUrl, prepare: config.DAYBOOK_DB_PREPARE } } : {}),
    schedule: config.DAYBOOK_WEBHOOK_SCHEDULE,
    timeoutMs: config.DAYBOOK_WEBHOOK_TIMEOUT_MS,
    disableAfterMs: config.DAYBOOK_WEBHOOK_DISABLE_AFTER,
    concurrency: config.DAYBOOK_WEBHOOK_CONCURRENCY,
    publicUrl: config.DAYBOOK_PUBLIC_URL,
    mailer: mailerFor(config),
  });
}

/** The mailer of DAYBOOK_SMTP_URL and DAYBOOK_SMTP_FROM; null when either is unset. */
export function mailerFor(config: Config): Mailer | null {
  if (!config.DAYBOOK_SMTP_URL || !config.DAYBOOK_SMTP_FROM) return null;
  return smtpMailer({
    url: config.DAYBOOK_SMTP_URL,
    from: config.DAYBOOK_SMTP_FROM,
    timeoutMs: config.DAYBOOK_WEBHOOK_TIMEOUT_MS,
    allowPlaintextAuth: config.DAYBOOK_SMTP_ALLOW_PLAINTEXT_AUTH,
  });
}
