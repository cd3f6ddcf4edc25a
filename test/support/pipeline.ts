/** A whole pipeline for a test: its own database, Redis prefix, simulator and workers. */
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { Redis } from 'ioredis';
import type { JobDeps } from '../../jobs/deps.ts';
import { type Config, loadConfig } from '../../src/config/config.ts';
import { createLogger } from '../../src/log/log.ts';
import { DatabaseRateLimiter, perMinute } from '../../src/purchase/limiter.ts';
import { Queues, redisConnection, retryPolicy } from '../../src/runtime/queues.ts';
import { type RunningWorkers, startWorkers } from '../../src/runtime/worker.ts';
import type { RunningSimulator } from '../../src/sim/server.ts';
import { UpstreamClient } from '../../src/upstream/client.ts';
import { keywordKey } from '../../src/watch/keyword.ts';
import { freshDatabase, type TestDatabase } from './db.ts';
import { removeQueues } from './queues.ts';
import { startTestSim, TEST_KEY, UNTHROTTLED } from './sim.ts';

export interface TestPipeline {
  db: TestDatabase;
  sim: RunningSimulator;
  config: Config;
  prefix: string;
  redis: Redis;
  queues: Queues;
  logs: string[];
  deps(): JobDeps;
  startWorkers(concurrency?: number): RunningWorkers;
  /** Adds `n` watch entries named after enterprises of the simulator's world. */
  watch(n: number, offset?: number): Promise<number[]>;
  close(): Promise<void>;
}

export async function startPipeline(
  env: Record<string, string> = {},
  sim?: RunningSimulator,
): Promise<TestPipeline> {
  const db = await freshDatabase();
  const s =
    sim ??
    (await startTestSim({
      enterprises: 1000,
      rateLimits: UNTHROTTLED,
    }));
  const prefix = `dbt-${randomBytes(4).toString('hex')}`;
  const config = loadConfig(
    {
      DATABASE_URL: db.url,
      DAYBOOK_API_BASE_URL: s.url,
      DAYBOOK_API_KEY: TEST_KEY,
      DAYBOOK_REDIS_PREFIX: prefix,
      DAYBOOK_ENTERPRISE_RATE: '3000',
      DAYBOOK_PRODUCT_RATE: '3000',
      DAYBOOK_CREDIT_BUDGET: '100000',
      DAYBOOK_HTTP_TIMEOUT_MS: '5000',
      LOG_LEVEL: 'info',
      ...env,
    },
    '/nonexistent/.env',
  );
  const redis = redisConnection(config.REDIS_URL);
  const queues = new Queues(redis, prefix, retryPolicy(config));
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logs.push(String(chunk));
      cb();
    },
  });
  const log = createLogger({
    level: config.LOG_LEVEL,
    destination: sink,
    pretty: false,
    secrets: [TEST_KEY],
  });
  const limiter = new DatabaseRateLimiter(db.sql, {
    'enterprise-search': perMinute(config.DAYBOOK_ENTERPRISE_RATE, 0),
    'product-listing': perMinute(config.DAYBOOK_PRODUCT_RATE, 0),
  });
  const client = new UpstreamClient({
    baseUrl: s.url,
    apiKey: TEST_KEY,
    timeoutMs: config.DAYBOOK_HTTP_TIMEOUT_MS,
    now: () => s.sim.now(),
  });
  const workers: RunningWorkers[] = [];
  const deps = (): JobDeps => ({
    sql: db.sql,
    client,
    limiter,
    config,
    log,
    enqueue: queues,
    now: () => s.sim.now(),
  });
  return {
    db,
    sim: s,
    config,
    prefix,
    redis,
    queues,
    logs,
    deps,
    startWorkers(concurrency = 4) {
      const w = startWorkers(deps(), queues, redisConnection(config.REDIS_URL), {
        concurrency,
        upstreamTimeoutMs: config.DAYBOOK_HTTP_TIMEOUT_MS,
      });
      workers.push(w);
      return w;
    },
    async watch(n, offset = 0) {
      const names = s.sim
        .world()
        .all()
        .slice(offset, offset + n)
        .map((e) => e.ENTNAME);
      const rows = names.map((keyword) => ({ keyword, keyword_key: keywordKey(keyword) }));
      const ids = await db.sql<{ id: string }[]>`insert into watchlist ${db.sql(rows)} returning id`;
      return ids.map((r) => Number(r.id));
    },
    async close() {
      for (const w of workers) await w.close();
      await queues
        .all()[0]
        ?.obliterate({ force: true })
        .catch(() => {});
      await removeQueues(queues, prefix, redis);
      await redis.quit();
      if (!sim) await s.close();
      await db.drop();
    },
  };
}

/**
 * Resolves when `done()` is true, checking on every job event; rejects after `timeoutMs`, a hang
 * guard (a busy machine makes a cycle take minutes), never a deadline the test means.
 */
export async function until(
  workers: RunningWorkers[],
  done: () => Promise<boolean>,
  timeoutMs = 180_000,
): Promise<void> {
  if (await done()) return;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`not done within ${timeoutMs} ms`));
    }, timeoutMs);
    let checking = false;
    const check = async () => {
      if (checking) return;
      checking = true;
      try {
        if (await done()) {
          cleanup();
          resolve();
        }
      } finally {
        checking = false;
      }
    };
    // A safety poll too: the last event may arrive before `done` can see it committed.
    const poll = setInterval(check, 250);
    const cleanup = () => {
      clearTimeout(timer);
      clearInterval(poll);
      for (const w of workers) w.events.off('job', check);
    };
    for (const w of workers) w.events.on('job', check);
  });
}
