/**
 * `daybook watch add`: enterprises watched by name, each name checked before anything is written;
 * optionally with an expected code (`--uscc`, or `--pin` for the next refresh's) and their
 * shareholders to a depth (`--with-shareholders`).
 */
import type { Command } from 'commander';
import { InvalidRequestError } from '../upstream/errors.ts';
import { checkEntName } from '../upstream/params.ts';
import { PRIORITY_MAX, PRIORITY_MIN } from '../watch/csv.ts';
import { MAX_SHAREHOLDER_DEPTH, type RelatedSync, syncRelated } from '../watch/related.ts';
import { type AddedWatch, addWatches } from '../watch/store.ts';
import { InvalidUsccError, parseUscc } from '../watch/uscc.ts';
import { command } from './about.ts';
import { configOrExit, withStore } from './context.ts';
import { forTerminal } from './terminal.ts';
import { intArg, UsageError } from './usage.ts';

const STATUS_TEXT: Record<AddedWatch['status'], string> = {
  added: 'added',
  reactivated: 'watched again',
  existing: 'already watched',
};

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

export function watchAddCommand(): Command {
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
