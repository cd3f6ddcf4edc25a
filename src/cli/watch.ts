/** `daybook watch add|import|list|remove`: the enterprises daybook re-queries every cycle. */
import type { Command } from 'commander';
import { command } from './about.ts';
import { watchAddCommand } from './watch-add.ts';
import { watchImportCommand } from './watch-import.ts';
import { watchListCommand } from './watch-list.ts';
import { watchRemoveCommand } from './watch-remove.ts';

export function watchCommand(): Command {
  const watch = command('watch').addHelpText(
    'after',
    `
Examples:
  daybook watch add 上海星辰信息科技有限公司 --priority 10
  daybook watch add 星辰信息 --uscc 91310115342050446K
  daybook watch import companies.csv --dry-run
  daybook watch list --json
  daybook watch remove 上海星辰信息科技有限公司`,
  );
  watch.addCommand(watchAddCommand());
  watch.addCommand(watchImportCommand());
  watch.addCommand(watchListCommand());
  watch.addCommand(watchRemoveCommand());
  return watch;
}
