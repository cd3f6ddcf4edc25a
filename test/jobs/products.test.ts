/**
 * The product jobs on their own, against Postgres and an upstream over HTTP: a list pull lands its
 * answer, applies its products and books its call; a detail asked by hand does the same for one
 * product and tells what the answer said of it; a detail the budget cannot take is never asked.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobDeps } from '../../jobs/deps.ts';
import { type DetailSeen, processProductDetail } from '../../jobs/product-detail.ts';
import { ProductsJobData, processProducts } from '../../jobs/products.ts';
import { ensureCycleBudget } from '../../src/purchase/credits.ts';
import { FinalForCycleError } from '../../src/terms/job-errors.ts';
import { cycleOf } from '../../src/time/cycles.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';
import { jobDepsAgainst } from '../support/job-deps.ts';
import { listenLocal } from '../support/net.ts';
import { sampleProductRecord } from '../support/records.ts';

describe('the product jobs', () => {
  let t: TestDatabase;
  let server: Server;
  let url: string;
  const asked: string[] = [];
  beforeAll(async () => {
    t = await freshDatabase();
    server = createServer((req, res) => {
      const params = new URL(req.url ?? '/', 'http://x').searchParams;
      asked.push(params.toString());
      res.setHeader('content-type', 'application/json');
      const name = params.get('product_name');
      const metadata = name
        ? sampleProductRecord({ product_id: '700001', name, votes_count: 88, comments_count: 9 })
        : [
            sampleProductRecord({ product_id: '700001', name: 'Acme Notes' }),
            sampleProductRecord({ product_id: '700002', name: 'Beta Board', votes_count: 12 }),
          ];
      const markdown = name ? '# x' : ['# x'];
      res.end(JSON.stringify({ result: 'success', markdown, metadata }));
    });
    url = await listenLocal(server);
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await t.drop();
  });

  const ledger = () =>
    t.sql<{ keyword: string | null; status: string; credits: number | null }[]>`
      select keyword, status, credits from credit_ledger where operation = 'product-listing' order by id`;

  it('pulls a list: lands it, applies its products, books the call and names the landed answer', async () => {
    const deps = jobDepsAgainst(t, url, 'sk-products');
    const data = ProductsJobData.parse({ date: '2026-11-20', pull: 'd1', limit: 2 });
    let landed: number | null = null;
    const report = await processProducts(deps, data, 'products-2026-11-20-d1', false, (id) => {
      landed = id;
    });
    expect(report).toMatchObject({ outcome: 'succeeded', counts: { products: 2 } });
    expect(asked.at(-1)).toBe('date=2026-11-20&limit=2');
    const [raw] = await t.sql<{ id: string }[]>`select id from raw_responses order by id desc limit 1`;
    expect(landed).toBe(Number(raw?.id));
    const names = await t.sql<{ name: string }[]>`
      select name from product_versions where is_current order by product_id`;
    expect(names.map((n) => n.name)).toEqual(['Acme Notes', 'Beta Board']);
    expect(await ledger()).toHaveLength(1);
  });

  it('asks a detail once, applies it, and tells what the answer said of the product', async () => {
    const deps = jobDepsAgainst(t, url, 'sk-products');
    const seen: DetailSeen[] = [];
    const report = await processProductDetail(deps, 'Acme Notes', (d) => seen.push(d));
    expect(report).toMatchObject({ outcome: 'succeeded', entity: 'Acme Notes' });
    expect(seen).toEqual([{ productId: '700001', votes: 88, comments: 9 }]);
    expect(asked.at(-1)).toBe('product_name=Acme+Notes');
    const rows = await ledger();
    expect(rows).toHaveLength(2);
    expect(rows[1]).toMatchObject({ keyword: 'Acme Notes' });
    const [run] = await t.sql<{ outcome: string; entity: string }[]>`
      select outcome, entity from runs where kind = 'product-detail' order by id desc limit 1`;
    expect(run).toEqual({ outcome: 'succeeded', entity: 'Acme Notes' });
  });

  it('does not ask a detail the credit budget cannot take: the run fails for the cycle, nothing is sent', async () => {
    const base = jobDepsAgainst(t, url, 'sk-products');
    const deps: JobDeps = {
      ...base,
      config: { ...base.config, DAYBOOK_PRODUCT_CREDITS: 50, DAYBOOK_CREDIT_BUDGET: 10 },
    };
    await ensureCycleBudget(t.sql, cycleOf(new Date()), 10);
    const before = asked.length;
    const error = await processProductDetail(deps, 'Costly Thing', () => {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FinalForCycleError);
    expect(String((error as Error).message)).toMatch(/costs 50 credits .*budget cannot take it/);
    expect(asked.length).toBe(before);
    const [run] = await t.sql<{ outcome: string }[]>`
      select outcome from runs where kind = 'product-detail' and entity = 'Costly Thing'`;
    expect(run).toEqual({ outcome: 'failed' });
  });
});
