import { describe, expect, it } from 'vitest';
import { diffEnterprises, diffProducts } from '../../src/history/classify.ts';
import { enterpriseContentHash, productContentHash } from '../../src/history/hash.ts';
import { normalizeEnterprise } from '../../src/normalize/enterprise.ts';
import { normalizeProduct } from '../../src/normalize/product.ts';
import { EnterpriseRecord, Product } from '../../src/upstream/schemas.ts';
import { sampleEnterpriseRecord, sampleProductRecord } from '../support/records.ts';

const rawEnterprise = (overrides: Record<string, unknown> = {}) =>
  sampleEnterpriseRecord({
    CLEARINGINFO: [
      { liqMem: '王五', ligpriSign: '1' },
      { liqMem: '赵六', ligpriSign: '2' },
    ],
    ...overrides,
  });

const ent = (o: Record<string, unknown> = {}) =>
  normalizeEnterprise(EnterpriseRecord.parse(rawEnterprise(o)));
const entHash = (o: Record<string, unknown> = {}) => enterpriseContentHash(ent(o));

/** Two links, so that their order can be turned around. */
const rawProduct = (overrides: Record<string, unknown> = {}) =>
  sampleProductRecord({
    product_links: [
      { url: 'https://daybook.dev', type: 'Website' },
      { url: 'https://chrome.google.com/x', type: 'Chrome' },
    ],
    ...overrides,
  });

const prod = (o: Record<string, unknown> = {}) => normalizeProduct(Product.parse(rawProduct(o)));
const prodHash = (o: Record<string, unknown> = {}) => productContentHash(prod(o));

describe('enterprise content hash', () => {
  it('is a sha256 hex and the same for the same payload', () => {
    expect(entHash()).toMatch(/^[0-9a-f]{64}$/);
    expect(entHash()).toBe(entHash());
  });

  it('does not depend on the order of persons, shareholders or clearing members', () => {
    const base = rawEnterprise();
    const reversed = {
      PERSONS: [...(base.PERSONS as unknown[])].reverse(),
      BE_INVEST: [...(base.BE_INVEST as unknown[])].reverse(),
      CLEARINGINFO: [...(base.CLEARINGINFO as unknown[])].reverse(),
    };
    expect(entHash(reversed)).toBe(entHash());
  });

  it('does not depend on the order of keys in the payload or in extra', () => {
    const reordered = Object.fromEntries(Object.entries(rawEnterprise({ X: { b: 1, a: 2 } })).reverse());
    expect(enterpriseContentHash(normalizeEnterprise(EnterpriseRecord.parse(reordered)))).toBe(
      entHash({ X: { a: 2, b: 1 } }),
    );
  });

  it('does not change with format drift that keeps the meaning', () => {
    const h = entHash();
    expect(entHash({ REGCAP: '500.000000' })).toBe(h);
    expect(entHash({ REGCAP: 5000000, REGCAPCUR: '元人民币' })).toBe(h);
    expect(entHash({ ESDATE: '2008-05-12T00:00:00Z' })).toBe(h);
    expect(entHash({ ESDATE: '2008-05-12' })).toBe(h);
    expect(entHash({ IS_LISTED: '0' })).toBe(h);
    expect(entHash({ PROVINCE: '31' })).toBe(h);
    expect(entHash({ participants: '12' })).toBe(h);
    expect(entHash({ HISTORYNAME: undefined })).toBe(h);
    expect(entHash({ OPTO: '2038-05-11T00:00:00.000Z' })).toBe(h);
    expect(entHash({ OPTO: '长期' })).toBe(entHash({ OPTO: 'Long-term' }));
    expect(entHash({ OPTO: '0000-00-00' })).toBe(entHash({ OPTO: '' }));
    expect(entHash({ ENTNAME: ' 上海示例科技有限公司 ' })).toBe(h);
  });

  const changes: [string, Record<string, unknown>][] = [
    ['ENTNAME', { ENTNAME: '上海新名科技有限公司' }],
    ['HISTORYNAME', { HISTORYNAME: '上海旧名有限公司' }],
    ['IS_LISTED', { IS_LISTED: 1 }],
    ['LEGALPERSON', { LEGALPERSON: '李四' }],
    ['LEGALPERSONDESC', { LEGALPERSONDESC: '负责人' }],
    ['ESDATE', { ESDATE: '2008-05-13' }],
    ['SCONFORM', { SCONFORM: '实物' }],
    ['REGNO', { REGNO: '370902601053030' }],
    ['UNCID', { UNCID: '91110000600037341L' }],
    ['ENTTYPECODE', { ENTTYPECODE: '1151' }],
    ['ENTTYPE', { ENTTYPE: '股份有限公司' }],
    ['REGCAP', { REGCAP: 600 }],
    ['REGCAPCUR currency', { REGCAPCUR: '万美元' }],
    ['REGCAPCUR unit', { REGCAPCUR: '人民币' }],
    ['PROVINCE', { PROVINCE: 11 }],
    ['OPFROM', { OPFROM: '2009-01-01' }],
    ['OPTO date', { OPTO: '2048-05-11' }],
    ['OPTO perpetual', { OPTO: '长期' }],
    ['OPTO unreadable text', { OPTO: 'until further notice' }],
    ['REGORG', { REGORG: '北京市市场监督管理局' }],
    ['APPRDATE', { APPRDATE: '2022-01-01' }],
    ['REVOKEDATE', { REVOKEDATE: '2024-01-01' }],
    ['REVOKEREASON', { REVOKEREASON: '未年检' }],
    ['ENTSTATUS', { ENTSTATUS: '吊销' }],
    ['OPLOC', { OPLOC: '北京市' }],
    ['OPSCOPE', { OPSCOPE: '技术开发、软件销售' }],
    ['participants', { participants: 13 }],
    ['INDUSTRYPHY', { INDUSTRYPHY: 'C' }],
    ['INDUSTRYBIG', { INDUSTRYBIG: '制造业' }],
    ['industry_middle', { industry_middle: '3921' }],
    [
      'a person added',
      {
        PERSONS: [
          { NAME: '张三', POSITION: '执行董事' },
          { NAME: '李四', POSITION: '监事' },
          { NAME: '周九', POSITION: '经理' },
        ],
      },
    ],
    [
      'a position',
      {
        PERSONS: [
          { NAME: '张三', POSITION: '董事长' },
          { NAME: '李四', POSITION: '监事' },
        ],
      },
    ],
    [
      'a shareholder type',
      {
        BE_INVEST: [
          { INV: '张三', INVTYPE: '非农民自然人' },
          { PID: 'p-2002', INV: '示例控股有限公司', INVTYPE: '企业法人' },
        ],
      },
    ],
    [
      'a shareholder PID',
      {
        BE_INVEST: [
          { INV: '张三', INVTYPE: '自然人股东' },
          { PID: 'p-2003', INV: '示例控股有限公司', INVTYPE: '企业法人' },
        ],
      },
    ],
    [
      'a clearing member role',
      {
        CLEARINGINFO: [
          { liqMem: '王五', ligpriSign: '2' },
          { liqMem: '赵六', ligpriSign: '2' },
        ],
      },
    ],
    [
      'a child extra field',
      {
        PERSONS: [
          { NAME: '张三', POSITION: '执行董事', X: 1 },
          { NAME: '李四', POSITION: '监事' },
        ],
      },
    ],
    ['an unknown field appearing', { NEWFIELD: 'x' }],
  ];

  it.each(changes)('changes when %s changes, and the diff reports it', (_what, override) => {
    expect(entHash(override)).not.toBe(entHash());
    expect(diffEnterprises(ent(), ent(override)).length).toBeGreaterThan(0);
  });

  it.each([
    'HISTORYNAME',
    'LEGALPERSON',
    'ESDATE',
    'REGCAP',
    'OPTO',
    'ENTSTATUS',
    'OPSCOPE',
    'participants',
    'industry_middle',
    'PERSONS',
    'BE_INVEST',
    'CLEARINGINFO',
  ])('changes when %s disappears from the payload', (field) => {
    const base = { HISTORYNAME: '旧名' };
    const without = rawEnterprise(base);
    // The schema requires the undocumented-type keys to be present (z.unknown() in zod 4), so
    // for those "gone" is sent as undefined; the others are deleted outright.
    if (field === 'participants' || field === 'industry_middle') without[field] = undefined;
    else delete without[field];
    const hashWithout = enterpriseContentHash(normalizeEnterprise(EnterpriseRecord.parse(without)));
    expect(hashWithout).not.toBe(entHash(base));
  });

  it('changes when an unknown field disappears or changes', () => {
    expect(entHash({ X: 1 })).not.toBe(entHash());
    expect(entHash({ X: 1 })).not.toBe(entHash({ X: 2 }));
    expect(entHash({ X: null })).not.toBe(entHash());
  });
});

describe('product content hash', () => {
  it('ignores votes, comment counts, comments and the update time', () => {
    expect(
      prodHash({
        votes_count: 900,
        comments_count: 120,
        comments: [{ body: 'new', created_at: '2026-11-21T00:00:00Z' }],
        updated_at: '2026-11-22T00:00:00',
      }),
    ).toBe(prodHash());
  });

  it('does not depend on the order of topics, media or links', () => {
    const base = rawProduct();
    expect(
      prodHash({
        topics: [...(base.topics as unknown[])].reverse(),
        media: [...(base.media as unknown[])].reverse(),
        product_links: [...(base.product_links as unknown[])].reverse(),
      }),
    ).toBe(prodHash());
  });

  const productChanges: [string, Record<string, unknown>][] = [
    ['name', { name: 'Daybook 2' }],
    ['tagline', { tagline: 'New tagline' }],
    ['description', { description: 'Different.' }],
    ['url', { url: 'https://example.com/posts/daybook-2' }],
    ['created time', { created_at: '2026-11-20T08:02:00' }],
    ['featured time disappears', { featured_at: null }],
    ['record id', { id: '11111111-2222-3333-4444-555555555555' }],
    ['a topic', { topics: ['Developer Tools'] }],
    ['a media item', { media: [{ url: 'https://img.example.com/1.png', type: 'image', videoUrl: null }] }],
    ['a link type', { product_links: [{ url: 'https://daybook.dev', type: 'Chrome' }] }],
    ['the thumbnail', { thumbnail: null }],
    ['an unknown field', { slug: 'daybook' }],
  ];

  it.each(productChanges)('changes when %s changes, and the diff reports it', (_what, override) => {
    expect(prodHash(override)).not.toBe(prodHash());
    expect(diffProducts(prod(), prod(override)).length).toBeGreaterThan(0);
  });
});
