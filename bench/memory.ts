/**
 * Memory: the peak resident set (VmHWM in /proc/<pid>/status) of one `daybook worker` process
 * while it plans and refreshes a cycle of 10,000 watch entries. The rate limit is set high so
 * the worker runs as fast as it can, which is when it holds the most at once.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startBenchPipeline } from './pipeline.ts';
import { pollUntil, round, since } from './support.ts';

export interface MemoryResult {
  entries: number;
  peakRssMiB: number;
  /** VmRSS once the worker has started, before any job. */
  idleRssMiB: number;
  /** The largest VmRSS seen by sampling every 200 ms (a cross-check of VmHWM). */
  sampledMaxRssMiB: number;
  rssAtEndMiB: number;
  wallSeconds: number;
  jobsPerSecond: number;
  target: string;
  met: boolean;
}

function statusKiB(pid: number, field: 'VmHWM' | 'VmRSS'): number | null {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

export async function benchMemory(entries = 10_000): Promise<MemoryResult> {
  const p = await startBenchPipeline({
    part: 'memory',
    entries,
    simRate: 1_000_000,
    daybookRate: 100_000,
  });
  try {
    const w = p.spawnWorker('w1');
    await pollUntil(
      async () => {
        try {
          return readFileSync(join(p.logDir, 'w1.log'), 'utf8').includes('"worker started"');
        } catch {
          return false;
        }
      },
      'the worker starting',
      60_000,
      50,
    );
    const idle = statusKiB(w.pid, 'VmRSS') ?? 0;
    let sampled = 0;
    const timer = setInterval(() => {
      sampled = Math.max(sampled, statusKiB(w.pid, 'VmRSS') ?? 0);
    }, 200);
    const t = performance.now();
    try {
      await p.enqueuePlan();
      await p.untilSettled(10 * 60_000);
    } finally {
      clearInterval(timer);
    }
    const wallSeconds = round(since(t) / 1000, 1);
    // Read before the process ends: /proc/<pid> goes with it.
    const peak = statusKiB(w.pid, 'VmHWM');
    const end = statusKiB(w.pid, 'VmRSS');
    if (peak === null)
      throw new Error(`could not read /proc/${w.pid}/status (not Linux, or the worker died)`);
    const peakRssMiB = round(peak / 1024, 1);
    return {
      entries,
      peakRssMiB,
      idleRssMiB: round(idle / 1024, 1),
      sampledMaxRssMiB: round(sampled / 1024, 1),
      rssAtEndMiB: round((end ?? 0) / 1024, 1),
      wallSeconds,
      jobsPerSecond: round(entries / wallSeconds, 1),
      target: '< 200 MiB',
      met: peakRssMiB < 200,
    };
  } finally {
    await p.close();
  }
}
