/**
 * `npm run readme:figures [-- --check] [--skip-demo]`: the figures of the documentation that come
 * from a bench run (bench/results.json, written into docs/benchmarks.md) or from the demo (its own
 * output, written into the README's quick start) are written between markers,
 *
 *     <!-- figures:NAME -->…<!-- /figures -->
 *
 * and this script computes every such span and rewrites only those, leaving the rest of each file
 * as it is. `--check` changes nothing: it lists the spans that differ and exits 1.
 * `--skip-demo` leaves the demo's span alone (the demo takes about half a minute).
 *
 * test/docs/readme-figures.test.ts checks the bench spans, and test/cli/readme-demo.test.ts the
 * demo's span on the demo run it makes anyway.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { RefreshResult } from '../bench/refresh.ts';
import type { Machine } from '../bench/support.ts';
import { type Line, partLines } from '../bench/table.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** The README: its quick start shows the demo's output (the span DEMO_SPAN). */
export const README_PATH = join(ROOT, 'README.md');
/** docs/benchmarks.md: every span of benchSpans. */
export const BENCHMARKS_PATH = join(ROOT, 'docs', 'benchmarks.md');
/** The planner's page, which shows the backtest's table too. */
export const PLANNER_PATH = join(ROOT, 'docs', 'planner.md');
/** The spans of the backtest's table: in docs/benchmarks.md, docs/planner.md and the README. */
export const REFRESH_SPANS = ['refresh-table', 'refresh-goals'] as const;
export const RESULTS_PATH = join(ROOT, 'bench', 'results.json');
const BIN = join(ROOT, 'bin', 'daybook.js');

/** bench/results.json as bench/run.ts writes it. */
export interface BenchDocument {
  command: string;
  machine: Machine;
  parts: Record<string, unknown>;
}

/** The parts in the main table of docs/benchmarks.md; soak and refresh have sections of their own. */
export const MAIN_PARTS = [
  'rate',
  'credit',
  'load',
  'memory',
  'planner',
  'diff',
  'cli',
  'delivery',
  'export',
  'console',
];

/** The span that holds the demo's output. */
export const DEMO_SPAN = 'demo-output';

const n = (x: number) => x.toLocaleString('en-US');
const VERDICT: Record<string, string> = { met: '✓ met', MISSED: '✗ missed', ERROR: '✗ failed', '': '' };
const cell = (text: string) => text.replace(/\|/g, '\\|');
/** A span that holds whole blocks (a table, a paragraph): blank lines around them, for markdown. */
const block = (text: string) => `\n\n${text}\n\n`;
const dateOf = (result: unknown) => String((result as { takenAt?: unknown }).takenAt ?? '').slice(0, 10);

function markdownTable(header: string[], rows: string[][]): string {
  const line = (r: string[]) => `| ${r.map(cell).join(' | ')} |`;
  return [line(header), `|${header.map(() => '---').join('|')}|`, ...rows.map(line)].join('\n');
}

const tableRow = (l: Line) => [l[0], l[1], l[2], VERDICT[l[3]] ?? l[3]];

function part<T>(doc: BenchDocument, name: string): T {
  const found = doc.parts[name];
  if (!found) throw new Error(`bench/results.json has no figures of the part "${name}"`);
  return found as T;
}

/** What introduces the main table: how long every part takes, where the figures come from. */
function benchHeader(doc: BenchDocument): string {
  const seconds = Object.values(doc.parts).reduce<number>((sum, p) => {
    const s = (p as { seconds?: unknown }).seconds;
    return sum + (typeof s === 'number' ? s : 0);
  }, 0);
  const m = doc.machine;
  return (
    `\`npm run bench\` runs every part, one after another, in about ${Math.round(seconds / 60)} minutes ` +
    `(the times of the parts' latest runs added up). The table holds each part's figures from its ` +
    `latest run, taken on the date in its last column. The latest run (\`${doc.command}\`) was on ` +
    `${m.cpus} cores (${m.cpuModel}), ${m.memoryGiB} GiB, ${m.os.replace(/ \(Linux [^)]*\)$/, '')}, Node ${m.node.replace(/^v/, '')}, ` +
    `PostgreSQL ${m.postgres.split(' ')[0]}, Redis ${m.redis}.`
  );
}

function benchTable(doc: BenchDocument): string {
  const rows: string[][] = [];
  for (const name of MAIN_PARTS) {
    const result = doc.parts[name];
    if (!result) continue;
    for (const l of partLines(name, result)) rows.push([...tableRow(l), dateOf(result)]);
  }
  return markdownTable(['figure', 'value', 'target', '', 'taken'], rows);
}

function soakTable(doc: BenchDocument): string {
  const soak = part<{ seconds: number }>(doc, 'soak');
  const rows = partLines('soak', soak).map(tableRow);
  return (
    `Figures of \`npm run bench -- soak\` on ${dateOf(soak)} (the run took ${(soak.seconds / 60).toFixed(1)} minutes):\n\n` +
    markdownTable(['figure', 'value', 'target', ''], rows)
  );
}

function plannerInline(doc: BenchDocument): string {
  const p = part<{ planMs: number; planJobMs: number }>(doc, 'planner');
  return `${n(Math.round(p.planMs))} ms to read and plan, the whole plan job ${n(Math.round(p.planJobMs))} ms`;
}

function soakUnchanged(doc: BenchDocument): string {
  const { run } = part<{ run: { firms: number; unchangedBytesPerDay: number } }>(doc, 'soak');
  return `${n(run.firms)} gave ${n(run.unchangedBytesPerDay)}`;
}

const pct = (share: number, digits: number) => `${(share * 100).toFixed(digits)}%`;

/** A rule of the row met (✓), missed (✗), or not held at this budget (–). */
const mark = (v: boolean | undefined) => (v === undefined ? '–' : v ? '✓' : '✗');

const signed = (x: number, digits: number) => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(digits)}`;

function refreshTable(doc: BenchDocument): string {
  const r = part<RefreshResult>(doc, 'refresh');
  const rows = r.table.map((row) => [
    row.family,
    pct(row.budgetShare, 0),
    `${row.lagRatioMean.toFixed(2)} × (${row.lagRatioWorst.toFixed(2)} ×)`,
    `${row.bayesRatioMean.toFixed(2)} ×`,
    `${row.oracleRatioMean.toFixed(2)} ×`,
    `${signed(row.p95ExcessMean ?? row.p95Excess, 1)} d`,
    `${signed((row.detectedDiffMean ?? row.detectedDiff) * 100, 1)} pt`,
    `${row.maxStaleness} d`,
    mark(row.rules?.lag),
    mark(row.rules?.seed),
    mark(row.rules?.detected),
    mark(row.rules?.p95),
    mark(row.rules?.bayes),
  ]);
  const header = [
    'world',
    'budget',
    'new ÷ rr: mean (worst seed)',
    'bayes ÷ rr',
    'oracle ÷ rr',
    'p95 new − rr',
    'detected new − rr',
    'longest unrefreshed',
    '≤ 1.02 rr',
    'seeds ≤ 1.05',
    'detected',
    'p95',
    'bayes',
  ];
  return (
    `Figures of ${dateOf(r)}, as on every run, since the backtest is deterministic (${n(r.firms)} firms, ` +
    `${r.scoredDays} days, seeds ${r.seeds.join(', ')}; mean lag as a multiple of round robin's, means over the seeds):\n\n` +
    markdownTable(header, rows)
  );
}

function refreshGoals(doc: BenchDocument): string {
  const r = part<RefreshResult>(doc, 'refresh');
  const missed = r.table.filter((row) => !row.met);
  if (missed.length === 0) return 'Every family met every rule at every budget.';
  const names: Record<string, string> = {
    lag: 'mean lag',
    seed: 'a seed',
    detected: 'detected',
    p95: 'p95',
    bayes: 'bayes',
    stale: 'staleness',
  };
  return (
    `Rules missed (${missed.length} of ${r.table.length} rows): ` +
    missed
      .map((row) => {
        const rules = Object.entries(row.rules ?? {})
          .filter(([, v]) => v === false)
          .map(([k]) => names[k] ?? k)
          .join(', ');
        return `${row.family} at ${pct(row.budgetShare, 0)} (${rules || row.goals.join(', ')}: new ${row.lagRatioMean.toFixed(2)} ×, worst seed ${row.lagRatioWorst.toFixed(2)} ×, bayes ${row.bayesRatioMean.toFixed(2)} ×)`;
      })
      .join('; ') +
    '.'
  );
}

function refreshAblation(doc: BenchDocument): string {
  const r = part<RefreshResult>(doc, 'refresh');
  const steps = ['legacy', '+shape', '+dates', '+hot', '+equal', '+shift', 'new'] as const;
  const rows = r.table
    .filter((row) => row.ablation.legacy !== undefined)
    .map((row) => [
      row.family,
      pct(row.budgetShare, 0),
      ...steps.map((p) => (row.ablation[p] === undefined ? '' : `${(row.ablation[p] as number).toFixed(2)}`)),
    ]);
  return markdownTable(['world', 'budget', ...steps], rows);
}

/** Every span that comes from bench/results.json: its name and its text. */
export function benchSpans(doc: BenchDocument): Record<string, string> {
  return {
    'bench-header': block(benchHeader(doc)),
    'bench-table': block(benchTable(doc)),
    'planner-inline': plannerInline(doc),
    'soak-table': block(soakTable(doc)),
    'soak-unchanged': soakUnchanged(doc),
    'refresh-table': block(refreshTable(doc)),
    'refresh-goals': block(refreshGoals(doc)),
    'refresh-ablation': block(refreshAblation(doc)),
  };
}

/** The backtest's spans of `benchSpans`: what docs/planner.md and the README show of it. */
export function refreshSpans(bench: Record<string, string>): Record<string, string> {
  return Object.fromEntries(REFRESH_SPANS.map((name) => [name, bench[name] ?? '']));
}

/** The demo's span from what `daybook demo` printed: its first cycle, then its summary. */
export function demoSpans(stdout: string): Record<string, string> {
  const lines = stdout.split('\n');
  const first = lines.find((l) => l.startsWith('cycle '));
  const start = lines.indexOf('summary');
  const end = lines.indexOf('', start);
  if (first === undefined || start < 0 || end < 0)
    throw new Error(`the demo printed no cycle line or no summary:\n${stdout}`);
  return { [DEMO_SPAN]: block(['```', first, '…', ...lines.slice(start, end), '```'].join('\n')) };
}

export function readBenchDocument(path = RESULTS_PATH): BenchDocument {
  return JSON.parse(readFileSync(path, 'utf8')) as BenchDocument;
}

const SPAN = /<!-- figures:([a-z0-9-]+) -->([\s\S]*?)<!-- \/figures -->/g;

/**
 * The spans of a markdown file (`file` names it in errors): name → text between the markers.
 * Throws on a marker left open or a name used twice.
 */
export function readSpans(text: string, file = 'README.md'): Map<string, string> {
  const spans = new Map<string, string>();
  for (const m of text.matchAll(SPAN)) {
    const [, name = '', body = ''] = m;
    if (spans.has(name)) throw new Error(`${file}: the span figures:${name} appears twice`);
    if (body.includes('<!-- figures:'))
      throw new Error(`${file}: the span figures:${name} is not closed before the next one opens`);
    spans.set(name, body);
  }
  const opened = text.match(/<!-- figures:/g)?.length ?? 0;
  if (opened !== spans.size) throw new Error(`${file}: a <!-- figures:… --> marker has no <!-- /figures -->`);
  return spans;
}

/** The text with these spans' texts put between their markers; every one must be there. */
export function writeSpans(text: string, spans: Record<string, string>, file = 'README.md'): string {
  const present = readSpans(text, file);
  const missing = Object.keys(spans).filter((name) => !present.has(name));
  if (missing.length > 0)
    throw new Error(
      `${file} has no span ${missing.map((m) => `figures:${m}`).join(', ')}: add <!-- figures:NAME --><!-- /figures --> where it goes`,
    );
  return text.replace(SPAN, (whole, name: string) =>
    name in spans ? `<!-- figures:${name} -->${spans[name]}<!-- /figures -->` : whole,
  );
}

/** The names of the spans whose text in the file differs from these. */
export function staleSpans(text: string, spans: Record<string, string>, file = 'README.md'): string[] {
  const present = readSpans(text, file);
  return Object.keys(spans).filter((name) => present.get(name) !== spans[name]);
}

/** Runs `daybook demo` in a folder of its own, as the README says to; its stdout. */
async function runDemo(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'daybook-readme-figures-'));
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [BIN, 'demo'], {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? dir,
        DAYBOOK_DATA_DIR: dir,
        LOG_LEVEL: 'warn',
      },
      cwd: dir,
      timeout: 300_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    return stdout;
  } catch (err) {
    const e = err as { code?: unknown; stderr?: string; message?: string };
    throw new Error(`the demo failed (exit ${String(e.code)}): ${(e.stderr || e.message || '').trim()}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const USAGE = 'usage: npm run readme:figures [-- --check] [--skip-demo]';

async function main(argv: string[]): Promise<number> {
  const flags = argv.filter((a) => a !== '--');
  if (flags.includes('--help')) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const unknown = flags.filter((f) => f !== '--check' && f !== '--skip-demo');
  if (unknown.length > 0) {
    process.stderr.write(`readme:figures: unknown option ${unknown.join(', ')}\n${USAGE}\n`);
    return 2;
  }
  const check = flags.includes('--check');
  // Each file and the spans it holds: the bench figures in docs/benchmarks.md, the backtest's
  // table in docs/planner.md and the README too, the demo's in the README.
  const bench = benchSpans(readBenchDocument());
  const refresh = refreshSpans(bench);
  const targets: { path: string; spans: Record<string, string> }[] = [
    { path: BENCHMARKS_PATH, spans: bench },
    { path: PLANNER_PATH, spans: refresh },
    {
      path: README_PATH,
      spans: flags.includes('--skip-demo') ? refresh : { ...refresh, ...demoSpans(await runDemo()) },
    },
  ];
  let stale = 0;
  for (const { path, spans } of targets) {
    const file = relative(ROOT, path);
    const text = readFileSync(path, 'utf8');
    const names = staleSpans(text, spans, file);
    stale += names.length;
    if (check) {
      const present = readSpans(text, file);
      for (const name of names)
        process.stderr.write(
          present.has(name)
            ? `${file}: figures:${name} differs from its source; run npm run readme:figures\n`
            : `${file}: the span figures:${name} is missing: add <!-- figures:${name} --><!-- /figures --> where it goes\n`,
        );
      if (names.length === 0) process.stdout.write(`${file}: ${Object.keys(spans).length} spans up to date\n`);
      continue;
    }
    if (names.length > 0) writeFileSync(path, writeSpans(text, spans, file));
    process.stdout.write(
      names.length === 0
        ? `${file}: ${Object.keys(spans).length} spans up to date\n`
        : `${file}: rewrote ${names.map((s) => `figures:${s}`).join(', ')}\n`,
    );
  }
  return check && stale > 0 ? 1 : 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`readme:figures: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
