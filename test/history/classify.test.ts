import { describe, expect, it } from 'vitest';
import {
  diffEnterprises,
  diffProducts,
  type EnterpriseChange,
  type EnterpriseChangeCategory,
  type Severity,
} from '../../src/history/classify.ts';
import { enterpriseContentHash } from '../../src/history/hash.ts';
import { normalizeEnterprise } from '../../src/normalize/enterprise.ts';
import { normalizeProduct } from '../../src/normalize/product.ts';
import { isBadStatus } from '../../src/terms/changes.ts';
import { EnterpriseRecord, Product } from '../../src/upstream/schemas.ts';
import { sampleEnterpriseRecord, sampleProductRecord } from '../support/records.ts';

const rawEnterprise = sampleEnterpriseRecord;

const ent = (o: Record<string, unknown> = {}) =>
  normalizeEnterprise(EnterpriseRecord.parse(rawEnterprise(o)));
const diff = (after: Record<string, unknown>, before: Record<string, unknown> = {}) =>
  diffEnterprises(ent(before), ent(after));
const brief = (rows: EnterpriseChange[]) =>
  rows.map((r) => ({ category: r.category, field: r.field, kind: r.kind, before: r.before, after: r.after }));

describe('enterprise diff', () => {
  it('the same payload gives no change rows', () => {
    expect(diff({})).toEqual([]);
  });

  it('format drift alone gives no change rows', () => {
    expect(diff({ REGCAP: '500.000000', ESDATE: '2008-05-12', IS_LISTED: '0', PROVINCE: '31' })).toEqual([]);
  });

  it('a name change is one medium row in category name', () => {
    expect(diff({ ENTNAME: '上海新名科技有限公司', HISTORYNAME: '上海示例科技有限公司' })).toEqual([
      {
        category: 'name',
        field: 'ENTNAME',
        kind: 'modified',
        before: '上海示例科技有限公司',
        after: '上海新名科技有限公司',
        severity: 'medium',
        detail: null,
      },
      {
        category: 'name',
        field: 'HISTORYNAME',
        kind: 'added',
        before: null,
        after: '上海示例科技有限公司',
        severity: 'medium',
        detail: null,
      },
    ]);
  });

  it('a documented field that becomes empty is removed, one that appears is added', () => {
    expect(brief(diff({ OPLOC: '' }))).toEqual([
      {
        category: 'address',
        field: 'OPLOC',
        kind: 'removed',
        before: '上海市浦东新区张江路 1 号',
        after: null,
      },
    ]);
    expect(brief(diff({ OPLOC: '北京' }, { OPLOC: '' }))).toEqual([
      { category: 'address', field: 'OPLOC', kind: 'added', before: null, after: '北京' },
    ]);
  });

  it('a revert is a change both ways: v1 → v2 → v1', () => {
    const v1 = ent();
    const v2 = ent({ LEGALPERSON: '李四' });
    const forth = diffEnterprises(v1, v2);
    const back = diffEnterprises(v2, v1);
    expect(brief(forth)).toEqual([
      {
        category: 'legal_representative',
        field: 'LEGALPERSON',
        kind: 'modified',
        before: '张三',
        after: '李四',
      },
    ]);
    expect(brief(back)).toEqual([
      {
        category: 'legal_representative',
        field: 'LEGALPERSON',
        kind: 'modified',
        before: '李四',
        after: '张三',
      },
    ]);
    expect(forth[0]?.severity).toBe('medium');
    const v1Again = ent();
    expect(enterpriseContentHash(v1Again)).toBe(enterpriseContentHash(v1));
    expect(enterpriseContentHash(v1Again)).not.toBe(enterpriseContentHash(v2));
  });

  it.each([
    ['ENTSTATUS', { ENTSTATUS: '在业' }, 'status', 'low'],
    ['OPSCOPE', { OPSCOPE: '技术开发、软件销售' }, 'business_scope', 'low'],
    ['ENTTYPE', { ENTTYPE: '股份有限公司' }, 'enterprise_type', 'low'],
    ['ENTTYPECODE', { ENTTYPECODE: 1212 }, 'enterprise_type', 'low'],
    ['OPTO', { OPTO: '2048-05-11' }, 'operating_period', 'low'],
    ['OPFROM', { OPFROM: '2009-01-01' }, 'operating_period', 'low'],
    ['IS_LISTED', { IS_LISTED: 1 }, 'listing', 'low'],
    ['INDUSTRYPHY', { INDUSTRYPHY: 'C' }, 'industry', 'low'],
    ['INDUSTRYBIG', { INDUSTRYBIG: '制造业' }, 'industry', 'low'],
    ['industry_middle', { industry_middle: '3921' }, 'industry', 'low'],
    ['participants', { participants: 30 }, 'insured_employees', 'low'],
    ['UNCID', { UNCID: '91110000600037341L' }, 'registration', 'low'],
    ['REGNO', { REGNO: '370902601053030' }, 'registration', 'low'],
    ['REGORG', { REGORG: '北京市市场监督管理局' }, 'registration', 'low'],
    ['ESDATE', { ESDATE: '2008-05-13' }, 'registration', 'low'],
    ['APPRDATE', { APPRDATE: '2023-01-01' }, 'registration', 'low'],
    ['LEGALPERSONDESC', { LEGALPERSONDESC: '负责人' }, 'legal_representative', 'medium'],
    ['PROVINCE', { PROVINCE: 11 }, 'other', 'low'],
    ['SCONFORM', { SCONFORM: '实物' }, 'other', 'low'],
  ])('a %s change %j is in category %s with severity %s', (field, override, category, severity) => {
    const rows = diff(override);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ field, category, severity, kind: 'modified' });
  });

  it('a revocation reason appearing is a low revocation row', () => {
    expect(diff({ REVOKEREASON: '未按规定年检' })).toEqual([
      {
        category: 'revocation',
        field: 'REVOKEREASON',
        kind: 'added',
        before: null,
        after: '未按规定年检',
        severity: 'low',
        detail: null,
      },
    ]);
  });

  it('the operating period turning perpetual shows "perpetual"', () => {
    expect(brief(diff({ OPTO: '长期' }))).toEqual([
      {
        category: 'operating_period',
        field: 'OPTO',
        kind: 'modified',
        before: '2038-05-11',
        after: 'perpetual',
      },
    ]);
  });
});

describe('status', () => {
  it.each([
    '吊销',
    '吊销，未注销',
    '注销',
    '清算',
    '停业',
    '撤销',
    'Cancelled',
    'revoked',
    'Liquidating',
    'suspended',
  ])('moving to %s is high', (status) => {
    expect(diff({ ENTSTATUS: status })).toEqual([
      {
        category: 'status',
        field: 'ENTSTATUS',
        kind: 'modified',
        before: '存续',
        after: status,
        severity: 'high',
        detail: 'to_bad',
      },
    ]);
  });

  it('moving back to a good value is low', () => {
    expect(diff({ ENTSTATUS: '存续' }, { ENTSTATUS: '停业' })[0]).toMatchObject({
      severity: 'low',
      detail: null,
    });
  });

  it('isBadStatus knows the good ones', () => {
    expect(['存续', '在营（开业）企业', 'In Business', '迁出', null].map(isBadStatus)).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
  });
});

describe('registered capital', () => {
  it('an increase is low, shown as amounts in currency units', () => {
    expect(diff({ REGCAP: 1000 })).toEqual([
      {
        category: 'registered_capital',
        field: 'REGCAP',
        kind: 'modified',
        before: '5000000',
        after: '10000000',
        severity: 'low',
        detail: 'increase',
      },
    ]);
  });

  it('a decrease is medium', () => {
    expect(diff({ REGCAP: '64913.5' }, { REGCAP: 64914 })[0]).toMatchObject({
      before: '649140000',
      after: '649135000',
      severity: 'medium',
      detail: 'decrease',
    });
  });

  it('a currency change is a REGCAPCUR row and not an increase or decrease', () => {
    const rows = diff({ REGCAP: 600, REGCAPCUR: '万美元' });
    expect(rows.map((r) => [r.field, r.before, r.after, r.detail])).toEqual([
      ['REGCAP', '5000000', '6000000', null],
      ['REGCAPCUR', 'CNY', 'USD', null],
    ]);
  });

  it('the same amount written in another unit is no change', () => {
    expect(diff({ REGCAP: 5000000, REGCAPCUR: '元' })).toEqual([]);
  });
});

describe('revocation', () => {
  it('a revocation date being set is high', () => {
    expect(diff({ REVOKEDATE: '2024-06-01T00:00:00.000Z' })).toEqual([
      {
        category: 'revocation',
        field: 'REVOKEDATE',
        kind: 'added',
        before: null,
        after: '2024-06-01',
        severity: 'high',
        detail: 'revoked',
      },
    ]);
  });

  it('a corrected revocation date is low', () => {
    expect(diff({ REVOKEDATE: '2024-06-02' }, { REVOKEDATE: '2024-06-01' })[0]).toMatchObject({
      severity: 'low',
    });
  });
});

describe('key personnel', () => {
  it('a person added, removed and with a new position: matched by name', () => {
    const rows = diff({
      PERSONS: [
        { NAME: '张三', POSITION: '执行董事兼总经理' },
        { NAME: '周九', POSITION: '监事' },
      ],
    });
    expect(rows).toEqual([
      {
        category: 'key_personnel',
        field: 'PERSONS',
        kind: 'added',
        before: null,
        after: '周九 (监事)',
        severity: 'low',
        detail: null,
      },
      {
        category: 'key_personnel',
        field: 'PERSONS',
        kind: 'modified',
        before: '张三 (执行董事)',
        after: '张三 (执行董事兼总经理)',
        severity: 'low',
        detail: 'position_changed',
      },
      {
        category: 'key_personnel',
        field: 'PERSONS',
        kind: 'removed',
        before: '李四 (监事)',
        after: null,
        severity: 'low',
        detail: null,
      },
    ]);
  });

  it('a reordered list is no change', () => {
    expect(
      diff({
        PERSONS: [
          { NAME: '李四', POSITION: '监事' },
          { NAME: '张三', POSITION: '执行董事' },
        ],
      }),
    ).toEqual([]);
  });
});

describe('shareholders', () => {
  it('an enterprise shareholder is matched by PID even when renamed', () => {
    const rows = diff({
      BE_INVEST: [
        { INV: '张三', INVTYPE: '自然人股东' },
        { PID: 'p-2002', INV: '示例集团有限公司', INVTYPE: '企业法人' },
      ],
    });
    expect(rows).toEqual([
      {
        category: 'shareholders',
        field: 'BE_INVEST',
        kind: 'modified',
        before: '示例控股有限公司 [企业法人] PID p-2002',
        after: '示例集团有限公司 [企业法人] PID p-2002',
        severity: 'medium',
        detail: 'renamed',
      },
    ]);
  });

  it('a natural-person shareholder is matched by name; a type change is medium', () => {
    const rows = diff({
      BE_INVEST: [
        { INV: '张三', INVTYPE: '非农民自然人' },
        { PID: 'p-2002', INV: '示例控股有限公司', INVTYPE: '企业法人' },
      ],
    });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      kind: 'modified',
      before: '张三 [自然人股东]',
      after: '张三 [非农民自然人]',
      severity: 'medium',
      detail: 'type_changed',
    });
  });

  it('added and removed shareholders are medium', () => {
    const rows = diff({ BE_INVEST: [{ INV: '王五', INVTYPE: '自然人股东' }] });
    expect(rows.map((r) => [r.kind, r.before ?? r.after, r.severity])).toEqual([
      ['added', '王五 [自然人股东]', 'medium'],
      ['removed', '张三 [自然人股东]', 'medium'],
      ['removed', '示例控股有限公司 [企业法人] PID p-2002', 'medium'],
    ]);
  });
});

describe('liquidation', () => {
  const members = [
    { liqMem: '<span>王五</span>', ligpriSign: '1' },
    { liqMem: '赵六', ligpriSign: '2' },
  ];

  it('opening is one high row plus a low row per member', () => {
    expect(diff({ CLEARINGINFO: members })).toEqual([
      {
        category: 'liquidation',
        field: 'CLEARINGINFO',
        kind: 'added',
        before: null,
        after: '王五 (清算组负责人); 赵六 (清算组成员)',
        severity: 'high',
        detail: 'opened',
      },
      {
        category: 'liquidation',
        field: 'CLEARINGINFO.member',
        kind: 'added',
        before: null,
        after: '王五 (清算组负责人)',
        severity: 'low',
        detail: null,
      },
      {
        category: 'liquidation',
        field: 'CLEARINGINFO.member',
        kind: 'added',
        before: null,
        after: '赵六 (清算组成员)',
        severity: 'low',
        detail: null,
      },
    ]);
  });

  it('a member change within an open liquidation is low', () => {
    const rows = diff(
      { CLEARINGINFO: [members[0], { liqMem: '孙八', ligpriSign: '2' }] },
      { CLEARINGINFO: members },
    );
    expect(rows.map((r) => [r.field, r.kind, r.before, r.after, r.severity])).toEqual([
      ['CLEARINGINFO.member', 'added', null, '孙八 (清算组成员)', 'low'],
      ['CLEARINGINFO.member', 'removed', '赵六 (清算组成员)', null, 'low'],
    ]);
  });

  it('closing is a removed row with detail closed', () => {
    const rows = diff({ CLEARINGINFO: [] }, { CLEARINGINFO: members });
    expect(rows[0]).toMatchObject({
      field: 'CLEARINGINFO',
      kind: 'removed',
      detail: 'closed',
      severity: 'low',
    });
  });
});

describe('unknown fields', () => {
  it('appearing, changing and disappearing are extra rows keyed by the field, values as JSON', () => {
    const rows = diff({ NEW: 'x', CHANGED: { a: 2 } }, { CHANGED: { a: 1 }, GONE: 7 });
    expect(brief(rows)).toEqual([
      { category: 'extra', field: 'CHANGED', kind: 'modified', before: '{"a":1}', after: '{"a":2}' },
      { category: 'extra', field: 'GONE', kind: 'removed', before: '7', after: null },
      { category: 'extra', field: 'NEW', kind: 'added', before: null, after: '"x"' },
    ]);
    expect(rows.every((r) => r.severity === 'low')).toBe(true);
  });
});

describe('output order', () => {
  it('is sorted by category, field, kind, before, after whatever the input order', () => {
    const rows = diff({
      ENTSTATUS: '注销',
      LEGALPERSON: '李四',
      ENTNAME: '新名',
      Z_EXTRA: 1,
      PERSONS: [{ NAME: '周九', POSITION: '监事' }],
    });
    const keys = rows.map((r) => `${r.category}|${r.field}|${r.kind}`);
    expect(keys).toEqual([...keys].sort());
    expect(
      diff({
        ENTSTATUS: '注销',
        LEGALPERSON: '李四',
        ENTNAME: '新名',
        Z_EXTRA: 1,
        PERSONS: [{ NAME: '周九', POSITION: '监事' }],
      }),
    ).toEqual(rows);
  });
});

describe('severity (the short table of docs/changes.md, "Categories and severities")', () => {
  // Each case is a real change between two versions of the shared record, run through the diff;
  // the expected [field, category, severity] of every resulting row is written out from that
  // table (the README's "Change severity" table, moved), not taken from SEVERITY_RULES, so a wrong
  // entry in the table fails here.
  type Row = [field: string, category: EnterpriseChangeCategory, severity: Severity];
  /** Rows in one order whatever order they were written in (the output order is tested elsewhere). */
  const sorted = (rows: Row[]) => rows.map((r) => r.join('|')).sort();
  const rowsOf = (after: Record<string, unknown>, before: Record<string, unknown> = {}) =>
    sorted(diff(after, before).map((r): Row => [r.field, r.category, r.severity]));

  describe('high', () => {
    it.each(['吊销', '注销', '清算', '停业', '撤销', 'cancelled', 'revoked', 'liquidating', 'suspended'])(
      'status 存续 → %s (a bad value) is high',
      (status) => {
        expect(rowsOf({ ENTSTATUS: status })).toEqual(sorted([['ENTSTATUS', 'status', 'high']]));
      },
    );

    it('status moving from one bad value to another (吊销 → 注销) is high', () => {
      expect(rowsOf({ ENTSTATUS: '注销' }, { ENTSTATUS: '吊销' })).toEqual(
        sorted([['ENTSTATUS', 'status', 'high']]),
      );
    });

    it('a liquidation opening (CLEARINGINFO empty → non-empty) is high; its members are low', () => {
      const opened = rowsOf({
        CLEARINGINFO: [
          { liqMem: '王五', ligpriSign: '1' },
          { liqMem: '赵六', ligpriSign: '2' },
        ],
      });
      expect(opened).toEqual(
        sorted([
          ['CLEARINGINFO', 'liquidation', 'high'],
          ['CLEARINGINFO.member', 'liquidation', 'low'],
          ['CLEARINGINFO.member', 'liquidation', 'low'],
        ]),
      );
    });

    it('a revocation date being set is high', () => {
      expect(rowsOf({ REVOKEDATE: '2024-06-01' })).toEqual(sorted([['REVOKEDATE', 'revocation', 'high']]));
    });
  });

  describe('medium', () => {
    it.each<[string, Record<string, unknown>, Record<string, unknown>, Row[]]>([
      ['the name changed', { ENTNAME: '上海新名科技有限公司' }, {}, [['ENTNAME', 'name', 'medium']]],
      [
        'the former name changed',
        { HISTORYNAME: '上海旧名科技有限公司' },
        { HISTORYNAME: '上海更旧科技有限公司' },
        [['HISTORYNAME', 'name', 'medium']],
      ],
      [
        'the legal representative changed',
        { LEGALPERSON: '王五' },
        {},
        [['LEGALPERSON', 'legal_representative', 'medium']],
      ],
      [
        'the registered capital decreased (same currency, 500 → 400 万人民币)',
        { REGCAP: 400 },
        {},
        [['REGCAP', 'registered_capital', 'medium']],
      ],
      [
        'a shareholder added',
        {
          BE_INVEST: [
            { INV: '张三', INVTYPE: '自然人股东' },
            { PID: 'p-2002', INV: '示例控股有限公司', INVTYPE: '企业法人' },
            { INV: '王五', INVTYPE: '自然人股东' },
          ],
        },
        {},
        [['BE_INVEST', 'shareholders', 'medium']],
      ],
      [
        'a shareholder removed',
        { BE_INVEST: [{ PID: 'p-2002', INV: '示例控股有限公司', INVTYPE: '企业法人' }] },
        {},
        [['BE_INVEST', 'shareholders', 'medium']],
      ],
      [
        'a shareholder renamed (same PID)',
        {
          BE_INVEST: [
            { INV: '张三', INVTYPE: '自然人股东' },
            { PID: 'p-2002', INV: '示例集团有限公司', INVTYPE: '企业法人' },
          ],
        },
        {},
        [['BE_INVEST', 'shareholders', 'medium']],
      ],
      [
        'a shareholder with a new type',
        {
          BE_INVEST: [
            { INV: '张三', INVTYPE: '非农民自然人' },
            { PID: 'p-2002', INV: '示例控股有限公司', INVTYPE: '企业法人' },
          ],
        },
        {},
        [['BE_INVEST', 'shareholders', 'medium']],
      ],
    ])('%s is medium', (_what, after, before, expected) => {
      expect(rowsOf(after, before)).toEqual(sorted(expected));
    });
  });

  describe('low', () => {
    it.each<[string, Record<string, unknown>, Record<string, unknown>, Row[]]>([
      [
        'the registered capital increased (500 → 600 万人民币)',
        { REGCAP: 600 },
        {},
        [['REGCAP', 'registered_capital', 'low']],
      ],
      [
        'the registered capital in another currency (500 万人民币 → 400 万美元: not a same-currency decrease)',
        { REGCAP: 400, REGCAPCUR: '万美元' },
        {},
        [
          ['REGCAP', 'registered_capital', 'low'],
          ['REGCAPCUR', 'registered_capital', 'low'],
        ],
      ],
      [
        'status 在营 → 存续 (not a bad value)',
        { ENTSTATUS: '存续' },
        { ENTSTATUS: '在营' },
        [['ENTSTATUS', 'status', 'low']],
      ],
      [
        'status 停业 → 存续 (back to a good value)',
        { ENTSTATUS: '存续' },
        { ENTSTATUS: '停业' },
        [['ENTSTATUS', 'status', 'low']],
      ],
      ['the address', { OPLOC: '上海市浦东新区张江路 2 号' }, {}, [['OPLOC', 'address', 'low']]],
      ['the business scope', { OPSCOPE: '技术开发、软件销售' }, {}, [['OPSCOPE', 'business_scope', 'low']]],
      ['the enterprise type', { ENTTYPE: '股份有限公司' }, {}, [['ENTTYPE', 'enterprise_type', 'low']]],
      ['the enterprise type code', { ENTTYPECODE: '1212' }, {}, [['ENTTYPECODE', 'enterprise_type', 'low']]],
      ['the operating period end', { OPTO: '2048-05-11' }, {}, [['OPTO', 'operating_period', 'low']]],
      ['the operating period start', { OPFROM: '2009-01-01' }, {}, [['OPFROM', 'operating_period', 'low']]],
      ['the listing', { IS_LISTED: 1 }, {}, [['IS_LISTED', 'listing', 'low']]],
      ['the industry', { INDUSTRYBIG: '制造业' }, {}, [['INDUSTRYBIG', 'industry', 'low']]],
      [
        'key personnel (one added, one with a new position)',
        {
          PERSONS: [
            { NAME: '张三', POSITION: '执行董事兼总经理' },
            { NAME: '李四', POSITION: '监事' },
            { NAME: '周九', POSITION: '董事' },
          ],
        },
        {},
        [
          ['PERSONS', 'key_personnel', 'low'],
          ['PERSONS', 'key_personnel', 'low'],
        ],
      ],
      [
        'key personnel (one removed)',
        { PERSONS: [{ NAME: '张三', POSITION: '执行董事' }] },
        {},
        [['PERSONS', 'key_personnel', 'low']],
      ],
      [
        'liquidation members within an open liquidation',
        {
          CLEARINGINFO: [
            { liqMem: '王五', ligpriSign: '1' },
            { liqMem: '孙八', ligpriSign: '2' },
          ],
        },
        {
          CLEARINGINFO: [
            { liqMem: '王五', ligpriSign: '1' },
            { liqMem: '赵六', ligpriSign: '2' },
          ],
        },
        [
          ['CLEARINGINFO.member', 'liquidation', 'low'],
          ['CLEARINGINFO.member', 'liquidation', 'low'],
        ],
      ],
      [
        'a liquidation closing (only an opening is high)',
        { CLEARINGINFO: [] },
        { CLEARINGINFO: [{ liqMem: '王五', ligpriSign: '1' }] },
        [
          ['CLEARINGINFO', 'liquidation', 'low'],
          ['CLEARINGINFO.member', 'liquidation', 'low'],
        ],
      ],
      ['the insured employees', { participants: 30 }, {}, [['participants', 'insured_employees', 'low']]],
      ['the credit code', { UNCID: '91110000600037341L' }, {}, [['UNCID', 'registration', 'low']]],
      ['the registration number', { REGNO: '370902601053030' }, {}, [['REGNO', 'registration', 'low']]],
      [
        'the registration authority',
        { REGORG: '北京市市场监督管理局' },
        {},
        [['REGORG', 'registration', 'low']],
      ],
      ['the establishment date', { ESDATE: '2008-05-13' }, {}, [['ESDATE', 'registration', 'low']]],
      ['the approval date', { APPRDATE: '2023-01-01' }, {}, [['APPRDATE', 'registration', 'low']]],
      [
        'unknown fields added, changed and removed',
        { NEW: 'x', CHANGED: { a: 2 } },
        { CHANGED: { a: 1 }, GONE: 7 },
        [
          ['CHANGED', 'extra', 'low'],
          ['GONE', 'extra', 'low'],
          ['NEW', 'extra', 'low'],
        ],
      ],
    ])('%s is low', (_what, after, before, expected) => {
      expect(rowsOf(after, before)).toEqual(sorted(expected));
    });
  });
});

describe('product diff', () => {
  // One media item, so that the diff below shows one added and one removed.
  const rawProduct = (o: Record<string, unknown> = {}) =>
    normalizeProduct(
      Product.parse(
        sampleProductRecord({
          media: [{ url: 'https://img.example.com/1.png', type: 'image', videoUrl: null }],
          ...o,
        }),
      ),
    );

  it('votes, comments and the update time are not changes', () => {
    expect(
      diffProducts(
        rawProduct(),
        rawProduct({ votes_count: 999, comments_count: 1, updated_at: '2026-12-01T00:00:00' }),
      ),
    ).toEqual([]);
  });

  it('reports name, tagline, topics, media, links and extra, all low', () => {
    const rows = diffProducts(
      rawProduct(),
      rawProduct({
        name: 'Daybook Pro',
        tagline: '',
        topics: ['Developer Tools', 'SaaS'],
        media: [{ url: 'https://img.example.com/2.png', type: 'image', videoUrl: null }],
        product_links: [
          { url: 'https://daybook.dev', type: 'Website' },
          { url: 'https://c.example', type: 'Chrome' },
        ],
        slug: 'daybook',
      }),
    );
    expect(rows.map((r) => [r.category, r.field, r.kind, r.before, r.after])).toEqual([
      ['extra', 'slug', 'added', null, '"daybook"'],
      ['links', 'product_links', 'added', null, '{"extra":{},"type":"Chrome","url":"https://c.example"}'],
      [
        'media',
        'media',
        'added',
        null,
        '{"extra":{},"type":"image","url":"https://img.example.com/2.png","videoUrl":null}',
      ],
      [
        'media',
        'media',
        'removed',
        '{"extra":{},"type":"image","url":"https://img.example.com/1.png","videoUrl":null}',
        null,
      ],
      ['name', 'name', 'modified', 'Daybook', 'Daybook Pro'],
      ['tagline', 'tagline', 'removed', 'History for your data', null],
      ['topics', 'topics', 'added', null, 'SaaS'],
      ['topics', 'topics', 'removed', 'Productivity', null],
    ]);
    expect(rows.every((r) => r.severity === 'low')).toBe(true);
  });

  it('a revert of a product is a change both ways', () => {
    const v1 = rawProduct();
    const v2 = rawProduct({ tagline: 'Another' });
    expect(diffProducts(v1, v2)).toHaveLength(1);
    expect(diffProducts(v2, v1)[0]).toMatchObject({ before: 'Another', after: 'History for your data' });
  });
});
