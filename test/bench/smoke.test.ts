/**
 * Benches that cannot rot: every part of `npm run bench` runs in its smoke form (`--smoke`: the
 * same code at tiny sizes, a few seconds a part) against the real Postgres and Redis, and must
 * complete and print its figures. The parts are read from `npm run bench -- --help`, so a new part
 * is covered without touching this file; they run in two processes side by side (about 40 s each
 * on two cores). Nothing here looks at a timing: the figures are checked for being there and
 * being numbers, never for their size. A smoke run writes no bench/results.json.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { adminUrl } from '../support/pg-url.ts';

const exec = promisify(execFile);
const ROOT = join(import.meta.dirname, '../..');
const RESULTS = join(ROOT, 'bench/results.json');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * `npm run bench -- args…`, as node runs it (no npm in between), with the tests' Postgres and
 * only PATH, HOME and TMPDIR besides.
 */
async function bench(args: string[], timeoutMs = 240_000): Promise<Run> {
  try {
    const { stdout, stderr } = await exec(process.execPath, ['--import', 'tsx', 'bench/run.ts', ...args], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/tmp',
        ...(process.env.TMPDIR ? { TMPDIR: process.env.TMPDIR } : {}),
        DAYBOOK_BENCH_PG: adminUrl(),
      },
      timeout: timeoutMs,
      maxBuffer: 64 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: unknown; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** The figure lines a smoke run printed for `part`, between `smoke: <part>` and its verdict line. */
function figuresOf(stdout: string, part: string): { lines: string[]; verdict: string | undefined } {
  const all = stdout.split('\n');
  const start = all.indexOf(`smoke: ${part}`);
  if (start < 0) return { lines: [], verdict: undefined };
  const end = all.findIndex((l, i) => i > start && l.startsWith(`smoke: ${part} `));
  return { lines: all.slice(start + 1, end < 0 ? undefined : end), verdict: end < 0 ? undefined : all[end] };
}

let parts: string[] = [];
let groups: { parts: string[]; run: Run }[] = [];
let resultsBefore: string;

describe('npm run bench -- --smoke', () => {
  beforeAll(async () => {
    const help = await bench(['--help'], 60_000);
    expect(help.code, help.stderr).toBe(0);
    parts = (/^parts: (.+)$/m.exec(help.stdout)?.[1] ?? '').split(', ').filter(Boolean);
    resultsBefore = readFileSync(RESULTS, 'utf8');
    const split = [parts.filter((_, i) => i % 2 === 0), parts.filter((_, i) => i % 2 === 1)];
    groups = await Promise.all(split.map(async (g) => ({ parts: g, run: await bench([...g, '--smoke']) })));
  }, 300_000);

  it('knows the parts of the bench', () => {
    // The parts docs/benchmarks.md names; a part added later joins the smoke run by itself.
    for (const part of ['planner', 'load', 'rate', 'credit', 'cli', 'delivery', 'export', 'refresh', 'soak'])
      expect(parts).toContain(part);
  });

  it('exits 0 in every process and says every part ran', () => {
    for (const { parts: names, run } of groups) {
      expect(run.code, `${names.join(' ')}:\n${run.stdout}\n${run.stderr.slice(-4000)}`).toBe(0);
      expect(run.stdout).toContain(`smoke: ${names.length} part${names.length === 1 ? '' : 's'} ok in `);
    }
  });

  it('completes each part and prints its figures, every one a number', () => {
    expect(parts.length).toBeGreaterThan(0);
    for (const part of parts) {
      const run = groups.find((g) => g.parts.includes(part))?.run as Run;
      const { lines, verdict } = figuresOf(run.stdout, part);
      expect(verdict, `${part}:\n${run.stdout}\n${run.stderr.slice(-4000)}`).toMatch(
        new RegExp(`^smoke: ${part} ok \\(`),
      );
      expect(lines.length, `${part} printed no figure`).toBeGreaterThan(0);
      for (const line of lines) {
        expect(line, part).toMatch(/^ {2}\S.*\S {2,}\S/); // a figure, then its value
        expect(line, part).not.toMatch(/NaN|undefined|Infinity|\[object /);
      }
      expect(
        lines.some((l) => /\d/.test(l)),
        `${part}: no figure line holds a number`,
      ).toBe(true);
    }
  });

  it('writes nothing to bench/results.json', () => {
    expect(readFileSync(RESULTS, 'utf8')).toBe(resultsBefore);
  });

  it('runs the refresh backtest on a world module given by --world, and refuses one it cannot load', {
    timeout: 300_000,
  }, async () => {
    const run = await bench(['refresh', '--world', 'bench/worlds/uniform.ts', '--smoke'], 120_000);
    expect(run.code, run.stderr.slice(-4000)).toBe(0);
    expect(run.stdout).toMatch(/refresh, uniform, 25% +lag \d\.\d\d× rr/);
    expect(run.stdout).toContain('a refresh run with options of its own: bench/results.json not written');
    expect(readFileSync(RESULTS, 'utf8')).toBe(resultsBefore);
    const missing = await bench(['refresh', '--world', 'bench/worlds/no-such-world.ts'], 60_000);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('cannot load world module bench/worlds/no-such-world.ts');
    const alone = await bench(['load', '--world', 'bench/worlds/uniform.ts'], 60_000);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain('--world goes with the refresh part alone');
  });

  it('refuses an unknown option or part with exit code 2, naming it', async () => {
    const option = await bench(['--smok'], 60_000);
    expect(option.code).toBe(2);
    expect(option.stderr).toContain('unknown option "--smok"');
    const part = await bench(['exprot', '--smoke'], 60_000);
    expect(part.code).toBe(2);
    expect(part.stderr).toContain('unknown part "exprot"');
    expect(part.stderr).toContain('export');
  });
});
