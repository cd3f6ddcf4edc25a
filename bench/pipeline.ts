/**
 * A queue-mode deployment for the pipeline benchmarks: a database and Redis prefix of its own,
 * the simulator in this process (so its counters are read directly), N watch entries named after
 * the simulator's enterprises, and `daybook worker` child processes started and killed like an
 * operator (or a crash) would.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Queues, redisConnection } from '../src/runtime/queues.ts';
import { defaultSimOptions, type RunningSimulator, startSimulator } from '../src/sim/server.ts';
import { cycleOf } from '../src/time/cycles.ts';
import { keywordKey } from '../src/watch/keyword.ts';
import {
  type BenchDatabase,
  deleteRedisKeys,
  freshDatabase,
  pollUntil,
  REDIS_URL,
  redisPrefix,
} from './support.ts';

const BIN = fileURLToPath(new URL('../bin/daybook.js', import.meta.url));
const KEY = 'sk-bench-7d41c9e2';

export interface PipelineOptions {
  part: string;
  /** Watch entries (the simulator's world has at least this many enterprises). */
  entries: number;
  /** The simulator's enterprise limit per minute (L). */
  simRate: number;
  /** daybook's limiter (DAYBOOK_ENTERPRISE_RATE). */
  daybookRate: number;
  /** Enterprise jobs at once per worker process. */
  concurrency?: number;
  logLevel?: string;
  /** A job's lock (DAYBOOK_JOB_LOCK_MS): how soon a killed worker's jobs come back. Default: daybook's. */
  lockMs?: number;
}

export interface WorkerProcess {
  child: ChildProcess;
  pid: number;
  exited: Promise<number | null>;
}

export interface BenchPipeline {
  db: BenchDatabase;
  sim: RunningSimulator;
  cycle: string;
  logDir: string;
  spawnWorker(label: string): WorkerProcess;
  /** Enqueues the cycle's plan job, as the scheduler would. */
  enqueuePlan(): Promise<void>;
  /** Resolves when every planned entry of the cycle is settled (succeeded, duplicate or failed). */
  untilSettled(timeoutMs: number): Promise<void>;
  settledCount(): Promise<number>;
  /** Billed queries (simulator) ÷ distinct enterprises refreshed in the cycle (daybook's ledger). */
  creditFigures(): Promise<{ billedQueries: number; distinctEnterprises: number; ledgerRows: number }>;
  stopWorker(w: WorkerProcess): Promise<void>;
  close(): Promise<void>;
}

export async function startBenchPipeline(options: PipelineOptions): Promise<BenchPipeline> {
  const db = await freshDatabase(options.part, 3);
  const prefix = redisPrefix(options.part);
  const logDir = mkdtempSync(join(os.tmpdir(), `daybook-bench-${options.part}-`));
  /** The workers' logs stay for a look when the entries did not settle; else they go with the rest. */
  let keepLogs = false;
  const sim = await startSimulator({
    ...defaultSimOptions(),
    enterprises: Math.max(options.entries, 1000),
    keys: new Map([[KEY, 1_000_000_000]]),
    rateLimits: { 'enterprise-search': options.simRate, 'product-listing': options.simRate },
  });
  const redis = redisConnection(REDIS_URL);
  const queues = new Queues(redis, prefix);
  const workers: WorkerProcess[] = [];
  const cycle = cycleOf(new Date());
  const names = sim.sim
    .world()
    .all()
    .slice(0, options.entries)
    .map((e) => e.ENTNAME);
  await db.sql`
    insert into watchlist (keyword, keyword_key)
    select * from unnest(${names}::text[], ${names.map(keywordKey)}::text[])`;

  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATABASE_URL: db.url,
    REDIS_URL,
    DAYBOOK_REDIS_PREFIX: prefix,
    DAYBOOK_API_BASE_URL: sim.url,
    DAYBOOK_API_KEY: KEY,
    DAYBOOK_ENTERPRISE_RATE: String(options.daybookRate),
    DAYBOOK_PRODUCT_RATE: String(options.daybookRate),
    DAYBOOK_CREDIT_BUDGET: String(options.entries * 3 * 10),
    DAYBOOK_WORKER_CONCURRENCY: String(options.concurrency ?? 4),
    DAYBOOK_HTTP_TIMEOUT_MS: '10000',
    LOG_LEVEL: options.logLevel ?? 'info',
    ...(options.lockMs === undefined ? {} : { DAYBOOK_JOB_LOCK_MS: String(options.lockMs) }),
  };
  // For profiling a worker: DAYBOOK_BENCH_WORKER_FLAGS='--cpu-prof --cpu-prof-dir=…'.
  const nodeFlags = (process.env.DAYBOOK_BENCH_WORKER_FLAGS ?? '').split(' ').filter(Boolean);

  const settledCount = async () => {
    const [row] = await db.sql<{ n: number }[]>`
      select count(*)::int as n from cycle_fetches
      where cycle = ${cycle} and status in ('succeeded', 'duplicate', 'failed')`;
    return row?.n ?? 0;
  };

  const stopWorker = async (w: WorkerProcess) => {
    if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGTERM');
    const timer = setTimeout(() => w.child.kill('SIGKILL'), 30_000);
    await w.exited;
    clearTimeout(timer);
  };

  return {
    db,
    sim,
    cycle,
    logDir,
    spawnWorker(label) {
      const log = openSync(join(logDir, `${label}.log`), 'a');
      const child = spawn(process.execPath, [...nodeFlags, BIN, 'worker'], {
        env,
        stdio: ['ignore', log, log],
      });
      closeSync(log);
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      const w = { child, pid: child.pid as number, exited };
      workers.push(w);
      return w;
    },
    async enqueuePlan() {
      await queues.addPlan({ cycle });
    },
    async untilSettled(timeoutMs) {
      const failedEarly = () =>
        workers.length > 0 && workers.every((w) => w.child.exitCode !== null && w.child.exitCode !== 0);
      await pollUntil(
        async () => {
          keepLogs = true;
          if (failedEarly()) {
            const tail = readFileSync(join(logDir, 'w1.log'), 'utf8').slice(-2000);
            throw new Error(`every worker exited with an error; last log lines:\n${tail}`);
          }
          const settled = (await settledCount()) >= options.entries;
          keepLogs = !settled;
          return settled;
        },
        `settling ${options.entries} entries (logs in ${logDir})`,
        timeoutMs,
      );
    },
    settledCount,
    async creditFigures() {
      const [row] = await db.sql<{ distinct: number; rows: number }[]>`
        select count(distinct pid)::int as distinct, count(*)::int as rows
        from credit_ledger where cycle = ${cycle} and operation = 'enterprise-search'`;
      return {
        billedQueries: sim.sim.counters.billedQueries,
        distinctEnterprises: row?.distinct ?? 0,
        ledgerRows: row?.rows ?? 0,
      };
    },
    stopWorker,
    async close() {
      await Promise.all(workers.map(stopWorker));
      for (const q of queues.all()) await q.obliterate({ force: true }).catch(() => {});
      await queues.close();
      await redis.quit();
      await deleteRedisKeys(prefix);
      await sim.close();
      await db.drop();
      if (!keepLogs) rmSync(logDir, { recursive: true, force: true });
    },
  };
}
