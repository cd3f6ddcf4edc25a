/**
 * `npm run bench [-- part...]`: runs the benchmarks (all of them, or the parts named),
 * prints a table and writes bench/results.json. A part run alone replaces only its own entry in
 * results.json, so the file always holds the latest figure of every part.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { benchCli } from './cli.ts';
import { benchCredit } from './credit.ts';
import { benchDelivery } from './delivery.ts';
import { benchDiff } from './diff.ts';
import { benchExport } from './export.ts';
import { benchLoad } from './load.ts';
import { benchMemory } from './memory.ts';
import { benchPlanner } from './planner.ts';
import { benchRate } from './rate.ts';
import { benchRefresh } from './refresh.ts';
import { benchSoak } from './soak.ts';
import { describeMachine, round } from './support.ts';
import { renderTable } from './table.ts';

const PARTS = {
  planner: () => benchPlanner(),
  load: () => benchLoad(),
  memory: () => benchMemory(),
  rate: () => benchRate(),
  credit: () => benchCredit(),
  diff: () => benchDiff(),
  cli: () => benchCli(),
  delivery: () => benchDelivery(),
  export: () => benchExport(),
  refresh: () => benchRefresh(),
  soak: () => benchSoak(),
} as const;
type Part = keyof typeof PARTS;

const RESULTS = fileURLToPath(new URL('./results.json', import.meta.url));

function partsFrom(argv: string[]): Part[] {
  const names = argv.filter((a) => a !== '--');
  if (names.length === 0) return Object.keys(PARTS) as Part[];
  const unknown = names.filter((n) => !(n in PARTS));
  if (unknown.length > 0) {
    process.stderr.write(
      `bench: unknown part ${unknown.map((u) => `"${u}"`).join(', ')}; the parts are: ${Object.keys(PARTS).join(', ')}\n`,
    );
    process.exit(2);
  }
  return [...new Set(names)] as Part[];
}

async function main(): Promise<void> {
  const parts = partsFrom(process.argv.slice(2));
  const started = performance.now();
  const previous: Record<string, unknown> = existsSync(RESULTS)
    ? (JSON.parse(readFileSync(RESULTS, 'utf8')) as Record<string, unknown>)
    : {};
  const results: Record<string, unknown> = { ...((previous.parts as Record<string, unknown>) ?? {}) };
  const failures: string[] = [];
  for (const part of parts) {
    process.stderr.write(`bench: ${part} …\n`);
    const t = performance.now();
    try {
      const result = await PARTS[part]();
      results[part] = { ...result, seconds: round((performance.now() - t) / 1000, 1), takenAt: new Date() };
    } catch (err) {
      failures.push(part);
      process.stderr.write(`bench: ${part} failed: ${err instanceof Error ? err.message : String(err)}\n`);
      results[part] = { error: err instanceof Error ? err.message : String(err), takenAt: new Date() };
    }
    process.stderr.write(`bench: ${part} done in ${round((performance.now() - t) / 1000, 1)} s\n`);
  }
  const document = {
    command: `npm run bench${parts.length === Object.keys(PARTS).length ? '' : ` -- ${parts.join(' ')}`}`,
    machine: await describeMachine(),
    lastRunSeconds: round((performance.now() - started) / 1000, 1),
    parts: results,
  };
  writeFileSync(`${RESULTS}.tmp`, `${JSON.stringify(document, null, 2)}\n`);
  renameSync(`${RESULTS}.tmp`, RESULTS);
  process.stdout.write(`${renderTable(document)}\n`);
  process.stdout.write(`written to bench/results.json (this run: ${document.lastRunSeconds} s)\n`);
  if (failures.length > 0) process.exitCode = 1;
}

await main();
