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
  keyPattern,
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

/** At most this many keys are counted under the prefix (a SCAN, never KEYS). */
const MAX_COUNTED = 100_000;

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
  // A stream that failed to connect is already closed: ioredis would wait this long for it anyway.
  disconnectTimeout: 200,
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
  const answers = await Promise.all(
    nodes.map((n) =>
      within(n.info(), timeoutMs, 'INFO').then(
        (info) => ({ info, error: null }),
        (error: unknown) => ({ info: '', error }),
      ),
    ),
  );
  const silent = answers.flatMap((a, i) => (a.error ? [{ node: nodes[i] as Redis, error: a.error }] : []));
  if (silent.length > 0) {
    const [first] = silent;
    const name = `${first?.node.options.host}:${first?.node.options.port}`;
    return [
      fail(
        'Redis',
        `${silent.length} of ${nodes.length} masters ${silent.length === 1 ? 'does' : 'do'} not answer (${name}: ${inWords(first?.error)})`,
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

/** How many keys daybook keeps under its prefix now (queues and coordination), counted by SCAN. */
async function prefixCheck(config: Config, redis: RedisClient, timeoutMs: number): Promise<CheckResult> {
  const prefix = config.DAYBOOK_REDIS_PREFIX;
  const count = async () => {
    let n = 0;
    for (const node of masters(redis)) {
      let cursor = '0';
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', keyPattern(prefix), 'COUNT', 1000);
        cursor = next;
        n += keys.length;
      } while (cursor !== '0' && n < MAX_COUNTED);
    }
    return n;
  };
  const n = await within(count(), timeoutMs, 'counting the keys');
  const shape = `{${prefix}:<queue>}`;
  return pass(
    'Redis key prefix',
    n === 0
      ? `${prefix}: no keys under ${shape} yet`
      : `${prefix}: ${n >= MAX_COUNTED ? `more than ${MAX_COUNTED.toLocaleString('en-US')}` : n.toLocaleString('en-US')} keys under ${shape}`,
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
