/**
 * The field catalogue: every field the upstream documents, every column the analytics views
 * derive, every event type and every token a person can meet has words in both languages; and
 * values are shown one way (capital in 万 or millions of its currency, the same scale before and
 * after; dates as YYYY-MM-DD; codes as their names). A field, column or type added later fails
 * here until it is labelled.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../src/events/catalogue.ts';
import { ENTERPRISE_FIELD_CATEGORIES, SEVERITY_RULES } from '../../src/history/classify.ts';
import { ENTERPRISE_FIELDS as HASHED } from '../../src/history/hash.ts';
import { ENTERPRISE_CHANGE_CATEGORIES, PRODUCT_CHANGE_CATEGORIES } from '../../src/terms/changes.ts';
import {
  CHANGE_COLUMNS,
  ENTERPRISE_COLUMNS,
  ENTERPRISE_FIELDS,
  EVENT_TYPE_LABELS,
  eventTypeLabel,
  fieldLabel,
  formatChangeValue,
  formatField,
  formatHolder,
  formatMoney,
  PRODUCT_FIELDS,
  TOKENS,
  tokenLabel,
} from '../../src/terms/fields.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';
import { humanProblems } from '../support/human.ts';

const HAN = /\p{Script=Han}/u;

function bothLanguages(name: string, words: { zh: string; en: string } | undefined): void {
  expect(words, `${name} has words`).toBeDefined();
  expect(words?.zh, `${name} in Chinese`).toMatch(HAN);
  expect(words?.en, `${name} in English`).not.toMatch(HAN);
  expect(words?.en.trim().length, `${name} in English`).toBeGreaterThan(0);
}

describe('the catalogue labels everything a person can meet', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await freshDatabase();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('labels every documented enterprise field and every product field', () => {
    for (const f of [
      ...HASHED,
      ...Object.keys(ENTERPRISE_FIELD_CATEGORIES),
      'PERSONS',
      'BE_INVEST',
      'CLEARINGINFO',
    ])
      bothLanguages(f, ENTERPRISE_FIELDS[f]);
    for (const f of Object.keys(PRODUCT_FIELDS)) bothLanguages(f, PRODUCT_FIELDS[f]);
  });

  it('labels every column of the enterprise views and of the change log', async () => {
    const cols = await t.sql<{ table_name: string; column_name: string }[]>`
      select table_name, column_name from information_schema.columns
      where table_schema = 'analytics' and table_name in ('enterprise_current', 'enterprise_history', 'enterprise_changes')`;
    expect(cols.length).toBeGreaterThan(50);
    for (const c of cols) {
      const words =
        c.table_name === 'enterprise_changes'
          ? (CHANGE_COLUMNS[c.column_name] ??
            ENTERPRISE_COLUMNS[c.column_name] ??
            (c.column_name === 'change_id' ? { zh: '变更编号', en: 'Change' } : undefined) ??
            (c.column_name === 'current_name' ? ENTERPRISE_COLUMNS.ent_name : undefined))
          : ENTERPRISE_COLUMNS[c.column_name];
      bothLanguages(`${c.table_name}.${c.column_name}`, words);
    }
  });

  it('names every event type, category, severity, kind and reason in both languages', () => {
    for (const type of Object.keys(EVENT_TYPES)) {
      bothLanguages(type, (EVENT_TYPE_LABELS as Record<string, { zh: string; en: string }>)[type]);
      expect(eventTypeLabel(type, 'en')).not.toContain('.');
    }
    for (const c of [...ENTERPRISE_CHANGE_CATEGORIES, ...PRODUCT_CHANGE_CATEGORIES])
      bothLanguages(c, (TOKENS.category as Record<string, { zh: string; en: string }>)[c]);
    for (const r of SEVERITY_RULES) {
      bothLanguages(r.severity, TOKENS.severity[r.severity]);
      if (r.detail !== '*')
        bothLanguages(r.detail, (TOKENS.detail as Record<string, { zh: string; en: string }>)[r.detail]);
    }
    for (const group of Object.keys(TOKENS) as (keyof typeof TOKENS)[])
      for (const [k, words] of Object.entries(TOKENS[group])) bothLanguages(`${group}.${k}`, words);
    // A refinement the classifier joins with commas, and one nobody labelled, still read as words.
    expect(tokenLabel('detail', 'renamed,type_changed', 'zh')).toBe('名称变更、类型变更');
    expect(tokenLabel('detail', 'something_new', 'zh')).toBe('其他');
    // A word every object has is no token's: it reads as any unknown one.
    for (const word of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      expect(tokenLabel('detail', word, 'zh')).toBe('其他');
      expect(eventTypeLabel(word, 'en')).toBe('Another event');
      expect(eventTypeLabel(word, 'zh')).toBe('其他事件');
    }
    expect(eventTypeLabel('company.something.new', 'zh')).toBe('其他事件');
  });

  it('says an undocumented field is one, by name, rather than passing its key off as a label', () => {
    expect(fieldLabel('ENTNAME', 'zh')).toBe('企业名称');
    expect(fieldLabel('NEWFIELD', 'zh')).toBe('未列明字段（NEWFIELD）');
    expect(fieldLabel('NEWFIELD', 'en')).toBe('Undocumented field (NEWFIELD)');
  });
});

describe('values as a person reads them', () => {
  it('shows registered capital with its unit and currency, before and after on one scale', () => {
    expect(formatMoney('10497600000', 'CNY', 'zh')).toBe('1,049,760 万元人民币');
    expect(formatMoney('2099520000', 'CNY', 'zh')).toBe('209,952 万元人民币');
    expect(formatMoney('10497600000', 'CNY', 'en')).toBe('CNY 10,497.6 million');
    expect(formatMoney('63500000', 'USD', 'zh')).toBe('6,350 万美元');
    expect(formatMoney('5000', 'CNY', 'zh')).toBe('0.5 万元人民币');
    expect(formatMoney('1234567.89', 'HKD', 'zh')).toBe('123.456789 万港元');
    expect(formatMoney('300', null, 'zh')).toBe('0.03 万元（币种未知）');
    expect(formatMoney('人民币 2000.00 万元整', 'CNY', 'zh')).toBe('人民币 2000.00 万元整');
    const line = `${formatChangeValue('REGCAP', '2099520000', 'zh', { currency: 'CNY' })} → ${formatChangeValue('REGCAP', '10497600000', 'zh', { currency: 'CNY' })}`;
    expect(line).toBe('209,952 万元人民币 → 1,049,760 万元人民币');
    expect(humanProblems(`注册资本：${line}`, { lang: 'zh' })).toEqual([]);
    expect(humanProblems('REGCAP: 2099520000 → 10497600000', { lang: 'zh' })).toEqual([
      'raw code REGCAP',
      'number without unit 2099520000',
      'number without unit 10497600000',
    ]);
  });

  it('shows codes as their names and dates as dates', () => {
    expect(formatField('PROVINCE', '44', 'zh')).toBe('广东省');
    expect(formatField('INDUSTRYPHY', 'C', 'en')).toBe('Manufacturing');
    expect(formatField('IS_LISTED', '1', 'zh')).toBe('是');
    expect(formatField('OPTO', 'perpetual', 'zh')).toBe('长期');
    expect(formatField('ESDATE', '2001-02-03', 'en')).toBe('2001-02-03');
    expect(formatField('REGCAPCUR', 'USD', 'zh')).toBe('美元');
    expect(formatField('participants', '1200', 'zh')).toBe('1,200 人');
    expect(formatField('participants', '1', 'en')).toBe('1 person');
    expect(formatField('participants', '约100', 'zh')).toBe('约100');
  });

  it('names a shareholder by name, type and credit code, never by its internal id', () => {
    const pid = '0f3a9c1e5b7d4a2f8c6e1b3d5f7a9c0e';
    const row = `上海某某投资有限公司 [企业法人] PID ${pid}`;
    expect(formatHolder(row, 'zh', (p) => (p === pid ? '91310115342050446K' : null))).toBe(
      '上海某某投资有限公司（企业法人，统一社会信用代码 91310115342050446K）',
    );
    expect(formatHolder(row, 'en', () => null)).toBe('上海某某投资有限公司 (企业法人)');
    expect(formatHolder('张三 [自然人股东]', 'zh')).toBe('张三（自然人股东）');
    expect(humanProblems(formatHolder(row, 'zh'), { lang: 'zh' })).toEqual([]);
    expect(humanProblems(row, { lang: 'zh' })).toEqual(['raw code PID', `hex id ${pid}`]);
  });
});

describe('the catalogue as documented', () => {
  it('docs/changes.md lists every field, token and event type with the words the code uses', async () => {
    const { readFileSync } = await import('node:fs');
    const doc = readFileSync(new URL('../../docs/changes.md', import.meta.url), 'utf8');
    for (const [k, f] of Object.entries(ENTERPRISE_FIELDS))
      expect(doc).toContain(`| \`${k}\` | ${f.zh} | ${f.en} |`);
    for (const [g, m] of Object.entries(TOKENS))
      for (const [k, w] of Object.entries(m))
        expect(doc).toContain(`| ${g} | \`${k}\` | ${w.zh} | ${w.en} |`);
    for (const [k, w] of Object.entries(EVENT_TYPE_LABELS))
      expect(doc).toContain(`| \`${k}\` | ${w.zh} | ${w.en} |`);
  });
});
