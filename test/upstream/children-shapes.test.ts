/**
 * Children in shapes the spec does not show are read, not lost, before normalization decides
 * what they hold: a lone object for a list, a bare name for a child, a shareholder's PID of an
 * odd shape. A liquidation sent as one object still opens.
 */
import { describe, expect, it } from 'vitest';
import { normalizeEnterprise } from '../../src/normalize/enterprise.ts';
import { EnterpriseRecord } from '../../src/upstream/schemas.ts';

const read = (fields: Record<string, unknown>) =>
  normalizeEnterprise(EnterpriseRecord.parse({ PID: 'p1', ENTNAME: '某某有限公司', ...fields }));

describe('children in undocumented shapes', () => {
  it('a CLEARINGINFO sent as one object is a liquidation with that member', () => {
    const e = read({ CLEARINGINFO: { liqMem: '张三', ligpriSign: 1 } });
    expect(e.inLiquidation).toBe(true);
    expect(e.clearingMembers.map((m) => m.name)).toEqual(['张三']);
  });

  it('an empty object is no liquidation, as an empty list is', () => {
    expect(read({ CLEARINGINFO: {} }).inLiquidation).toBe(false);
    expect(read({ CLEARINGINFO: [] }).inLiquidation).toBe(false);
  });

  it('a bare name in a list is a child with that name', () => {
    const e = read({ PERSONS: ['李四'], CLEARINGINFO: ['王五'], BE_INVEST: ['某投资有限公司'] });
    expect(e.persons.map((p) => p.name)).toEqual(['李四']);
    expect(e.clearingMembers.map((m) => m.name)).toEqual(['王五']);
    expect(e.shareholders.map((s) => s.name)).toEqual(['某投资有限公司']);
    expect(e.inLiquidation).toBe(true);
  });

  it('a shareholder whose PID is unreadable keeps its name and type', () => {
    const e = read({ BE_INVEST: [{ PID: { id: 7 }, INV: '某集团有限公司', INVTYPE: '企业法人' }] });
    expect(e.shareholders).toHaveLength(1);
    expect(e.shareholders[0]).toMatchObject({ name: '某集团有限公司', pid: null });
  });
});
