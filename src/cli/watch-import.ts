/**
 * `daybook watch import`: a CSV of enterprises to watch, read and checked whole before anything
 * is written. Every problem of every row, and every column daybook does not read, is said on
 * stderr by its line; rows watched only as another entry's shareholder (a `watch list --csv`
 * file) are left to their holder.
 */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import {
  type IgnoredColumn,
  NAME_COLUMNS,
  type ParsedWatchlist,
  PRIORITY_MAX,
  PRIORITY_MIN,
  parseWatchlistCsv,
  SHAREHOLDER_COLUMNS,
  USCC_COLUMNS,
} from '../watch/csv.ts';
import { syncRelated } from '../watch/related.ts';
import { addWatches, previewWatches } from '../watch/store.ts';
import { command } from './about.ts';
import { configOrExit, withStore } from './context.ts';
import { forTerminal } from './terminal.ts';
import { UsageError } from './usage.ts';

/** The file as UTF-8 text; a missing, unreadable or non-UTF-8 file is a usage error. */
function readCsv(file: string): string {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EISDIR'
          ? 'it is a directory'
          : code === 'EACCES'
            ? 'permission denied'
            : (code ?? String(err));
    throw new UsageError(`cannot read ${file}: ${why}${code && why !== code ? ` (${code})` : ''}`);
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new UsageError(`${file} is not UTF-8 text: save it as "CSV UTF-8" (a GBK export reads as garbage)`);
  }
}

interface ImportOptions {
  skipInvalid?: boolean;
  dryRun?: boolean;
  pin?: boolean;
  strict?: boolean;
  json?: boolean;
}

/** How a column daybook does not read is called in the summary: its header text, or its position. */
const columnName = (c: IgnoredColumn) => (c.name === '' ? `column ${c.position}` : c.name);

/** Why a file checked may not be imported as it is, or null when it may. */
function refusalOf(file: string, parsed: ParsedWatchlist, opts: ImportOptions): UsageError | null {
  const { entries, errors, invalidRows, ignored } = parsed;
  if (opts.strict && ignored.length > 0) {
    return new UsageError(
      `${file} has ${ignored.length} column(s) daybook does not read (${ignored.map(columnName).join(', ')}); nothing imported (--strict refuses them; without it they are ignored)`,
    );
  }
  // A problem of the header leaves no row counted: the file cannot be read at all.
  if (errors.length > 0 && invalidRows === 0) {
    return new UsageError(`${file} cannot be read; nothing imported`);
  }
  if (errors.length > 0 && !opts.skipInvalid) {
    return new UsageError(
      `${invalidRows} invalid row(s) in ${file}; nothing imported (--skip-invalid imports the valid rows)`,
    );
  }
  if (errors.length > 0 && entries.length === 0) {
    return new UsageError(`no valid row in ${file}; nothing imported`);
  }
  if (entries.length === 0) {
    return new UsageError(`${file} has a header but no rows: nothing to import`);
  }
  return null;
}

/**
 * The file read and checked, every problem and ignored column said on stderr ("line N: …") in
 * the file's line order, and, in that order too, when the file is imported, each row left to its
 * holder; a usage error (nothing written) for a file that may not be imported as it is. Returns
 * what to import.
 */
function checkedCsv(file: string, opts: ImportOptions): ParsedWatchlist {
  const parsed = parseWatchlistCsv(readCsv(file));
  const { entries, errors, ignored } = parsed;
  const refusal = refusalOf(file, parsed, opts);
  // The columns a list wrote for reading are said in one line, unless --strict refuses them.
  const listed = opts.strict ? [] : ignored.filter((c) => c.listed);
  const said = [
    ...errors.map((e) => ({ line: e.line, text: e.message })),
    ...ignored
      .filter((c) => !listed.includes(c))
      .map((c) => ({
        line: c.line,
        text: opts.strict ? `${c.label}: ${c.why}` : `warning: ${c.label} is ignored: ${c.why}`,
      })),
    ...(listed.length === 0
      ? []
      : [
          {
            line: (listed[0] as IgnoredColumn).line,
            text: `${listed.length} column(s) that watch list --csv writes for reading are not imported: ${listed.map((c) => c.name).join(', ')}`,
          },
        ]),
    // Rows watched only as another entry's shareholder (`watch list --csv`, direct false) are not
    // entries of their own: their holder's sync watches them again.
    ...(refusal === null ? entries : [])
      .filter((e) => !e.direct)
      .map((e) => ({
        line: e.line,
        text: `${e.keyword} is not imported as an entry: it is watched only as a shareholder (direct is false); watching its holder with shareholders watches it again`,
      })),
  ].sort((a, b) => a.line - b.line);
  for (const s of said) process.stderr.write(`line ${s.line}: ${forTerminal(s.text)}\n`);
  if (refusal !== null) throw refusal;
  return parsed;
}

export function watchImportCommand(): Command {
  return command('watch import')
    .argument('<file.csv>', 'the CSV file')
    .option('--skip-invalid', 'import the valid rows anyway; the invalid ones are still listed')
    .option('--dry-run', 'check the file against the database and say what would happen, writing nothing')
    .option('--pin', 'rows without a code: take the code of the next successful refresh as the expected code')
    .option(
      '--strict',
      'refuse a file with a column daybook does not read (a misspelt priority, a note), instead of ignoring it with a warning',
    )
    .option('--json', 'print the summary as JSON')
    .addHelpText(
      'after',
      `
The name column may be called ${NAME_COLUMNS.join(', ')} (any case). priority
is a whole number from ${PRIORITY_MIN} to ${PRIORITY_MAX} (empty: 0). The code column
(${USCC_COLUMNS.join(', ')}) holds the unified social credit
code the name must resolve to (empty: none). with_shareholders
(${SHAREHOLDER_COLUMNS.slice(1).join(', ')}) gives levels of shareholders to watch with it,
0 to 3. A direct column of false marks a row watched only as another entry's shareholder, as
watch list --csv writes it: it is not imported as an entry, its holder brings it back. Quoted
fields, a BOM, CRLF and blank lines are fine. A name already watched keeps its priority; a code
given sets its expected code.

The other columns watch list --csv writes (id, pid, added_at, ...) are not imported, and are
named in one line: a list imports back. Every other column is ignored, with a warning on stderr
naming it and the known name it is closest to (line 1: warning: column "prioirty" is ignored:
daybook reads no column of that name; did you mean "priority"?); --strict refuses such a file,
and a list's own columns too. Every problem of every row is listed on stderr, one per line,
naming the line and the column.

Example file:
  name,priority,uscc
  上海星辰信息科技有限公司,10,91310115342050446K
  "北京华拓电子有限公司",,

Examples:
  daybook watch import companies.csv --dry-run
  daybook watch import companies.csv --strict
  daybook watch import companies.csv --skip-invalid --json`,
    )
    .action(async (file: string, opts: ImportOptions) => {
      const parsed = checkedCsv(file, opts);
      const { invalidRows, ignored } = parsed;
      // The rows left to their holder (said on stderr by checkedCsv) are counted, not imported.
      const entries = parsed.entries.filter((e) => e.direct);
      const through = parsed.entries.filter((e) => !e.direct);
      const config = configOrExit();
      await withStore(config, async ({ sql }) => {
        const watches = entries.map(({ shareholders, direct: _, ...e }) => ({
          ...e,
          pin: opts.pin === true && e.uscc === null,
          ...(shareholders === null ? {} : { shareholders }),
        }));
        // A dry run only reads: it takes no ids from the watchlist's sequence.
        const added = opts.dryRun ? null : await addWatches(sql, watches);
        const r = added ?? (await previewWatches(sql, watches));
        // Rows with a with_shareholders column: the shareholders daybook knows are watched now.
        if (added && entries.some((e) => e.shareholders !== null))
          await syncRelated(
            sql,
            added.ids.filter((_, i) => (entries[i]?.shareholders ?? 0) > 0),
          );
        const verb = opts.dryRun ? 'would import' : 'imported';
        const ignoredNames = ignored.map(columnName);
        if (opts.json) {
          // The invalid rows and ignored columns themselves are on stderr, one per line, like without --json.
          const summary = {
            ...(opts.dryRun ? { dryRun: true } : {}),
            imported: r.added,
            alreadyWatched: r.existing,
            invalid: invalidRows,
            ...(through.length > 0 ? { shareholderRows: through.length } : {}),
            ...(ignoredNames.length > 0 ? { ignoredColumns: ignoredNames } : {}),
          };
          process.stdout.write(`${JSON.stringify(summary)}\n`);
        } else {
          const columns = ignoredNames.length > 0 ? `; ignored columns: ${ignoredNames.join(', ')}` : '';
          const held = through.length > 0 ? `, shareholder rows left to their holders ${through.length}` : '';
          const line = `${verb} ${r.added}, already watched ${r.existing}, invalid ${invalidRows}${held}${columns}`;
          process.stdout.write(`${forTerminal(line)}\n`);
        }
      });
    });
}
