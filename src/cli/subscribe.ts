/** Webhook subscriptions: `subscribe add|list|pause|resume|remove|rotate-secret`. */
import type { Command } from 'commander';
import { checkTarget, parseWebhookUrl, WebhookUrlError } from '../delivery/address.ts';
import { safeUrl } from '../delivery/engine.ts';
import {
  addSubscription,
  listSubscriptions,
  removeSubscription,
  rotateSecret,
  setSubscriptionState,
} from '../delivery/store.ts';
import { parseDuration } from '../retry/schedule.ts';
import { command } from './about.ts';
import { configOrExit, withStore } from './context.ts';
import { listOutput } from './terminal.ts';
import { checkEventTypes, choiceArg, collect, subscriptionIdArg, UsageError } from './usage.ts';

function subscribeAdd(): Command {
  return command('subscribe add')
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
        checkEventTypes(opts.type);
        let url: URL;
        try {
          url = parseWebhookUrl(raw);
          await checkTarget(url, opts.allowPrivate === true);
        } catch (err) {
          if (err instanceof WebhookUrlError) throw new UsageError(err.message);
          throw err;
        }
        const { subscription, secret } = await withStore(configOrExit(), ({ sql }) =>
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
  return command('subscribe list')
    .option('--json', 'print as JSON lines')
    .action(async (opts: { json?: boolean }) => {
      const subs = await withStore(configOrExit(), ({ sql }) => listSubscriptions(sql));
      process.stdout.write(
        listOutput(subs, opts.json, {
          cells: (s) => ({
            id: s.id,
            url: safeUrl(s.url),
            state: s.state + (s.disabled_reason ? ` (${s.disabled_reason})` : ''),
            types: s.digest_only ? 'digest.daily' : s.types.join(',') || '*',
            'min severity': s.min_severity,
            pids: s.pids.join(','),
            format: s.format,
            private: s.allow_private ? 'allowed' : '',
          }),
        }),
      );
    });
}

function stateCommand(name: 'pause' | 'resume'): Command {
  return command(`subscribe ${name}`)
    .argument('<id>', 'the subscription id (subscribe list)', subscriptionIdArg)
    .action(async (id: number) => {
      const s = await withStore(configOrExit(), ({ sql }) =>
        setSubscriptionState(sql, id, name === 'pause' ? 'paused' : 'active'),
      );
      if (!s) throw new UsageError(`there is no subscription ${id} (subscribe list shows them)`);
      process.stdout.write(`subscription ${id}: ${s.state}\n`);
    });
}

function subscribeRemove(): Command {
  return command('subscribe remove')
    .argument('<id>', 'the subscription id', subscriptionIdArg)
    .action(async (id: number) => {
      if (!(await withStore(configOrExit(), ({ sql }) => removeSubscription(sql, id))))
        throw new UsageError(`there is no subscription ${id} (subscribe list shows them)`);
      process.stdout.write(`subscription ${id} removed\n`);
    });
}

function subscribeRotate(): Command {
  return command('subscribe rotate-secret')
    .argument('<id>', 'the subscription id', subscriptionIdArg)
    .option('--overlap <duration>', 'how long the old secret keeps signing (such as 24h, 30m, 0)', '24h')
    .option('--json', 'print as JSON')
    .action(async (id: number, opts: { overlap: string; json?: boolean }) => {
      let overlap: number;
      try {
        overlap = parseDuration(opts.overlap);
      } catch (err) {
        throw new UsageError(`--overlap: ${(err as Error).message}`);
      }
      const secret = await withStore(configOrExit(), ({ sql }) => rotateSecret(sql, id, overlap));
      if (!secret) throw new UsageError(`there is no subscription ${id} (subscribe list shows them)`);
      if (opts.json) process.stdout.write(`${JSON.stringify({ id, secret, overlap_ms: overlap })}\n`);
      else process.stdout.write(`subscription ${id}: new signing secret (shown once; keep it): ${secret}\n`);
    });
}

export function subscribeCommand(): Command {
  return command('subscribe')
    .addCommand(subscribeAdd())
    .addCommand(subscribeList())
    .addCommand(stateCommand('pause'))
    .addCommand(stateCommand('resume'))
    .addCommand(subscribeRemove())
    .addCommand(subscribeRotate());
}
