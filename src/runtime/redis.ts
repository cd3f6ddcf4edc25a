/**
 * Where daybook's Redis is, and how its keys are named so that it may be a Redis Cluster.
 *
 * One Redis (`REDIS_URL`) or a Redis Cluster (`REDIS_CLUSTER_NODES`, a comma-separated list of
 * seed nodes; the client learns the rest of the cluster from them). In a cluster a command that
 * touches several keys must find them all in one hash slot, and BullMQ's scripts touch many keys
 * of a queue at once. So every queue has a prefix of its own that is a hash tag,
 * `{<DAYBOOK_REDIS_PREFIX>:<queue>}`: all the keys of one queue share a slot, and the four queues
 * spread over four slots (and so, usually, over several masters). daybook's own coordination
 * keys (the scheduler's election of a cron tick, the rounds of `daybook enqueue`) are one key per
 * command; they share the tag `{<prefix>:coord}`. The rate limiter lives in Postgres, not Redis.
 */
import { Cluster, type ClusterNode, Redis, type RedisOptions } from 'ioredis';
import { type ClusterSeeds, parseClusterNodes } from '../config/redis-nodes.ts';
import { withoutPassword } from '../log/urls.ts';

/**
 * How long a command that connects once waits for a stream to close on disconnect: a stream that
 * failed to connect is already closed, and ioredis would otherwise wait its default 2 s for it.
 */
export const ONE_SHOT_DISCONNECT_MS = 200;

export type { ClusterSeeds };

/** A connection to one Redis or to a Redis Cluster: BullMQ and daybook take either. */
export type RedisClient = Redis | Cluster;

/** The parts of the configuration that say where Redis is. */
export interface RedisTarget {
  REDIS_URL: string;
  REDIS_CLUSTER_NODES?: string | undefined;
}

/** Whether the configuration names a Redis Cluster. */
export function isCluster(target: RedisTarget): boolean {
  return (target.REDIS_CLUSTER_NODES ?? '').trim() !== '';
}

/** The variable that says where Redis is, for messages. */
export function redisVariable(target: RedisTarget): 'REDIS_URL' | 'REDIS_CLUSTER_NODES' {
  return isCluster(target) ? 'REDIS_CLUSTER_NODES' : 'REDIS_URL';
}

/** "Redis at <url>" or "Redis Cluster at <seed nodes>", fit for a log line: never a password. */
export function redisPlace(target: RedisTarget): string {
  if (!isCluster(target)) return `Redis at ${withoutPassword(target.REDIS_URL)}`;
  const seeds = parseClusterNodes(target.REDIS_CLUSTER_NODES ?? '');
  return `Redis Cluster at ${seeds.nodes.map((n) => `${n.host}:${n.port}`).join(',')}`;
}

/** "Redis at … (REDIS_URL)" or "Redis Cluster at … (REDIS_CLUSTER_NODES)". */
export function redisLabel(target: RedisTarget): string {
  return `${redisPlace(target)} (${redisVariable(target)})`;
}

/**
 * A connection as BullMQ wants it for blocking commands (no limit on retries per request), to
 * one Redis or to a cluster. `extra` applies to every node's connection.
 */
export function redisConnection(url: string, extra?: RedisOptions): Redis;
export function redisConnection(target: RedisTarget | string, extra?: RedisOptions): RedisClient;
export function redisConnection(target: RedisTarget | string, extra: RedisOptions = {}): RedisClient {
  const t: RedisTarget = typeof target === 'string' ? { REDIS_URL: target } : target;
  const options: RedisOptions = { maxRetriesPerRequest: null, enableReadyCheck: true, ...extra };
  if (!isCluster(t)) return new Redis(t.REDIS_URL, options);
  const seeds = parseClusterNodes(t.REDIS_CLUSTER_NODES ?? '');
  const { lazyConnect, retryStrategy, ...perNode } = options;
  const nodes: ClusterNode[] = seeds.nodes;
  return new Cluster(nodes, {
    lazyConnect: lazyConnect ?? false,
    enableReadyCheck: true,
    enableOfflineQueue: perNode.enableOfflineQueue ?? true,
    // The cluster's own reconnects follow the caller's strategy when it gave one.
    ...(retryStrategy ? { clusterRetryStrategy: (times: number) => retryStrategy(times) ?? null } : {}),
    // A managed cluster's nodes may announce addresses only its TLS certificate does not name;
    // resolving through the seed's name keeps the certificate valid.
    ...(seeds.tls
      ? { dnsLookup: (address: string, callback: (e: null, a: string) => void) => callback(null, address) }
      : {}),
    redisOptions: {
      ...perNode,
      ...(seeds.username ? { username: seeds.username } : {}),
      ...(seeds.password ? { password: seeds.password } : {}),
      ...(seeds.tls ? { tls: {} } : {}),
    },
  });
}

/** The key prefix of one BullMQ queue: a hash tag of its own. */
export function queuePrefix(base: string, queue: string): string {
  return `{${base}:${queue}}`;
}

/** A pattern (KEYS, SCAN) for every key daybook keeps under `base`, queues and coordination. */
export function keyPattern(base: string): string {
  return `{${base}:*`;
}

/** A coordination key (single-key commands only), under the shared tag `{<prefix>:coord}`. */
export function coordinationKey(base: string, ...parts: string[]): string {
  return `{${base}:coord}:${parts.join(':')}`;
}
