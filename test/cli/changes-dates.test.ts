/**
 * `daybook changes --since/--until` select by the cycle they show (not by when daybook found the
 * change), and `daybook sql` prints a date as YYYY-MM-DD in every format.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDaybook } from '../support/cli.ts';
import type { TestDatabase } from '../support/db.ts';
import { type History, historyOf } from '../support/inline.ts';

const CYCLES = ['2026-11-10', '2026-11-11', '2026-11-12'];

describe('dates in the change log and in daybook sql', { timeout: 120_000 }, () => {
  let h: History;
  let t: TestDatabase;
  let env: Record<string, string>;
  beforeAll(async () => {
    h = await historyOf(CYCLES, 0);
    t = h.t;
    env = { DATABASE_URL: t.url, LOG_LEVEL: 'silent' };
  });
  afterAll(() => h.close());

  const cyclesOf = async (args: string[]) => {
    const r = await runDaybook(['changes', '--json', ...args], env);
    expect(r.code, r.stderr).toBe(0);
    return r.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { cycle: string }).cycle);
  };

  it('--since and --until select by the cycle shown, whatever the clock said when it was found', async () => {
    const all = await cyclesOf([]);
    expect(new Set(all)).toEqual(new Set(CYCLES.slice(1)));
    const late = await cyclesOf(['--since', '2026-11-12']);
    expect(late.length).toBeGreaterThan(0);
    expect(late.every((c) => c === '2026-11-12')).toBe(true);
    const early = await cyclesOf(['--until', '2026-11-11']);
    expect(early.length).toBeGreaterThan(0);
    expect(early.every((c) => c === '2026-11-11')).toBe(true);
    expect(late.length + early.length).toBe(all.length);
    // The simulated cycles lie in the past of the real clock that found them.
    expect(await cyclesOf(['--detected-since', '2026-11-13'])).toHaveLength(all.length);
    const bad = await runDaybook(['changes', '--since', '2026-11-12', '--until', '2026-11-11'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--since 2026-11-12 is after --until 2026-11-11/);
  });

  it('daybook sql prints a date as YYYY-MM-DD as a table, as CSV and as JSON; a timestamp with its offset', async () => {
    const q = "select cycle, first_billed_at from analytics.credit_usage where cycle = '2026-11-11'";
    const table = await runDaybook(['sql', q], env);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/^2026-11-11 {2,}\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/m);
    const csv = await runDaybook(['sql', '--csv', q], env);
    expect(csv.stdout.split('\n')[1]).toMatch(/^2026-11-11,\d{4}-\d{2}-\d{2}T[\d:.]+Z$/);
    const json = await runDaybook(['sql', '--json', q], env);
    expect(JSON.parse(json.stdout)[0].cycle).toBe('2026-11-11');
  });
});
