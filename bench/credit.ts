/**
 * Credit efficiency: billed queries (the simulator's counter) ÷ distinct enterprises refreshed in
 * the cycle (daybook's credit ledger). The clean figures come from the rate runs (nothing goes
 * wrong there); this part runs a cycle in which one of two workers is killed with SIGKILL five
 * times, mid-cycle, and restarted each time. A kill between the upstream billing a call and
 * daybook landing its answer is the only way to buy an enterprise twice.
 */
import { DEFAULT_LOCK_MS } from '../src/runtime/worker.ts';
import { startBenchPipeline } from './pipeline.ts';
import { pollUntil, round, since } from './support.ts';

export interface CreditResult {
  entries: number;
  kills: number;
  billedQueries: number;
  distinctEnterprises: number;
  efficiency: number;
  extraBilled: number;
  extraPerKill: number;
  /** Enterprises the simulator billed more than once. */
  pidsBilledTwice: number;
  wallSeconds: number;
  target: string;
  met: boolean;
  note: string;
}

export async function benchCredit(
  entries = 1000,
  kills = 5,
  limit = 600,
  lockMs?: number,
): Promise<CreditResult> {
  const p = await startBenchPipeline({
    part: 'credit',
    entries,
    simRate: limit,
    daybookRate: limit,
    ...(lockMs === undefined ? {} : { lockMs }),
  });
  try {
    const steady = p.spawnWorker('w1');
    let victim = p.spawnWorker('victim-0');
    const t = performance.now();
    await p.enqueuePlan();
    const billed = () => p.sim.sim.counters.billedQueries;
    // The kills are spread over the first part of the cycle, each while calls are flowing.
    for (let k = 1; k <= kills; k++) {
      const at = billed() + Math.floor(entries / (kills + 3));
      await pollUntil(async () => billed() >= at, `${at} billed calls before kill ${k}`, 120_000, 20);
      victim.child.kill('SIGKILL');
      await victim.exited;
      victim = p.spawnWorker(`victim-${k}`);
    }
    // A killed worker's jobs come back once their lock expires and a worker finds them stalled.
    await p.untilSettled(10 * 60_000);
    const wallSeconds = round(since(t) / 1000, 1);
    void steady;
    const credit = await p.creditFigures();
    const extra = credit.billedQueries - credit.distinctEnterprises;
    const twice = Object.values(p.sim.sim.counters.billedByPid).filter((n) => n > 1).length;
    return {
      entries,
      kills,
      billedQueries: credit.billedQueries,
      distinctEnterprises: credit.distinctEnterprises,
      efficiency: round(credit.billedQueries / credit.distinctEnterprises, 3),
      extraBilled: extra,
      extraPerKill: round(extra / kills, 2),
      pidsBilledTwice: twice,
      wallSeconds,
      target: '1.00 clean; <= 1 extra billed query per kill',
      met: extra <= kills,
      note: `2 worker processes, one killed with SIGKILL ${kills} times and restarted; L = ${limit}/min. The wall time is mostly the wait for the killed worker's job locks to expire (DAYBOOK_JOB_LOCK_MS, ${(lockMs ?? DEFAULT_LOCK_MS) / 1000} s)`,
    };
  } finally {
    await p.close();
  }
}
