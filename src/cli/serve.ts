/** `daybook serve`: the admin server (Bull Board, metrics, health) until stopped. */
import type { Command } from 'commander';
import { command } from './about.ts';
import { configOrExit, sharedDatabaseUrl } from './context.ts';
import { serviceDatabase, startService } from './start.ts';
import { intArg, UsageError } from './usage.ts';

export function serveCommand(): Command {
  return command('serve')
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
      const service = startService(config, {
        what: 'admin server',
        timeoutMs: Math.min(config.DAYBOOK_STOP_TIMEOUT_MS, 10_000),
        postgresUrl: url,
      });
      const { log, life, redis, queues } = service;
      const db = await serviceDatabase(service, url, 3);
      try {
        const admin = await startAdminServer({
          sql: db.sql,
          redis,
          queues,
          host: opts.host,
          port: opts.port,
          token: config.DAYBOOK_ADMIN_TOKEN ?? null,
          allowedHosts: config.DAYBOOK_ADMIN_HOSTS ?? [],
          rateLimits: {
            'enterprise-search': config.DAYBOOK_ENTERPRISE_RATE,
            'product-listing': config.DAYBOOK_PRODUCT_RATE,
          },
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
