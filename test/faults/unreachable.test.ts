/**
 * Redis or Postgres unreachable under the long-running commands. A real redis-server of the test's
 * own is stopped and started again; Postgres is "down" as a port where nothing listens. What a user
 * sees: one clear log line naming the variable (not a stack dump per reconnect), retries with
 * backoff, a line when it is back, and a stop on SIGTERM within DAYBOOK_STOP_TIMEOUT_MS whatever is
 * down; `daybook status` says what is down.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runDaybook } from '../support/cli.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';
import { freePort } from '../support/net.ts';
import {
  type Exit,
  type RedisServer,
  spawnDaybook,
  spawnWorker,
  startRedis,
  type WorkerProcess,
  waitFor,
} from './support/processes.ts';

/** The bound this suite gives every stop, and how long the test waits for it, with room for a loaded machine. */
const STOP_MS = 15_000;
const STOP_WAIT_MS = STOP_MS + 10_000;

/** Lines a process wrote that are not JSON log lines: a driver's stack dump, say. */
const notJson = (lines: readonly string[]) =>
  lines.filter((l) => {
    if (l.trim() === '') return false;
    try {
      JSON.parse(l);
      return false;
    } catch {
      return true;
    }
  });

const mentioning = (lines: readonly string[], ...words: string[]) =>
  lines.filter((l) => words.every((w) => l.includes(w)));

/** The exit, or null if the process still runs after `ms`. */
const exitWithin = (p: WorkerProcess, ms: number) =>
  Promise.race([p.exited, new Promise<null>((r) => setTimeout(() => r(null), ms))]) as Promise<Exit | null>;

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('Redis or Postgres unreachable', { timeout: 120_000 }, () => {
  let db: TestDatabase;
  const processes: WorkerProcess[] = [];
  const servers: RedisServer[] = [];
  beforeAll(async () => {
    db = await freshDatabase();
  });
  afterAll(async () => {
    await db.drop();
  });
  afterEach(async () => {
    for (const p of processes.splice(0)) await p.stop('SIGKILL');
    for (const r of servers.splice(0)) await r.stop();
  });

  const env = (redisUrl: string, databaseUrl = db.url) => ({
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    DAYBOOK_REDIS_PREFIX: `dbu-${Math.random().toString(36).slice(2, 8)}`,
    // No upstream call is made here: no job is ever queued.
    DAYBOOK_API_BASE_URL: 'http://127.0.0.1:9',
    DAYBOOK_API_KEY: 'test-key-unreachable',
    DAYBOOK_STOP_TIMEOUT_MS: String(STOP_MS),
    LOG_LEVEL: 'info',
  });

  it('a worker whose Redis goes away says so in one line naming REDIS_URL, and once more when it is back', async () => {
    const redis = await startRedis({ appendonly: false });
    servers.push(redis);
    const worker = spawnWorker(env(redis.url));
    processes.push(worker);
    await worker.started;
    await redis.stop();
    servers.pop();
    await waitFor(
      'the outage reported',
      async () => mentioning(worker.lines, 'REDIS_URL', 'unreachable').length > 0,
      30_000,
    );
    // ioredis reconnects every few hundred ms: each failed attempt used to print a stack dump.
    await pause(5000);
    expect(mentioning(worker.lines, 'REDIS_URL', 'is unreachable')).toHaveLength(1);
    expect(mentioning(worker.lines, `Redis at redis://127.0.0.1:${redis.port}`)).not.toHaveLength(0);
    const back = await startRedis({ appendonly: false, port: redis.port });
    servers.push(back);
    await waitFor(
      'the recovery reported',
      async () => mentioning(worker.lines, 'REDIS_URL', 'reachable again').length > 0,
      30_000,
    );
    expect(worker.exit).toBeNull();
    expect(notJson(worker.lines)).toEqual([]);
    process.kill(worker.pid, 'SIGTERM');
    expect(await exitWithin(worker, STOP_WAIT_MS)).toEqual({ code: 0, signal: null });
  });

  it('a worker told to stop while Redis is down stops within DAYBOOK_STOP_TIMEOUT_MS', async () => {
    const redis = await startRedis({ appendonly: false });
    servers.push(redis);
    const worker = spawnWorker(env(redis.url));
    processes.push(worker);
    await worker.started;
    await redis.stop();
    servers.pop();
    await waitFor(
      'the outage reported',
      async () => mentioning(worker.lines, 'REDIS_URL', 'unreachable').length > 0,
      30_000,
    );
    process.kill(worker.pid, 'SIGTERM');
    const exit = await exitWithin(worker, STOP_WAIT_MS);
    expect(exit, worker.lines.slice(-5).join('\n')).toEqual({ code: 0, signal: null });
    expect(mentioning(worker.lines, 'worker stopped')).toHaveLength(1);
    expect(notJson(worker.lines)).toEqual([]);
  });

  it('a scheduler that never reaches Redis says so once, keeps trying, and stops on SIGTERM', async () => {
    const port = await freePort();
    const scheduler = spawnDaybook('scheduler', env(`redis://127.0.0.1:${port}`), [], 'REDIS_URL');
    processes.push(scheduler);
    await scheduler.started;
    await pause(5000);
    expect(scheduler.exit).toBeNull();
    expect(mentioning(scheduler.lines, 'REDIS_URL', 'is unreachable')).toHaveLength(1);
    expect(notJson(scheduler.lines)).toEqual([]);
    process.kill(scheduler.pid, 'SIGTERM');
    expect(await exitWithin(scheduler, STOP_WAIT_MS)).toEqual({ code: 0, signal: null });
    expect(mentioning(scheduler.lines, 'scheduler stopped')).toHaveLength(1);
  });

  it('a worker started while Postgres is down waits for it, says so once naming DATABASE_URL, and stops on SIGTERM', async () => {
    const port = await freePort();
    const redis = await startRedis({ appendonly: false });
    servers.push(redis);
    const down = `postgres://postgres:s3cret-pw@127.0.0.1:${port}/daybook`;
    const worker = spawnDaybook('worker', env(redis.url, down), [], 'DATABASE_URL');
    processes.push(worker);
    await worker.started;
    await pause(4000);
    expect(worker.exit).toBeNull();
    const said = mentioning(worker.lines, 'DATABASE_URL', 'is unreachable');
    expect(said).toHaveLength(1);
    expect(said[0]).toContain(`Postgres at postgres://postgres:***@127.0.0.1:${port}/daybook`);
    expect(worker.lines.join('\n')).not.toContain('s3cret-pw');
    expect(notJson(worker.lines)).toEqual([]);
    process.kill(worker.pid, 'SIGTERM');
    expect(await exitWithin(worker, STOP_WAIT_MS)).toEqual({ code: 0, signal: null });
  });

  it('the admin server with Redis down answers /healthz as unhealthy, without stack dumps, and stops on SIGTERM', async () => {
    const port = await freePort();
    const redisPort = await freePort();
    const serve = spawnDaybook(
      'serve',
      env(`redis://127.0.0.1:${redisPort}`),
      ['--port', String(port)],
      'admin server on',
    );
    processes.push(serve);
    await serve.started;
    const res = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(res.status).toBe(503);
    const body = (await res.json()) as Record<string, unknown>;
    expect(JSON.stringify(body)).toMatch(/redis/i);
    await pause(3000);
    expect(mentioning(serve.lines, 'REDIS_URL', 'is unreachable')).toHaveLength(1);
    expect(notJson(serve.lines)).toEqual([]);
    process.kill(serve.pid, 'SIGTERM');
    expect(await exitWithin(serve, STOP_WAIT_MS)).toEqual({ code: 0, signal: null });
  });

  it('daybook status says which Redis is down, without a stack trace, and still reports the database', async () => {
    const port = await freePort();
    const out = await runDaybook(['status'], env(`redis://127.0.0.1:${port}`));
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toContain(
      `Queues: unavailable (Redis at redis://127.0.0.1:${port} (REDIS_URL) is unreachable`,
    );
    expect(out.stdout).toContain('Watchlist:');
    expect(`${out.stdout}${out.stderr}`).not.toMatch(/^\s+at /m);
    const json = await runDaybook(['status', '--json'], env(`redis://127.0.0.1:${port}`));
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout) as { queues: unknown; queueError: string };
    expect(report.queues).toBeNull();
    expect(report.queueError).toMatch(/REDIS_URL\) is unreachable/);
  });

  it('daybook status with Redis up prints the queue counts', async () => {
    const out = await runDaybook(['status'], env('redis://127.0.0.1:6379'));
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toMatch(/Queues: plan: 0 jobs waiting, 0 jobs running/);
    const json = await runDaybook(['status', '--json'], env('redis://127.0.0.1:6379'));
    const report = JSON.parse(json.stdout) as {
      queues: Record<string, Record<string, number>>;
      queueError?: string;
    };
    expect(report.queueError).toBeUndefined();
    expect(Object.keys(report.queues)).toEqual(['plan', 'enterprise', 'products', 'cycle']);
  });

  it('daybook status with Postgres down says so in one line naming DATABASE_URL, exit 1', async () => {
    const port = await freePort();
    const out = await runDaybook(
      ['status', '--no-queues'],
      env('redis://127.0.0.1:6379', `postgres://postgres:s3cret-pw@127.0.0.1:${port}/daybook`),
    );
    expect(out.code).toBe(1);
    expect(out.stderr).toContain(
      `Postgres at postgres://postgres:***@127.0.0.1:${port}/daybook (DATABASE_URL) is unreachable`,
    );
    expect(out.stderr).not.toContain('s3cret-pw');
    expect(out.stderr.trim().split('\n')).toHaveLength(1);
  });
});
