/**
 * Webhook commands: `subscribe add|list|pause|resume|remove|rotate-secret`, `deliver` (run the
 * delivery engine once or until stopped) and `deliveries` (the attempt log).
 */
import { Command } from 'commander';
import type postgres from 'postgres';
import type { Config } from '../config/config.ts';
import { checkTarget, parseWebhookUrl, WebhookUrlError } from '../delivery/address.ts';
import { DeliveryEngine, type PassSummary, safeUrl } from '../delivery/engine.ts';
import { parseDuration } from '../retry/schedule.ts';
import {
  addSubscription,
  listSubscriptions,
  removeSubscription,
  rotateSecret,
  setSubscriptionState,
} from '../delivery/store.ts';
import { EVENT_TYPES } from '../events/catalogue.ts';
import { typeMatches } from '../events/feed.ts';
import type { Logger } from '../log/log.ts';
import { lifecycle } from '../runtime/shutdown.ts';
import { loggerFor } from './assemble.ts';
import { configOrExit, openStore } from './context.ts';
import { formatTable } from './report.ts';
import { choiceArg, collect, intArg, UsageError } from './usage.ts';

const idArg = intArg('subscription id', 1);

/** The delivery engine as configured. */
export function deliveryEngine(config: Config, sql: postgres.Sql, log: Logger): DeliveryEngine {
  return new DeliveryEngine(sql, log, {
    schedule: config.DAYBOOK_WEBHOOK_SCHEDULE,
    timeoutMs: config.DAYBOOK_WEBHOOK_TIMEOUT_MS,
    disableAfterMs: config.DAYBOOK_WEBHOOK_DISABLE_AFTER,
    concurrency: config.DAYBOOK_WEBHOOK_CONCURRENCY,
  });
}

/** Runs `body` on the configured database, closed afterwards. */
async function withStore<T>(body: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const db = await openStore(configOrExit());
  try {
    return await body(db.sql);
  } finally {
    await db.close();
  }
}

function checkTypes(types: readonly string[]): void {
  const known = Object.keys(EVENT_TYPES);
  for (const t of types)
    if (!known.some((k) => typeMatches(t, k)))
      throw new UsageError(
        `--type ${t} matches no event type; types look like company.status.changed or company.status.* (see the README, Events)`,
      );
}

function subscribeAdd(): Command {
  return new Command('add')
    .description(
      'Subscribe a URL to events. Prints the signing secret (whsec_…) once: keep it, it is never shown again. Deliveries are signed with the Standard Webhooks headers and start with the events written from now on (--from-start for the whole history).',
    )
    .argument('<url>', 'the receiver, https://… (http:// too)')
    .option(
      '--type <pattern>',
      'only events of this type or family, such as company.status.* (repeatable)',
      collect,
      [],
    )
    .option(
      '--min-severity <level>',
      'only events of this severity or above: high, medium or low',
      choiceArg('--min-severity', ['high', 'medium', 'low'] as const),
      'low',
    )
    .option('--pid <pid>', 'only events of this enterprise (repeatable)', collect, [])
    .option('--digest', 'only the daily digest (digest.daily)')
    .option(
      '--format <format>',
      'standard (Standard Webhooks JSON) or slack (an incoming-webhook message)',
      choiceArg('--format', ['standard', 'slack'] as const),
      'standard',
    )
    .option(
      '--allow-private',
      'allow a loopback, private or link-local address (an internal receiver); refused otherwise',
    )
    .option('--from-start', 'deliver the events already written too, from the first')
    .option('--json', 'print the subscription and its secret as JSON')
    .action(
      async (
        raw: string,
        opts: {
          type: string[];
          minSeverity: 'high' | 'medium' | 'low';
          pid: string[];
          digest?: boolean;
          format: 'standard' | 'slack';
          allowPrivate?: boolean;
          fromStart?: boolean;
          json?: boolean;
        },
      ) => {
        checkTypes(opts.type);
        let url: URL;
        try {
          url = parseWebhookUrl(raw);
          await checkTarget(url, opts.allowPrivate === true);
        } catch (err) {
          if (err instanceof WebhookUrlError) throw new UsageError(err.message);
          throw err;
        }
        const { subscription, secret } = await withStore((sql) =>
          addSubscription(sql, {
            url: url.toString(),
            types: opts.type,
            minSeverity: opts.minSeverity,
            pids: opts.pid,
            digestOnly: opts.digest === true,
            format: opts.format,
            allowPrivate: opts.allowPrivate === true,
            ...(opts.fromStart ? { fromSeq: 1 } : {}),
          }),
        );
        if (opts.json) {
          process.stdout.write(`${JSON.stringify({ ...subscription, secret })}\n`);
          return;
        }
        process.stdout.write(
          `subscription ${subscription.id}: ${safeUrl(subscription.url)}\nsigning secret (shown once; keep it): ${secret}\n`,
        );
      },
    );
}

function subscribeList(): Command {
  return new Command('list')
    .description('List subscriptions and their state (never their secrets).')
    .option('--json', 'print as JSON lines')
    .action(async (opts: { json?: boolean }) => {
      const subs = await withStore((sql) => listSubscriptions(sql));
      if (opts.json) {
        process.stdout.write(subs.map((s) => JSON.stringify(s)).join('\n') + (subs.length ? '\n' : ''));
        return;
      }
      process.stdout.write(
        formatTable(
          subs.map((s) => ({
            id: s.id,
            url: safeUrl(s.url),
            state: s.state + (s.disabled_reason ? ` (${s.disabled_reason})` : ''),
            types: s.digest_only ? 'digest.daily' : s.types.join(',') || '*',
            'min severity': s.min_severity,
            pids: s.pids.join(','),
            format: s.format,
            private: s.allow_private ? 'allowed' : '',
          })),
        ),
      );
    });
}

function stateCommand(name: 'pause' | 'resume', description: string): Command {
  return new Command(name)
    .description(description)
    .argument('<id>', 'the subscription id (subscribe list)', idArg)
    .action(async (id: number) => {
      const s = await withStore((sql) =>
        setSubscriptionState(sql, id, name === 'pause' ? 'paused' : 'active'),
      );
      if (!s) throw new UsageError(`there is no subscription ${id} (subscribe list shows them)`);
      process.stdout.write(`subscription ${id}: ${s.state}\n`);
    });
}

function subscribeRemove(): Command {
  return new Command('remove')
    .description('Remove a subscription and its pending deliveries (the attempt log goes with it).')
    .argument('<id>', 'the subscription id', idArg)
    .action(async (id: number) => {
      if (!(await withStore((sql) => removeSubscription(sql, id))))
        throw new UsageError(`there is no subscription ${id} (subscribe list shows them)`);
      process.stdout.write(`subscription ${id} removed\n`);
    });
}

function subscribeRotate(): Command {
  return new Command('rotate-secret')
    .description(
      'Give a subscription a new signing secret, shown once. For --overlap (default 24h) deliveries carry signatures by both the old and the new secret, so the receiver can switch without losing one.',
    )
    .argument('<id>', 'the subscription id', idArg)
    .option('--overlap <duration>', 'how long the old secret keeps signing (such as 24h, 30m, 0)', '24h')
    .option('--json', 'print as JSON')
    .action(async (id: number, opts: { overlap: string; json?: boolean }) => {
      let overlap: number;
      try {
        overlap = parseDuration(opts.overlap);
      } catch (err) {
        throw new UsageError(`--overlap: ${(err as Error).message}`);
      }
      const secret = await withStore((sql) => rotateSecret(sql, id, overlap));
      if (!secret) throw new UsageError(`there is no subscription ${id} (subscribe list shows them)`);
      if (opts.json) process.stdout.write(`${JSON.stringify({ id, secret, overlap_ms: overlap })}\n`);
      else process.stdout.write(`subscription ${id}: new signing secret (shown once; keep it): ${secret}\n`);
    });
}

export function subscribeCommand(): Command {
  return new Command('subscribe')
    .description('Webhook subscriptions: where events are pushed, signed (Standard Webhooks).')
    .addCommand(subscribeAdd())
    .addCommand(subscribeList())
    .addCommand(stateCommand('pause', 'Pause deliveries to a subscription; they wait and go on resume.'))
    .addCommand(
      stateCommand(
        'resume',
        'Resume a paused or disabled subscription: what was written meanwhile is delivered.',
      ),
    )
    .addCommand(subscribeRemove())
    .addCommand(subscribeRotate());
}

function describePass(s: PassSummary): string {
  return `deliveries: ${s.queued} queued, ${s.attempted} attempted, ${s.delivered} delivered, ${s.retrying} to retry, ${s.failed} failed${s.disabled ? `, ${s.disabled} endpoint(s) disabled` : ''}`;
}

export function deliverCommand(): Command {
  return new Command('deliver')
    .description(
      'Deliver webhooks: queue new events for each subscription and send everything due, then stop (or, with --watch, keep going until SIGTERM/SIGINT). Any number can run at once, beside workers.',
    )
    .option('--watch', 'keep delivering as events come, until stopped')
    .option('--json', 'print the summary as JSON')
    .action(async (opts: { watch?: boolean; json?: boolean }) => {
      const config = configOrExit();
      const log = loggerFor(config);
      if (opts.watch) {
        const life = lifecycle({
          what: 'delivery',
          timeoutMs: Math.min(config.DAYBOOK_STOP_TIMEOUT_MS, 30_000),
          log,
        });
        const db = await openStore(config);
        life.closer.add('database', db.close);
        const engine = deliveryEngine(config, db.sql, log);
        const running = engine.run(life.signal);
        life.closer.add('delivery', () => running);
        log.info('delivery started');
        return life.serve();
      }
      const db = await openStore(config);
      try {
        const summary = await deliveryEngine(config, db.sql, log).pass();
        process.stdout.write(opts.json ? `${JSON.stringify(summary)}\n` : `${describePass(summary)}\n`);
      } finally {
        await db.close();
      }
    });
}

export function deliveriesCommand(): Command {
  return new Command('deliveries')
    .description('The webhook attempt log, newest first: status, latency and error of each attempt.')
    .option('--failed', 'only attempts that did not deliver')
    .option('--subscription <id>', 'only this subscription', idArg)
    .option('--limit <n>', 'at most this many attempts', intArg('--limit', 1, 100_000), 50)
    .option('--json', 'print as JSON lines')
    .action(async (opts: { failed?: boolean; subscription?: number; limit: number; json?: boolean }) => {
      const rows = await withStore(
        (sql) => sql`
          select d.attempted_at, d.subscription_id::int as subscription, e.id as event, e.type, d.attempt,
                 d.http_status as status, d.latency_ms, d.outcome, d.error
          from webhook_deliveries d join events e on e.seq = d.event_seq
          where true ${opts.failed ? sql`and d.outcome <> 'succeeded'` : sql``}
            ${opts.subscription ? sql`and d.subscription_id = ${opts.subscription}` : sql``}
          order by d.id desc limit ${opts.limit}`,
      );
      if (opts.json)
        process.stdout.write(rows.map((r) => JSON.stringify(r)).join('\n') + (rows.length ? '\n' : ''));
      else process.stdout.write(formatTable(rows));
    });
}

/** After an inline run: one delivery pass when anything is subscribed. */
export async function deliverAfterRun(
  config: Config,
  sql: postgres.Sql,
  log: Logger,
): Promise<PassSummary | null> {
  const [n] = await sql<{ n: number }[]>`select count(*)::int as n from subscriptions where state = 'active'`;
  if (!n?.n) return null;
  return deliveryEngine(config, sql, log).pass();
}
