/**
 * The refresh backtest as anyone runs it: from a directory of their own, on a world module of
 * their own that lies outside the repository with no package.json beside it (an ES module with
 * top-level await, whose watchlist grows through `joinsOn`), with the sizes, seeds and budgets on
 * the command line and every figure written as JSON. Tiny sizes, one process at a time; the
 * figures are checked for their shape and for the oracle's bound, never for a timing.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const exec = promisify(execFile);
const ROOT = join(import.meta.dirname, '../..');
const TSX = pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
const RUN = join(ROOT, 'bench/run.ts');
const WORLD_TS = pathToFileURL(join(ROOT, 'bench/worlds/world.ts')).href;

/** A world of the user's: quiet firms, one in twenty wakes early to change most days; half join on day 4. */
const WORLD = `// Outside the repository, no package.json: top-level await must work.
const { SyntheticWorld } = await import(${JSON.stringify(WORLD_TS)});
type Options = { seed: number; firms: number; epoch: string; days: number };
export const family = 'test-wakers';
export const about = 'quiet firms (0.002/day); one in twenty wakes on days 2 to 6 at 0.8/day; half join on day 4';
export function createWorld(opts: Options) {
  const wake = (i: number) => (i % 20 === 3 ? 2 + (i % 5) : Number.POSITIVE_INFINITY);
  return new SyntheticWorld(opts, {
    initial: (records: unknown[]) => new Float64Array(records.length).fill(0.002),
    rateOn: (i: number, day: number, base: Float64Array) => (day >= wake(i) ? 0.8 : (base[i] as number)),
    joinsOn: (i: number) => (i % 2 === 0 ? 1 : Math.min(4, opts.days)),
    dates: 'follow',
  });
}
`;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

let dir: string;

/** `npm run bench -- args…` as node runs it, from `dir`, with only PATH, HOME and TMPDIR. */
async function bench(args: string[]): Promise<Run> {
  try {
    const { stdout, stderr } = await exec(process.execPath, ['--import', TSX, RUN, ...args], {
      cwd: dir,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/tmp',
        ...(process.env.TMPDIR ? { TMPDIR: process.env.TMPDIR } : {}),
      },
      timeout: 240_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: unknown; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

interface JsonRun {
  family: string;
  seed: number;
  policy: string;
  budgetPercent: number;
  meanLag: number;
  p95Lag: number;
  detectedShare: number;
}

describe('npm run bench -- refresh, from another directory', () => {
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'daybook-world-'));
    writeFileSync(join(dir, 'world.ts'), WORLD);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runs a world module of its own and writes every figure as JSON', { timeout: 300_000 }, async () => {
    const args = ['refresh', '--world', './world.ts', '--seeds', '1-2', '--budgets', '10,25'];
    const run = await bench([...args, '--firms', '60', '--days', '15', '--json', 'out.json']);
    expect(run.code, run.stderr.slice(-4000)).toBe(0);
    expect(run.stdout).toContain('refresh, test-wakers, 25%');
    const doc = JSON.parse(readFileSync(join(dir, 'out.json'), 'utf8')) as {
      parameters: {
        worlds: { family: string }[];
        firms: number;
        daysScored: number;
        seeds: number[];
        budgetsPercent: number[];
        policies: string[];
      };
      runs: JsonRun[];
    };
    const p = doc.parameters;
    expect(p.worlds.map((w) => w.family)).toEqual(['test-wakers']);
    expect([p.firms, p.daysScored]).toEqual([60, 15]);
    expect(p.seeds).toEqual([1, 2]);
    expect(p.budgetsPercent).toEqual([10, 25]);
    for (const policy of ['rr', 'new', 'bayes', 'oracle']) expect(p.policies).toContain(policy);
    for (const seed of [1, 2])
      for (const budget of [10, 25]) {
        const at = doc.runs.filter((r) => r.seed === seed && r.budgetPercent === budget);
        for (const policy of ['rr', 'new', 'bayes', 'oracle'])
          expect(
            at.filter((r) => r.policy === policy),
            `${policy} seed ${seed} at ${budget}%`,
          ).toHaveLength(1);
        for (const r of at) {
          expect(r.family).toBe('test-wakers');
          expect(Number.isFinite(r.meanLag) && r.meanLag >= 0, JSON.stringify(r)).toBe(true);
          expect(Number.isInteger(r.p95Lag) && r.p95Lag >= 0, JSON.stringify(r)).toBe(true);
          expect(r.detectedShare >= 0 && r.detectedShare <= 1, JSON.stringify(r)).toBe(true);
        }
        const oracle = at.find((r) => r.policy === 'oracle') as JsonRun;
        for (const r of at)
          expect(oracle.meanLag, `oracle vs ${r.policy}, seed ${seed} at ${budget}%`).toBeLessThanOrEqual(
            r.meanLag,
          );
      }
  });

  it('runs a world whose records have no PID or name, and names the field of a record it cannot read', {
    timeout: 240_000,
  }, async () => {
    // Records of a few fields only, as a hand-written world gives them.
    const plain = (name: string) => `export const family = 'plain';
export const about = 'hand-written records';
export function createWorld(opts: { seed: number; firms: number }) {
  let day = 0;
  return {
    firms: opts.firms,
    advance(d: number) {
      day = d;
      return d % 3 === 0 ? [{ firm: d % opts.firms, fields: ['TEL'], severity: 'low' as const }] : [];
    },
    record(i: number) {
      return { ${name}ENTSTATUS: '存续', APPRDATE: '2020-01-01', TEL: String(i * 1000 + (day - (day % 3))) };
    },
    trueRate() { return 1 / 3 / opts.firms; },
  };
}
`;
    writeFileSync(join(dir, 'plain.ts'), plain(''));
    writeFileSync(join(dir, 'broken.ts'), plain('ENTNAME: 42, '));
    const sizes = ['--firms', '20', '--days', '6', '--seeds', '1', '--budgets', '25'];
    const ok = await bench(['refresh', '--world', './plain.ts', ...sizes]);
    expect(ok.code, ok.stderr.slice(-4000)).toBe(0);
    expect(ok.stdout).toContain('refresh, plain, 25%');
    const bad = await bench(['refresh', '--world', './broken.ts', ...sizes]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('world plain: record(0) on day 1: ENTNAME');
    expect(bad.stderr).not.toMatch(/\n\s+at /);
  });

  it('refuses a bad option with exit code 2, naming it', { timeout: 120_000 }, async () => {
    const cases: [string[], string][] = [
      [['--seeds', '5-1'], '--seeds'],
      [['--seeds', 'one'], '--seeds'],
      [['--budgets', '0,10'], '--budgets'],
      [['--budgets', '150'], '--budgets'],
      [['--firms', '-3'], '--firms'],
      [['--days', '2.5'], '--days'],
      [['--json', 'no/such/dir/out.json'], '--json'],
      [['--world', 'no-such-family'], 'no world family "no-such-family"'],
      [['--world', './missing.ts'], 'cannot load world module ./missing.ts'],
    ];
    for (const [args, named] of cases) {
      const run = await bench(['refresh', ...args]);
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(2);
      expect(run.stderr, args.join(' ')).toContain(named);
    }
  });
});
