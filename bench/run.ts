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
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
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
import { benchRefresh, loadWorld } from './refresh.ts';
import { benchSoak } from './soak.ts';
import { describeMachine, round } from './support.ts';
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

const USAGE = `usage: npm run bench [-- [part ...] [--smoke] [--world <module>]]

Runs the benchmarks (every part, or the parts named), prints a table of the figures and writes
bench/results.json (a part run alone replaces only its own entry). Postgres and Redis must be up.

  --smoke   every part named (or all) in a small, quick form, a few seconds a part: checks that
            it completes and prints its figures; writes nothing and judges no target
  --world <module>
            refresh only: run the backtest on the world a module gives (a path to a .ts or .js
            file, see docs/planner.md, Worlds) instead of the shipped families; prints the
            table and writes nothing
  --help    this text

parts: ${Object.keys(PARTS).join(', ')}
`;

function fail(message: string): never {
  process.stderr.write(`bench: ${message}\n`);
  process.exit(2);
}

function argsFrom(argv: string[]): { parts: Part[]; smoke: boolean; world: string | null } {
  const raw = argv.filter((a) => a !== '--');
  let world: string | null = null;
  const words: string[] = [];
  for (let i = 0; i < raw.length; i++) {
    const w = raw[i] as string;
    if (w === '--world' || w.startsWith('--world=')) {
      const value = w === '--world' ? raw[++i] : w.slice('--world='.length);
      if (value === undefined || value === '' || value.startsWith('-'))
        fail('--world needs a module: npm run bench -- refresh --world ./my-world.ts');
      world = value;
      continue;
    }
    words.push(w);
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
  if (world !== null && (parts.length !== 1 || parts[0] !== 'refresh'))
    fail('--world goes with the refresh part alone: npm run bench -- refresh --world <module>');
  return { parts, smoke: options.includes('--smoke'), world };
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

/** The refresh backtest on a world module of the user's: the table, printed; nothing written. */
async function runWorld(spec: string, smoke: boolean): Promise<void> {
  let module: Awaited<ReturnType<typeof loadWorld>>;
  try {
    module = await loadWorld(spec);
  } catch (err) {
    fail(messageOf(err));
  }
  const t = performance.now();
  try {
    const result = await benchRefresh(
      smoke ? { ...REFRESH_SMOKE, worlds: [module] } : { worlds: [module], parallel: 2 },
    );
    const document = {
      command: `npm run bench -- refresh --world ${spec}`,
      machine: await describeMachine(),
      parts: { refresh: { ...result, seconds: round((performance.now() - t) / 1000, 1) } },
    };
    process.stdout.write(`${renderTable(document)}\n`);
    process.stdout.write('a --world run: bench/results.json not written\n');
  } catch (err) {
    process.stderr.write(`bench: refresh failed: ${messageOf(err)}\n`);
    process.exitCode = 1;
  }
}

const args = argsFrom(process.argv.slice(2));
if (args.world !== null) await runWorld(args.world, args.smoke);
else if (args.smoke) await runSmoke(args.parts);
else await runFull(args.parts);
