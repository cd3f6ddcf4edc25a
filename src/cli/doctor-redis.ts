/**
 * `daybook doctor`'s Redis checks: reachable (and its version), its memory policy (BullMQ loses
 * jobs when Redis evicts keys), the key prefix and what is under it, and on a Redis Cluster that
 * every slot is served. Read only: nothing is written.
 */
import { type Cluster, Redis, type RedisOptions } from 'ioredis';
import { type Config, ENV_SCHEMA } from '../config/config.ts';
import { parseClusterNodes } from '../config/redis-nodes.ts';
import { closeRedis, QUEUE_NAMES } from '../runtime/queues.ts';
import {
  isCluster,
  ONE_SHOT_DISCONNECT_MS,
  queuePrefix,
  type RedisClient,
  redisConnection,
  redisPlace,
  redisVariable,
} from '../runtime/redis.ts';
import { within } from '../time/deadline.ts';
import { type CheckResult, fail, inWords, pass, skip } from './doctor-result.ts';

/** REDIS_URL when it is not set. */
const DEFAULT_REDIS_URL = ENV_SCHEMA.shape.REDIS_URL.parse(undefined);

/** One field of an INFO answer. */
function infoField(info: string, field: string): string | null {
  return new RegExp(`^${field}:(.*)$`, 'm').exec(info)?.[1]?.trim() ?? null;
}

/** The nodes a command for every node goes to: the masters of a cluster, or the one Redis. */
function masters(redis: RedisClient): Redis[] {
  return 'nodes' in redis ? (redis as Cluster).nodes('master') : [redis as Redis];
}

/** Connection options for the checks: no retries, no queue of commands while down. */
const once = (timeoutMs: number): RedisOptions => ({
  lazyConnect: true,
  connectTimeout: timeoutMs,
  commandTimeout: timeoutMs,
  maxRetriesPerRequest: 0,
  enableOfflineQueue: false,
  retryStrategy: () => null,
  disconnectTimeout: ONE_SHOT_DISCONNECT_MS,
});

/**
 * Why a cluster did not become ready: each seed node asked on its own (CLUSTER INFO), the first
 * that does not answer or says the cluster is not ok named. Null when every seed says ok.
 */
async function clusterTrouble(config: Config, timeoutMs: number): Promise<string | null> {
  const seeds = parseClusterNodes(config.REDIS_CLUSTER_NODES ?? '');
  const answers = await Promise.all(
    seeds.nodes.map(async (n) => {
      const node = new Redis({
        ...once(timeoutMs),
        host: n.host,
        port: n.port,
        ...(seeds.username ? { username: seeds.username } : {}),
        ...(seeds.password ? { password: seeds.password } : {}),
        ...(seeds.tls ? { tls: {} } : {}),
      });
      node.on('error', () => {});
      try {
        await within(node.connect(), timeoutMs, `${n.host}:${n.port}`);
        const info = String(await within(node.call('CLUSTER', 'INFO'), timeoutMs, 'CLUSTER INFO'));
        const state = infoField(info, 'cluster_state');
        const assigned = infoField(info, 'cluster_slots_assigned');
        return state === 'ok'
          ? null
          : `${n.host}:${n.port} says the cluster is ${state ?? 'in an unknown state'} (${assigned ?? '?'} of 16384 slots assigned)`;
      } catch (err) {
        return `${n.host}:${n.port} does not answer: ${inWords(err)}`;
      } finally {
        node.disconnect();
      }
    }),
  );
  return answers.find((a) => a !== null) ?? null;
}

/** The masters that CLUSTER SLOTS names as owners of slots, as host:port. */
async function slotOwners(redis: RedisClient, timeoutMs: number): Promise<string[]> {
  const ranges = (await within(redis.call('CLUSTER', 'SLOTS'), timeoutMs, 'CLUSTER SLOTS')) as [
    number,
    number,
    [string, number, ...unknown[]],
  ][];
  return [...new Set(ranges.map(([, , [host, port]]) => `${host}:${port}`))];
}

/** Connects for the checks: no retries, no queue of commands while down. */
async function connect(config: Config, timeoutMs: number): Promise<RedisClient | CheckResult> {
  let lastError: unknown = null;
  const redis = redisConnection(config, once(timeoutMs));
  redis.on('error', (err: Error) => {
    lastError = err;
  });
  try {
    await within(redis.connect(), timeoutMs, redisPlace(config));
    await within(redis.ping(), timeoutMs, redisPlace(config));
    return redis;
  } catch (err) {
    redis.disconnect();
    const why = lastError ?? err;
    const variable = redisVariable(config);
    if (/NOAUTH|WRONGPASS|invalid password|invalid username/i.test(String((why as Error)?.message ?? why)))
      return fail(
        'Redis',
        `${redisPlace(config)} refused the login`,
        `correct the user and password in ${variable}`,
      );
    const unset =
      variable === 'REDIS_URL' && config.REDIS_URL === DEFAULT_REDIS_URL
        ? ' (REDIS_URL unset: the default)'
        : '';
    const where = `${redisPlace(config).replace(/^Redis (Cluster )?at /, '')}${unset}`;
    const late = (err as Error)?.name === 'DeadlineError';
    const trouble = isCluster(config) ? await clusterTrouble(config, timeoutMs) : null;
    if (trouble)
      return fail(
        'Redis',
        `the cluster is not ready: ${trouble}`,
        'start the nodes that are down, or let the cluster fail over to replicas (redis-cli --cluster check <node>)',
      );
    return fail(
      'Redis',
      late
        ? `nothing answered at ${where} within ${Math.round(timeoutMs / 100) / 10} s`
        : `nothing answers at ${where}: ${inWords(why)}`,
      `start Redis, or set ${variable} to where it runs (queue mode needs it; daybook run does not)`,
    );
  }
}

/** The version, and whether Redis may evict keys (BullMQ needs maxmemory-policy noeviction). */
async function serverChecks(config: Config, redis: RedisClient, timeoutMs: number): Promise<CheckResult[]> {
  const nodes = masters(redis);
  const name = (n: Redis) => `${n.options.host}:${n.options.port}`;
  const answers = await Promise.all(
    nodes.map((n) =>
      within(n.info(), timeoutMs, 'INFO').then(
        (info) => ({ name: name(n), info, error: null as unknown }),
        (error: unknown) => ({ name: name(n), info: '', error }),
      ),
    ),
  );
  // A cluster client forgets a master it could not reach: the masters the slots name count too.
  const expected = isCluster(config) ? await slotOwners(redis, timeoutMs) : [];
  const missing = expected.filter((m) => !answers.some((a) => a.name === m));
  const silent = [
    ...answers.filter((a) => a.error !== null).map((a) => `${a.name}: ${inWords(a.error)}`),
    ...missing.map((m) => `${m}: no connection`),
  ];
  if (silent.length > 0) {
    const total = Math.max(nodes.length, expected.length);
    return [
      fail(
        'Redis',
        `${silent.length} of ${total} masters ${silent.length === 1 ? 'does' : 'do'} not answer (${silent[0]})`,
        'start it again, or let the cluster fail over to a replica (redis-cli --cluster check <node>)',
      ),
    ];
  }
  const infos = answers.map((a) => a.info);
  const version = infoField(infos[0] ?? '', 'redis_version') ?? 'unknown version';
  const where = redisPlace(config).replace(/^Redis (Cluster )?at /, '');
  const kind = isCluster(config) ? `Redis Cluster (${nodes.length} masters)` : 'Redis';
  const out = [pass('Redis', `${kind} ${version} at ${where}`)];
  const policies = [...new Set(infos.map((i) => infoField(i, 'maxmemory_policy')))];
  if (policies.includes(null))
    out.push(skip('Redis memory policy', 'this Redis does not say its maxmemory-policy'));
  else if (policies.length === 1 && policies[0] === 'noeviction')
    out.push(pass('Redis memory policy', 'noeviction: queued jobs are never evicted'));
  else
    out.push(
      fail(
        'Redis memory policy',
        `maxmemory-policy is ${policies.join(', ')}: when memory runs out, Redis drops keys, queued jobs among them`,
        'set maxmemory-policy noeviction (in redis.conf, or CONFIG SET maxmemory-policy noeviction)',
      ),
    );
  return out;
}

/**
 * The prefix, and which of daybook's queues exist under it (each queue's meta key: one EXISTS per
 * queue, never a scan of a Redis that may hold millions of keys).
 */
async function prefixCheck(config: Config, redis: RedisClient, timeoutMs: number): Promise<CheckResult> {
  const prefix = config.DAYBOOK_REDIS_PREFIX;
  const queues = Object.values(QUEUE_NAMES);
  const found = await within(
    Promise.all(queues.map(async (q) => (await redis.exists(`${queuePrefix(prefix, q)}:${q}:meta`)) === 1)),
    timeoutMs,
    'looking for the queues',
  );
  const present = queues.filter((_, i) => found[i]);
  const shape = `{${prefix}:<queue>}`;
  if (present.length === 0)
    return pass(
      'Redis key prefix',
      `${prefix}: no queue under ${shape} yet (every daybook process must use this DAYBOOK_REDIS_PREFIX)`,
    );
  return pass(
    'Redis key prefix',
    `${prefix}: ${present.length === queues.length ? `all ${queues.length} queues` : present.join(', ')} under ${shape}`,
  );
}

/** On a cluster: every slot served, and where the queues' hash tags land. */
async function slotsCheck(config: Config, redis: RedisClient, timeoutMs: number): Promise<CheckResult> {
  const info = String(await within(redis.call('CLUSTER', 'INFO'), timeoutMs, 'CLUSTER INFO'));
  const state = infoField(info, 'cluster_state');
  const assigned = Number(infoField(info, 'cluster_slots_assigned') ?? 0);
  const failing = Number(infoField(info, 'cluster_slots_fail') ?? 0);
  const slots = await within(
    Promise.all(
      Object.values(QUEUE_NAMES).map(async (q) =>
        Number(await redis.call('CLUSTER', 'KEYSLOT', queuePrefix(config.DAYBOOK_REDIS_PREFIX, q))),
      ),
    ),
    timeoutMs,
    'CLUSTER KEYSLOT',
  );
  if (state !== 'ok' || assigned < 16_384 || failing > 0)
    return fail(
      'Redis Cluster slots',
      `the cluster is ${state ?? 'in an unknown state'}: ${assigned} of 16384 slots assigned${failing > 0 ? `, ${failing} failing` : ''}`,
      'give every slot a working master (redis-cli --cluster check <node>, then --cluster fix)',
    );
  return pass('Redis Cluster slots', `all 16384 slots served; the queues hash to slots ${slots.join(', ')}`);
}

/** Every Redis check; Redis is skipped when nothing uses it (REDIS_URL unset, embedded database). */
export async function redisChecks(config: Config, timeoutMs: number): Promise<CheckResult[]> {
  const cluster = isCluster(config);
  if (!cluster && !config.DATABASE_URL && config.REDIS_URL === DEFAULT_REDIS_URL)
    return [
      skip(
        'Redis',
        'REDIS_URL is not set, and with the embedded database nothing uses Redis (queue mode needs DATABASE_URL)',
      ),
    ];
  const redis = await connect(config, timeoutMs);
  if ('check' in redis) return [redis];
  const unfinished = (check: string) => (err: unknown) =>
    fail(
      check,
      `the check could not finish: ${inWords(err)}`,
      `run daybook doctor again, or ask Redis by hand (redis-cli)`,
    );
  try {
    const out = await serverChecks(config, redis, timeoutMs);
    out.push(await prefixCheck(config, redis, timeoutMs).catch(unfinished('Redis key prefix')));
    if (cluster)
      out.push(await slotsCheck(config, redis, timeoutMs).catch(unfinished('Redis Cluster slots')));
    return out;
  } finally {
    await closeRedis(redis, 1000);
  }
}
