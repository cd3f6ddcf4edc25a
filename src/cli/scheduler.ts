/** `daybook scheduler`: enqueues the daily work on cron ticks until stopped. */
import type { Command } from 'commander';
import { openDatabase } from '../db/connect.ts';
import { startScheduler, TOP_UP_CRON } from '../runtime/scheduler.ts';
import { command } from './about.ts';
import { configOrExit } from './context.ts';
import { startService } from './start.ts';

export function schedulerCommand(): Command {
  return command('scheduler').action(async () => {
    const config = configOrExit();
    const url = config.DATABASE_URL;
    const service = startService(config, {
      what: 'scheduler',
      timeoutMs: Math.min(config.DAYBOOK_STOP_TIMEOUT_MS, 10_000),
      ...(url ? { postgresUrl: url } : {}),
    });
    const { log, life, redis, queues, reach } = service;
    // With the database, the scheduler also tops up the current cycle's plan when entries were
    // added after it (src/plan/topup.ts). It connects when it first asks and never migrates:
    // Postgres being down holds up nothing else, and is said once (reach).
    const db = url ? openDatabase(url, { max: 2, prepare: config.DAYBOOK_DB_PREPARE }) : null;
    if (db) life.closer.add('database', db.close);
    // With Redis down, the catch-up below waits for it: commands are queued until it is back.
    const scheduler = await life.starting(() =>
      startScheduler({
        config,
        queues,
        redis,
        log,
        now: () => new Date(),
        ...(db ? { sql: db.sql, reach } : {}),
      }),
    );
    life.closer.add('scheduler', scheduler.stop);
    log.info(
      {
        enterprise: config.DAYBOOK_ENTERPRISE_CRON,
        products: config.DAYBOOK_PRODUCTS_CRON,
        topUps: db ? TOP_UP_CRON : null,
        tz: config.DAYBOOK_CRON_TZ,
      },
      'scheduler started',
    );
    return life.serve();
  });
}
