/**
 * One accounting path. Every answer the upstream may have billed gets a ledger row keyed by its raw
 * response, whatever its shape; an undocumented amount books the configured cost, said in the
 * remark; a job whose entry the plan deferred or skipped buys nothing. The upstream here is a real
 * HTTP server that answers each keyword in one shape.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobDeps } from '../../jobs/deps.ts';
import { processEnterprise } from '../../jobs/enterprise.ts';
import { runInline } from '../../src/runtime/inline.ts';
import { keywordKey } from '../../src/watch/keyword.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';
import { jobDepsAgainst } from '../support/job-deps.ts';
import { listenLocal } from '../support/net.ts';
import { sampleEnterpriseRecord } from '../support/records.ts';

const CYCLE = '2026-11-20';

/** What each keyword answers: the metadata of a success (`status: success`), as sent. */
const SHAPES: Record<string, (pid: string) => Record<string, unknown>> = {
  'credits-as-string': (pid) => ({
    usage: { credits: '3', remark: 'q' },
    content: sampleEnterpriseRecord({ PID: pid }),
  }),
  'no-usage': (pid) => ({ content: sampleEnterpriseRecord({ PID: pid }) }),
  'unreadable-credits': (pid) => ({
    usage: { credits: 'three' },
    content: sampleEnterpriseRecord({ PID: pid }),
  }),
  'two-credits': (pid) => ({
    usage: { credits: 2, remark: 'q' },
    content: sampleEnterpriseRecord({ PID: pid }),
  }),
  // A success the schema refuses (no record): billed all the same, not applied.
  'no-content': () => ({ usage: { credits: 3, remark: 'q' } }),
};

describe('one accounting path', () => {
  let t: TestDatabase;
  let server: Server;
  let url: string;
  const requests: string[] = [];
  beforeAll(async () => {
    t = await freshDatabase();
    server = createServer((req, res) => {
      const keyword = new URL(req.url ?? '/', 'http://x').searchParams.get('ent_name') ?? '';
      requests.push(keyword);
      const shape = SHAPES[keyword];
      res.setHeader('content-type', 'application/json');
      if (!shape) {
        res.statusCode = 404;
        res.end(JSON.stringify({ status: 'error', error: { code: 'not_found', message: 'none' } }));
        return;
      }
      res.end(JSON.stringify({ status: 'success', markdown: '# x', metadata: shape(`pid-${keyword}`) }));
    });
    url = await listenLocal(server);
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await t.drop();
  });

  const deps = (): JobDeps => jobDepsAgainst(t, url, 'sk-acct');

  it('books every billed answer, whatever its shape, at the amount it stated or the configured cost', async () => {
    const keywords = Object.keys(SHAPES);
    await t.sql`insert into watchlist ${t.sql(keywords.map((k) => ({ keyword: k, keyword_key: keywordKey(k) })))}`;
    const summary = await runInline(deps(), { cycle: CYCLE, only: 'enterprises', concurrency: 2 });
    expect(summary.enterprises).toEqual({ succeeded: 4, failed: 1 });

    const ledger = await t.sql<
      { keyword: string; credits: number; status: string; remark: string | null; raw: string | null }[]
    >`
      select keyword, credits, status, remark, raw_response_id::text as raw from credit_ledger order by keyword`;
    expect(ledger.map((l) => [l.keyword, l.credits, l.status])).toEqual([
      ['credits-as-string', 3, 'booked'],
      ['no-content', 3, 'booked'],
      ['no-usage', 3, 'booked'],
      ['two-credits', 2, 'booked'],
      ['unreadable-credits', 3, 'booked'],
    ]);
    // Each row is the answer's: keyed by its raw response, the one landed for that keyword.
    for (const l of ledger) {
      const [raw] = await t.sql<{ ent_name: string }[]>`
        select params->>'ent_name' as ent_name from raw_answers where id = ${l.raw}`;
      expect(raw?.ent_name).toBe(l.keyword);
    }
    const remark = (k: string) => ledger.find((l) => l.keyword === k)?.remark ?? '';
    expect(remark('no-usage')).toMatch(/stated no amount: the configured 3 credits were booked/);
    expect(remark('unreadable-credits')).toMatch(/unreadable amount \("three"\)/);
    expect(remark('credits-as-string')).toBe('q');
    expect(remark('no-content')).toMatch(/undocumented shape/);
    const [budget] = await t.sql<{ spent: number; reserved: number }[]>`
      select spent, reserved from cycle_budgets where cycle = ${CYCLE}`;
    expect(budget).toEqual({ spent: 14, reserved: 0 });
    const [usage] = await t.sql<
      { billed_queries: number; booked_credits: number; presumed_credits: number }[]
    >`
      select billed_queries, booked_credits, presumed_credits from analytics.credit_usage where cycle = ${CYCLE}`;
    expect(usage).toEqual({ billed_queries: 5, booked_credits: 14, presumed_credits: 0 });
  });

  it('a job whose entry the plan deferred or skipped buys nothing', async () => {
    const asked = requests.length;
    const [w] = await t.sql<{ id: string }[]>`
      insert into watchlist (keyword, keyword_key) values ('two-credits-again', 'two-credits-again') returning id`;
    const watchId = Number(w?.id);
    for (const status of ['deferred', 'skipped'] as const) {
      await t.sql`insert into cycle_fetches (cycle, watch_id, status) values (${CYCLE}, ${watchId}, ${status})
                  on conflict (cycle, watch_id) do update set status = excluded.status`;
      const r = await processEnterprise(deps(), { cycle: CYCLE, watchId }, `enterprise-${CYCLE}-${watchId}`);
      expect(r.outcome).toBe(status);
      expect(r.detail).toMatch(new RegExp(`marked it ${status}`));
    }
    // Nor one the plan never planned.
    const r = await processEnterprise(deps(), { cycle: '2026-11-21', watchId }, 'enterprise-2026-11-21-x');
    expect(r).toMatchObject({ outcome: 'skipped', detail: expect.stringMatching(/did not plan it/) });
    expect(requests.length).toBe(asked);
  });
});
