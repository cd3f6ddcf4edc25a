/**
 * daybook on a Redis Cluster. The test starts a real cluster of three masters from Debian's
 * redis-server on free loopback ports, and runs a cycle on it with two `daybook worker` processes,
 * as a large deployment would (REDIS_CLUSTER_NODES).
 *
 * What it shows: every key of a queue hashes to one slot (BullMQ's scripts touch many keys of a
 * queue at once, which a cluster allows only within a slot) and the three queues to three slots;
 * the cycle completes with the guarantees it has on one Redis (every entry done, nothing bought
 * twice, the ledger equal to the billing); `daybook enqueue --cycle` (its coordination key) and
 * `daybook status` (the queue counts) work on the cluster too.
 */
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queuePrefix } from '../../src/runtime/redis.ts';
import { runDaybook } from '../support/cli.ts';
import { ensureDebianTool } from '../support/debian.ts';
import {
  expectLedgerMatchesBilling,
  type FaultCycle,
  figures,
  settled,
  startFaultCycle,
  statuses,
} from './support/cycle.ts';
import {
  type RedisCluster,
  spawnWorker,
  startRedisCluster,
  type WorkerProcess,
  waitFor,
} from './support/processes.ts';

const ENTRIES = 120;
const QUEUES = ['plan', 'enterprise', 'products'] as const;

/** Every key on every master, with the slot it hashes to. */
function keysBySlot(cluster: RedisCluster, pattern: string): { key: string; slot: number; port: number }[] {
  const out: { key: string; slot: number; port: number }[] = [];
  for (const n of cluster.nodes) {
    const scan = spawnSync('redis-cli', ['-p', String(n.port), '--scan', '--pattern', pattern], {
      encoding: 'utf8',
    });
    for (const key of scan.stdout.split('\n').filter((k) => k !== '')) {
      const slot = spawnSync('redis-cli', ['-p', String(n.port), 'cluster', 'keyslot', key], {
        encoding: 'utf8',
      });
      out.push({ key, slot: Number(slot.stdout.trim()), port: n.port });
    }
  }
  return out;
}

// Minutes on a busy machine (two worker processes and two daybook commands start, 120 entries go
// through): the timeout is a hang guard; every wait inside is for a state.
describe('a Redis Cluster of three masters', { timeout: 600_000 }, () => {
  let cluster: RedisCluster | undefined;
  let cycle: FaultCycle | undefined;
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    ensureDebianTool('/usr/bin/redis-server', 'redis-server');
    ensureDebianTool('/usr/bin/redis-cli', 'redis-tools');
    cluster = await startRedisCluster(3);
  });
  afterAll(async () => {
    for (const w of workers.splice(0)) await w.stop('SIGKILL');
    await cycle?.close();
    await cluster?.stop();
  });

  it('runs a two-worker cycle with the guarantees of one Redis, each queue in a slot of its own', async () => {
    const seeds = (cluster as RedisCluster).seeds;
    cycle = await startFaultCycle({
      entries: ENTRIES,
      clusterNodes: seeds,
      // A Redis URL that answers nothing: the cluster must be what is used.
      redisUrl: 'redis://127.0.0.1:1',
      env: { DAYBOOK_ENTERPRISE_RATE: '3000' },
    });
    const c = cycle;
    for (let i = 0; i < 2; i++) workers.push(spawnWorker(c.env()));
    await Promise.all(workers.map((w) => w.started));
    await c.enqueuePlan();
    await waitFor('the cycle', () => settled(c.db.sql, c.cycle, ENTRIES), 180_000);

    // The same guarantees as on one Redis.
    expect(await statuses(c.db.sql, c.cycle)).toEqual({ succeeded: ENTRIES });
    expect(c.sim.sim.counters.billedQueries).toBe(ENTRIES);
    expect(Math.max(...Object.values(c.sim.sim.counters.billedByPid))).toBe(1);
    await expectLedgerMatchesBilling(c.db.sql, c.cycle, c.sim);
    const done = workers.map((w) => w.lines.filter((l) => l.includes('"msg":"enterprise succeeded"')).length);
    expect(
      done.every((n) => n > 0),
      `each worker did some of the cycle: ${done.join(', ')}`,
    ).toBe(true);
    for (const w of workers) expect(w.lines.filter((l) => /CROSSSLOT|MOVED|ASK /.test(l))).toEqual([]);

    // The hash tags: every key of a queue in one slot, the queues in three slots.
    const keys = keysBySlot(cluster as RedisCluster, `{${c.prefix}:*`);
    const slots = new Map<string, Set<number>>();
    for (const q of QUEUES) {
      const mine = keys.filter((k) => k.key.startsWith(`${queuePrefix(c.prefix, q)}:`));
      slots.set(q, new Set(mine.map((k) => k.slot)));
    }
    expect(slots.get('enterprise')?.size, 'the enterprise queue has keys, all in one slot').toBe(1);
    expect(slots.get('plan')?.size, 'the plan queue has keys, all in one slot').toBe(1);
    const used = new Set(QUEUES.flatMap((q) => [...(slots.get(q) ?? [])]));
    expect(used.size).toBe([...slots.values()].filter((s) => s.size > 0).length);

    // One-shot commands on the cluster: a re-plan (its round key) buys nothing again; status
    // reads the queue counts from it.
    const again = await runDaybook(['enqueue', '--cycle', c.cycle], c.env());
    expect(again.code, again.stderr).toBe(0);
    const status = await runDaybook(['status', '--json', '--cycle', c.cycle], c.env());
    expect(status.code, status.stderr).toBe(0);
    const report = JSON.parse(status.stdout) as { queues: unknown; queuesError?: unknown };
    expect(report.queues, status.stdout).not.toBeNull();
    // Whatever the re-plan put on the queues was there when enqueue returned: once no job of
    // the plan and enterprise queues is waiting, running or delayed, it has all run (on a busy
    // machine, a fixed pause might have ended before it started).
    const busy = async () => {
      let n = 0;
      for (const q of [c.queues.plan, c.queues.enterprise]) {
        const counts = await q.getJobCounts(
          'waiting',
          'active',
          'delayed',
          'prioritized',
          'waiting-children',
        );
        n += Object.values(counts).reduce((a, b) => a + b, 0);
      }
      return n;
    };
    await waitFor('the re-plan to run', async () => (await busy()) === 0, 60_000);
    expect(c.sim.sim.counters.billedQueries).toBe(ENTRIES);

    const masters = new Set(keys.map((k) => k.port));
    figures('redis cluster (3 masters, 2 workers)', {
      entries: ENTRIES,
      'done by each worker': done.join(' + '),
      'queue slots': QUEUES.map((q) => `${q} ${[...(slots.get(q) ?? [])].join('/') || '-'}`).join(', '),
      'masters holding keys': masters.size,
      'extra billed queries': c.sim.sim.counters.billedQueries - ENTRIES,
    });
  });
});
