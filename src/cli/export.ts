/** `daybook export`: load packages for a warehouse (docs/export.md). */
import { type Command, InvalidArgumentError } from 'commander';
import { TABLE_NAMES } from '../export/contract.ts';
import { FORMATS, type Format } from '../export/formats.ts';
import { ExportUsage, exportPackages, type PackageWritten, replayPackages } from '../export/package.ts';
import { command } from './about.ts';
import { configOrExit, openStore } from './context.ts';
import { choiceArg, fromConfig, UsageError } from './usage.ts';

/** `FROM..TO`: load numbers (or load ids, which are zero-padded numbers). */
function rangeArg(raw: string): { from: number; through: number } {
  const m = /^\s*(\d+)\s*\.\.\s*(\d+)\s*$/.exec(raw) ?? /^\s*(\d+)\s*$/.exec(raw);
  if (!m) throw new InvalidArgumentError(`--replay takes FROM..TO (load numbers, as 1..3), got "${raw}".`);
  const from = Number(m[1]);
  const through = Number(m[2] ?? m[1]);
  if (from < 1 || through < from)
    throw new InvalidArgumentError(`--replay ${raw}: FROM must be at least 1 and at most TO.`);
  return { from, through };
}

function tablesArg(raw: string, previous: string[] = []): string[] {
  const names = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const unknown = names.filter((n) => !TABLE_NAMES.includes(n));
  if (unknown.length > 0)
    throw new InvalidArgumentError(
      `unknown table ${unknown.join(', ')}; the tables are ${TABLE_NAMES.join(', ')}.`,
    );
  return [...previous, ...names];
}

export function exportCommand(): Command {
  return command('export')
    .option('--to <dir>', 'the destination folder (default: DAYBOOK_EXPORT_DIR)')
    .option(
      '--format <format>',
      fromConfig(`file format: ${FORMATS.join(', ')}`, 'DAYBOOK_EXPORT_FORMAT', 'parquet'),
      choiceArg('--format', FORMATS),
    )
    .option('--gzip', 'gzip NDJSON files (.ndjson.gz)')
    .option(
      '--tables <names>',
      'only these tables, comma-separated (fixed for a folder by its first package)',
      tablesArg,
    )
    .option('--full', 'a complete snapshot up to now (a first load, or to start a warehouse again)')
    .option(
      '--replay <range>',
      'write packages FROM..TO of the folder again, byte for byte (as 1..3)',
      rangeArg,
    )
    .option('--json', 'print the packages written as JSON')
    .action(
      async (opts: {
        to?: string;
        format?: Format;
        gzip?: boolean;
        tables?: string[];
        full?: boolean;
        replay?: { from: number; through: number };
        json?: boolean;
      }) => {
        const config = configOrExit();
        const to = opts.to ?? config.DAYBOOK_EXPORT_DIR;
        if (!to) throw new UsageError('say where to write: --to <dir>, or set DAYBOOK_EXPORT_DIR');
        if (opts.replay && (opts.full || opts.tables || opts.format || opts.gzip))
          throw new UsageError(
            '--replay writes packages as they were first written: it takes no --full, --tables, --format or --gzip',
          );
        const format = opts.format ?? config.DAYBOOK_EXPORT_FORMAT;
        if (opts.gzip && format !== 'ndjson') throw new UsageError('--gzip applies to --format ndjson only');
        const progress = (line: string) => process.stderr.write(`${line}\n`);
        const db = await openStore(config);
        let packages: PackageWritten[];
        try {
          packages = opts.replay
            ? await replayPackages(db.sql, { to, ...opts.replay, progress })
            : await exportPackages(db.sql, {
                to,
                format,
                ...(opts.gzip ? { gzip: true } : {}),
                ...(opts.tables ? { tables: opts.tables } : {}),
                ...(opts.full ? { full: true } : {}),
                progress,
              });
        } catch (err) {
          if (err instanceof ExportUsage) throw new UsageError(err.message);
          throw err;
        } finally {
          await db.close();
        }
        if (opts.json) {
          process.stdout.write(`${JSON.stringify({ packages })}\n`);
          return;
        }
        if (packages.length === 0) {
          process.stdout.write(`nothing new since the last package in ${to}: nothing written\n`);
          return;
        }
        for (const p of packages) {
          const how = p.adopted
            ? 'adopted'
            : p.identical === undefined
              ? p.kind
              : p.identical
                ? 'replayed, identical'
                : 'replayed';
          process.stdout.write(`load ${p.loadId} (${how}): ${p.rows} rows in ${p.dir}\n`);
        }
      },
    );
}
