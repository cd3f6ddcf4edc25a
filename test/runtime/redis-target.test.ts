import { describe, expect, it } from 'vitest';
import { parseClusterNodes } from '../../src/config/redis-nodes.ts';
import {
  coordinationKey,
  keyPattern,
  queuePrefix,
  redisLabel,
  redisVariable,
} from '../../src/runtime/redis.ts';

describe('REDIS_CLUSTER_NODES', () => {
  it('reads host:port entries, URLs, IPv6 and a default port', () => {
    expect(parseClusterNodes(' 10.0.0.1:7000, redis://10.0.0.2 ,[::1]:7002')).toEqual({
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: '10.0.0.2', port: 6379 },
        { host: '::1', port: 7002 },
      ],
      tls: false,
    });
  });

  it('takes user, password and TLS from the entry that has them, for every node', () => {
    const seeds = parseClusterNodes('rediss://app:p%40ss@cfg.example:6379,rediss://b.example:6380');
    expect(seeds).toEqual({
      nodes: [
        { host: 'cfg.example', port: 6379 },
        { host: 'b.example', port: 6380 },
      ],
      username: 'app',
      password: 'p@ss',
      tls: true,
    });
  });

  it('refuses what is not a seed list, naming the entry and never its password', () => {
    expect(() => parseClusterNodes(' , ')).toThrow(/at least one host:port/);
    expect(() => parseClusterNodes('a:1,b:99999')).toThrow(/entry 2 \(b:99999\) is not host:port/);
    expect(() => parseClusterNodes('http://a:1')).toThrow(/must start with redis:\/\/ or rediss:\/\//);
    let message = '';
    try {
      parseClusterNodes('redis://:topsecret@a:1/3');
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/names a database/);
    expect(message).not.toContain('topsecret');
  });

  it('is named in messages instead of REDIS_URL when set, without passwords', () => {
    const single = { REDIS_URL: 'redis://:pw-1@127.0.0.1:6379' };
    expect(redisVariable(single)).toBe('REDIS_URL');
    expect(redisLabel(single)).toBe('Redis at redis://:***@127.0.0.1:6379 (REDIS_URL)');
    const cluster = { ...single, REDIS_CLUSTER_NODES: 'rediss://:pw-2@a.example:7000,b.example:7001' };
    expect(redisVariable(cluster)).toBe('REDIS_CLUSTER_NODES');
    expect(redisLabel(cluster)).toBe('Redis Cluster at a.example:7000,b.example:7001 (REDIS_CLUSTER_NODES)');
  });
});

describe('key names', () => {
  it('give each queue a hash tag of its own and the coordination keys a shared one', () => {
    expect(queuePrefix('daybook', 'enterprise')).toBe('{daybook:enterprise}');
    expect(coordinationKey('daybook', 'cron', 'enterprise:2026-11-24')).toBe(
      '{daybook:coord}:cron:enterprise:2026-11-24',
    );
    // The pattern finds both kinds, and nothing of another prefix.
    const re = new RegExp(`^${keyPattern('daybook').replace(/[{}]/g, '\\$&').replace('*', '.*')}$`);
    expect(re.test('{daybook:enterprise}:enterprise:wait')).toBe(true);
    expect(re.test('{daybook:coord}:resume:2026-11-24')).toBe(true);
    expect(re.test('{daybook-2:enterprise}:enterprise:wait')).toBe(false);
  });
});
