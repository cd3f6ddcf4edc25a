/**
 * The catalogue's formatting, past what fields.test.ts shows: registered capital exactly on its
 * scale for any amount, thousands separators that take nothing away, Beijing time whatever the
 * machine's zone, every kind of value, shareholders, and the words of codes nobody labelled.
 * Pure: no database.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  beijingTime,
  currencyName,
  enterpriseField,
  fieldLabel,
  formatChangeValue,
  formatField,
  formatHolder,
  formatKind,
  formatMoney,
  grouped,
  holderPid,
  operationWord,
  reasonWord,
  TOKENS,
  tokenLabel,
} from '../../src/terms/fields.ts';

/** `n` / 10^places as an exact decimal string, trailing fraction zeros dropped. */
function exactly(n: bigint, places: number): string {
  const unit = 10n ** BigInt(places);
  const abs = n < 0n ? -n : n;
  const frac = (abs % unit).toString().padStart(places, '0').replace(/0+$/, '');
  const out = frac ? `${abs / unit}.${frac}` : `${abs / unit}`;
  return n < 0n ? `-${out}` : out;
}

describe('formatMoney', () => {
  it('shows any whole amount in 万 (zh) and in millions (en), exactly', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }), (n) => {
        const zh = formatMoney(String(n), 'CNY', 'zh');
        expect(zh).toMatch(/ 万元人民币$/);
        expect(zh.replace(' 万元人民币', '').replaceAll(',', '')).toBe(exactly(n, 4));
        const en = formatMoney(String(n), 'USD', 'en');
        expect(en).toMatch(/^USD .* million$/);
        expect(en.slice(4, -8).replaceAll(',', '')).toBe(exactly(n, 6));
      }),
    );
  });

  it.each([
    ['0', 'CNY', 'zh', '0 万元人民币'],
    ['-0', 'CNY', 'zh', '0 万元人民币'],
    ['-5000', 'CNY', 'zh', '-0.5 万元人民币'],
    ['0005000', 'CNY', 'zh', '0.5 万元人民币'],
    [' 5000 ', 'CNY', 'zh', '0.5 万元人民币'],
    ['50000.0000', 'EUR', 'zh', '5 万欧元'],
    ['5000', 'XYZ', 'zh', '0.5 万XYZ'],
    ['7', 'USD', 'en', 'USD 0.000007 million'],
    ['1500000', null, 'en', '(currency unknown) 1.5 million'],
    ['1e7', 'CNY', 'zh', '1e7'],
    ['12,000', 'CNY', 'zh', '12,000'],
    ['', 'CNY', 'zh', ''],
    [null, 'CNY', 'zh', ''],
  ] as const)('%j %s in %s is %j', (amount, currency, lang, shown) => {
    expect(formatMoney(amount, currency, lang)).toBe(shown);
  });
});

describe('grouped', () => {
  it.each([
    ['0', '0'],
    ['999', '999'],
    ['1000', '1,000'],
    ['1234567.891', '1,234,567.891'],
    ['-1234', '-1,234'],
    ['0.12345', '0.12345'],
  ])('%s is %s', (dec, shown) => {
    expect(grouped(dec)).toBe(shown);
  });

  it('only adds commas, every three digits of the whole part', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n }), fc.option(fc.stringMatching(/^\d{1,8}$/)), (int, frac) => {
        const dec = frac === null ? String(int) : `${int}.${frac}`;
        const g = grouped(dec);
        expect(g.replaceAll(',', '')).toBe(dec);
        const [whole = ''] = g.split('.');
        const groups = whole.split(',');
        expect(groups[0]?.length).toBeGreaterThanOrEqual(1);
        expect(groups[0]?.length).toBeLessThanOrEqual(3);
        for (const part of groups.slice(1)) expect(part).toHaveLength(3);
      }),
    );
  });
});

describe('currencyName', () => {
  it.each([
    ['CNY', 'zh', '人民币'],
    ['USD', 'zh', '美元'],
    ['JPY', 'zh', '日元'],
    ['XYZ', 'zh', 'XYZ'],
    ['CNY', 'en', 'CNY'],
    ['', 'zh', ''],
    [null, 'en', ''],
  ] as const)('%j in %s is %j', (code, lang, shown) => {
    expect(currencyName(code, lang)).toBe(shown);
  });
});

describe('beijingTime', () => {
  it.each([
    [new Date('2024-12-31T16:30:00Z'), '2025-01-01 00:30'],
    ['2024-06-01T00:00:00Z', '2024-06-01 08:00'],
    ['2024-06-01T00:00:00+08:00', '2024-06-01 00:00'],
    ['not a time', 'not a time'],
  ])('%j is %s', (at, shown) => {
    expect(beijingTime(at)).toBe(shown);
  });

  it('is the UTC time eight hours on, to the minute', () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date('1970-01-02'), max: new Date('9999-01-01'), noInvalidDate: true }),
        (d) => {
          const shown = beijingTime(d);
          expect(shown).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/);
          const back = new Date(`${shown.replace(' ', 'T')}:00+08:00`).getTime();
          expect(d.getTime() - back).toBeGreaterThanOrEqual(0);
          expect(d.getTime() - back).toBeLessThan(60_000);
        },
      ),
    );
  });
});

describe('formatKind', () => {
  const PEOPLE = { zh: '人', en: 'people' };
  const RANK = { zh: '名', en: '' };
  it.each([
    ['date', '2001-02-03T04:05:06Z', 'en', undefined, '2001-02-03'],
    ['date', '2001年2月3日', 'zh', undefined, '2001年2月3日'],
    ['flag', 'TRUE', 'en', undefined, 'yes'],
    ['flag', ' y ', 'zh', undefined, '是'],
    ['flag', '否', 'en', undefined, 'no'],
    ['flag', '0', 'zh', undefined, '否'],
    ['flag', 'maybe', 'zh', undefined, 'maybe'],
    ['period_end', 'perpetual', 'en', undefined, 'perpetual'],
    ['period_end', '2030-01-01', 'zh', undefined, '2030-01-01'],
    ['province', '440300', 'zh', undefined, '广东省'],
    ['province', '11', 'en', undefined, 'Beijing'],
    ['province', '99', 'zh', undefined, '99'],
    ['industry_section', ' c ', 'en', undefined, 'Manufacturing'],
    ['industry_section', 'Z', 'zh', undefined, 'Z'],
    ['count', '1', 'en', PEOPLE, '1 person'],
    ['count', '2', 'en', PEOPLE, '2 people'],
    ['count', '1234567', 'zh', PEOPLE, '1,234,567 人'],
    ['count', '1', 'en', RANK, '1'],
    ['count', '3', 'zh', RANK, '3 名'],
    ['count', '12', 'en', undefined, '12'],
    ['count', '约100', 'zh', PEOPLE, '约100'],
    ['text', 'as written', 'zh', undefined, 'as written'],
    ['code', 'PID-1', 'en', undefined, 'PID-1'],
  ] as const)('%s %j in %s is %j', (kind, value, lang, unit, shown) => {
    expect(formatKind(kind, value, lang, {}, unit)).toBe(shown);
  });

  it('shows nothing for no value, whatever the kind', () => {
    for (const kind of ['text', 'date', 'time', 'money', 'flag', 'count', 'province'] as const)
      expect(formatKind(kind, null, 'zh')).toBe('');
  });

  it('shows money in the currency it is given', () => {
    expect(formatKind('money', '63500000', 'zh', { currency: 'USD' })).toBe('6,350 万美元');
  });
});

describe('fields by name', () => {
  it('finds an enterprise field by upstream name or by column', () => {
    expect(enterpriseField('ENTNAME')).toBe(enterpriseField('ent_name'));
    expect(enterpriseField('reg_cap')?.kind).toBe('text');
    expect(enterpriseField('REGCAP')?.kind).toBe('money');
    expect(enterpriseField('nothing')).toBeUndefined();
  });

  it('labels a product field from the product catalogue only', () => {
    expect(fieldLabel('votes_count', 'en', 'product')).toBe('Votes');
    expect(fieldLabel('ENTNAME', 'en', 'product')).toBe('Undocumented field (ENTNAME)');
    expect(fieldLabel('votes_count', 'zh')).toBe('未列明字段（votes_count）');
  });

  it('shows the value of a field it does not know as written', () => {
    expect(formatField('NEWFIELD', '44', 'zh')).toBe('44');
    expect(formatField('NEWFIELD', null, 'zh')).toBe('');
    expect(formatField('province', '44', 'en')).toBe('Guangdong');
  });
});

describe('shareholders', () => {
  it.each([
    ['张三', 'zh', null, '张三'],
    ['某公司 [企业法人]', 'en', null, '某公司 (企业法人)'],
    ['某公司 [企业法人] PID abc', 'zh', null, '某公司（企业法人）'],
    ['某公司 PID abc', 'zh', 'U1', '某公司（统一社会信用代码 U1）'],
    ['某公司 [企业法人] PID abc', 'en', 'U1', '某公司 (企业法人, USCC U1)'],
    ['某公司 [企业法人] PID abc {"x":1}', 'zh', null, '某公司（企业法人） {"x":1}'],
  ] as const)('%j in %s is %j', (row, lang, uscc, shown) => {
    expect(formatHolder(row, lang, () => uscc)).toBe(shown);
  });

  it('reads the PID a row names, if any', () => {
    expect(holderPid('某公司 [企业法人] PID abc')).toBe('abc');
    expect(holderPid('某公司 PID abc {"x":1}')).toBe('abc');
    expect(holderPid('张三')).toBeNull();
    expect(holderPid(null)).toBeNull();
  });

  it('never shows a PID, whatever the name and type', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }).filter((s) => !s.includes('[') && !s.includes(' PID ')),
        fc.stringMatching(/^[0-9a-f]{32}$/),
        fc.constantFrom('zh', 'en'),
        (name, pid, lang) => {
          const shown = formatHolder(`${name} [企业法人] PID ${pid}`, lang);
          expect(shown).not.toContain(pid);
          expect(shown.startsWith(name)).toBe(true);
        },
      ),
    );
  });
});

describe('formatChangeValue', () => {
  it('shows a change value by its field, a shareholder without its PID', () => {
    expect(formatChangeValue('REGCAP', '5000', 'zh', { currency: 'CNY' })).toBe('0.5 万元人民币');
    expect(formatChangeValue('BE_INVEST', '某公司 PID abc', 'zh', { usccOf: () => 'U1' })).toBe(
      '某公司（统一社会信用代码 U1）',
    );
    expect(formatChangeValue(null, '44', 'zh')).toBe('44');
    expect(formatChangeValue('PROVINCE', null, 'zh')).toBe('');
  });
});

describe('the words of codes', () => {
  it.each([
    ['not_found', 'zh', '查无结果'],
    ['not_found', 'en', 'not found'],
    ['brand_new_code', 'zh', '其他（brand new code）'],
    ['brand_new_code', 'en', 'brand new code'],
    // A name every object has is no label.
    ['constructor', 'en', 'constructor'],
    ['', 'zh', ''],
    [null, 'en', ''],
    [undefined, 'zh', ''],
  ] as const)('reason %j in %s is %j', (code, lang, shown) => {
    expect(reasonWord(code, lang)).toBe(shown);
  });

  it('shows an operation word, or the name nobody labelled as written', () => {
    expect(operationWord('job', 'enterprise', 'zh')).toBe('企业查询');
    expect(operationWord('json_type', 'boolean', 'en')).toBe('yes/no');
    expect(operationWord('job', 'brand-new', 'zh')).toBe('brand-new');
  });

  it('joins refinements the classifier joined with commas, in any order', () => {
    const details = Object.keys(TOKENS.detail);
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...details), { minLength: 1, maxLength: 4 }),
        fc.constantFrom('zh', 'en'),
        (ds, lang) => {
          const words = ds.map((d) => tokenLabel('detail', d, lang));
          expect(tokenLabel('detail', ds.join(','), lang)).toBe(words.join(lang === 'zh' ? '、' : ', '));
          expect(tokenLabel('detail', ds.join(', '), lang)).toBe(words.join(lang === 'zh' ? '、' : ', '));
        },
      ),
    );
  });

  it('shows no token as nothing, and a token nobody labelled as other', () => {
    expect(tokenLabel('severity', null, 'zh')).toBe('');
    expect(tokenLabel('severity', '', 'en')).toBe('');
    expect(tokenLabel('severity', 'critical', 'en')).toBe('other');
    expect(tokenLabel('kind', 'modified', 'en')).toBe('changed');
  });
});
