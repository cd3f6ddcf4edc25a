import { describe, expect, it } from 'vitest';
import {
  capitalWords,
  normalizeEnterprise,
  numberToDecimal,
  shiftDecimal,
} from '../../src/normalize/enterprise.ts';
import { EnterpriseRecord } from '../../src/upstream/schemas.ts';
import { sampleEnterpriseRecord } from '../support/records.ts';

/** A record as the simulator sends it; tests override fields. */
const raw = (overrides: Record<string, unknown> = {}) =>
  sampleEnterpriseRecord({
    ENTTYPE: '有限责任公司(自然人投资或控股)',
    OPSCOPE: '技术开发、技术咨询',
    ...overrides,
  });

function norm(overrides: Record<string, unknown> = {}) {
  return normalizeEnterprise(EnterpriseRecord.parse(raw(overrides)));
}

describe('an enterprise record as the simulator sends it', () => {
  it('becomes one typed row with its children', () => {
    const e = norm();
    expect(e).toMatchObject({
      pid: 'p-1001',
      entName: '上海示例科技有限公司',
      historyName: null,
      isListed: false,
      esDate: '2008-05-12',
      esDateText: null,
      regCap: '500',
      capitalUnit: '万',
      capitalCurrency: 'CNY',
      capitalAmount: '5000000',
      capitalText: '万人民币',
      province: 31,
      operatingTo: '2038-05-11',
      operatingPerpetual: false,
      revokeDate: null,
      revokeReason: null,
      participants: '12',
      participantsCount: 12,
      industryMiddle: '6510',
      extra: {},
    });
    expect(e.persons).toEqual([
      { name: '张三', position: '执行董事', extra: {} },
      { name: '李四', position: '监事', extra: {} },
    ]);
    expect(e.clearingMembers).toEqual([]);
  });
});

describe('dates', () => {
  it.each([
    ['2008-05-12T00:00:00.000Z', '2008-05-12'],
    ['2008-05-12T00:00:00Z', '2008-05-12'],
    ['2008-05-12T00:00:00.000', '2008-05-12'],
    ['2008-05-12T00:00:00', '2008-05-12'],
    ['2008-05-12', '2008-05-12'],
    ['2008-05-12 00:00:00', '2008-05-12'],
    ['2008/5/12', '2008-05-12'],
    ['2008年5月12日', '2008-05-12'],
  ])('ESDATE %s is the date %s', (text, date) => {
    expect(norm({ ESDATE: text })).toMatchObject({ esDate: date, esDateText: null });
  });

  it('a datetime with a zone is read as its Beijing calendar date', () => {
    expect(norm({ ESDATE: '2008-05-11T16:00:00.000Z' }).esDate).toBe('2008-05-12');
    expect(norm({ ESDATE: '2008-05-12T00:00:00+08:00' }).esDate).toBe('2008-05-12');
  });

  it('an unreadable date is null and keeps its original text', () => {
    expect(norm({ APPRDATE: 'sometime in May' })).toMatchObject({
      apprDate: null,
      apprDateText: 'sometime in May',
    });
    expect(norm({ APPRDATE: '2021-02-30' })).toMatchObject({ apprDate: null, apprDateText: '2021-02-30' });
  });

  it('a placeholder date is no date but keeps its text', () => {
    expect(norm({ ESDATE: '0000-00-00' })).toMatchObject({ esDate: null, esDateText: '0000-00-00' });
    expect(norm({ OPFROM: '1899-12-30T00:00:00.000Z' })).toMatchObject({ opFrom: null });
  });

  it('an empty REVOKEDATE means not revoked; a set one is a date', () => {
    expect(norm({ REVOKEDATE: '' })).toMatchObject({ revokeDate: null, revokeDateText: null });
    expect(norm({ REVOKEDATE: '2024-01-02T00:00:00Z' }).revokeDate).toBe('2024-01-02');
  });
});

describe('operating period end (OPTO)', () => {
  it.each([
    '9999-12-31',
    '9999-12-31T00:00:00.000Z',
    '长期',
    '永久',
    '长期有效',
    '无固定期限',
    'Long-term',
    'long term',
    'LONG-TERM',
    'Perpetual',
    'permanent',
  ])('%s is perpetual with no end date and keeps the text', (text) => {
    expect(norm({ OPTO: text })).toMatchObject({
      operatingTo: null,
      operatingPerpetual: true,
      operatingToText: text,
    });
  });

  it('a date is an end date', () => {
    expect(norm({ OPTO: '2038-05-11T00:00:00.000Z' })).toMatchObject({
      operatingTo: '2038-05-11',
      operatingPerpetual: false,
      operatingToText: '2038-05-11T00:00:00.000Z',
    });
  });

  it.each(['0000-00-00', '1899-12-30', 'unknown'])('%s is no end date, not perpetual, text kept', (text) => {
    expect(norm({ OPTO: text })).toMatchObject({
      operatingTo: null,
      operatingPerpetual: false,
      operatingToText: text,
    });
  });

  it('empty or absent is no end date and no text', () => {
    for (const opto of ['', null, undefined]) {
      expect(norm({ OPTO: opto })).toMatchObject({
        operatingTo: null,
        operatingPerpetual: false,
        operatingToText: null,
      });
    }
  });
});

describe('registered capital', () => {
  it('REGCAP as a number or a decimal string gives the same amount', () => {
    expect(norm({ REGCAP: 300 })).toMatchObject({
      regCap: '300',
      regCapText: '300',
      capitalAmount: '3000000',
    });
    expect(norm({ REGCAP: '300.000000' })).toMatchObject({
      regCap: '300',
      regCapText: '300.000000',
      capitalAmount: '3000000',
    });
  });

  it('thousands separators are read', () => {
    expect(norm({ REGCAP: '1,000', REGCAPCUR: '万元' })).toMatchObject({
      regCap: '1000',
      capitalAmount: '10000000',
    });
  });

  it('a REGCAP string with currency and unit inside gives all three', () => {
    expect(norm({ REGCAP: '人民币 2000.00 万元整', REGCAPCUR: null })).toMatchObject({
      regCap: '2000',
      capitalUnit: '万',
      capitalCurrency: 'CNY',
      capitalAmount: '20000000',
      capitalText: null,
    });
  });

  it('万 multiplies exactly, without float noise', () => {
    expect(norm({ REGCAP: 64913.5, REGCAPCUR: '万元人民币' })).toMatchObject({ capitalAmount: '649135000' });
    expect(norm({ REGCAP: '0.07', REGCAPCUR: '万' })).toMatchObject({
      capitalAmount: '700',
      capitalCurrency: null,
    });
    expect(norm({ REGCAP: 1.15, REGCAPCUR: '万元' }).capitalAmount).toBe('11500');
  });

  it.each([
    ['万人民币', '万', 'CNY'],
    ['万元人民币', '万', 'CNY'],
    ['万美元', '万', 'USD'],
    ['万港元', '万', 'HKD'],
    ['万欧元', '万', 'EUR'],
    ['万日元', '万', 'JPY'],
    ['万(元)', '万', 'CNY'],
    ['万元', '万', 'CNY'],
    ['元人民币', '元', 'CNY'],
    ['元', '元', 'CNY'],
    ['美元', null, 'USD'],
    ['亿元', '亿', 'CNY'],
    ['万瑞郎', '万', null],
  ])('REGCAPCUR %s has unit %s and currency %s', (cur, unit, currency) => {
    expect(norm({ REGCAPCUR: cur })).toMatchObject({
      capitalUnit: unit,
      capitalCurrency: currency,
      capitalText: cur,
    });
  });

  it('capital text such as 300万(元) or 6350万美元 gives the number when REGCAP has none', () => {
    expect(norm({ REGCAP: null, REGCAPCUR: '300万(元)' })).toMatchObject({
      regCap: '300',
      capitalUnit: '万',
      capitalCurrency: 'CNY',
      capitalAmount: '3000000',
    });
    expect(norm({ REGCAP: null, REGCAPCUR: '6350万美元' })).toMatchObject({
      capitalAmount: '63500000',
      capitalCurrency: 'USD',
    });
  });

  it('a REGCAP string like 300万(元) is read for number, unit and currency', () => {
    expect(norm({ REGCAP: '300万(元)', REGCAPCUR: '' })).toMatchObject({
      regCap: '300',
      capitalUnit: '万',
      capitalCurrency: 'CNY',
      capitalAmount: '3000000',
      capitalText: null,
    });
  });

  it('a currency without unit counts in whole units', () => {
    expect(norm({ REGCAP: 5000, REGCAPCUR: '美元' }).capitalAmount).toBe('5000');
  });

  it('without unit or currency the amount is unknown', () => {
    expect(norm({ REGCAP: 300, REGCAPCUR: '' })).toMatchObject({
      regCap: '300',
      capitalAmount: null,
      capitalUnit: null,
    });
  });

  it('unreadable capital keeps its text and has no number', () => {
    expect(norm({ REGCAP: '未公开' })).toMatchObject({
      regCap: null,
      regCapText: '未公开',
      capitalAmount: null,
    });
  });

  it('decimal helpers are exact', () => {
    expect(shiftDecimal('64913.5', 4)).toBe('649135000');
    expect(shiftDecimal('0.00001', 4)).toBe('0.1');
    expect(shiftDecimal('12.345', 8)).toBe('1234500000');
    expect(numberToDecimal(1e21)).toBe('1000000000000000000000');
    expect(numberToDecimal(1.5e-7)).toBe('0.00000015');
    expect(capitalWords('人民币 2000.00 万元整')).toEqual({ unit: '万', currency: 'CNY' });
  });
});

describe('IS_LISTED', () => {
  it.each([
    [1, true],
    [0, false],
    ['1', true],
    ['0', false],
    [true, true],
    [false, false],
    ['true', true],
    ['', null],
    [null, null],
  ])('%j is %s', (v, listed) => {
    expect(norm({ IS_LISTED: v }).isListed).toBe(listed);
  });

  it('an unreadable value is null with its text kept', () => {
    expect(norm({ IS_LISTED: 'maybe' })).toMatchObject({ isListed: null, isListedText: 'maybe' });
  });
});

describe('text fields', () => {
  it('empty strings become null and whitespace is trimmed', () => {
    const e = norm({ HISTORYNAME: '  ', LEGALPERSON: '  张三 ', OPLOC: '', ENTSTATUS: ' 存续 ' });
    expect(e).toMatchObject({ historyName: null, legalPerson: '张三', opLoc: null, entStatus: '存续' });
  });

  it('a missing optional field is null, missing arrays are empty', () => {
    const { HISTORYNAME, OPSCOPE, PERSONS, BE_INVEST, CLEARINGINFO, PROVINCE, ...rest } = raw();
    const e = normalizeEnterprise(EnterpriseRecord.parse(rest));
    expect(e).toMatchObject({ historyName: null, opScope: null, province: null, extra: {} });
    expect([e.persons, e.shareholders, e.clearingMembers]).toEqual([[], [], []]);
  });

  it('PROVINCE as a string is an integer; other text is kept aside', () => {
    expect(norm({ PROVINCE: '31' })).toMatchObject({ province: 31, provinceText: null });
    expect(norm({ PROVINCE: '上海' })).toMatchObject({ province: null, provinceText: '上海' });
  });

  it('PROVINCE as a six-digit division code gives its province and keeps the code; a number no column holds is text', () => {
    expect(norm({ PROVINCE: '310115' })).toMatchObject({ province: 31, provinceText: '310115' });
    expect(norm({ PROVINCE: '31011500' })).toMatchObject({ province: null, provinceText: '31011500' });
    expect(norm({ PROVINCE: 99999 })).toMatchObject({ province: null, provinceText: '99999' });
  });

  it('participants beyond what an integer column holds keep their text and have no count', () => {
    expect(norm({ participants: '3000000000' })).toMatchObject({
      participants: '3000000000',
      participantsCount: null,
    });
    expect(norm({ participants: '2147483647' })).toMatchObject({ participantsCount: 2_147_483_647 });
  });

  it('undocumented-type fields are kept as text whatever their JSON type', () => {
    const e = norm({
      SCONFORM: 1,
      ENTTYPECODE: 1130,
      REVOKEREASON: { code: 3, text: '未年检' },
      participants: '  ',
      industry_middle: ['65', '651'],
    });
    expect(e).toMatchObject({
      sconForm: '1',
      entTypeCode: '1130',
      revokeReason: '{"code":3,"text":"未年检"}',
      participants: null,
      participantsCount: null,
      industryMiddle: '["65","651"]',
    });
  });

  it('participants counts only when it is an integer', () => {
    expect(norm({ participants: '25' }).participantsCount).toBe(25);
    expect(norm({ participants: 7 }).participantsCount).toBe(7);
    expect(norm({ participants: '约 20 人' })).toMatchObject({
      participants: '约 20 人',
      participantsCount: null,
    });
    expect(norm({ participants: null })).toMatchObject({ participants: null, participantsCount: null });
  });

  it('unknown top-level fields go to extra as received', () => {
    const e = norm({ NEWFIELD: 'x', nested: { a: [1, 2] }, EMPTY: '' });
    expect(e.extra).toEqual({ NEWFIELD: 'x', nested: { a: [1, 2] }, EMPTY: '' });
  });
});

describe('children', () => {
  it('a shareholder without PID has pid null; with PID keeps it', () => {
    const e = norm();
    expect(e.shareholders).toEqual([
      { name: '张三', type: '自然人股东', pid: null, extra: {} },
      { name: '示例控股有限公司', type: '企业法人', pid: 'p-2002', extra: {} },
    ]);
  });

  it('a blank PID counts as no PID, and a numeric PID becomes text', () => {
    const e = norm({
      BE_INVEST: [
        { PID: '  ', INV: 'A' },
        { PID: 42, INV: 'B', INVTYPE: '' },
      ],
    });
    expect(e.shareholders).toEqual([
      { name: 'A', type: null, pid: null, extra: {} },
      { name: 'B', type: null, pid: '42', extra: {} },
    ]);
  });

  it('ligpriSign 1 and 2 become the liquidation roles; other text is kept', () => {
    const e = norm({
      CLEARINGINFO: [
        { liqMem: '王五', ligpriSign: '1' },
        { liqMem: '赵六', ligpriSign: 2 },
        { liqMem: '钱七', ligpriSign: '清算组成员' },
        { liqMem: '孙八', ligpriSign: '' },
      ],
    });
    expect(e.clearingMembers.map((c) => [c.name, c.position])).toEqual([
      ['王五', '清算组负责人'],
      ['赵六', '清算组成员'],
      ['钱七', '清算组成员'],
      ['孙八', null],
    ]);
  });

  it('HTML around a liquidation member name is stripped', () => {
    const e = norm({
      CLEARINGINFO: [{ liqMem: '<span style="color:red">王&nbsp;五</span>', ligpriSign: '1' }],
    });
    expect(e.clearingMembers[0]?.name).toBe('王 五');
  });

  it('unknown fields on a child go to its extra', () => {
    const e = norm({ PERSONS: [{ NAME: '张三', POSITION: '董事', SINCE: '2020' }] });
    expect(e.persons).toEqual([{ name: '张三', position: '董事', extra: { SINCE: '2020' } }]);
  });

  it('an exact duplicate child is kept once; a person with a position but no name is kept, with the name empty', () => {
    const e = norm({
      PERSONS: [
        { NAME: '张三', POSITION: '董事' },
        { NAME: ' 张三 ', POSITION: '董事' },
        { NAME: '', POSITION: '监事' },
      ],
    });
    expect(e.persons).toEqual([
      { name: '张三', position: '董事', extra: {} },
      { name: '', position: '监事', extra: {} },
    ]);
  });

  it('a position may be empty', () => {
    expect(norm({ PERSONS: [{ NAME: '张三', POSITION: '' }] }).persons).toEqual([
      { name: '张三', position: null, extra: {} },
    ]);
  });
});

describe('children are kept as sent', () => {
  const MARKUP = '<img src=x onerror=alert(1)>';

  it('a clearing member whose name is only markup is kept with that name, and the liquidation is open', () => {
    const e = norm({ CLEARINGINFO: [{ liqMem: MARKUP, ligpriSign: '1' }] });
    expect(e.clearingMembers).toEqual([{ name: MARKUP, position: '清算组负责人', extra: {} }]);
    expect(e.inLiquidation).toBe(true);
  });

  it.each([
    ['an empty element', '<b></b>'],
    ['several tags', '<br/><hr><svg onload=alert(1)></svg>'],
    ['markup around whitespace', '<span>&nbsp;</span>'],
    ['an entity that decodes to nothing', '&#0;'],
  ])('a clearing member named with %s is kept as sent', (_what, liqMem) => {
    expect(norm({ CLEARINGINFO: [{ liqMem: `  ${liqMem} `, ligpriSign: '2' }] }).clearingMembers).toEqual([
      { name: liqMem, position: '清算组成员', extra: {} },
    ]);
  });

  it('markup in a person or shareholder name is data: kept as sent', () => {
    const e = norm({
      PERSONS: [{ NAME: MARKUP, POSITION: '<b>监事</b>' }],
      BE_INVEST: [{ INV: MARKUP, INVTYPE: '<i></i>' }],
    });
    expect(e.persons).toEqual([{ name: MARKUP, position: '<b>监事</b>', extra: {} }]);
    expect(e.shareholders).toEqual([{ name: MARKUP, type: '<i></i>', pid: null, extra: {} }]);
  });

  it('a clearing member with a role but no name is kept, with the name empty', () => {
    const e = norm({ CLEARINGINFO: [{ liqMem: '  ', ligpriSign: '1' }] });
    expect(e.clearingMembers).toEqual([{ name: '', position: '清算组负责人', extra: {} }]);
    expect(e.inLiquidation).toBe(true);
  });

  it('a child with only an undocumented field is kept', () => {
    const e = norm({
      PERSONS: [{ NAME: '', POSITION: null, CARD: '3101' }],
      BE_INVEST: [{ INV: ' ', PID: '', SHARE: 0 }],
      CLEARINGINFO: [{ liqMem: '', NOTE: { text: '公告' } }],
    });
    expect(e.persons).toEqual([{ name: '', position: null, extra: { CARD: '3101' } }]);
    expect(e.shareholders).toEqual([{ name: null, type: null, pid: null, extra: { SHARE: 0 } }]);
    expect(e.clearingMembers).toEqual([{ name: '', position: null, extra: { NOTE: { text: '公告' } } }]);
  });

  it('a shareholder with only a type is kept', () => {
    expect(norm({ BE_INVEST: [{ INV: '', INVTYPE: '企业法人' }] }).shareholders).toEqual([
      { name: null, type: '企业法人', pid: null, extra: {} },
    ]);
  });

  it('a child with nothing at all in it is dropped, its siblings kept', () => {
    const e = norm({
      PERSONS: [
        { NAME: '  ', POSITION: '' },
        {},
        { NAME: '张三', POSITION: '董事' },
        { NAME: null, X: ' ', Y: [] },
      ],
      BE_INVEST: [{ INV: '', INVTYPE: null, PID: '  ' }, { INV: '李四' }],
      CLEARINGINFO: [{ liqMem: '', ligpriSign: '' }, { liqMem: '王五', ligpriSign: '1' }, { Z: { a: '' } }],
    });
    expect(e.persons).toEqual([{ name: '张三', position: '董事', extra: {} }]);
    expect(e.shareholders).toEqual([{ name: '李四', type: null, pid: null, extra: {} }]);
    expect(e.clearingMembers).toEqual([{ name: '王五', position: '清算组负责人', extra: {} }]);
  });

  it('a CLEARINGINFO entry with all fields empty is no member, but the liquidation is open', () => {
    const e = norm({ CLEARINGINFO: [{ liqMem: '', ligpriSign: '  ' }] });
    expect(e.clearingMembers).toEqual([]);
    expect(e.inLiquidation).toBe(true);
  });

  it('a CLEARINGINFO entry that is not an object opens the liquidation too', () => {
    const e = norm({ CLEARINGINFO: [null] });
    expect(e.clearingMembers).toEqual([]);
    expect(e.inLiquidation).toBe(true);
  });

  it('an empty or absent CLEARINGINFO is no liquidation', () => {
    expect(norm({ CLEARINGINFO: [] }).inLiquidation).toBe(false);
    expect(norm({ CLEARINGINFO: null }).inLiquidation).toBe(false);
    expect(norm().inLiquidation).toBe(false);
  });

  it('a number or zero is something: a member with ligpriSign 0 is kept', () => {
    expect(norm({ CLEARINGINFO: [{ liqMem: '', ligpriSign: 0 }] }).clearingMembers).toEqual([
      { name: '', position: '0', extra: {} },
    ]);
  });
});
