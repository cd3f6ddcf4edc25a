/**
 * Command latency as a person meets it: `daybook status` (with and without the queue counts),
 * `watch list`, `changes` and `sql`, each a fresh process on a database with a 40-entry
 * watchlist, median of 5 runs. `status` once took 3.5–4 s while the others took 0.4 s: a 3 s
 * timer it never cleared kept the process alive after its answer. Target: `status`
 * within 1.5× of `watch list`, and under 1 s.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freshDatabase, REDIS_URL, round } from './support.ts';

const run = promisify(execFile);
const BIN = fileURLToPath(new URL('../bin/daybook.js', import.meta.url));

export interface CliResult {
  watchEntries: number;
  medianMs: Record<string, number>;
  /** Runs of each command (the median is kept); absent from results taken before it was recorded (5). */
  repeats?: number;
  target: string;
  met: boolean;
}

const COMMANDS: Record<string, string[]> = {
  status: ['status'],
  'status --no-queues': ['status', '--no-queues'],
  'watch list': ['watch', 'list'],
  changes: ['changes'],
  sql: ['sql', 'select count(*) from analytics.enterprise_current'],
};

export async function benchCli(entries = 40, repeats = 5): Promise<CliResult> {
  const db = await freshDatabase('cli');
  try {
    const rows = Array.from({ length: entries }, (_, i) => ({
      keyword: `示例企业${i}`,
      keyword_key: `示例企业${i}`,
    }));
    await db.sql`insert into watchlist ${db.sql(rows)}`;
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      CI: 'true',
      DATABASE_URL: db.url,
      REDIS_URL,
      DAYBOOK_REDIS_PREFIX: `bench-cli-${process.pid}`,
    };
    // The first run of the CLI builds its bundle: not a figure.
    await run(process.execPath, [BIN, 'status', '--no-queues'], { env });
    const medianMs: Record<string, number> = {};
    for (const [name, args] of Object.entries(COMMANDS)) {
      const times: number[] = [];
      for (let i = 0; i < repeats; i++) {
        const t = performance.now();
        await run(process.execPath, [BIN, ...args], { env });
        times.push(performance.now() - t);
      }
      times.sort((a, b) => a - b);
      medianMs[name] = round(times[Math.floor(times.length / 2)] as number, 0);
    }
    const status = medianMs.status as number;
    const list = medianMs['watch list'] as number;
    return {
      watchEntries: entries,
      medianMs,
      repeats,
      target: 'status < 1000 ms and < 1.5 × watch list',
      met: status < 1000 && status < 1.5 * list,
    };
  } finally {
    await db.drop();
  }
}
