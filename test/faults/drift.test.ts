/**
 * Format drift. A clean cycle first (a documented upstream shows no drift), then a cycle in which
 * the simulator drifts nine answers in ten: extra fields, missing optional fields, type variants
 * (REGCAP and votes_count as strings, dates without Z or milliseconds, OPTO as text). Every answer
 * is landed raw, the known fields are normalized from whatever shape they came in, the unknown ones
 * are kept in `extra`, and daybook reports the drift it saw per operation and field, with counts
 * and first and last seen; a rebuild re-derives the same report.
 */
import type postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordDrift } from '../../src/history/drift-store.ts';
import { rebuild } from '../../src/history/rebuild.ts';
import { DOCUMENTED_ENTERPRISE_FIELDS } from '../../src/normalize/enterprise.ts';
import { DOCUMENTED_PRODUCT_FIELDS } from '../../src/normalize/product.ts';
import { parseFaultSpec } from '../../src/sim/faults.ts';
import type { RunningSimulator } from '../../src/sim/server.ts';
import { addDays, cycleOf, pacificDate } from '../../src/time/cycles.ts';
import { runDaybook } from '../support/cli.ts';
import { startPipeline, type TestPipeline, until } from '../support/pipeline.ts';
import { startTestSim, UNTHROTTLED } from '../support/sim.ts';

const ENTRIES = 80;

describe('format drift', { timeout: 240_000 }, () => {
  let sim: RunningSimulator;
  let p: TestPipeline;
  const cycles: string[] = [];
  const dates: string[] = [];

  const runCycle = async (pulls: { date: string; pull: string }[]) => {
    const cycle = cycleOf(sim.sim.now());
    cycles.push(cycle);
    const w = p.startWorkers(4);
    const before = (await p.queues.products.getJobCounts('completed')).completed ?? 0;
    await p.queues.addPlan({ cycle });
    for (const pull of pulls) await p.queues.addProducts({ ...pull, limit: 20, cycle });
    await until(
      [w],
      async () => {
        const [f] = await p.db.sql<{ open: number; all: number }[]>`
          select count(*) filter (where status in ('planned', 'fetching', 'retrying'))::int as open,
                 count(*)::int as all
          from cycle_fetches where cycle = ${cycle}`;
        const done = (await p.queues.products.getJobCounts('completed')).completed ?? 0;
        return f?.all === ENTRIES && f.open === 0 && done - before === pulls.length;
      },
      120_000,
    );
    await w.close();
  };

  beforeAll(async () => {
    sim = await startTestSim({
      enterprises: 400,
      seed: 12,
      rateLimits: UNTHROTTLED,
    });
    p = await startPipeline({ DAYBOOK_RETRY_BASE_MS: '50' }, sim);
    await p.watch(ENTRIES);
    const today = pacificDate(sim.sim.now());
    dates.push(addDays(today, -1));
    await runCycle([{ date: addDays(today, -1), pull: 'd1' }]);
    // The next day the upstream's format drifts on nine answers in ten.
    sim.sim.setFaults(parseFaultSpec('drift=0.9'));
    sim.sim.advanceClock(24 * 3600_000);
    const next = pacificDate(sim.sim.now());
    dates.push(addDays(next, -1));
    await runCycle([
      { date: addDays(next, -1), pull: 'd1' },
      { date: addDays(next, -2), pull: 'd2' },
    ]);
  }, 240_000);

  afterAll(async () => {
    await p?.close();
    await sim?.close();
  });

  const countOf = async (query: postgres.PendingQuery<postgres.Row[]>) => {
    const [r] = await query;
    return (r?.n as number | undefined) ?? -1;
  };

  it('every billed answer is booked, its billing block drifted (a string, or none) or not', async () => {
    const [ledger] = await p.db.sql<{ n: number; credits: number; assumed: number; presumed: number }[]>`
      select count(*) filter (where status = 'booked')::int as n,
             coalesce(sum(credits) filter (where status = 'booked'), 0)::int as credits,
             count(*) filter (where remark like '%the configured 3 credits were booked')::int as assumed,
             count(*) filter (where status = 'presumed')::int as presumed
      from credit_ledger where credits is not null`;
    expect(ledger).toMatchObject({
      n: sim.sim.counters.billedQueries,
      credits: sim.sim.counters.creditsBilled,
      presumed: 0,
    });
    // The drifted cycle sent answers without a billing block: booked at the configured cost.
    expect(ledger?.assumed).toBeGreaterThan(0);
    const [drifted] = await p.db.sql<{ n: number }[]>`
      select count(*)::int as n from raw_response_drift where field like '$.metadata.usage%'`;
    expect(drifted?.n).toBeGreaterThan(0);
  });

  it('a documented upstream shows no drift: the clean cycle recorded none', async () => {
    const [first] = await p.db.sql<{ n: number }[]>`
      select count(*)::int as n from raw_response_drift d join raw_answers r on r.id = d.raw_response_id
      where r.cycle = ${cycles[0] as string}`;
    expect(first?.n).toBe(0);
    const [landed] = await p.db.sql<{ n: number }[]>`
      select count(*)::int as n from raw_answers where cycle = ${cycles[0] as string} and outcome = 'success'`;
    expect(landed?.n).toBe(ENTRIES + 1);
  });

  it('lands every drifted answer raw, exactly as received', async () => {
    const [landed] = await p.db.sql<{ n: number; ok: number }[]>`
      select count(*)::int as n, count(*) filter (where outcome = 'success')::int as ok from raw_answers`;
    expect(landed?.n).toBe(
      sim.sim.counters.requests['enterprise-search'] + sim.sim.counters.requests['product-listing'],
    );
    expect(landed?.ok).toBe(landed?.n);
    const drifted = await countOf(p.db.sql`
      select count(*)::int as n from raw_answers
      where body_json->'metadata'->'content' ? 'ENTNAME_EN'
         or jsonb_typeof(body_json->'metadata'->'content'->'REGCAP') = 'string'
         or jsonb_path_exists(body_json, '$.metadata[*] ? (exists(@.slug))')`);
    expect(drifted).toBeGreaterThan(10);
  });

  it('normalizes the known fields whatever their shape, and keeps the unknown ones in extra', async () => {
    const documented = [...DOCUMENTED_ENTERPRISE_FIELDS];
    const rows = await p.db.sql<{ pid: string; ok: boolean; why: string }[]>`
      select v.pid,
        (v.reg_cap = (c->>'REGCAP')::numeric)
        and (v.es_date = left(c->>'ESDATE', 10)::date)
        and (v.op_from = left(c->>'OPFROM', 10)::date)
        and (c ? 'APPRDATE') = (v.appr_date is not null)
        and (c ? 'HISTORYNAME' and c->>'HISTORYNAME' <> '') = (v.history_name is not null)
        and v.extra = (c - ${documented}::text[]) as ok,
        c::text as why
      from enterprise_versions v
      join raw_answers r on r.id = v.raw_response_id
      cross join lateral (select r.body_json->'metadata'->'content' as c) x`;
    expect(rows.length).toBeGreaterThan(ENTRIES);
    expect(rows.filter((r) => !r.ok).map((r) => r.why)).toEqual([]);
    const withExtra = await countOf(p.db.sql`
      select count(*)::int as n from analytics.enterprise_current e
      join enterprise_versions v on v.pid = e.pid and v.is_current where v.extra ? 'ENTNAME_EN'`);
    expect(withExtra).toBeGreaterThan(0);

    const productDocumented = [...DOCUMENTED_PRODUCT_FIELDS];
    const products = await p.db.sql<{ ok: boolean; why: string }[]>`
      select pv.extra = (o - ${productDocumented}::text[]) as ok, o::text as why
      from product_versions pv
      join raw_answers r on r.id = pv.raw_response_id
      cross join lateral (
        select jsonb_path_query_first(r.body_json, '$.metadata[*] ? (@.product_id == $id)',
                                      jsonb_build_object('id', pv.product_id)) as o) x`;
    expect(products.filter((r) => !r.ok).map((r) => r.why)).toEqual([]);
    expect(products.some((r) => r.why.includes('"slug"'))).toBe(true);
    // votes_count as a string still lands as a number in the trending snapshots.
    const votes = await p.db.sql<{ ok: boolean; text: boolean }[]>`
      select s.votes_count = (o->>'votes_count')::int as ok, jsonb_typeof(o->'votes_count') = 'string' as text
      from trending_snapshots s
      join raw_answers r on r.id = s.raw_response_id
      cross join lateral (select r.body_json->'metadata'->(s.position - 1) as o) x`;
    expect(votes.every((v) => v.ok)).toBe(true);
    expect(votes.some((v) => v.text)).toBe(true);
  });

  it('reports each drift per operation and field, with counts equal to the raw answers that show it', async () => {
    const drift = await p.db.sql<
      {
        operation: string;
        field: string;
        kind: string;
        seen: string;
        responses: number;
        records: number;
        first_seen_at: Date;
        last_seen_at: Date;
      }[]
    >`select * from analytics.format_drift order by operation, field, kind, seen`;
    const find = (operation: string, field: string, kind: string, seen?: string) =>
      drift.filter(
        (d) =>
          d.operation === operation && d.field === field && d.kind === kind && (!seen || d.seen === seen),
      );
    const content = p.db.sql`body_json->'metadata'->'content'`;
    const enterprise = p.db.sql`operation = 'enterprise-search' and outcome = 'success'`;
    // Each reported figure is checked against the raw landing, counted independently in SQL.
    const checks: [string, string, string, string, postgres.PendingQuery<postgres.Row[]>][] = [
      [
        'enterprise-search',
        'ENTNAME_EN',
        'unknown_field',
        'string',
        p.db.sql`${enterprise} and ${content} ? 'ENTNAME_EN'`,
      ],
      [
        'enterprise-search',
        'CONTACT',
        'unknown_field',
        'object',
        p.db.sql`${enterprise} and ${content} ? 'CONTACT'`,
      ],
      [
        'enterprise-search',
        'REGCAP',
        'type_variant',
        'string',
        p.db.sql`${enterprise} and jsonb_typeof(${content}->'REGCAP') = 'string'`,
      ],
      [
        'enterprise-search',
        'HISTORYNAME',
        'missing_field',
        'absent',
        p.db.sql`${enterprise} and not (${content} ? 'HISTORYNAME')`,
      ],
      [
        'enterprise-search',
        'ESDATE',
        'type_variant',
        'string YYYY-MM-DDTHH:MM:SS.sss',
        p.db.sql`${enterprise} and ${content}->>'ESDATE' ~ '\\.\\d{3}$'`,
      ],
      [
        'product-listing',
        'slug',
        'unknown_field',
        'string',
        p.db
          .sql`operation = 'product-listing' and jsonb_path_exists(body_json, '$.metadata[*] ? (exists(@.slug))')`,
      ],
      [
        'product-listing',
        'votes_count',
        'type_variant',
        'string',
        p.db
          .sql`operation = 'product-listing' and jsonb_path_exists(body_json, '$.metadata[*].votes_count ? (@.type() == "string")')`,
      ],
    ];
    let present = 0;
    for (const [operation, field, kind, seen, where] of checks) {
      const [expected] = await p.db.sql<{ n: number; first: Date | null; last: Date | null }[]>`
        select count(*)::int as n, min(fetched_at) as first, max(fetched_at) as last
        from raw_answers where ${where}`;
      const rows = find(operation, field, kind, seen);
      // Which variants the simulator draws is random (by seed): what is absent must not be reported.
      if (expected?.n === 0) expect(rows, `${operation} ${field} ${kind} ${seen}`).toEqual([]);
      else {
        expect(rows[0], `${operation} ${field} ${kind} ${seen}`).toMatchObject({
          responses: expected?.n,
          first_seen_at: expected?.first,
          last_seen_at: expected?.last,
        });
        present++;
      }
    }
    expect(present).toBeGreaterThanOrEqual(checks.length - 1);
    // A list answer counts the products that showed it too.
    const [slugs] = await p.db.sql<{ n: number }[]>`
      select count(*)::int as n from raw_answers, jsonb_array_elements(body_json->'metadata') o
      where operation = 'product-listing' and jsonb_typeof(body_json->'metadata') = 'array' and o ? 'slug'`;
    expect(find('product-listing', 'slug', 'unknown_field')[0]?.records ?? 0).toBe(slugs?.n);
    for (const kind of ['unknown_field', 'missing_field', 'type_variant']) {
      for (const op of ['enterprise-search', 'product-listing'])
        expect(
          drift.some((d) => d.kind === kind && d.operation === op),
          `${op} ${kind}`,
        ).toBe(true);
    }
    const [answers] = await p.db.sql<{ n: number }[]>`
      select count(distinct raw_response_id)::int as n from raw_response_drift`;
    const by = (k: string) => drift.filter((d) => d.kind === k).length;
    console.log(
      `format drift: ${drift.length} drift items reported (${by('unknown_field')} unknown fields, ${by('missing_field')} missing fields, ${by('type_variant')} type variants) from ${answers?.n} drifted answers of ${sim.sim.counters.requests['enterprise-search'] + sim.sim.counters.requests['product-listing']}; 0 in the clean cycle`,
    );
  });

  it('recording the same answers again counts nothing twice', async () => {
    const before = await p.db.sql`select * from format_drift order by operation, field, kind, seen`;
    const answers = await p.db.sql<
      {
        id: string;
        operation: 'enterprise-search' | 'product-listing';
        params: Record<string, string>;
        body_json: unknown;
        fetched_at: Date;
      }[]
    >`select id, operation, params, body_json, fetched_at from raw_answers where outcome = 'success' order by id desc limit 40`;
    const drifted = await recordDrift(
      p.db.sql,
      answers.map((a) => ({
        rawResponseId: Number(a.id),
        operation: a.operation,
        params: a.params,
        body: a.body_json,
        fetchedAt: a.fetched_at,
      })),
    );
    expect(drifted).toBeGreaterThan(0);
    expect(await p.db.sql`select * from format_drift order by operation, field, kind, seen`).toEqual(before);
  });

  it('daybook drift and daybook status show it', async () => {
    const env = { DATABASE_URL: p.db.url, DAYBOOK_REDIS_PREFIX: p.prefix, LOG_LEVEL: 'silent' };
    const json = await runDaybook(['drift', '--json', '--operation', 'enterprise-search'], env);
    expect(json.code).toBe(0);
    const rows = json.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { operation: string; field: string; kind: string });
    expect(rows.length).toBeGreaterThan(3);
    expect(rows.every((r) => r.operation === 'enterprise-search')).toBe(true);
    expect(rows).toContainEqual(expect.objectContaining({ field: 'ENTNAME_EN', kind: 'unknown_field' }));
    const text = await runDaybook(['drift'], env);
    expect(text.stdout).toMatch(/product-listing\s+slug\s+unknown_field\s+string\s+undocumented/);
    const status = await runDaybook(['status', '--cycle', cycles[1] as string, '--no-queues'], env);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/Format drift: \d+ unknown fields, \d+ missing fields, \d+ type variants/);
    const bad = await runDaybook(['drift', '--operation', 'enterprise'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--operation');
  });

  it('a rebuild from the raw landing re-derives the same drift report', async () => {
    const snapshot = async () => ({
      summary: await p.db.sql`select * from format_drift order by operation, field, kind, seen`,
      perAnswer: await p.db.sql`select * from raw_response_drift order by raw_response_id, field, kind, seen`,
      view: await p.db.sql`select * from analytics.format_drift order by operation, field, kind, seen`,
    });
    const before = await snapshot();
    const summary = await rebuild(p.db.sql, { batchSize: 25 });
    expect(summary.drifted).toBeGreaterThan(0);
    expect(await snapshot()).toEqual(before);
  });
});
