/**
 * `daybook products get` shows the products it pulled, and the product day is the US-Pacific one: a
 * date after today there is refused, and an empty list of a day not over yet is not taken as landed
 * by a backfill. daybook's clock is placed with DAYBOOK_CLOCK, the upstream's with the simulator's
 * clock.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../src/sim/server.ts';
import { runDaybook } from '../support/cli.ts';
import { type CliSim, cliAgainstSim } from '../support/cli-sim.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';
import { TEST_KEY } from '../support/sim.ts';

const STACK = /\n\s+at .+:\d+:\d+/;

describe('daybook products get and backfill on the US-Pacific product day', { timeout: 120_000 }, () => {
  let c: CliSim;
  let t: TestDatabase;
  let sim: RunningSimulator;
  let env: Record<string, string>;
  beforeAll(async () => {
    c = await cliAgainstSim();
    ({ t, sim, env } = c);
  });
  afterAll(() => c.close());

  /** daybook and the upstream both at `daybook` and `upstream` (ISO times). */
  const at = (daybook: string, upstream = daybook) => {
    sim.sim.setClock(new Date(upstream));
    return { ...env, DAYBOOK_CLOCK: daybook };
  };
  const requests = () => (sim.sim.state().keys as { requests: number }[]).reduce((n, k) => n + k.requests, 0);
  const rawCount = async () =>
    (await t.sql<{ n: number }[]>`select count(*)::int as n from raw_responses`)[0]?.n ?? -1;
  const backfill = async (clock: Record<string, string>, from: string, to: string) => {
    const r = await runDaybook(['products', 'backfill', '--from', from, '--to', to, '--json'], clock);
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as { requested: number; skipped: number; pulled: number; failed: string[] };
  };

  it('prints the products of the list as a table, with the counts as a summary line', async () => {
    // 2026-11-20 04:00 UTC is 2026-11-19 20:00 in US Pacific time.
    const r = await runDaybook(
      ['products', 'get', '--date', '2026-11-18', '--limit', '5'],
      at('2026-11-20T04:00:00Z'),
    );
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^position\s+name\s+votes\s+comments\s+topics\s+product_id$/);
    expect(lines[1]).toMatch(/^-+(\s+-+){5}$/);
    expect(lines.at(-1)).toMatch(
      /^list 2026-11-18: succeeded \{"products":5,"newVersions":5,"snapshots":5,"newComments":\d+\}$/,
    );
    // The rows are the normalized ones of this pull, in list order.
    const rows = await t.sql<{ position: number; name: string; votes_count: number; product_id: string }[]>`
      select position, name, votes_count, product_id from analytics.product_trending
      where list_date = '2026-11-18' and is_latest_pull order by position`;
    expect(rows).toHaveLength(5);
    const body = lines.slice(2, -1);
    expect(body).toHaveLength(5);
    for (const [i, row] of rows.entries()) {
      const name = row.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      expect(body[i]).toMatch(
        new RegExp(`^${row.position}\\s+${name}\\s+${row.votes_count}\\s+\\d+\\s+.*${row.product_id}$`),
      );
    }
  });

  it('--json prints the products for scripts, with the outcome and the counts', async () => {
    const r = await runDaybook(
      ['products', 'get', '--date', '2026-11-17', '--limit', '3', '--json'],
      at('2026-11-20T04:00:00Z'),
    );
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as {
      outcome: string;
      counts: Record<string, number>;
      products: {
        position: number;
        product_id: string;
        name: string;
        votes_count: number;
        topics: string[];
      }[];
    };
    expect(out.outcome).toBe('succeeded');
    expect(out.counts.products).toBe(3);
    expect(out.products.map((p) => p.position)).toEqual([1, 2, 3]);
    const current = await t.sql<{ product_id: string; name: string; topics: string[] }[]>`
      select c.product_id, c.name, c.topics from analytics.product_trending t
      join analytics.product_current c using (product_id)
      where t.list_date = '2026-11-17' and t.is_latest_pull order by t.position`;
    expect(out.products.map((p) => ({ product_id: p.product_id, name: p.name, topics: p.topics }))).toEqual(
      current,
    );
    for (const p of out.products) expect(p.votes_count).toBeGreaterThan(0);
  });

  it('refuses a date after today in US Pacific time, naming both, before anything is sent or written', async () => {
    const before = { raw: await rawCount(), requests: requests() };
    // 2026-11-20T07:59:59Z is still 2026-11-19 in US Pacific time (PST, UTC-8).
    const clock = at('2026-11-20T07:59:59Z');
    const get = await runDaybook(['products', 'get', '--date', '2026-11-20'], clock);
    expect(get.code, get.stdout).toBe(2);
    expect(get.stderr).toMatch(/--date 2026-11-20 is after today's date in US Pacific time, 2026-11-19/);
    expect(get.stderr).not.toMatch(STACK);
    const fill = await runDaybook(
      ['products', 'backfill', '--from', '2026-11-18', '--to', '2026-11-21'],
      clock,
    );
    expect(fill.code, fill.stdout).toBe(2);
    expect(fill.stderr).toMatch(/--to 2026-11-21 is after today's date in US Pacific time, 2026-11-19/);
    expect(fill.stderr).not.toMatch(STACK);
    expect({ raw: await rawCount(), requests: requests() }).toEqual(before);
    // A second later it is 2026-11-20 there: the date is today's, and taken.
    const today = await runDaybook(
      ['products', 'get', '--date', '2026-11-20', '--limit', '2'],
      at('2026-11-20T08:00:00Z', '2026-11-20T08:30:00Z'),
    );
    expect(today.code, today.stderr).toBe(0);
    expect(today.stdout).toMatch(/list 2026-11-20: succeeded \{"products":2,/);
  });

  it('an empty list of a day not over in US Pacific time is not landed: backfills pull it again until it is over', async () => {
    // daybook is at 2026-11-22 01:00 Pacific; the upstream has not begun that day yet (its list is empty).
    const early = at('2026-11-22T09:00:00Z', '2026-11-22T07:50:00Z');
    const get = await runDaybook(['products', 'get', '--date', '2026-11-22'], early);
    expect(get.code, get.stderr).toBe(0);
    expect(get.stdout).toContain('list 2026-11-22: succeeded {"products":0,');
    expect(get.stdout).toMatch(/note: the list is empty and 2026-11-22 is not over yet in US Pacific time/);
    expect(await backfill(early, '2026-11-21', '2026-11-22')).toEqual({
      requested: 2,
      skipped: 0,
      pulled: 2,
      failed: [],
    });
    // 2026-11-21 is landed; 2026-11-22 was empty again, and is pulled again.
    expect(await backfill(early, '2026-11-21', '2026-11-22')).toEqual({
      requested: 2,
      skipped: 1,
      pulled: 1,
      failed: [],
    });
    // A day later, 2026-11-22 is over: its list is pulled, and now it counts.
    const later = at('2026-11-23T09:00:00Z');
    expect(await backfill(later, '2026-11-21', '2026-11-22')).toEqual({
      requested: 2,
      skipped: 1,
      pulled: 1,
      failed: [],
    });
    const [snap] = await t.sql<{ n: number }[]>`
      select count(*)::int as n from trending_snapshots where list_date = '2026-11-22'`;
    expect(snap?.n).toBeGreaterThan(0);
    expect(await backfill(later, '2026-11-21', '2026-11-22')).toMatchObject({ skipped: 2, pulled: 0 });
  });

  it('an empty list of a day that was over when it was answered counts as landed', async () => {
    // The simulator's world begins on 2026-01-01: the lists of the days before are empty, and final.
    const clock = at('2026-11-23T09:00:00Z');
    expect(await backfill(clock, '2025-12-30', '2025-12-31')).toMatchObject({ skipped: 0, pulled: 2 });
    expect(await backfill(clock, '2025-12-30', '2025-12-31')).toMatchObject({ skipped: 2, pulled: 0 });
  });

  it('a bad DAYBOOK_CLOCK is refused by name', async () => {
    const r = await runDaybook(['products', 'get', '--date', '2026-11-18'], {
      ...env,
      DAYBOOK_CLOCK: '2026-11-20',
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/DAYBOOK_CLOCK must be an ISO 8601 time with its offset/);
  });
});

describe('daybook products get prints upstream text inert on a terminal', { timeout: 60_000 }, () => {
  let t: TestDatabase;
  let upstream: Server;
  let url: string;
  const NAME = 'Evil\x1b[2J\x1b[1;1HName\u202Etxt.exe\r\nforged line';
  beforeAll(async () => {
    t = await freshDatabase();
    // An upstream of the test's own: a documented list whose one product has a hostile name.
    upstream = createServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          result: 'success',
          markdown: ['# x'],
          metadata: [
            {
              id: '0b7f3c2e-1d2a-4c55-9a10-3e6f7d8c9b01',
              product_id: '990001',
              name: NAME,
              tagline: 'ok',
              votes_count: 7,
              comments_count: 1,
              topics: ['Dev\x07Tools'],
            },
          ],
        }),
      );
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => upstream.close(() => resolve()));
    await t.drop();
  });

  it('escapes control characters in names and topics; --json keeps them exact', async () => {
    const env = {
      DATABASE_URL: t.url,
      DAYBOOK_API_BASE_URL: url,
      DAYBOOK_API_KEY: TEST_KEY,
      DAYBOOK_CLOCK: '2026-11-20T04:00:00Z',
      LOG_LEVEL: 'warn',
    };
    const r = await runDaybook(['products', 'get', '--date', '2026-11-18'], env);
    expect(r.code, r.stderr).toBe(0);
    const raw = [...r.stdout].filter((ch) => {
      const cp = ch.codePointAt(0) as number;
      return (cp < 0x20 && cp !== 0x0a) || (cp >= 0x7f && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e);
    });
    expect(raw).toEqual([]);
    expect(r.stdout).toContain('Evil\\u001b[2J\\u001b[1;1HName\\u202etxt.exe');
    expect(r.stdout).toContain('Dev\\u0007Tools');
    // Three lines of table (header, rule, one product) and the summary: nothing forged a line.
    expect(r.stdout.trimEnd().split('\n')).toHaveLength(4);
    const json = await runDaybook(['products', 'get', '--date', '2026-11-18', '--json'], env);
    expect(json.code, json.stderr).toBe(0);
    const out = JSON.parse(json.stdout) as { products: { name: string; topics: string[] }[] };
    expect(out.products.map((p) => p.name)).toEqual([NAME.trim()]);
  });
});
