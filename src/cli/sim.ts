/** `daybook sim`: runs the upstream simulator until interrupted. */
import { type Command, InvalidArgumentError } from 'commander';
import { FaultSpecError, parseFaultSpec } from '../sim/faults.ts';
import { defaultSimOptions, SANDBOX_CREDITS, SANDBOX_KEY } from '../sim/options.ts';
import { command } from './about.ts';
import { choiceArg, collect, intArg, UsageError } from './usage.ts';

/** Parses `KEY[:CREDITS]`; a key may itself contain colons, the credits are the last digits. */
export function parseKeySpec(spec: string): [string, number] {
  const m = /^(.+?)(?::(\d+))?$/.exec(spec.trim());
  const key = m?.[1] ?? '';
  if (key === '' || /\s/.test(key)) throw new UsageError(`--key "${spec}" is not KEY[:CREDITS]`);
  return [key, m?.[2] === undefined ? SANDBOX_CREDITS : Number(m[2])];
}

function mask(key: string): string {
  return key.length <= 8 ? `${key.slice(0, 2)}…` : `${key.slice(0, 5)}…${key.slice(-2)}`;
}

export function simCommand(): Command {
  const defaults = defaultSimOptions();
  return command('sim')
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option('-p, --port <port>', 'port to listen on (0 picks a free one)', intArg('port', 0, 65535), 8787)
    .option('--seed <n>', 'world seed: the same seed gives the same world and answers', intArg('seed', 0), 1)
    .option(
      '--enterprises <n>',
      'number of enterprises in the world',
      intArg('enterprises', 1, 1_000_000),
      5000,
    )
    .option(
      '--change-share <x>',
      'expected share of the whole world changed by each daily refresh, 0 to 0.5 (firms change unevenly: docs/simulator.md)',
      (raw: string) => {
        const x = Number(raw.trim());
        if (raw.trim() === '' || !Number.isFinite(x) || x < 0 || x > 0.5)
          throw new InvalidArgumentError(
            `--change-share "${raw}" must be a number from 0 to 0.5 (0.02 is 2% a day).`,
          );
        return x;
      },
      defaults.changeShare,
    )
    .option(
      '--key <key[:credits]>',
      `accepted API key with its credit balance (repeatable; default ${SANDBOX_KEY}:${SANDBOX_CREDITS})`,
      collect,
    )
    .option(
      '--faults <spec>',
      'fault injection, e.g. latency=0.2@50-400,500=0.02,502=0.01,503=0.01,reset=0.01,timeout=0.005,html=0.01,truncated=0.01,error200=0.01,drift=0.1',
      (raw: string) => {
        try {
          return parseFaultSpec(raw);
        } catch (err) {
          if (err instanceof FaultSpecError) throw new InvalidArgumentError(err.message);
          throw err;
        }
      },
    )
    .option('--enterprise-rate <n>', 'enterprise requests per minute per key', intArg('rate', 1), 100)
    .option('--product-rate <n>', 'product requests per minute per key', intArg('rate', 1), 100)
    .option('--product-cost <n>', 'credits per product call (undocumented upstream)', intArg('cost', 0), 0)
    .option('--daily-cap <n>', 'calls per key per Beijing day and operation', intArg('cap', 1))
    .option(
      '--error-status <mode>',
      'HTTP status of error answers: http (4xx) or 200',
      choiceArg('mode', ['http', '200'] as const),
      'http',
    )
    .option('--no-retry-after', 'do not send Retry-After with rate-limit answers')
    .option(
      '--both-params-code <code>',
      'error code for date and product_name together',
      defaults.bothParamsCode,
    )
    .option('--bad-limit-code <code>', 'error code for a bad limit, or "clamp"', defaults.badLimitCode)
    .option(
      '--default-limit <n>',
      'items in a list without limit',
      intArg('limit', 1, 20),
      defaults.defaultLimit,
    )
    .option('--clock <iso>', 'start the simulated clock at this instant (default: now)', (raw: string) => {
      const at = new Date(raw);
      if (Number.isNaN(at.getTime())) throw new InvalidArgumentError(`"${raw}" is not an ISO 8601 instant.`);
      return at;
    })
    .action(async (opts) => {
      const keys = new Map<string, number>(((opts.key as string[] | undefined) ?? []).map(parseKeySpec));
      const sandbox = keys.size === 0;
      if (sandbox) keys.set(SANDBOX_KEY, SANDBOX_CREDITS);
      const { startSimulator } = await import('../sim/server.ts');
      const running = await startSimulator(
        {
          ...defaults,
          seed: opts.seed,
          enterprises: opts.enterprises,
          changeShare: opts.changeShare,
          keys,
          faults: opts.faults ?? defaults.faults,
          rateLimits: { 'enterprise-search': opts.enterpriseRate, 'product-listing': opts.productRate },
          costs: { 'enterprise-search': 3, 'product-listing': opts.productCost },
          dailyCap: opts.dailyCap ?? null,
          errorStatus: opts.errorStatus,
          retryAfter: opts.retryAfter,
          bothParamsCode: opts.bothParamsCode,
          badLimitCode: opts.badLimitCode,
          defaultLimit: opts.defaultLimit,
          startAt: opts.clock ?? null,
        },
        { host: opts.host, port: opts.port },
      );
      const state = running.sim.state();
      const lines = [
        `daybook simulator listening on ${running.url} (seed ${opts.seed}, ${opts.enterprises} enterprises, clock ${state.now}, cycle ${state.cycle})`,
        sandbox
          ? `no --key given: accepting the sandbox key ${SANDBOX_KEY} with ${SANDBOX_CREDITS.toLocaleString('en-US')} credits`
          : `accepting ${keys.size} key(s): ${[...keys].map(([k, c]) => `${mask(k)} (${c} credits)`).join(', ')}`,
        `rate limit ${opts.enterpriseRate}/min enterprise, ${opts.productRate}/min product; faults: ${state.faults || 'none'}`,
        `try: curl -H 'Authorization: Bearer ${sandbox ? SANDBOX_KEY : '<key>'}' '${running.url}/v1/enterprise-search?ent_name=...'`,
      ];
      process.stdout.write(`${lines.join('\n')}\n`);
      await new Promise<void>((resolve) => {
        const stop = () => resolve();
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
      await running.close();
    });
}
