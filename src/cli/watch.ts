/** `daybook watch add|import|list|remove`: the enterprises daybook re-queries every cycle. */
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { InvalidRequestError } from '../upstream/errors.ts';
import { checkEntName } from '../upstream/params.ts';
import { parseWatchlistCsv } from '../watch/csv.ts';
import { addWatches, listWatches, removeWatch } from '../watch/store.ts';
import { configOrExit, withStore } from './context.ts';
import { formatTable } from './report.ts';
import { intArg, UsageError } from './usage.ts';

export function watchCommand(): Command {
  const watch = new Command('watch').description(
    'Manage the watchlist of enterprises re-queried every cycle.',
  );

  watch
    .command('add')
    .description('Watch one or more enterprises by name (a complete name matches best).')
    .argument('<name...>', 'enterprise names, 1-100 characters each')
    .option(
      '--priority <n>',
      'higher is refreshed first when the budget is short',
      intArg('--priority', -1000, 1000),
      0,
    )
    .addHelpText(
      'after',
      '\nExample:\n  daybook watch add 上海星辰信息科技有限公司 北京华拓电子有限公司 --priority 10',
    )
    .action(async (names: string[], opts: { priority: number }) => {
      const keywords = names.map((n) => {
        try {
          return checkEntName(n);
        } catch (err) {
          if (err instanceof InvalidRequestError)
            throw new UsageError(`"${n}": ${err.message.replace(/^ent_name/, 'the name')}`);
          throw err;
        }
      });
      const config = configOrExit();
      await withStore(config, async ({ sql }) => {
        const r = await addWatches(
          sql,
          keywords.map((keyword) => ({ keyword, priority: opts.priority })),
          { updatePriority: true },
        );
        process.stdout.write(`added ${r.added}, already watched ${r.existing}\n`);
      });
    });

  watch
    .command('import')
    .description(
      'Import a CSV with a name column (optional priority). Invalid rows are listed with their line numbers and nothing is imported, unless --skip-invalid.',
    )
    .argument('<file>', 'CSV file (UTF-8, with a header row)')
    .option('--skip-invalid', 'import the valid rows and report the invalid ones')
    .option('--dry-run', 'check the file and say what would be imported, writing nothing')
    .option('--json', 'print the result as JSON')
    .addHelpText(
      'after',
      '\nExample file:\n  name,priority\n  上海星辰信息科技有限公司,10\n  "北京华拓电子有限公司",0',
    )
    .action(async (file: string, opts: { skipInvalid?: boolean; dryRun?: boolean; json?: boolean }) => {
      let text: string;
      try {
        text = readFileSync(file, 'utf8');
      } catch (err) {
        throw new UsageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
      }
      const { entries, errors } = parseWatchlistCsv(text);
      for (const e of errors) process.stderr.write(`${file}: line ${e.line}: ${e.message}\n`);
      if (errors.length > 0 && !opts.skipInvalid) {
        throw new UsageError(
          `${errors.length} invalid row(s) in ${file}; nothing imported (use --skip-invalid to import the rest)`,
        );
      }
      if (opts.dryRun) {
        const summary = { wouldImport: entries.length, invalid: errors.length };
        process.stdout.write(
          opts.json
            ? `${JSON.stringify(summary)}\n`
            : `would import ${entries.length}, invalid ${errors.length}\n`,
        );
        return;
      }
      const config = configOrExit();
      await withStore(config, async ({ sql }) => {
        const r = await sql.begin((tx) => addWatches(tx, entries));
        const summary = { imported: r.added, alreadyWatched: r.existing, invalid: errors.length };
        process.stdout.write(
          opts.json
            ? `${JSON.stringify(summary)}\n`
            : `imported ${r.added}, already watched ${r.existing}, invalid ${errors.length}\n`,
        );
      });
    });

  watch
    .command('list')
    .description('List watched enterprises, highest priority first.')
    .option('--all', 'include removed entries')
    .option('--json', 'print as JSON')
    .action(async (opts: { all?: boolean; json?: boolean }) => {
      const config = configOrExit();
      await withStore(config, async ({ sql }) => {
        const rows = await listWatches(sql, opts.all ? { all: true } : {});
        if (opts.json) {
          process.stdout.write(`${JSON.stringify(rows)}\n`);
          return;
        }
        process.stdout.write(
          formatTable(
            rows.map((r) => ({
              id: r.id,
              keyword: r.keyword,
              priority: r.priority,
              pid: r.pid,
              'last refreshed': r.last_refreshed_at,
              'last outcome': r.last_outcome,
              ...(opts.all ? { active: r.active } : {}),
            })),
          ),
        );
      });
    });

  watch
    .command('remove')
    .description(
      'Stop watching an enterprise, by the name it was added with or by its PID. Its history stays.',
    )
    .argument('<name-or-pid>')
    .action(async (nameOrPid: string) => {
      const config = configOrExit();
      await withStore(config, async ({ sql }) => {
        const n = await removeWatch(sql, nameOrPid);
        if (n === 0) throw new UsageError(`nothing watched matches "${nameOrPid}" (see daybook watch list)`);
        process.stdout.write(`removed ${n}\n`);
      });
    });
  return watch;
}
