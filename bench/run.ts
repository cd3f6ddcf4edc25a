/**
 * `npm run bench [-- part...]`: runs the benchmarks (all of them, or the parts named),
 * prints a table and writes bench/results.json. A part run alone replaces only its own entry in
 * results.json, so the file always holds the latest figure of every part.
 *
 * `npm run bench -- [part...] --smoke`: every part (or those named) in a small, quick form (tiny
 * sizes, a few seconds a part), which checks that the part still completes and prints its figures.
 * A smoke run writes nothing and judges no target: its figures say nothing about speed
 * (test/bench/smoke.test.ts runs it, so a part cannot rot unseen).
 */
import { existsSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchCli } from './cli.ts';
import { benchConsole } from './console.ts';
import { benchCredit } from './credit.ts';
import { benchDelivery } from './delivery.ts';
import { benchDiff } from './diff.ts';
import { benchExport } from './export.ts';
import { benchLoad } from './load.ts';
import { benchMemory } from './memory.ts';
import { benchPlanner } from './planner.ts';
import { benchRate } from './rate.ts';
import { benchRefresh, FAMILIES, loadWorld, type RefreshResult } from './refresh.ts';
import { benchSoak } from './soak.ts';
import { describeMachine, type Machine, round } from './support.ts';
import { partLines, renderTable } from './table.ts';

interface PartForms {
  /** The measured form, whose figures go to results.json. */
  full: () => Promise<object>;
  /** The same code at tiny sizes: a few seconds, figures printed only. */
  smoke: () => Promise<object>;
}

/** The refresh backtest's smoke form: one seed, few firms, two budgets. */
const REFRESH_SMOKE = {
  firms: 150,
  days: 20,
  tail: 10,
  seeds: [1],
  shares: [0.1, 0.25],
  ablationShares: [0.25],
};

const PARTS = {
  planner: { full: () => benchPlanner(), smoke: () => benchPlanner(2_000, 1) },
  load: { full: () => benchLoad(), smoke: () => benchLoad(200, 200, 20) },
  memory: { full: () => benchMemory(), smoke: () => benchMemory(20) },
  rate: { full: () => benchRate(), smoke: () => benchRate(20, 600) },
  credit: { full: () => benchCredit(), smoke: () => benchCredit(40, 1, 6000, 2000) },
  diff: { full: () => benchDiff(), smoke: () => benchDiff(100, 1) },
  cli: { full: () => benchCli(), smoke: () => benchCli(5, 1) },
  delivery: { full: () => benchDelivery(), smoke: () => benchDelivery(50, 10) },
  export: {
    full: () => benchExport(),
    smoke: () => benchExport({ size: { enterprises: 900, runs: 20 }, repeats: 1, profile: 'always' }),
  },
  refresh: {
    full: () => benchRefresh({ parallel: 2 }),
    smoke: () => benchRefresh(REFRESH_SMOKE),
  },
  console: {
    full: () => benchConsole(),
    smoke: () => benchConsole([{ companies: 400, days: 20 }], 1),
  },
  soak: {
    full: () => benchSoak(),
    smoke: () => benchSoak({ firms: 100, cycles: 3, baselineFirms: 10, queryRepeats: 1 }),
  },
} satisfies Record<string, PartForms>;
type Part = keyof typeof PARTS;

const RESULTS = fileURLToPath(new URL('./results.json', import.meta.url));

const USAGE = `usage: npm run bench [-- [part ...] [--smoke]]
       npm run bench -- refresh [--world <family or module>]... [--firms N] [--days N]
                                [--seeds 1-5] [--budgets 5,10,25,50] [--json FILE] [--smoke]

Runs the benchmarks (every part, or the parts named), prints a table of the figures and writes
bench/results.json (a part run alone replaces only its own entry). Postgres and Redis must be up.

  --smoke   every part named (or all) in a small, quick form, a few seconds a part: checks that
            it completes and prints its figures; writes nothing and judges no target

The refresh backtest's own options (with the refresh part alone). Any of them makes a run of
your own: it prints the table, writes the JSON file if asked, and never bench/results.json.

  --world <family or module>
            a shipped family by name (${FAMILIES.map((f) => f.family).join(', ')}),
            or a world module of yours: a .ts or .js file, its path relative to the current
            directory (see docs/planner.md, Worlds); repeat it for several worlds.
            Default: every shipped family
  --firms N     watched firms (at least 1; default 1000, 150 with --smoke)
  --days N      days scored (at least 1; default 90, 20 with --smoke); 30 more follow
                (10 with --smoke) in which changes of those days may still be found
  --seeds S     seeds: a list and ranges of whole numbers, 1-5 or 1,3,7-9 (default 1-5, 1
                with --smoke)
  --budgets B   daily budgets, in percent of the watchlist refreshable a day (more than 0, at
                most 100), 5,10,25,50 (default; 10,25 with --smoke)
  --json FILE   also write every figure (each policy, budget and seed: mean lag, p95 lag,
                detected share, …) and the run's parameters to FILE, relative to the current
                directory
  --help    this text

parts: ${Object.keys(PARTS).join(', ')}
`;

function fail(message: string): never {
  process.stderr.write(`bench: ${message}\n`);
  process.exit(2);
}

/** The refresh backtest's options of a run of one's own (undefined: the default). */
interface RefreshOptions {
  worlds: string[];
  firms?: number;
  days?: number;
  seeds?: number[];
  budgets?: number[];
  json?: string;
}

interface Args {
  parts: Part[];
  smoke: boolean;
  /** Set when any refresh option was given. */
  refresh: RefreshOptions | null;
}

/** Where relative paths start: the directory the command was typed in (npm runs scripts from the package's). */
const callerDir = () => process.env.INIT_CWD || process.cwd();

const REFRESH_OPTIONS = ['--world', '--firms', '--days', '--seeds', '--budgets', '--json'] as const;
type RefreshOption = (typeof REFRESH_OPTIONS)[number];

function wholeNumber(option: string, value: string, min: number, max: number): number {
  if (!/^\d+$/.test(value)) fail(`${option} takes a whole number, not "${value}"`);
  const n = Number(value);
  if (n < min || n > max) fail(`${option} is ${n}: it must be from ${min} to ${max}`);
  return n;
}

/** "1-5", "1,3,7-9": the seeds, in order, each once. */
function seedsOf(value: string): number[] {
  const out = new Set<number>();
  for (const part of value.split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) fail(`--seeds takes whole numbers and ranges such as 1-5 or 1,3,7-9, not "${value}"`);
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    if (to < from) fail(`--seeds: the range ${part} goes backwards (write ${to}-${from})`);
    if (to - from >= 1_000 || out.size + to - from >= 1_000) fail('--seeds: at most 1000 seeds');
    for (let k = from; k <= to; k++) out.add(k);
  }
  return [...out].sort((a, b) => a - b);
}

/** "5,10,25,50" (percent of the watchlist a day): the budgets as shares, in order, each once. */
function budgetsOf(value: string): number[] {
  const out = new Set<number>();
  for (const part of value.split(',')) {
    const t = part.trim().replace(/%$/, '');
    if (!/^\d+(\.\d+)?$/.test(t))
      fail(`--budgets takes percents of the watchlist such as 5,10,25,50, not "${value}"`);
    const pct = Number(t);
    if (pct <= 0 || pct > 100) fail(`--budgets: ${part.trim()} is not a percent above 0 and at most 100`);
    out.add(pct / 100);
  }
  return [...out].sort((a, b) => a - b);
}

function argsFrom(argv: string[]): Args {
  const raw = argv.filter((a) => a !== '--');
  let refresh: RefreshOptions | null = null;
  const words: string[] = [];
  for (let i = 0; i < raw.length; i++) {
    const w = raw[i] as string;
    const option = REFRESH_OPTIONS.find((o) => w === o || w.startsWith(`${o}=`)) as RefreshOption | undefined;
    if (option === undefined) {
      words.push(w);
      continue;
    }
    const value = w === option ? raw[++i] : w.slice(option.length + 1);
    if (value === undefined || value === '' || (value.startsWith('-') && option !== '--world'))
      fail(
        option === '--world'
          ? '--world needs a family or a module: npm run bench -- refresh --world ./my-world.ts'
          : `${option} needs a value (see npm run bench -- --help)`,
      );
    refresh ??= { worlds: [] };
    switch (option) {
      case '--world':
        refresh.worlds.push(value);
        break;
      case '--firms':
        refresh.firms = wholeNumber('--firms', value, 1, 1_000_000);
        break;
      case '--days':
        refresh.days = wholeNumber('--days', value, 1, 3_650);
        break;
      case '--seeds':
        refresh.seeds = seedsOf(value);
        break;
      case '--budgets':
        refresh.budgets = budgetsOf(value);
        break;
      case '--json': {
        const path = resolve(callerDir(), value);
        const dir = dirname(path);
        if (!existsSync(dir) || !statSync(dir).isDirectory())
          fail(`--json ${value}: the directory ${dir} does not exist`);
        if (existsSync(path) && statSync(path).isDirectory()) fail(`--json ${value}: ${path} is a directory`);
        refresh.json = path;
        break;
      }
    }
  }
  if (words.includes('--help') || words.includes('-h')) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  const options = words.filter((w) => w.startsWith('-'));
  const unknownOptions = options.filter((o) => o !== '--smoke');
  if (unknownOptions.length > 0)
    fail(`unknown option ${unknownOptions.map((o) => `"${o}"`).join(', ')} (see npm run bench -- --help)`);
  const names = words.filter((w) => !w.startsWith('-'));
  const unknown = names.filter((n) => !(n in PARTS));
  if (unknown.length > 0)
    fail(
      `unknown part ${unknown.map((u) => `"${u}"`).join(', ')}; the parts are: ${Object.keys(PARTS).join(', ')}`,
    );
  const parts = names.length === 0 ? (Object.keys(PARTS) as Part[]) : ([...new Set(names)] as Part[]);
  if (refresh !== null && (parts.length !== 1 || parts[0] !== 'refresh')) {
    const given = REFRESH_OPTIONS.filter((o) => raw.some((w) => w === o || w.startsWith(`${o}=`)));
    fail(
      `${given.join(', ')} go${given.length === 1 ? 'es' : ''} with the refresh part alone: npm run bench -- refresh ${given[0]} …`,
    );
  }
  return { parts, smoke: options.includes('--smoke'), refresh };
}

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** The measured run: every part named, its figures into results.json and a table. */
async function runFull(parts: Part[]): Promise<void> {
  const started = performance.now();
  const previous: Record<string, unknown> = existsSync(RESULTS)
    ? (JSON.parse(readFileSync(RESULTS, 'utf8')) as Record<string, unknown>)
    : {};
  const results: Record<string, unknown> = { ...((previous.parts as Record<string, unknown>) ?? {}) };
  const failures: string[] = [];
  for (const part of parts) {
    process.stderr.write(`bench: ${part} …\n`);
    const t = performance.now();
    try {
      const result = await PARTS[part].full();
      results[part] = { ...result, seconds: round((performance.now() - t) / 1000, 1), takenAt: new Date() };
    } catch (err) {
      failures.push(part);
      process.stderr.write(`bench: ${part} failed: ${messageOf(err)}\n`);
      results[part] = { error: messageOf(err), takenAt: new Date() };
    }
    process.stderr.write(`bench: ${part} done in ${round((performance.now() - t) / 1000, 1)} s\n`);
  }
  const document = {
    command: `npm run bench${parts.length === Object.keys(PARTS).length ? '' : ` -- ${parts.join(' ')}`}`,
    machine: await describeMachine(),
    lastRunSeconds: round((performance.now() - started) / 1000, 1),
    parts: results,
  };
  writeFileSync(`${RESULTS}.tmp`, `${JSON.stringify(document, null, 2)}\n`);
  renameSync(`${RESULTS}.tmp`, RESULTS);
  process.stdout.write(`${renderTable(document)}\n`);
  process.stdout.write(`written to bench/results.json (this run: ${document.lastRunSeconds} s)\n`);
  if (failures.length > 0) process.exitCode = 1;
}

/**
 * The smoke run: every part named at tiny sizes, one after the other; each prints `smoke: <part>`,
 * its figure lines (figure, then value) and `smoke: <part> ok` or `smoke: <part> FAILED: …`.
 */
async function runSmoke(parts: Part[]): Promise<void> {
  const started = performance.now();
  const failures: string[] = [];
  for (const part of parts) {
    process.stderr.write(`bench: ${part} (smoke) …\n`);
    const t = performance.now();
    try {
      const result = await PARTS[part].smoke();
      // Figure and value only: a smoke run judges no target.
      const lines = partLines(part, result).map(([figure, value]) => [figure, value] as const);
      const width = Math.max(...lines.map(([figure]) => figure.length));
      process.stdout.write(
        `smoke: ${part}\n${lines.map(([f, v]) => `  ${f.padEnd(width)}  ${v}`.trimEnd()).join('\n')}\n`,
      );
      process.stdout.write(`smoke: ${part} ok (${round((performance.now() - t) / 1000, 1)} s)\n`);
    } catch (err) {
      failures.push(part);
      process.stdout.write(`smoke: ${part} FAILED: ${messageOf(err)}\n`);
      if (err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
    }
  }
  const seconds = round((performance.now() - started) / 1000, 1);
  process.stdout.write(
    failures.length === 0
      ? `smoke: ${parts.length} part${parts.length === 1 ? '' : 's'} ok in ${seconds} s (tiny sizes: no target judged, bench/results.json not written)\n`
      : `smoke: ${failures.length} of ${parts.length} failed (${failures.join(', ')}) in ${seconds} s\n`,
  );
  if (failures.length > 0) process.exitCode = 1;
}

/** The machine, or what Node alone knows of it when Postgres or Redis is not up (a backtest needs neither). */
async function machineOrLess(): Promise<Machine> {
  try {
    return await describeMachine();
  } catch {
    const os = await import('node:os');
    return {
      cpus: os.availableParallelism(),
      cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown',
      memoryGiB: round(os.totalmem() / 1024 ** 3, 1),
      os: `${os.type()} ${os.release()}`,
      node: process.version,
      postgres: 'not reached',
      redis: 'not reached',
    };
  }
}

/** Every policy's figures at every budget and seed, one object each: what --json writes beside the parameters. */
function jsonOf(result: RefreshResult, command: string, machine: Machine, seconds: number): object {
  return {
    command,
    takenAt: new Date(),
    seconds,
    machine,
    parameters: {
      worlds: result.families,
      firms: result.firms,
      daysScored: result.scoredDays,
      daysRun: result.days,
      seeds: result.seeds,
      budgetsPercent: result.shares.map((s) => round(s * 100, 4)),
      policies: [...new Set(result.worlds.flatMap((w) => w.runs.map((r) => r.policy)))],
      ablation:
        'legacy, +shape … +shift run on the first seed at the 25% budget only (when 25 is among the budgets)',
    },
    worlds: result.worlds.map((w) => ({
      family: w.family,
      seed: w.seed,
      events: w.events,
      highEvents: w.highEvents,
      top10Share: w.top10Share,
    })),
    runs: result.worlds.flatMap((w) =>
      w.runs.map((r) => ({
        family: w.family,
        seed: w.seed,
        policy: r.policy,
        budgetPercent: round(r.budgetShare * 100, 4),
        perDay: r.perDay,
        meanLag: r.meanLag,
        p95Lag: r.p95Lag,
        detectedShare: r.detectedShare,
        highMeanLag: r.highMeanLag,
        maxStalenessDays: r.maxStalenessDays,
        credits: r.credits,
      })),
    ),
    table: result.table,
    met: result.met,
  };
}

/** The refresh backtest with options of one's own: the table printed, the JSON file if asked; bench/results.json untouched. */
async function runOwn(o: RefreshOptions, smoke: boolean): Promise<void> {
  const worlds: Awaited<ReturnType<typeof loadWorld>>[] = [];
  for (const spec of o.worlds) {
    try {
      worlds.push(await loadWorld(spec, callerDir()));
    } catch (err) {
      fail(messageOf(err));
    }
  }
  const base = smoke ? REFRESH_SMOKE : { parallel: 2 };
  const t = performance.now();
  const command = `npm run bench -- ${process.argv
    .slice(2)
    .filter((a) => a !== '--')
    .join(' ')}`;
  try {
    const result = await benchRefresh({
      ...base,
      ...(worlds.length > 0 ? { worlds } : {}),
      ...(o.firms === undefined ? {} : { firms: o.firms }),
      ...(o.days === undefined ? {} : { days: o.days }),
      ...(o.seeds === undefined ? {} : { seeds: o.seeds }),
      ...(o.budgets === undefined ? {} : { shares: o.budgets }),
    });
    const seconds = round((performance.now() - t) / 1000, 1);
    const machine = await machineOrLess();
    const document = { command, machine, parts: { refresh: { ...result, seconds } } };
    process.stdout.write(`${renderTable(document)}\n`);
    if (o.json !== undefined) {
      writeFileSync(o.json, `${JSON.stringify(jsonOf(result, command, machine, seconds), null, 2)}\n`);
      process.stdout.write(`written to ${o.json}\n`);
    }
    process.stdout.write('a refresh run with options of its own: bench/results.json not written\n');
  } catch (err) {
    process.stderr.write(`bench: refresh failed: ${messageOf(err)}\n`);
    process.exitCode = 1;
  }
}

const args = argsFrom(process.argv.slice(2));
if (args.refresh !== null) await runOwn(args.refresh, args.smoke);
else if (args.smoke) await runSmoke(args.parts);
else await runFull(args.parts);
