/** `daybook watch add|import|list|remove`: the enterprises daybook re-queries every cycle. */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { InvalidRequestError } from '../upstream/errors.ts';
import { checkEntName } from '../upstream/params.ts';
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
import { MAX_SHAREHOLDER_DEPTH, type RelatedSync, syncRelated } from '../watch/related.ts';
import {
  type AddedWatch,
  addWatches,
  countWatches,
  listWatches,
  previewWatches,
  RELATED_PRIORITY,
  removeWatch,
  type WatchRow,
} from '../watch/store.ts';
import { InvalidUsccError, parseUscc } from '../watch/uscc.ts';
import { command } from './about.ts';
import { configOrExit, withStore } from './context.ts';
import { formatTable, forTerminal } from './terminal.ts';
import { intArg, UsageError } from './usage.ts';

const STATUS_TEXT: Record<AddedWatch['status'], string> = {
  added: 'added',
  reactivated: 'watched again',
  existing: 'already watched',
};

/** The expected code of an entry as `watch list` shows it. */
function expectedText(r: WatchRow): string | null {
  return r.expected_uscc ?? (r.pin_uscc ? '(pinned at the next refresh)' : null);
}

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

/**
 * `--with-shareholders [depth]`: the depth (1 when the flag comes alone). Commander takes the word
 * after the flag as its value, so `--with-shareholders 上海…` gives a name: it goes back to them.
 */
function shareholderDepth(
  value: string | boolean | undefined,
  names: string[],
): { depth: number | undefined; names: string[] } {
  if (value === undefined || value === false) return { depth: undefined, names };
  if (value === true) return { depth: 1, names };
  if (!/^\d+$/.test(value.trim())) return { depth: 1, names: [value, ...names] };
  const depth = Number(value);
  if (depth > MAX_SHAREHOLDER_DEPTH)
    throw new UsageError(
      `--with-shareholders must be from 0 to ${MAX_SHAREHOLDER_DEPTH} levels, got ${depth}; nothing was added`,
    );
  return { depth, names };
}

/** What `--with-shareholders` did, in words. */
function shareholderLines(depth: number, r: RelatedSync): string {
  if (depth === 0)
    return `shareholders no longer followed${r.unwatched > 0 ? `: ${r.unwatched} no longer watched` : ''}\n`;
  const lines = [
    `with shareholders to ${depth} level${depth === 1 ? '' : 's'}: ${r.watched.length} watched now${r.watched.length > 0 ? ` (${r.watched.map((w) => forTerminal(w.keyword)).join(', ')})` : ''}; the others as each refresh finds them, after your own entries`,
  ];
  for (const c of r.conflicts)
    lines.push(
      `not watched: ${forTerminal(c.name)} (PID ${c.pid}): its name is watched already (entry ${c.entryId}) and resolved to another company`,
    );
  return `${lines.join('\n')}\n`;
}

function watchAddCommand(): Command {
  return command('watch add')
    .argument('<name...>', 'enterprise names; a complete registered name matches best')
    .option(
      '--priority <n>',
      `whole number from ${PRIORITY_MIN} to ${PRIORITY_MAX}; higher is refreshed first when the budget is short (also updates entries already watched)`,
      intArg('--priority', PRIORITY_MIN, PRIORITY_MAX),
    )
    .option(
      '--uscc <code>',
      'the unified social credit code (18 characters) the name must resolve to; an answer naming an enterprise with another code is not merged into history (one name only; also sets it on an entry already watched)',
    )
    .option(
      '--pin',
      'without --uscc: take the code of the next successful refresh as the expected code, so a later answer resolving elsewhere is caught',
    )
    .option(
      '--with-shareholders [depth]',
      `also watch the enterprise shareholders of these companies, and theirs, to DEPTH levels (1 when not given, at most ${MAX_SHAREHOLDER_DEPTH}; 0 stops): found by the PID each holder's record gives, planned after your own entries within DAYBOOK_RELATED_SHARE of a cycle, and no longer watched once no watched company holds them`,
    )
    .option('--json', 'print the result as JSON')
    .addHelpText(
      'after',
      `
Examples:
  daybook watch add 上海星辰信息科技有限公司
  daybook watch add 上海星辰信息科技有限公司 --with-shareholders 2
  daybook watch add 上海星辰信息科技有限公司 北京华拓电子有限公司 --priority 10
  daybook watch add 星辰信息 --uscc 91310115342050446K
  daybook watch add 上海星辰信息科技有限公司 --pin`,
    )
    .action(
      async (
        given: string[],
        opts: {
          priority?: number;
          uscc?: string;
          pin?: boolean;
          json?: boolean;
          withShareholders?: string | boolean;
        },
      ) => {
        const { depth, names } = shareholderDepth(opts.withShareholders, given);
        let uscc: string | null = null;
        if (opts.uscc !== undefined) {
          if (opts.pin)
            throw new UsageError('--pin and --uscc exclude each other: --uscc gives the expected code');
          if (names.length > 1) {
            throw new UsageError(
              `--uscc is the code of one enterprise: give one name, not ${names.length}; nothing was added`,
            );
          }
          try {
            uscc = parseUscc(opts.uscc);
          } catch (err) {
            if (!(err instanceof InvalidUsccError)) throw err;
            throw new UsageError(forTerminal(`--uscc: ${err.message}; nothing was added`));
          }
        }
        const problems: string[] = [];
        const keywords = names.map((n) => {
          try {
            return checkEntName(n);
          } catch (err) {
            if (!(err instanceof InvalidRequestError)) throw err;
            // JSON quoting shows a control character as an escape instead of printing it.
            problems.push(
              forTerminal(`${JSON.stringify(n)}: ${err.message.replace(/^ent_name/, 'the name')}`),
            );
            return '';
          }
        });
        if (problems.length > 0) throw new UsageError(`${problems.join('; ')}; nothing was added`);
        const config = configOrExit();
        await withStore(config, async ({ sql }) => {
          const r = await addWatches(
            sql,
            keywords.map((keyword) => ({
              keyword,
              priority: opts.priority ?? 0,
              uscc,
              pin: opts.pin === true,
              ...(depth === undefined ? {} : { shareholders: depth }),
            })),
            { updatePriority: opts.priority !== undefined },
          );
          // The shareholders daybook knows already are watched now; the rest as refreshes find them.
          const related = depth === undefined ? null : await syncRelated(sql, depth > 0 ? r.ids : []);
          if (opts.json) {
            process.stdout.write(
              `${JSON.stringify({
                added: r.added,
                alreadyWatched: r.existing,
                watches: r.watches,
                ...(uscc === null ? {} : { uscc }),
                ...(opts.pin ? { pin: true } : {}),
                ...(related === null ? {} : { withShareholders: depth, shareholders: related }),
              })}\n`,
            );
            return;
          }
          const expectation =
            uscc !== null ? `, expected code ${uscc}` : opts.pin ? ', code pinned at the next refresh' : '';
          for (const w of r.watches)
            process.stdout.write(
              `${STATUS_TEXT[w.status]}: ${forTerminal(w.keyword)} (id ${w.id}${expectation})\n`,
            );
          process.stdout.write(`added ${r.added}, already watched ${r.existing}\n`);
          if (related !== null && depth !== undefined) process.stdout.write(shareholderLines(depth, related));
        });
      },
    );
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

/**
 * The file read and checked, every problem and ignored column said on stderr ("line N: …"); a
 * usage error (nothing written) for a file that may not be imported as it is. Returns what to
 * import.
 */
function checkedCsv(file: string, opts: ImportOptions): ParsedWatchlist {
  const parsed = parseWatchlistCsv(readCsv(file));
  const { entries, errors, invalidRows, ignored } = parsed;
  const said = [
    ...errors.map((e) => ({ line: e.line, text: e.message })),
    ...ignored.map((c) => ({
      line: c.line,
      text: opts.strict ? `${c.label}: ${c.why}` : `warning: ${c.label} is ignored: ${c.why}`,
    })),
  ].sort((a, b) => a.line - b.line);
  for (const s of said)
    process.stderr.write(`line ${s.line}: ${forTerminal(s.text)}
`);
  if (opts.strict && ignored.length > 0) {
    throw new UsageError(
      `${file} has ${ignored.length} column(s) daybook does not read (${ignored.map(columnName).join(', ')}); nothing imported (--strict refuses them; without it they are ignored)`,
    );
  }
  // A problem of the header leaves no row counted: the file cannot be read at all.
  if (errors.length > 0 && invalidRows === 0) {
    throw new UsageError(`${file} cannot be read; nothing imported`);
  }
  if (errors.length > 0 && !opts.skipInvalid) {
    throw new UsageError(
      `${invalidRows} invalid row(s) in ${file}; nothing imported (--skip-invalid imports the valid rows)`,
    );
  }
  if (errors.length > 0 && entries.length === 0) {
    throw new UsageError(`no valid row in ${file}; nothing imported`);
  }
  if (entries.length === 0) {
    throw new UsageError(`${file} has a header but no rows: nothing to import`);
  }
  return parsed;
}

function watchImportCommand(): Command {
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
The name column may be called ${NAME_COLUMNS.join(', ')} (any case). priority is a whole number
from ${PRIORITY_MIN} to ${PRIORITY_MAX} (empty: 0). The code column (${USCC_COLUMNS.join(', ')}) holds
the unified social credit code the name must resolve to (empty: none). with_shareholders
(${SHAREHOLDER_COLUMNS.slice(1).join(', ')}) gives levels of shareholders to watch with it, 0 to 3.
A direct column of false marks a row watched only as another entry's shareholder, as
watch list --csv writes it: it is not imported as an entry, its holder brings it back. Quoted fields, a BOM,
CRLF and blank lines are fine. A name already watched keeps its priority; a code given sets its
expected code.

Every other column is ignored, with a warning on stderr naming it and the known name it is
closest to (line 1: warning: column "prioirty" is ignored: daybook reads no column of that
name; did you mean "priority"?); --strict refuses such a file. Every problem of every row is
listed on stderr, one per line, naming the line and the column.

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
      // Rows watched only as another entry's shareholder (`watch list --csv`, direct false) are
      // not entries of their own: their holder's sync watches them again.
      const entries = parsed.entries.filter((e) => e.direct);
      const through = parsed.entries.filter((e) => !e.direct);
      for (const e of through)
        process.stderr.write(
          `line ${e.line}: ${forTerminal(e.keyword)} is not imported as an entry: it is watched only as a shareholder (direct is false); watching its holder with shareholders watches it again\n`,
        );
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

/** The table shows at most this many entries unless --limit says otherwise. */
const LIST_TABLE_LIMIT = 1_000;

/** A count as a person reads it: 100,000. */
const count = (n: number) => n.toLocaleString('en-US');

/** The columns of `watch list --csv`: the keys of `--json`, in this order. */
const LIST_CSV_COLUMNS = [
  'id',
  'keyword',
  'priority',
  'active',
  'pid',
  'added_at',
  'last_refreshed_at',
  'last_cycle',
  'last_outcome',
  'last_error',
  'expected_uscc',
  'pin_uscc',
  'resolved_name',
  'resolved_uscc',
  'match',
  'resolution_mismatch',
  'changes_per_month',
  'due_at',
  'direct',
  'shareholder_depth',
  'watched_through',
] as const satisfies readonly (keyof WatchRow)[];

/**
 * An entry watched only as a shareholder has no priority of the user's: null (its place in the
 * plan is after every entry of theirs; `direct` is false).
 */
function withoutRelatedPriority(r: WatchRow): Omit<WatchRow, 'priority'> & { priority: number | null } {
  return r.priority <= RELATED_PRIORITY ? { ...r, priority: null } : r;
}

/** One CSV field (RFC 4180): quoted when it holds a quote, a comma or a line break. */
function csvField(v: unknown): string {
  if (v === null || v === undefined) return '';
  const s = v instanceof Date ? v.toISOString() : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** An entry as a row of the table. */
function tableRow(r: WatchRow, all: boolean): Record<string, unknown> {
  return {
    id: r.id,
    keyword: r.keyword,
    // An entry watched only as a shareholder of a watched company has no priority of the user's.
    priority: r.priority <= RELATED_PRIORITY ? 'shareholder' : r.priority,
    pid: r.pid,
    'last refreshed': r.last_refreshed_at,
    'last outcome': r.last_outcome,
    'resolved name': r.resolved_name,
    'resolved code': r.resolved_uscc,
    match: r.match,
    'expected code': expectedText(r),
    mismatch: r.resolution_mismatch,
    'changes/month': r.changes_per_month === null ? null : r.changes_per_month.toFixed(2),
    'next due': r.due_at,
    // Why a shareholder is watched: through whom.
    'shareholder of': r.watched_through,
    ...(all ? { active: r.active } : {}),
  };
}

interface ListOptions {
  all?: boolean;
  json?: boolean;
  csv?: boolean;
  limit?: number;
}

function watchListCommand(): Command {
  return command('watch list')
    .option('--all', 'include removed entries (with an active column)')
    .option(
      '--limit <n>',
      `at most this many entries, highest priority first (the table: ${count(LIST_TABLE_LIMIT)} unless given; --json and --csv: every entry unless given)`,
      intArg('--limit', 1),
    )
    .option('--json', 'print a JSON array of the entries')
    .option('--csv', 'print the entries as CSV with a header row (the keys of --json as columns)')
    .addHelpText(
      'after',
      `
The table shows the first ${count(LIST_TABLE_LIMIT)} entries unless --limit says otherwise, and ends with a line
saying how many more there are. --json and --csv print every entry unless --limit is given (then
how many more is said on stderr).

Examples:
  daybook watch list
  daybook watch list --limit 50
  daybook watch list --all --json
  daybook watch list --csv > watchlist.csv`,
    )
    .action(async (opts: ListOptions) => {
      if (opts.json && opts.csv) throw new UsageError('choose one of --json and --csv');
      const limit = opts.limit ?? (opts.json || opts.csv ? undefined : LIST_TABLE_LIMIT);
      const config = configOrExit();
      await withStore(config, async ({ sql }) => {
        const all = opts.all === true;
        const rows = await listWatches(sql, { all, ...(limit === undefined ? {} : { limit }) });
        const counts = rows.length === limit ? await countWatches(sql) : null;
        const total =
          counts === null ? rows.length : Math.max(rows.length, all ? counts.total : counts.active);
        const more = total - rows.length;
        const entries = (n: number) => `${count(n)} entr${n === 1 ? 'y' : 'ies'}`;
        if (opts.json || opts.csv) {
          if (opts.json) process.stdout.write(`${JSON.stringify(rows.map(withoutRelatedPriority))}\n`);
          else {
            const lines = [
              LIST_CSV_COLUMNS.join(','),
              ...rows.map((r) =>
                LIST_CSV_COLUMNS.map((c) => csvField(withoutRelatedPriority(r)[c])).join(','),
              ),
            ];
            process.stdout.write(`${lines.join('\n')}\n`);
          }
          if (more > 0)
            process.stderr.write(
              `daybook: printed the first ${count(rows.length)} of ${entries(total)}: ${count(more)} more (a higher --limit, or none, prints them)\n`,
            );
          return;
        }
        if (rows.length === 0) {
          process.stdout.write('nothing is watched (daybook watch add NAME, or daybook watch import FILE)\n');
          return;
        }
        process.stdout.write(formatTable(rows.map((r) => tableRow(r, all))));
        if (more > 0)
          process.stdout.write(
            `(showing the first ${count(rows.length)} of ${entries(total)}, highest priority first: ${count(more)} more; --limit N shows more, --csv or --json prints every entry)\n`,
          );
      });
    });
}

function watchRemoveCommand(): Command {
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
