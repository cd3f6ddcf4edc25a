/**
 * What keeps a worker's memory down: the CLI runs as a bundle compiled on first use (no tsx loader
 * thread), rebuilt when a source changes; and the worker's heap growth limit, which yields to an
 * operator's own flag.
 */
import { execFile } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { limitHeapGrowth, WORKER_HEAP_GROWING_PERCENT } from '../../src/runtime/heap.ts';

const run = promisify(execFile);
const REPO = join(import.meta.dirname, '../..');

describe('limitHeapGrowth', () => {
  it('sets the worker limit unless the operator gave the flag', () => {
    expect(limitHeapGrowth(WORKER_HEAP_GROWING_PERCENT, [], '')).toBe(50);
    expect(limitHeapGrowth(50, ['--heap-growing-percent=20'], '')).toBeNull();
    expect(limitHeapGrowth(50, [], '--max-old-space-size=300 --heap_growing_percent=80')).toBeNull();
    expect(limitHeapGrowth(50, ['--max-old-space-size=300'], '--enable-source-maps')).toBe(50);
  });
});

describe('bin/daybook.js', { timeout: 120_000 }, () => {
  // A copy of the sources with its own node_modules (links to the packages), so its cache is its own.
  const root = mkdtempSync(join(tmpdir(), 'daybook-bin-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  for (const dir of ['bin', 'src', 'jobs', 'migrations'])
    cpSync(join(REPO, dir), join(root, dir), { recursive: true });
  for (const file of ['package.json', 'tsconfig.json']) cpSync(join(REPO, file), join(root, file));
  mkdirSync(join(root, 'node_modules'));
  for (const name of readdirSync(join(REPO, 'node_modules'))) {
    if (name !== '.cache') symlinkSync(join(REPO, 'node_modules', name), join(root, 'node_modules', name));
  }
  const daybook = async (...args: string[]) =>
    (
      await run(process.execPath, [join(root, 'bin/daybook.js'), ...args], {
        cwd: root,
        env: { PATH: process.env.PATH ?? '' },
      })
    ).stdout;
  const current = join(root, 'node_modules/.cache/daybook/current.json');

  it('runs a bundle built on first use, and builds it again when a source changes', async () => {
    expect(await daybook('--version')).toBe('0.1.0\n');
    const first = JSON.parse(readFileSync(current, 'utf8')) as {
      dir: string;
      inputs: Record<string, unknown>;
    };
    expect(Object.keys(first.inputs)).toContain('src/cli/main.ts');
    expect(existsSync(join(root, 'node_modules/.cache/daybook', first.dir, 'main.js'))).toBe(true);

    expect(await daybook('--version')).toBe('0.1.0\n');
    expect(JSON.parse(readFileSync(current, 'utf8')).dir).toBe(first.dir);

    const program = join(root, 'src/cli/program.ts');
    writeFileSync(program, readFileSync(program, 'utf8').replace(".version('0.1.0')", ".version('9.9.9')"));
    expect(await daybook('--version')).toBe('9.9.9\n');
    expect(JSON.parse(readFileSync(current, 'utf8')).dir).not.toBe(first.dir);
  });
});
