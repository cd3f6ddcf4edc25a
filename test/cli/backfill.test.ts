import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDaybook } from '../support/cli.ts';
import { type CliSim, cliAgainstSim } from '../support/cli-sim.ts';
import type { TestDatabase } from '../support/db.ts';

describe('daybook products backfill', { timeout: 120_000 }, () => {
  let c: CliSim;
  let t: TestDatabase;
  let env: Record<string, string>;
  beforeAll(async () => {
    c = await cliAgainstSim();
    ({ t, env } = c);
  });
  afterAll(() => c.close());

  const snapshots = async () => {
    const [r] = await t.sql<{ n: number; days: number }[]>`
      select count(*)::int as n, count(distinct list_date)::int as days from trending_snapshots`;
    return r;
  };

  it('pulls every date of the range, with plain progress lines when not on a terminal', async () => {
    const r = await runDaybook(
      ['products', 'backfill', '--from', '2026-11-01', '--to', '2026-11-05', '--limit', '5'],
      env,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('5 pulled, 0 already landed, 0 failed');
    expect(r.stderr).toContain('backfill: 5/5 2026-11-05');
    expect(await snapshots()).toEqual({ n: 25, days: 5 });
  });

  it('is resumable: dates already landed are skipped, unless --force', async () => {
    const again = await runDaybook(
      ['products', 'backfill', '--from', '2026-11-01', '--to', '2026-11-07', '--limit', '5', '--json'],
      env,
    );
    expect(JSON.parse(again.stdout)).toEqual({ requested: 7, skipped: 5, pulled: 2, failed: [] });
    const forced = await runDaybook(
      [
        'products',
        'backfill',
        '--from',
        '2026-11-07',
        '--to',
        '2026-11-07',
        '--limit',
        '5',
        '--force',
        '--json',
      ],
      env,
    );
    expect(JSON.parse(forced.stdout)).toMatchObject({ pulled: 1, skipped: 0 });
    expect(await snapshots()).toEqual({ n: 40, days: 7 });
  });
});
