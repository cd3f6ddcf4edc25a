/** Runs the real `daybook` command as a person would: a child process, no stdin, CI=true. */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll } from 'vitest';
import { freshDatabase, type TestDatabase } from './db.ts';

const run = promisify(execFile);
export const BIN = join(import.meta.dirname, '../../bin/daybook.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** `daybook args…` with only PATH, HOME, CI and `env` in its environment. */
export async function runDaybook(
  args: string[],
  env: Record<string, string> = {},
  cwd?: string,
  timeoutMs = 60_000,
): Promise<CliResult> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', CI: 'true', ...env },
      cwd: cwd ?? mkdtempSync(join(tmpdir(), 'daybook-cli-')),
      timeout: timeoutMs,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: unknown; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** A database of a test file's own, and a scratch folder the CLI runs in against it. */
export interface CliDatabase {
  t: TestDatabase;
  dir: string;
  /** `daybook args…` in the scratch folder, with DATABASE_URL naming the database. */
  daybook(...args: string[]): Promise<CliResult>;
  /** Writes `text` to the file `name` of the scratch folder; its path. */
  file(name: string, text: string): string;
  /** Drops the database and removes the folder. */
  close(): Promise<void>;
}

export async function cliAgainstDatabase(folder: string): Promise<CliDatabase> {
  const t = await freshDatabase();
  const dir = mkdtempSync(join(tmpdir(), `daybook-${folder}-`));
  return {
    t,
    dir,
    daybook: (...args) => runDaybook(args, { DATABASE_URL: t.url }, dir),
    file(name, text) {
      const path = join(dir, name);
      writeFileSync(path, text);
      return path;
    },
    async close() {
      await t.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A CliDatabase for the calling test file: made before its first test and closed after its last
 * (it registers the hooks), so its fields are read inside tests and hooks only.
 */
export function cliDatabaseOfFile(folder: string): CliDatabase {
  let c: CliDatabase | undefined;
  beforeAll(async () => {
    c = await cliAgainstDatabase(folder);
  });
  afterAll(() => c?.close());
  const made = (): CliDatabase => {
    if (!c) throw new Error('the CLI database is made before the first test');
    return c;
  };
  return {
    get t() {
      return made().t;
    },
    get dir() {
      return made().dir;
    },
    daybook: (...args) => made().daybook(...args),
    file: (name, text) => made().file(name, text),
    close: () => made().close(),
  };
}
