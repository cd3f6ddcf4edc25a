/**
 * `daybook serve`: the admin server (Bull Board, metrics, health, and the web console at /ui/)
 * until stopped. Without DATABASE_URL it serves the console (and /events, /healthz) on the
 * embedded database, which this process then holds alone: no Redis, no Bull Board, no metrics.
 */
import type { Command } from 'commander';
import type postgres from 'postgres';
import type { Config } from '../config/config.ts';
import type { ConsoleReader } from '../console/reader.ts';
import type { Logger } from '../log/log.ts';
import { lifecycle } from '../runtime/shutdown.ts';
import { command } from './about.ts';
import { loggerFor } from './assemble.ts';
import { configOrExit, openStore } from './context.ts';
import { serviceDatabase, startService } from './start.ts';
import { intArg, UsageError } from './usage.ts';

interface ServeOptions {
  host: string;
  port: number;
}

/**
 * What every admin server of `serve` shares, from the configuration and the options: where it
 * listens, who may enter, what it trusts (the public URL, proxies), and its log.
 */
function adminOptions(config: Config, log: Logger, opts: ServeOptions) {
  return {
    host: opts.host,
    port: opts.port,
    token: config.DAYBOOK_ADMIN_TOKEN ?? null,
    allowedHosts: config.DAYBOOK_ADMIN_HOSTS ?? [],
    log,
    trustedProxies: config.DAYBOOK_TRUSTED_PROXIES ?? [],
    ...(config.DAYBOOK_PUBLIC_URL ? { publicUrl: config.DAYBOOK_PUBLIC_URL } : {}),
  };
}

/** The console's reader, or null (said in the log) when the database offers none to this user. */
async function consoleReader(
  sql: postgres.Sql,
  url: string,
  embedded: boolean,
  log: Logger,
): Promise<ConsoleReader | null> {
  const { ConsoleReaderError, openConsoleReader } = await import('../console/reader.ts');
  try {
    return await openConsoleReader(sql, url, embedded);
  } catch (err) {
    if (!(err instanceof ConsoleReaderError)) throw err;
    log.error(
      { reason: err.message },
      `the console (/ui/) is off: it reads as the sql reader role, and cannot here`,
    );
    return null;
  }
}

/** The console on the embedded database: one process holds it, so nothing else runs meanwhile. */
async function serveEmbedded(config: Config, opts: ServeOptions): Promise<never> {
  const log = loggerFor(config);
  const life = lifecycle({
    what: 'admin server',
    timeoutMs: Math.min(config.DAYBOOK_STOP_TIMEOUT_MS, 10_000),
    log,
  });
  const store = await life.starting(() => openStore(config));
  life.closer.add('database', store.close);
  const { startAdminServer } = await import('../runtime/admin.ts');
  const reader = await consoleReader(store.sql, store.url, true, log);
  const admin = await startAdminServer({
    sql: store.sql,
    redis: null,
    queues: null,
    console: reader,
    ...adminOptions(config, log, opts),
  });
  life.closer.add('admin server', admin.close);
  log.info(
    { url: admin.url },
    `console on ${admin.url}/ui/ (embedded database in ${config.DAYBOOK_DATA_DIR}/)`,
  );
  process.stdout.write(`console on ${admin.url}/ui/ (Ctrl-C stops it)\n`);
  return life.serve();
}

export function serveCommand(): Command {
  return command('serve')
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option('-p, --port <port>', 'port', intArg('port', 0, 65535), 9464)
    .action(async (opts: ServeOptions) => {
      const config = configOrExit();
      // Fastify, Bull Board and prom-client load only here: workers never pay for them.
      const { AdminConfigError, checkBinding, startAdminServer } = await import('../runtime/admin.ts');
      try {
        checkBinding(opts.host, config.DAYBOOK_ADMIN_TOKEN ?? null);
      } catch (err) {
        if (err instanceof AdminConfigError) throw new UsageError(err.message);
        throw err;
      }
      if (!config.DATABASE_URL) return serveEmbedded(config, opts);
      const url = config.DATABASE_URL;
      const service = startService(config, {
        what: 'admin server',
        timeoutMs: Math.min(config.DAYBOOK_STOP_TIMEOUT_MS, 10_000),
        postgresUrl: url,
      });
      const { log, life, redis, queues } = service;
      const db = await serviceDatabase(service, url, 3);
      try {
        const reader = await consoleReader(db.sql, url, false, log);
        if (reader) life.closer.add('console reader', reader.close);
        const admin = await startAdminServer({
          sql: db.sql,
          redis,
          queues,
          console: reader,
          ...adminOptions(config, log, opts),
          rateLimits: {
            'enterprise-search': config.DAYBOOK_ENTERPRISE_RATE,
            'product-listing': config.DAYBOOK_PRODUCT_RATE,
          },
        });
        life.closer.add('admin server', admin.close);
        log.info({ url: admin.url }, `admin server on ${admin.url} (/queues, /metrics, /healthz, /ui/)`);
      } catch (err) {
        await life.closer.closeAll(5_000);
        if (err instanceof AdminConfigError) throw new UsageError(err.message);
        throw err;
      }
      return life.serve();
    });
}
