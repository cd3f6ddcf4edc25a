/**
 * With DAYBOOK_EXPORT_DIR set, the job that completes a cycle writes the package, so a nightly load
 * needs no other orchestrator; `daybook status` shows it.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../src/sim/server.ts';
import { runDaybook } from '../support/cli.ts';
import { type CliSim, cliAgainstSim } from '../support/cli-sim.ts';
import type { TestDatabase } from '../support/db.ts';
import { runCyclesInline, watchChanging } from '../support/inline.ts';
import { UNTHROTTLED } from '../support/sim.ts';

const CYCLES = ['2026-11-18', '2026-11-19'];

describe('the export after each cycle', { timeout: 180_000 }, () => {
  let t: TestDatabase;
  let sim: RunningSimulator;
  let dbSim: CliSim;
  let dir: string;
  const packagesIn = () =>
    readdirSync(dir)
      .filter((n) => n.startsWith('load_id='))
      .sort();

  beforeAll(async () => {
    dbSim = await cliAgainstSim({ enterprises: 300, rateLimits: UNTHROTTLED });
    ({ t, sim } = dbSim);
    dir = join(mkdtempSync(join(tmpdir(), 'daybook-scheduled-')), 'export');
    await watchChanging(t, sim, CYCLES, 5);
  });

  afterAll(async () => {
    await dbSim?.close();
    if (dir) rmSync(join(dir, '..'), { recursive: true, force: true });
  });

  it('a completed cycle writes one package, in the configured format, with nothing else to run', async () => {
    const env = { DAYBOOK_EXPORT_DIR: dir, DAYBOOK_EXPORT_FORMAT: 'ndjson' };
    await runCyclesInline(t, sim, [CYCLES[0] as string], () => [], env);
    expect(packagesIn()).toEqual(['load_id=0000000001']);
    const first = JSON.parse(readFileSync(join(dir, 'load_id=0000000001', 'manifest.json'), 'utf8'));
    expect(first.kind).toBe('full');
    expect(first.format).toBe('ndjson');
    const [settled] = await t.sql<
      { n: number }[]
    >`select count(*)::int as n from cycle_fetches where cycle = ${CYCLES[0] as string} and status = 'succeeded'`;
    expect(first.tables.credits.rows).toBe(settled?.n);
    // The package carries the cycle's own completion event.
    const events = readFileSync(join(dir, 'load_id=0000000001', 'events.ndjson'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(events.filter((e) => e.type === 'cycle.completed').map((e) => e.cycle)).toEqual([CYCLES[0]]);

    await runCyclesInline(t, sim, [CYCLES[1] as string], () => [], env);
    expect(packagesIn()).toEqual(['load_id=0000000001', 'load_id=0000000002']);
    const second = JSON.parse(readFileSync(join(dir, 'load_id=0000000002', 'manifest.json'), 'utf8'));
    expect(second.kind).toBe('incremental');
    expect(second.tables.enterprise_changes.rows).toBeGreaterThan(0);
    expect(existsSync(join(dir, 'load_id=0000000003'))).toBe(false);
  });

  it('daybook status names the last package of the folder, as text and as JSON', async () => {
    const env = { DATABASE_URL: t.url, DAYBOOK_EXPORT_DIR: dir };
    const text = await runDaybook(['status', '--cycle', CYCLES[1] as string, '--no-queues'], env);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/Export: load 0000000002 \(incremental, NDJSON, /);
    const json = await runDaybook(['status', '--cycle', CYCLES[1] as string, '--no-queues', '--json'], env);
    const report = JSON.parse(json.stdout);
    expect(report.exports).toEqual([
      expect.objectContaining({ destination: dir, load_id: '0000000002', kind: 'incremental' }),
    ]);
  });
});
