/** `daybook digest`: a cycle's digest, as Markdown or JSON. */
import { Command } from 'commander';
import { cycleDigest } from '../events/digest.ts';
import { cycleOf } from '../time/cycles.ts';
import { configOrExit, withStore } from './context.ts';
import { forTerminal } from './terminal.ts';
import { dateArg } from './usage.ts';

export function digestCommand(): Command {
  return new Command('digest')
    .description(
      "Print a cycle's digest: its changes and company events grouped by company, the most severe first, as Markdown (or --json, the structured list too). The same digest goes to --digest subscriptions as digest.daily when the cycle completes.",
    )
    .option('--cycle <date>', 'the cycle (default: the current one)', dateArg('--cycle'))
    .option('--json', 'print the digest as JSON: cycle, markdown and companies')
    .action(async (opts: { cycle?: string; json?: boolean }) => {
      await withStore(configOrExit(), async ({ sql }) => {
        const digest = await cycleDigest(sql, opts.cycle ?? cycleOf(new Date()));
        process.stdout.write(opts.json ? `${JSON.stringify(digest)}\n` : forTerminalBlock(digest.markdown));
      });
    });
}

/** Markdown for a terminal: each line escaped (upstream text cannot drive the terminal). */
function forTerminalBlock(text: string): string {
  return `${text
    .split('\n')
    .map((l) => forTerminal(l))
    .join('\n')
    .replace(/\n+$/, '')}\n`;
}
