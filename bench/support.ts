/**
 * What every benchmark shares: a fresh migrated database of its own (created and dropped like the
 * test harness does, without vitest), a unique Redis prefix, timing helpers and the machine's
 * description. Benchmarks print figures; nothing here asserts a timing.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import { type Database, openDatabase } from '../src/db/connect.ts';
import { migrateDatabase } from '../src/db/migrate.ts';

/** The Postgres server benchmarks use (DAYBOOK_BENCH_PG, else the local trust-auth default). */
export const PG_SERVER = process.env.DAYBOOK_BENCH_PG ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.DAYBOOK_BENCH_REDIS ?? 'redis://127.0.0.1:6379';

function databaseUrl(name: string): string {
  const u = new URL(PG_SERVER);
  u.pathname = `/${name}`;
  return u.toString();
}

export interface BenchDatabase extends Database {
  url: string;
  name: string;
  /** Closes the pool and drops the database. */
  drop(): Promise<void>;
}

/** Creates and migrates a database named `daybook_b_<part>_<random>`. */
export async function freshDatabase(part: string, poolSize = 5): Promise<BenchDatabase> {
  const name = `daybook_b_${part}_${randomBytes(4).toString('hex')}`;
  const admin = postgres(PG_SERVER, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database "${name}"`);
  } finally {
    await admin.end();
  }
  const url = databaseUrl(name);
  await migrateDatabase(url);
  const database = openDatabase(url, { max: poolSize, applicationName: `daybook-bench-${part}` });
  return {
    ...database,
    url,
    name,
    async drop() {
      await database.close();
      const a = postgres(PG_SERVER, { max: 1, onnotice: () => {} });
      try {
        await a.unsafe(`drop database if exists "${name}" with (force)`);
      } finally {
        await a.end();
      }
    },
  };
}

/** A Redis prefix no other run uses, and a way to delete its keys afterwards. */
export function redisPrefix(part: string): string {
  return `dbb-${part}-${randomBytes(4).toString('hex')}`;
}

export async function deleteRedisKeys(prefix: string): Promise<void> {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 3 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

/** Milliseconds since `start` (a performance.now() reading), rounded to 0.1 ms. */
export function since(start: number): number {
  return Math.round((performance.now() - start) * 10) / 10;
}

export function round(n: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

/** Resolves when `check()` is true, polling every `everyMs`; rejects after `timeoutMs`. */
export async function pollUntil(
  check: () => Promise<boolean>,
  what: string,
  timeoutMs: number,
  everyMs = 250,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`bench: ${what} did not happen within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export interface Machine {
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  os: string;
  node: string;
  postgres: string;
  redis: string;
}

/** The machine the figures were taken on. */
export async function describeMachine(): Promise<Machine> {
  const admin = postgres(PG_SERVER, { max: 1, onnotice: () => {} });
  let pg = 'unknown';
  try {
    const [row] = await admin<{ v: string }[]>`select current_setting('server_version') as v`;
    pg = row?.v ?? pg;
  } finally {
    await admin.end();
  }
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 3 });
  let rv = 'unknown';
  try {
    const info = await redis.info('server');
    rv = /redis_version:(\S+)/.exec(info)?.[1] ?? rv;
  } finally {
    redis.disconnect();
  }
  let osName = `${os.type()} ${os.release()}`;
  try {
    const pretty = /^PRETTY_NAME="?([^"\n]+)"?/m.exec(readFileSync('/etc/os-release', 'utf8'))?.[1];
    if (pretty) osName = `${pretty} (${os.type()} ${os.release()})`;
  } catch {
    // Not Linux, or no os-release: the kernel name will do.
  }
  return {
    cpus: os.availableParallelism(),
    cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown',
    memoryGiB: round(os.totalmem() / 1024 ** 3, 1),
    os: osName,
    node: process.version,
    postgres: pg,
    redis: rv,
  };
}

/**
 * Times each table of an export from its progress lines (`  <table>: N rows`; a `load …` line
 * starts the first): `progress` goes to exportPackages, `tableSeconds` fills as tables finish.
 */
export function tableClock(tables: readonly string[]): {
  progress: (line: string) => void;
  tableSeconds: Record<string, number>;
} {
  const tableSeconds: Record<string, number> = {};
  let t = performance.now();
  const progress = (line: string) => {
    const m = /^ {2}(\w+): \d+ rows$/.exec(line);
    if (m?.[1] && tables.includes(m[1])) {
      const now = performance.now();
      tableSeconds[m[1]] = round((now - t) / 1000, 3);
      t = now;
    } else if (line.startsWith('load ')) t = performance.now();
  };
  return { progress, tableSeconds };
}

/** Runs a command to its end: its stdout, or an error naming `what` with its exit code and stderr. */
export function runToEnd(
  what: string,
  command: string,
  args: readonly string[],
  options: { cwd?: string; input?: string } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      ...(options.cwd ? { cwd: options.cwd } : {}),
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout?.setEncoding('utf8').on('data', (d: string) => {
      out += d;
    });
    child.stderr?.setEncoding('utf8').on('data', (d: string) => {
      err += d;
    });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${what} exited ${code}: ${err.trim()}`)),
    );
    if (options.input !== undefined) child.stdin?.end(options.input);
  });
}
