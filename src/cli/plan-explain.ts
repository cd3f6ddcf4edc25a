/** `daybook plan explain`: why the plan of a cycle chose or deferred a watch entry. */
import type { Command } from 'commander';
import { DAYS_PER_MONTH, type Explanation, entriesNamed, explainPlan } from '../plan/explain.ts';
import { cycleOf } from '../time/cycles.ts';
import { command } from './about.ts';
import { clockFor } from './assemble.ts';
import { configOrExit, withStore } from './context.ts';
import { forTerminal } from './terminal.ts';
import { cycleOption, intArg, UsageError } from './usage.ts';

const CLASS_TEXT: Record<Explanation['planClass'], string> = {
  never_fetched: 'never fetched (first in its priority)',
  owed: 'owed a refresh by the staleness bound (before the entries ordered by due time)',
  due: 'ordered by due time within its priority',
};

const fixed = (x: number | null, digits: number) => (x === null ? '-' : x.toFixed(digits));
const when = (d: Date | null) => (d === null ? 'never' : d.toISOString().replace('.000Z', 'Z'));

function scaleText(scale: number | null): string {
  if (scale === null) return 'no plan has set the scale yet: the staleness bound';
  if (scale === 0) return 'the budget covers every entry every cycle';
  if (!Number.isFinite(scale))
    return 'the budget does not cover the staleness bound: every entry at the bound';
  return `scale ${scale.toPrecision(3)} / √(w × λ), within 1 and the staleness bound`;
}

function decisionText(e: Explanation): string {
  const d = e.decision;
  const place = `#${e.position.toLocaleString('en-US')} in the plan order; the cycle takes ${e.capacity.toLocaleString('en-US')}`;
  switch (d.kind) {
    case 'selected':
      return `selected (${place})`;
    case 'deferred':
      return `deferred: ${d.reason.replaceAll('_', ' ')} (${place})`;
    case 'skipped':
      return `skipped: ${d.reason.replaceAll('_', ' ')}${d.detail ? ` (${d.detail})` : ''}`;
    case 'done':
      return `already ${d.status} in this cycle`;
    case 'inactive':
      return 'not planned: removed from the watchlist';
  }
}

function certaintyText(e: Explanation): string {
  const c = e.certainty;
  if (c === null) return '-';
  const month = (x: number) => (x * DAYS_PER_MONTH).toPrecision(2);
  return `${c.level}: 90% between ${month(c.low)} and ${Number.isFinite(c.high) ? month(c.high) : '∞'} changes/month; ${Math.round(c.ownShare * 100)}% from its own ${c.ownDays.toFixed(0)} days of observation, the rest from its cohort's prior (${c.priorDays.toFixed(0)} pseudo-days)`;
}

/** The explanation of one entry, as lines for a person. */
export function explanationText(e: Explanation): string {
  const o = e.observations;
  const lines = [
    `watch entry ${e.watchId} ${forTerminal(e.keyword)}${e.pid ? ` (PID ${e.pid})` : ''}, priority ${e.priority}, cycle ${e.cycle}`,
    `  estimate      ${
      e.rate === null
        ? 'none yet (first fetch not done)'
        : `${fixed(e.changesPerMonth, 2)} changes/month (${e.rate.toPrecision(3)}/day): ${fixed(o.intervals, 1)} intervals over ${fixed(o.days, 0)} days, ${fixed(o.changed, 1)} ended changed; ${fixed(o.datedChanges, 1)} changes dated by the registry, ${fixed(o.datedDays, 0)} quiet days after its approval dates`
    }`,
    `  certainty     ${certaintyText(e)}`,
    `  prior         ${fixed(e.prior.rate * 30.44, 2)} changes/month from cohort ${forTerminal(e.prior.cohort ?? '*')}${e.cohort && e.cohort !== e.prior.cohort ? ` (its cohort ${forTerminal(e.cohort)})` : ''}${e.clustered ? "; read through the clusters the watchlist's rates fall in (see why here)" : ''}`,
    `  weight        ${e.weight.toFixed(2)} (from the severity of its past changes: 1 low … 3 high)`,
    `  boost         ${e.boostLeft > 0 ? `${e.boostLeft} cycle(s) left after a high-severity change: due every cycle` : 'none'}`,
    `  last refresh  ${
      e.refreshedCycle === null
        ? 'never'
        : `cycle ${e.refreshedCycle}, ${e.ageDays} day(s) before this one (landed ${when(e.lastRefreshedAt)})`
    }`,
    `  P(change)     ${
      e.changeProbability === null
        ? '-'
        : `1 − e^(−${e.rate?.toPrecision(3)} × ${e.ageDays}) = ${e.changeProbability.toFixed(3)}; expected value w × P = ${fixed(e.expectedValue, 3)}`
    }`,
    `  interval      ${
      e.intervalDays === null ? '-' : `${e.intervalDays.toFixed(1)} days (${scaleText(e.scale)})`
    }; due ${when(e.dueAt)}`,
    `  class         ${CLASS_TEXT[e.planClass]}`,
    `  why here      ${e.reason}`,
    `  decision      ${decisionText(e)}`,
  ];
  return lines.join('\n');
}

export function planExplainCommand(): Command {
  return command('plan explain')
    .addOption(cycleOption())
    .option('--pid <pid|keyword|id>', 'the entries watching this PID, with this keyword, or this watch id')
    .option('--top <n>', 'the first N entries of the plan order (default 10)', intArg('--top', 1, 10_000))
    .option('--json', 'print a JSON array')
    .addHelpText(
      'after',
      `
Examples:
  daybook plan explain --top 20
  daybook plan explain --pid 6e1f0b1a2c3d4e5f
  daybook plan explain --pid 上海星辰信息科技有限公司 --cycle 2026-11-23 --json`,
    )
    .action(async (opts: { cycle?: string; pid?: string; top?: number; json?: boolean }) => {
      if (opts.pid !== undefined && opts.top !== undefined)
        throw new UsageError(
          '--pid and --top exclude each other: explain named entries, or the head of the order',
        );
      const config = configOrExit();
      const now = clockFor(config);
      const cycle = opts.cycle ?? cycleOf(now());
      await withStore(config, async ({ sql }) => {
        let which: { ids: number[] } | { top: number } = { top: opts.top ?? 10 };
        if (opts.pid !== undefined) {
          const ids = await entriesNamed(sql, opts.pid.trim());
          if (ids.length === 0)
            throw new UsageError(
              `nothing watched matches "${forTerminal(opts.pid)}" (a PID, a keyword as added, or a watch id; see daybook watch list)`,
            );
          which = { ids };
        }
        const out = await explainPlan(sql, config, now, cycle, which);
        if (opts.json) {
          process.stdout.write(`${JSON.stringify(out)}\n`);
          return;
        }
        if (out.length === 0) {
          process.stdout.write(`nothing to plan in cycle ${cycle}: the watchlist is empty\n`);
          return;
        }
        process.stdout.write(`${out.map(explanationText).join('\n\n')}\n`);
      });
    });
}
