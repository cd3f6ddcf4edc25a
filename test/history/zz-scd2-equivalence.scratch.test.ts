// Temporary: dumps the history tables after a fixed scenario, to compare before/after a refactor.
import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { landRaw } from '../../src/landing/landing.ts';
import {
  applyEnterprises,
  type EnterpriseObservation,
  markDisappeared,
} from '../../src/history/enterprise-store.ts';
import { applyProductPulls, type ProductPull } from '../../src/history/product-store.ts';
import { normalizeEnterprise } from '../../src/normalize/enterprise.ts';
import { normalizeProductList } from '../../src/normalize/product.ts';
import { ProductWorld } from '../../src/sim/products.ts';
import { EnterpriseRecord, ProductListSuccess } from '../../src/upstream/schemas.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';

const base = {
  PID: 'p-0001',
  ENTNAME: 'A公司',
  HISTORYNAME: '',
  IS_LISTED: 0,
  LEGALPERSON: '张伟',
  LEGALPERSONDESC: '法定代表人',
  ESDATE: '2012-05-12T00:00:00.000Z',
  SCONFORM: '货币',
  REGNO: '310141000157096',
  UNCID: '91310115342050446K',
  ENTTYPECODE: '1130',
  ENTTYPE: '有限责任公司',
  REGCAP: 500,
  REGCAPCUR: '万人民币',
  PROVINCE: 31,
  OPFROM: '2012-05-12T00:00:00.000Z',
  OPTO: '9999-12-31',
  REGORG: '上海',
  APPRDATE: '2020-03-01T00:00:00.000Z',
  REVOKEDATE: '',
  REVOKEREASON: '',
  ENTSTATUS: '存续',
  OPLOC: '上海市',
  OPSCOPE: '软件开发。',
  PERSONS: [{ NAME: '张伟', POSITION: '执行董事' }],
  BE_INVEST: [{ INV: '张伟', INVTYPE: '自然人股东' }],
  participants: 12,
  INDUSTRYPHY: 'I',
  INDUSTRYBIG: '软件',
  industry_middle: '软件开发',
  CLEARINGINFO: [],
};
function obs(
  o: Record<string, unknown>,
  at: string,
  keyword: string | null,
  raw: number | null = null,
): EnterpriseObservation {
  return {
    normalized: normalizeEnterprise(EnterpriseRecord.parse({ ...base, ...o })),
    fetchedAt: new Date(at),
    rawResponseId: raw,
    cycle: at.slice(0, 10),
    keyword,
  };
}
const world = new ProductWorld({ seed: 11 });
async function productPull(
  t: TestDatabase,
  at: string,
  tweak: (i: number) => string | null,
): Promise<ProductPull> {
  const now = new Date(at);
  const date = '2026-11-18';
  const body = { result: 'success', markdown: [], metadata: world.list(date, now).slice(0, 8) };
  const [landed] = await landRaw(t.sql, [
    {
      runId: null,
      cycle: null,
      operation: 'product-listing',
      params: { date },
      httpStatus: 200,
      bodyText: JSON.stringify(body),
      outcome: 'success',
      fetchedAt: now,
      durationMs: 5,
    },
  ]);
  const list = normalizeProductList(ProductListSuccess.parse(body).metadata, date, now);
  list.products.forEach((p, i) => {
    const t2 = tweak(i);
    if (t2 !== null) p.tagline = t2;
  });
  return { ...list, fetchedAt: now, rawResponseId: landed?.id as number };
}
const TABLES = [
  'enterprises',
  'enterprise_versions',
  'enterprise_persons',
  'enterprise_shareholders',
  'enterprise_clearing_members',
  'enterprise_changes',
  'enterprise_observations',
  'keyword_resolutions',
  'events',
  'products',
  'product_versions',
  'product_topics',
  'product_media',
  'product_links',
  'product_comments',
  'trending_snapshots',
];

describe('scd2 equivalence dump', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await freshDatabase();
  });
  afterAll(() => t.drop());
  it('dumps', async () => {
    const out: Record<string, unknown> = {};
    out.e1 = await t.sql.begin((sql) =>
      applyEnterprises(sql, [
        obs({}, '2026-11-10T10:00:00Z', 'A公司'),
        obs({ PID: 'p-0002', ENTNAME: 'B公司' }, '2026-11-10T10:00:01Z', 'B公司'),
        obs({ ENTSTATUS: '注销' }, '2026-11-10T11:00:00Z', 'A公司'),
        obs({ ENTSTATUS: '吊销', REGCAP: 900 }, '2026-11-10T12:00:00Z', 'A公司'),
      ]),
    );
    out.e2 = await t.sql.begin((sql) =>
      applyEnterprises(sql, [
        obs({ PID: 'p-0002', ENTNAME: 'B公司', OPLOC: '北京' }, '2026-11-11T10:00:00Z', 'B公司'),
        obs({ ENTSTATUS: '吊销', REGCAP: 900 }, '2026-11-11T10:00:00Z', 'A公司'),
        obs({ ENTSTATUS: '存续' }, '2026-11-09T10:00:00Z', 'A公司'),
        obs({ PID: 'p-0003', ENTNAME: 'C公司' }, '2026-11-11T10:00:02Z', 'B公司'),
        obs({ PID: 'p-0003', ENTNAME: 'C公司', PERSONS: [] }, '2026-11-11T10:00:03Z', 'C公司'),
      ]),
    );
    out.d = await t.sql.begin((sql) =>
      markDisappeared(sql, [
        {
          pid: 'p-0002',
          keyword: 'B公司',
          fetchedAt: new Date('2026-11-12T00:00:00Z'),
          rawResponseId: null,
          cycle: '2026-11-12',
        },
      ]),
    );
    out.e3 = await t.sql.begin((sql) =>
      applyEnterprises(sql, [
        obs({ PID: 'p-0002', ENTNAME: 'B公司', OPLOC: '广州' }, '2026-11-12T10:00:00Z', 'B公司'),
        obs({ ENTSTATUS: '存续' }, '2026-11-12T10:00:00Z', 'A公司'),
      ]),
    );
    const p1 = await productPull(t, '2026-11-19T10:00:00Z', () => null);
    out.p1 = await applyProductPulls(t.sql, [p1]);
    const p2 = await productPull(t, '2026-11-20T10:00:00Z', (i) => (i < 3 ? `changed ${i}` : null));
    out.p2 = await applyProductPulls(t.sql, [p2]);
    const p3 = await productPull(t, '2026-11-21T10:00:00Z', (i) => (i < 2 ? `again ${i}` : null));
    const p4 = await productPull(t, '2026-11-21T12:00:00Z', (i) =>
      i === 0 ? 'thrice' : i === 5 ? 'five' : null,
    );
    const stale = await productPull(t, '2026-11-19T12:00:00Z', (i) => (i === 6 ? 'stale' : null));
    out.p34 = await applyProductPulls(t.sql, [p4, stale, p3]);
    const p5 = await productPull(t, '2026-11-22T10:00:00Z', () => null);
    out.p5 = await applyProductPulls(t.sql, [p5]);
    for (const table of TABLES) {
      out[table] = (
        await t.sql.unsafe(`select to_jsonb(x) as r from ${table} x order by to_jsonb(x)::text`)
      ).map((r) => r.r);
    }
    writeFileSync(`/tmp/scd2-dump-${process.env.SCD2_LABEL ?? 'x'}.json`, JSON.stringify(out, null, 1));
  });
});
