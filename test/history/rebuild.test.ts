import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scheduledPulls } from '../../jobs/products.ts';
import { migrateDatabase } from '../../src/db/migrate.ts';
import { applyEnterprises } from '../../src/history/enterprise-store.ts';
import { ingestEnterpriseSuccess, ingestFailure } from '../../src/history/ingest.ts';
import { rebuild } from '../../src/history/rebuild.ts';
import { landingOfExchange, landRaw } from '../../src/landing/landing.ts';
import { normalizeEnterprise } from '../../src/normalize/enterprise.ts';
import { parseFaultSpec } from '../../src/sim/faults.ts';
import type { RunningSimulator } from '../../src/sim/server.ts';
import { addDays, pacificDate } from '../../src/time/cycles.ts';
import type { Exchange } from '../../src/upstream/client.ts';
import { NotFoundError } from '../../src/upstream/errors.ts';
import { EnterpriseSuccess } from '../../src/upstream/schemas.ts';
import { type CliSim, cliAgainstSim } from '../support/cli-sim.ts';
import type { TestDatabase } from '../support/db.ts';
import { runCyclesInline, watchChanging } from '../support/inline.ts';
import { UNTHROTTLED } from '../support/sim.ts';
import { REPLAYED_VIEWS, viewRows } from '../support/views.ts';

const CYCLES = ['2026-11-10', '2026-11-11', '2026-11-12'];

/** An enterprise answer as the upstream would send it, for `keyword`, about `record`. */
function answer(keyword: string, record: unknown): { data: EnterpriseSuccess; exchange: Exchange } {
  const body = {
    status: 'success',
    markdown: '# x',
    metadata: { usage: { credits: 3, remark: 'enterprise' }, content: record },
  };
  const bodyText = JSON.stringify(body);
  return {
    data: EnterpriseSuccess.parse(body),
    exchange: {
      operation: 'enterprise-search',
      params: { ent_name: keyword },
      httpStatus: 200,
      bodyText,
      bodyJson: JSON.parse(bodyText),
      durationMs: 5,
      fetchedAt: new Date(),
    },
  };
}

describe('rebuild from the raw landing', { timeout: 180_000 }, () => {
  let t: TestDatabase;
  let sim: RunningSimulator;
  let dbSim: CliSim;
  const events = async (kind: string) =>
    (
      await t.sql<
        { n: number }[]
      >`select count(*)::int as n from enterprise_observations where kind = ${kind}`
    )[0]?.n;

  beforeAll(async () => {
    dbSim = await cliAgainstSim({ enterprises: 400, rateLimits: UNTHROTTLED });
    ({ t, sim } = dbSim);
    await watchChanging(t, sim, CYCLES, 30);
    // Drift and faults on the way: answers that change shape, fail, break off and are retried.
    sim.sim.setFaults(parseFaultSpec('drift=0.3,500=0.05,truncated=0.03,html=0.03'));
    await runCyclesInline(t, sim, CYCLES, (now) => scheduledPulls(pacificDate(now), 2), {
      DAYBOOK_RETRY_BASE_MS: '10',
    });
    sim.sim.setFaults(parseFaultSpec(''));

    // What live ingestion meets besides: answers applied out of their landing order (two
    // workers at once), a keyword that comes to name another company, one that stops answering.
    const cycle = addDays(CYCLES[2] as string, 1);
    const [a, b, c] = await t.sql<{ keyword: string; pid: string }[]>`
      select keyword, pid from watchlist where pid is not null order by id limit 3`;
    if (!a || !b || !c) throw new Error('the cycles resolved too few keywords');
    const current = async (pid: string) =>
      (
        await t.sql<{ normalized: unknown }[]>`
        select b.body_json#>'{metadata,content}' as normalized from enterprise_versions v
        join raw_answers b on b.id = v.raw_response_id where v.pid = ${pid} and v.is_current`
      )[0]?.normalized as Record<string, unknown> | undefined;
    const recordA = (await current(a.pid)) ?? {};
    // Stale: two answers about A land in order, the later one is applied first.
    const older = answer(a.keyword, { ...recordA, OPLOC: '上海市黄浦区某路1号' });
    const newer = answer(a.keyword, { ...recordA, OPLOC: '上海市黄浦区某路2号' });
    const [l1] = await landRaw(t.sql, [landingOfExchange(older.exchange, null, cycle)]);
    const [l2] = await landRaw(t.sql, [landingOfExchange(newer.exchange, null, cycle)]);
    if (!l1 || !l2) throw new Error('landing failed');
    for (const [l, r] of [
      [l2, newer],
      [l1, older],
    ] as const) {
      await t.sql.begin((tx) =>
        applyEnterprises(tx, [
          {
            normalized: normalizeEnterprise(r.data.metadata.content),
            fetchedAt: l.landedAt,
            rawResponseId: l.id,
            cycle,
            keyword: a.keyword,
          },
        ]),
      );
    }
    // Re-resolved: B's keyword now answers with C's company.
    await ingestEnterpriseSuccess(t.sql, answer(b.keyword, (await current(c.pid)) ?? {}), b.keyword, {
      runId: null,
      cycle,
    });
    // Disappeared, then back: C's keyword answers not_found, then C again.
    const notFound = new NotFoundError(
      'enterprise-search (HTTP 404): not_found',
      { operation: 'enterprise-search', params: { ent_name: c.keyword } },
      {
        httpStatus: 404,
        bodyText: '{"status":"error","error":{"code":"not_found","message":"none"}}',
        durationMs: 3,
        fetchedAt: new Date(),
      },
    );
    await ingestFailure(t.sql, notFound, { runId: null, cycle });
    await ingestEnterpriseSuccess(t.sql, answer(c.keyword, (await current(c.pid)) ?? {}), c.keyword, {
      runId: null,
      cycle: addDays(cycle, 1),
    });
  });
  afterAll(async () => {
    await dbSim?.close();
  });

  const snapshot = () => viewRows(t.sql);

  it('a history with changes, drift, faults and every kind of event exists to rebuild', async () => {
    const [c] = await t.sql<{ n: number }[]>`select count(*)::int as n from enterprise_changes`;
    expect(c?.n).toBeGreaterThan(0);
    const [p] = await t.sql<{ n: number }[]>`select count(*)::int as n from trending_snapshots`;
    expect(p?.n).toBeGreaterThan(0);
    const [d] = await t.sql<{ n: number }[]>`select count(*)::int as n from format_drift`;
    expect(d?.n).toBeGreaterThan(0);
    const [f] = await t.sql<
      { n: number }[]
    >`select count(*)::int as n from raw_answers where outcome <> 'success'`;
    expect(f?.n).toBeGreaterThan(0);
    for (const kind of ['initial', 'stale_ignored', 'resolution_changed', 'disappeared', 'reappeared'])
      expect(await events(kind), kind).toBeGreaterThan(0);
  });

  it('equals the state before, view by view and row by row, events included', async () => {
    const before = await snapshot();
    const summary = await rebuild(t.sql, { batchSize: 50 });
    expect(summary.enterprises).toBeGreaterThan(0);
    expect(summary.staleKept).toBe(1);
    const after = await snapshot();
    for (const { view } of REPLAYED_VIEWS) {
      expect(after[view]?.length, view).toBe(before[view]?.length);
      expect(after[view], view).toEqual(before[view]);
    }
    // The answer live ingestion rejected as stale is still not applied.
    expect(await events('stale_ignored')).toBe(1);
    expect(await events('resolution_changed')).toBe(1);
  });

  it('a second rebuild changes nothing either', async () => {
    const before = await snapshot();
    await rebuild(t.sql);
    expect(await snapshot()).toEqual(before);
  });

  it('migrations applied twice change nothing', async () => {
    expect(await migrateDatabase(t.url)).toBe(0);
    expect(await migrateDatabase(t.url)).toBe(0);
  });
});
