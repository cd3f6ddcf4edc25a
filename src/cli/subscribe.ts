/** Webhook, chat and mail subscriptions: `subscribe add|list|pause|resume|remove|rotate-secret|test`. */
import type { Command } from 'commander';
import type { Config } from '../config/config.ts';
import { checkTarget, parseWebhookUrl, WebhookUrlError } from '../delivery/address.ts';
import type { Lang } from '../delivery/channels/words.ts';
import { LANGS } from '../delivery/channels/words.ts';
import { dispatchEvents, SAMPLE_KNOWN, sampleEvent } from '../delivery/dispatch.ts';
import { safeUrl } from '../delivery/engine.ts';
import { mailAddresses } from '../delivery/mailer.ts';
import { FORMATS, type Format } from '../delivery/payload.ts';
import {
  addSubscription,
  deliveryTarget,
  listSubscriptions,
  removeSubscription,
  rotateSecret,
  setSubscriptionState,
} from '../delivery/store.ts';
import { parseDuration } from '../retry/schedule.ts';
import { command } from './about.ts';
import { mailerFor } from './assemble.ts';
import { configOrExit, withStore } from './context.ts';
import { listOutput } from './terminal.ts';
import { checkEventTypes, choiceArg, collect, subscriptionIdArg, UsageError } from './usage.ts';

interface AddOptions {
  type: string[];
  minSeverity: 'high' | 'medium' | 'low';
  pid: string[];
  digest?: boolean;
  format?: Format;
  signingSecret?: string;
  lang?: Lang;
  allowPrivate?: boolean;
  fromStart?: boolean;
  json?: boolean;
}

/** The receiver checked for its format: a mailto: list for email, a reachable URL otherwise. */
async function checkedReceiver(
  raw: string,
  opts: AddOptions,
  config: Config,
): Promise<{ url: string; format: Format }> {
  const format = opts.format ?? (/^mailto:/i.test(raw) ? 'email' : 'standard');
  if (opts.signingSecret !== undefined && format !== 'feishu' && format !== 'dingtalk')
    throw new UsageError(
      `--signing-secret is for --format feishu or dingtalk (${format} has no signing secret)`,
    );
  if (opts.signingSecret !== undefined && !/^[\x21-\x7e]{8,}$/.test(opts.signingSecret))
    throw new UsageError(
      "--signing-secret must be the bot's secret as the vendor shows it (8 or more printable characters)",
    );
  if (format === 'email') {
    if (!/^mailto:/i.test(raw)) throw new UsageError('--format email takes mailto:<address>[,<address>…]');
    try {
      mailAddresses(raw);
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    if (!config.DAYBOOK_SMTP_URL || !config.DAYBOOK_SMTP_FROM)
      throw new UsageError(
        'mail needs DAYBOOK_SMTP_URL and DAYBOOK_SMTP_FROM set (the SMTP server and the sender)',
      );
    return { url: raw.trim(), format };
  }
  if (/^mailto:/i.test(raw)) throw new UsageError('a mailto: receiver takes --format email');
  try {
    const url = parseWebhookUrl(raw);
    await checkTarget(url, opts.allowPrivate === true);
    return { url: url.toString(), format };
  } catch (err) {
    if (err instanceof WebhookUrlError) throw new UsageError(err.message);
    throw err;
  }
}

function subscribeAdd(): Command {
  return command('subscribe add')
    .argument('<url>', 'the receiver: https://… (http:// too), or mailto:<address>[,<address>…] for mail')
    .option(
      '--type <pattern>',
      'only events of this type or family, such as company.status.* (repeatable). Without it a webhook takes every event, and chat, Slack and mail take the changes of companies, of their watched shareholders (related.*) and the digest: name operator events (cycle.*, upstream.refusing, entry.failed, endpoint.*) or company.first_seen to receive them too',
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
      'standard (Standard Webhooks JSON, the default), slack, feishu, dingtalk, wecom, teams, or email (for a mailto: receiver)',
      choiceArg('--format', FORMATS),
    )
    .option(
      '--signing-secret <secret>',
      "a Feishu or DingTalk bot's signing secret (from the bot's security settings)",
    )
    .option(
      '--lang <lang>',
      'the language of chat and mail messages: zh or en (default DAYBOOK_LANG, else zh)',
      choiceArg('--lang', LANGS),
    )
    .option(
      '--allow-private',
      'allow a loopback, private or link-local address (an internal receiver); refused otherwise',
    )
    .option('--from-start', 'deliver the events already written too, from the first')
    .option('--json', 'print the subscription and its secret as JSON')
    .action(async (raw: string, opts: AddOptions) => {
      checkEventTypes(opts.type);
      const config = configOrExit();
      const { url, format } = await checkedReceiver(raw, opts, config);
      const { subscription, secret } = await withStore(config, ({ sql }) =>
        addSubscription(sql, {
          url,
          types: opts.type,
          minSeverity: opts.minSeverity,
          pids: opts.pid,
          digestOnly: opts.digest === true,
          format,
          lang: opts.lang ?? config.DAYBOOK_LANG ?? 'zh',
          signingSecret: opts.signingSecret ?? null,
          allowPrivate: opts.allowPrivate === true,
          ...(opts.fromStart ? { fromSeq: 1 } : {}),
        }),
      );
      const shown = { ...subscription, url: shownUrl(subscription.url) };
      // Our signing secret means something to a Standard Webhooks receiver only.
      const signs = format === 'standard';
      if (opts.json) {
        process.stdout.write(`${JSON.stringify(signs ? { ...shown, secret } : shown)}\n`);
        return;
      }
      process.stdout.write(
        `subscription ${subscription.id}: ${shown.url} (${format})\n${signs ? `signing secret (shown once; keep it): ${secret}\n` : ''}`,
      );
    });
}

/** A receiver's URL as shown: its tokens cut (a mail list shows as it is). */
function shownUrl(url: string): string {
  return /^mailto:/i.test(url) ? url : safeUrl(url);
}

function subscribeList(): Command {
  return command('subscribe list')
    .option('--json', 'print as JSON lines')
    .action(async (opts: { json?: boolean }) => {
      const subs = await withStore(configOrExit(), ({ sql }) => listSubscriptions(sql));
      process.stdout.write(
        listOutput(
          subs.map((s) => ({ ...s, url: shownUrl(s.url) })),
          opts.json,
          {
            cells: (s) => ({
              id: s.id,
              url: shownUrl(s.url),
              state: s.state + (s.disabled_reason ? ` (${s.disabled_reason})` : ''),
              types: s.digest_only
                ? 'digest.daily'
                : s.types.join(',') || (s.format === 'standard' ? '*' : 'changes, digest.daily'),
              'min severity': s.min_severity,
              pids: s.pids.join(','),
              format: s.format,
              lang: s.lang,
              private: s.allow_private ? 'allowed' : '',
            }),
          },
        ),
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

function subscribeTest(): Command {
  return command('subscribe test')
    .argument('<id>', 'the subscription id', subscriptionIdArg)
    .option('--json', 'print the outcome as JSON')
    .action(async (id: number, opts: { json?: boolean }) => {
      const config = configOrExit();
      const at = new Date();
      const r = await withStore(config, async ({ sql }) => {
        const target = await deliveryTarget(sql, id);
        if (!target) return null;
        return dispatchEvents(target, [sampleEvent(target.lang, at)], SAMPLE_KNOWN, at, {
          timeoutMs: config.DAYBOOK_WEBHOOK_TIMEOUT_MS,
          publicUrl: config.DAYBOOK_PUBLIC_URL,
          mailer: mailerFor(config),
        });
      });
      if (!r) throw new UsageError(`there is no subscription ${id} (subscribe list shows them)`);
      const outcome = r.ok ? 'delivered' : r.rateLimitedMs !== null ? 'rate limited' : 'refused';
      if (opts.json)
        process.stdout.write(
          `${JSON.stringify({ id, outcome, status: r.status, answer: r.response, error: r.error, latency_ms: r.latencyMs })}\n`,
        );
      else
        process.stdout.write(
          `subscription ${id}: ${outcome}${r.status !== null ? ` (HTTP ${r.status})` : ''} in ${r.latencyMs} ms\n` +
            `answer: ${r.response ?? '(none)'}\n${r.error ? `error: ${r.error}\n` : ''}`,
        );
      if (!r.ok) process.exitCode = 1;
    });
}

export function subscribeCommand(): Command {
  return command('subscribe')
    .addCommand(subscribeAdd())
    .addCommand(subscribeList())
    .addCommand(stateCommand('pause'))
    .addCommand(stateCommand('resume'))
    .addCommand(subscribeRemove())
    .addCommand(subscribeRotate())
    .addCommand(subscribeTest());
}
