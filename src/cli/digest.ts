/** `daybook digest`: a cycle's digest, as Markdown or JSON. */
import type { Command } from 'commander';
import { cycleDigest } from '../events/digest.ts';
import { cycleOf } from '../time/cycles.ts';
import { command } from './about.ts';
import { configOrExit, withStore } from './context.ts';
import { forTerminal } from './terminal.ts';
import { dateOption } from './usage.ts';

export function digestCommand(): Command {
  return command('digest')
    .addOption(dateOption('--cycle', 'the cycle (default: the current one)'))
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
