/** Job dependencies against a test database and an upstream at `url`, as a worker would hold them. */
import type { Enqueuer, JobDeps } from '../../jobs/deps.ts';
import { loadConfig } from '../../src/config/config.ts';
import { createLogger } from '../../src/log/log.ts';
import { UpstreamClient } from '../../src/upstream/client.ts';
import type { TestDatabase } from './db.ts';
import { fastLimiter } from './inline.ts';

/** An enqueuer that enqueues nothing: for jobs run one by one. */
export const NO_QUEUE: Enqueuer = {
  enterprises: async (_c, ids) => ids.length,
  cycleComplete: async () => {},
};

export function jobDepsAgainst(
  t: TestDatabase,
  url: string,
  apiKey: string,
  enqueue: Enqueuer = NO_QUEUE,
): JobDeps {
  const config = loadConfig(
    { DATABASE_URL: t.url, DAYBOOK_API_BASE_URL: url, DAYBOOK_API_KEY: apiKey, LOG_LEVEL: 'silent' },
    '/nonexistent',
  );
  return {
    sql: t.sql,
    client: new UpstreamClient({ baseUrl: url, apiKey }),
    limiter: fastLimiter(t.sql),
    config,
    log: createLogger({ level: 'silent' }),
    now: () => new Date(),
    enqueue,
  };
}
