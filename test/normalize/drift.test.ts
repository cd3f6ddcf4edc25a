import { describe, expect, it } from 'vitest';
import {
  detectDrift,
  ENTERPRISE_RECORD_SPEC,
  formatOf,
  PRODUCT_SPEC,
  SCHEMA_FIELD_SETS,
} from '../../src/normalize/drift.ts';
import { sampleEnterpriseRecord, sampleProductRecord } from '../support/records.ts';

const record = (overrides: Record<string, unknown> = {}) =>
  sampleEnterpriseRecord({
    PID: 'p-1',
    OPTO: '长期',
    OPSCOPE: '软件开发',
    PERSONS: [{ NAME: '张三', POSITION: '执行董事' }],
    BE_INVEST: [
      { INV: '张三', INVTYPE: '自然人股东' },
      { PID: 'p-2', INV: '某公司', INVTYPE: '企业法人' },
    ],
    industry_middle: '软件开发',
    ...overrides,
  });

const enterpriseAnswer = (content: Record<string, unknown>) => ({
  status: 'success',
  markdown: '# x',
  metadata: { usage: { credits: 3, remark: 'enterprise-search' }, content },
});

const product = sampleProductRecord;

describe('format drift detection', () => {
  it('the documented field specs cover exactly the fields the schemas document', () => {
    expect(Object.keys(ENTERPRISE_RECORD_SPEC).sort()).toEqual([...SCHEMA_FIELD_SETS.enterprise].sort());
    expect(Object.keys(PRODUCT_SPEC).sort()).toEqual([...SCHEMA_FIELD_SETS.product].sort());
    const items = (s: (typeof ENTERPRISE_RECORD_SPEC)[string] | undefined) =>
      Object.keys((s?.items ?? {}) as object).sort();
    expect(items(ENTERPRISE_RECORD_SPEC.PERSONS)).toEqual([...SCHEMA_FIELD_SETS.person].sort());
    expect(items(ENTERPRISE_RECORD_SPEC.BE_INVEST)).toEqual([...SCHEMA_FIELD_SETS.shareholder].sort());
    expect(items(ENTERPRISE_RECORD_SPEC.CLEARINGINFO)).toEqual([...SCHEMA_FIELD_SETS.clearing].sort());
    expect(items(PRODUCT_SPEC.media)).toEqual([...SCHEMA_FIELD_SETS.media].sort());
    expect(items(PRODUCT_SPEC.product_links)).toEqual([...SCHEMA_FIELD_SETS.link].sort());
    expect(items(PRODUCT_SPEC.comments)).toEqual([...SCHEMA_FIELD_SETS.comment].sort());
  });

  it('a documented answer shows no drift, documented alternatives included (OPTO as text, PID only for enterprises)', () => {
    expect(detectDrift('enterprise-search', { ent_name: 'x' }, enterpriseAnswer(record()))).toEqual([]);
    expect(
      detectDrift(
        'product-listing',
        { date: '2026-11-20' },
        { result: 'success', markdown: ['# W'], metadata: [product()] },
      ),
    ).toEqual([]);
    expect(
      detectDrift(
        'product-listing',
        { product_name: 'Widget' },
        { result: 'success', markdown: '# W', metadata: product() },
      ),
    ).toEqual([]);
  });

  it('reports unknown fields, missing fields and type variants of an enterprise record', () => {
    const content = record({
      ENTNAME_EN: 'Example Co. Ltd.',
      CONTACT: { phone: '021-1234567' },
      REGCAP: '500.000000',
      ESDATE: '2008-05-12T00:00:00.000',
      OPFROM: '2008-05-12T00:00:00Z',
      PERSONS: [{ NAME: '张三', POSITION: '执行董事', AGE: 40 }],
    });
    delete content.HISTORYNAME;
    delete content.participants;
    const drift = detectDrift('enterprise-search', { ent_name: 'x' }, enterpriseAnswer(content));
    expect(drift.map((d) => [d.field, d.kind, d.seen, d.expected])).toEqual([
      ['CONTACT', 'unknown_field', 'object', 'undocumented'],
      ['ENTNAME_EN', 'unknown_field', 'string', 'undocumented'],
      ['ESDATE', 'type_variant', 'string YYYY-MM-DDTHH:MM:SS.sss', 'string YYYY-MM-DDTHH:MM:SS.sssZ'],
      ['HISTORYNAME', 'missing_field', 'absent', 'string'],
      ['OPFROM', 'type_variant', 'string YYYY-MM-DDTHH:MM:SSZ', 'string YYYY-MM-DDTHH:MM:SS.sssZ'],
      ['PERSONS[].AGE', 'unknown_field', 'number', 'undocumented'],
      ['REGCAP', 'type_variant', 'string', 'number'],
      ['participants', 'missing_field', 'absent', 'any'],
    ]);
    expect(drift.find((d) => d.field === 'REGCAP')?.example).toBe('500.000000');
    expect(drift.find((d) => d.field === 'CONTACT')?.example).toBe('{"phone":"021-1234567"}');
    expect(drift.find((d) => d.field === 'HISTORYNAME')?.example).toBeNull();
  });

  it('counts each drift once per product of a list, and reads the envelope too', () => {
    const a = product({ slug: 'widget', votes_count: '10' });
    const b = product({ slug: 'gadget', featured_at: null });
    delete b.thumbnail;
    const drift = detectDrift(
      'product-listing',
      { date: '2026-11-20' },
      { result: 'success', markdown: ['# W', '# G'], metadata: [a, b, product()], request_id: 'r-1' },
    );
    expect(drift.map((d) => [d.field, d.kind, d.seen, d.records])).toEqual([
      ['$.request_id', 'unknown_field', 'string', 1],
      ['featured_at', 'type_variant', 'null', 1],
      ['slug', 'unknown_field', 'string', 2],
      ['thumbnail', 'missing_field', 'absent', 1],
      ['votes_count', 'type_variant', 'string', 1],
    ]);
  });

  it('reads answers the schema would refuse, and ignores error bodies and non-JSON', () => {
    const content = record();
    delete content.PID;
    expect(detectDrift('enterprise-search', {}, enterpriseAnswer(content))).toMatchObject([
      { field: 'PID', kind: 'missing_field' },
    ]);
    expect(detectDrift('enterprise-search', {}, { status: 'error', error: { code: 'not_found' } })).toEqual(
      [],
    );
    expect(detectDrift('product-listing', { date: '2026-11-20' }, undefined)).toEqual([]);
  });

  it('names timestamp formats as patterns', () => {
    expect(formatOf('2008-05-12T00:00:00.000Z')).toBe('YYYY-MM-DDTHH:MM:SS.sssZ');
    expect(formatOf('2008-05-12T00:00:00')).toBe('YYYY-MM-DDTHH:MM:SS');
    expect(formatOf('2008-05-12 00:00:00+08:00')).toBe('YYYY-MM-DD HH:MM:SS+HH:MM');
    expect(formatOf('2008-05-12')).toBe('YYYY-MM-DD');
    expect(formatOf('')).toBe('empty');
    expect(formatOf('长期')).toBe('text');
  });
});
