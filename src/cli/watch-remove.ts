/**
 * `daybook watch remove`: an entry no longer watched, by its name or the PID it resolved to; the
 * entry is kept inactive, with its history, and its shareholders watched through it go with it.
 */
import type { Command } from 'commander';
import { syncRelated } from '../watch/related.ts';
import { removeWatch } from '../watch/store.ts';
import { command } from './about.ts';
import { configOrExit, withStore } from './context.ts';
import { forTerminal } from './terminal.ts';
import { UsageError } from './usage.ts';

export function watchRemoveCommand(): Command {
  return command('watch remove')
    .argument('<name|pid>', 'the keyword as added, or a resolved PID (removes every entry resolved to it)')
    .addHelpText(
      'after',
      '\nExamples:\n  daybook watch remove 上海星辰信息科技有限公司\n  daybook watch remove 6e1f0b1a2c3d4e5f',
    )
    .action(async (nameOrPid: string) => {
      if (nameOrPid.trim() === '') throw new UsageError('give a name or a PID to remove');
      const config = configOrExit();
      await withStore(config, async ({ sql }) => {
        const n = await removeWatch(sql, nameOrPid);
        if (n === 0) {
          throw new UsageError(
            `nothing watched matches "${forTerminal(nameOrPid)}" (see daybook watch list)`,
          );
        }
        // Its shareholders watched through it go with it, unless another watched company holds them.
        const related = await syncRelated(sql, []);
        process.stdout.write(
          `removed ${n} watch entr${n === 1 ? 'y' : 'ies'} matching "${forTerminal(nameOrPid)}"${related.unwatched > 0 ? `, and ${related.unwatched} shareholder${related.unwatched === 1 ? '' : 's'} watched through ${n === 1 ? 'it' : 'them'}` : ''}\n`,
        );
      });
    });
}
