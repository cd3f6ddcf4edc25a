/** Queues under a Redis prefix of a test's own, and their removal afterwards. */
import { randomBytes } from 'node:crypto';
import { type Config, loadConfig } from '../../src/config/config.ts';
import { keyPattern, Queues, redisConnection } from '../../src/runtime/queues.ts';
import type { RedisClient } from '../../src/runtime/redis.ts';

/**
 * Empties and closes the queues; with `redis`, also deletes every key left under `prefix` (a
 * cluster's keys are spread over its masters: a test on one stops the cluster instead).
 */
export async function removeQueues(queues: Queues, prefix: string, redis?: RedisClient): Promise<void> {
  for (const q of queues.all()) await q.obliterate({ force: true }).catch(() => {});
  await queues.close();
  if (!redis) return;
  const keys = await redis.keys(keyPattern(prefix)).catch(() => [] as string[]);
  if (keys.length > 0) await redis.del(...keys);
}

export interface OwnQueues {
  prefix: string;
  config: Config;
  redis: ReturnType<typeof redisConnection>;
  queues: Queues;
  /** Removes the queues and their keys, and quits the connection. */
  remove(): Promise<void>;
}

/** A configuration (`env` over the defaults) whose Redis prefix is `tag-` and random hex, its queues. */
export function ownQueues(tag: string, env: Record<string, string> = {}): OwnQueues {
  const prefix = `${tag}-${randomBytes(4).toString('hex')}`;
  const config = loadConfig({ DAYBOOK_REDIS_PREFIX: prefix, ...env }, '/nonexistent/.env');
  const redis = redisConnection(config.REDIS_URL);
  const queues = new Queues(redis, prefix);
  return {
    prefix,
    config,
    redis,
    queues,
    async remove() {
      await removeQueues(queues, prefix, redis);
      await redis.quit();
    },
  };
}
