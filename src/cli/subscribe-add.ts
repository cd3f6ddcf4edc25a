/**
 * `daybook subscribe add`: a receiver subscribed to events, checked for its format first (a
 * mailto: list for mail, a reachable URL otherwise). A webhook's signing secret is printed once.
 */
import type { Command } from 'commander';
import type { Config } from '../config/config.ts';
import { checkTarget, parseWebhookUrl, WebhookUrlError } from '../delivery/address.ts';
import type { Lang } from '../delivery/channels/words.ts';
import { LANGS } from '../delivery/channels/words.ts';
import { mailAddresses } from '../delivery/mailer.ts';
import { FORMATS, type Format } from '../delivery/payload.ts';
import { addSubscription } from '../delivery/store.ts';
import { command } from './about.ts';
import { configOrExit, withStore } from './context.ts';
import { shownUrl } from './subscribe-shared.ts';
import { checkEventTypes, choiceArg, collect, fromConfig, UsageError } from './usage.ts';

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

export function subscribeAddCommand(): Command {
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
      fromConfig('the language of chat and mail messages: zh or en', 'DAYBOOK_LANG', 'zh'),
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
