import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyProductPulls } from '../../src/history/product-store.ts';
import { landRaw } from '../../src/landing/landing.ts';
import { normalizeProductList } from '../../src/normalize/product.ts';
import type { NormalizedProduct } from '../../src/normalize/types.ts';
import { ProductWorld } from '../../src/sim/products.ts';
import { ProductListSuccess } from '../../src/upstream/schemas.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';

const world = new ProductWorld({ seed: 7 });

async function pull(
  t: TestDatabase,
  date: string,
  at: string,
  limit = 20,
  edit: (products: NormalizedProduct[]) => void = () => {},
) {
  const now = new Date(at);
  const body = { result: 'success', markdown: [], metadata: world.list(date, now).slice(0, limit) };
  const [landed] = await landRaw(t.sql, [
    {
      runId: null,
      cycle: null,
      operation: 'product-listing',
      params: { date, limit: String(limit) },
      httpStatus: 200,
      bodyText: JSON.stringify(body),
      outcome: 'success',
      fetchedAt: now,
      durationMs: 5,
    },
  ]);
  const list = normalizeProductList(ProductListSuccess.parse(body).metadata, date, now);
  edit(list.products);
  return applyProductPulls(t.sql, [{ ...list, fetchedAt: now, rawResponseId: landed?.id as number }]);
}

describe('product history in Postgres', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await freshDatabase();
  });
  afterAll(() => t.drop());

  it('a first pull writes one version per product and one snapshot per listed product', async () => {
    const s = await pull(t, '2026-11-18', '2026-11-19T10:00:00Z');
    expect(s.initial).toBe(20);
    expect(s.snapshots).toBe(20);
    const [n] = await t.sql<{ n: number }[]>`select count(*)::int as n from product_versions`;
    expect(n?.n).toBe(20);
  });

  it('a re-pull a day later adds snapshots with grown votes but no new versions', async () => {
    const s = await pull(t, '2026-11-18', '2026-11-20T10:00:00Z');
    expect(s.initial + s.changed).toBe(0);
    expect(s.snapshots).toBe(20);
    const rows = await t.sql<{ product_id: string; votes: number[] }[]>`
      select product_id, array_agg(votes_count order by fetched_at) as votes
      from trending_snapshots group by product_id`;
    for (const r of rows) {
      if (r.votes.length === 2) expect(r.votes[1]).toBeGreaterThanOrEqual(r.votes[0] as number);
    }
    expect(rows.some((r) => r.votes.length === 2 && (r.votes[1] as number) > (r.votes[0] as number))).toBe(
      true,
    );
  });

  it('comments are kept once across pulls', async () => {
    const [before] = await t.sql<{ n: number }[]>`select count(*)::int as n from product_comments`;
    await pull(t, '2026-11-18', '2026-11-20T10:00:00Z');
    const [after] = await t.sql<{ n: number }[]>`select count(*)::int as n from product_comments`;
    expect(after?.n).toBe(before?.n);
    expect(before?.n).toBeGreaterThan(0);
  });

  it('the trending view lists the day in order with the latest pull marked', async () => {
    const rows = await t.sql<{ position: number; is_latest_pull: boolean; name: string }[]>`
      select position, is_latest_pull, name from analytics.product_trending
      where list_date = '2026-11-18' and is_latest_pull order by position`;
    expect(rows.map((r) => r.position)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    const [cur] = await t.sql`select * from analytics.product_current limit 1`;
    expect(cur?.latest_votes).toBeTypeOf('number');
    expect(Array.isArray(cur?.topics)).toBe(true);
  });

  it('a product whose content changed gets a new current version and its previous one closed', async () => {
    const first = await pull(t, '2026-11-25', '2026-11-26T10:00:00Z', 5);
    expect(first.initial).toBe(5);
    let changedId = '';
    const s = await pull(t, '2026-11-25', '2026-11-27T10:00:00Z', 5, (products) => {
      const p = products[0] as NormalizedProduct;
      changedId = p.productId;
      p.tagline = `${p.tagline ?? ''} (now with more)`;
    });
    expect(s).toMatchObject({ changed: 1, unchanged: 4, initial: 0 });
    const versions = await t.sql<
      { id: string; version: number; is_current: boolean; valid_from: Date; valid_to: Date | null }[]
    >`
      select id, version, is_current, valid_from, valid_to from product_versions
      where product_id = ${changedId} order by version`;
    expect(versions.map((v) => [v.version, v.is_current])).toEqual([
      [1, false],
      [2, true],
    ]);
    const [before, after] = versions;
    expect(before?.valid_from.toISOString()).toBe('2026-11-26T10:00:00.000Z');
    expect(before?.valid_to?.toISOString()).toBe('2026-11-27T10:00:00.000Z');
    expect(after?.valid_from.toISOString()).toBe('2026-11-27T10:00:00.000Z');
    expect(after?.valid_to).toBeNull();
    const [product] = await t.sql<{ current_version_id: string }[]>`
      select current_version_id from products where product_id = ${changedId}`;
    expect(product?.current_version_id).toBe(after?.id);
    // The products that did not change keep their one version, still current.
    const [others] = await t.sql<{ n: number }[]>`
      select count(*)::int as n from product_versions v join products p using (product_id)
      where p.first_seen_at = '2026-11-26T10:00:00Z' and p.product_id <> ${changedId}
        and v.is_current and v.valid_to is null and v.version = 1`;
    expect(others?.n).toBe(4);
  });
});
