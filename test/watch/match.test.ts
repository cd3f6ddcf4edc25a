import { describe, expect, it } from 'vitest';
import { formerNames, matchLevel, normalizeName } from '../../src/watch/match.ts';

const STAR = {
  entName: '上海星辰信息科技（集团）有限公司',
  historyName: '上海星辰信息技术有限公司',
  uncid: '91310115342050446K',
};

describe('how a watch keyword matched the enterprise it resolved to', () => {
  it('the registered name is exact, whatever the width of its brackets and the spaces around it', () => {
    expect(matchLevel('上海星辰信息科技（集团）有限公司', STAR)).toBe('exact');
    expect(matchLevel('  上海星辰信息科技(集团)有限公司 ', STAR)).toBe('exact');
  });

  it('the former name is former_name', () =>
    expect(matchLevel('上海星辰信息技术有限公司', STAR)).toBe('former_name'));

  it('any of several former names is former_name', () => {
    const e = { ...STAR, historyName: '甲公司；上海星辰（旧）有限公司;乙公司' };
    expect(matchLevel('上海星辰(旧)有限公司', e)).toBe('former_name');
    expect(formerNames(e.historyName)).toEqual(['甲公司', '上海星辰(旧)有限公司', '乙公司']);
  });

  it('a part of the name is partial', () => {
    expect(matchLevel('星辰信息', STAR)).toBe('partial');
    expect(matchLevel('上海星辰信息科技有限公司', STAR)).toBe('partial');
  });

  it('the credit code is code, in any letter case', () => {
    expect(matchLevel('91310115342050446K', STAR)).toBe('code');
    expect(matchLevel(' 91310115342050446k ', STAR)).toBe('code');
  });

  it('another code is partial, and no former name or code matches nothing', () => {
    expect(matchLevel('91350100M000100Y43', STAR)).toBe('partial');
    expect(matchLevel('', { entName: 'A公司', historyName: null, uncid: null })).toBe('partial');
    expect(matchLevel('A公司', { entName: 'A公司', historyName: '', uncid: null })).toBe('exact');
  });

  it('normalizes only brackets and the ends', () => expect(normalizeName(' Ａ（B） ')).toBe('Ａ(B)'));
});
