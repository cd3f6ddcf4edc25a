import { describe, expect, it } from 'vitest';
import { pageContext } from '../../src/console/layout.ts';
import type { ChangeRow } from '../../src/console/queries.ts';
import { csvHeader, csvLine } from '../../src/console/routes.ts';
import {
  capital,
  changeText,
  changeValue,
  type Held,
  OBSERVATION_TYPES,
  observationDetail,
  observationLabel,
} from '../../src/console/values.ts';
import { observationEventType } from '../../src/events/catalogue.ts';
import { eventTypeLabel } from '../../src/terms/fields.ts';
import { humanProblems } from '../support/human.ts';

const HOLDER = '0f3a'.repeat(8);
const STRANGER = 'ab'.repeat(16);
const held: Held = new Map([
  [HOLDER, { pid: HOLDER, ent_name: '北京某某科技有限公司', uncid: '91110108MA01ABCD2X' }],
]);
const zh = pageContext('zh', '/ui/');
const en = pageContext('en', '/ui/');

function row(o: Partial<ChangeRow>): ChangeRow {
  return {
    change_id: 7,
    pid: 'c'.repeat(32),
    current_name: '某某有限公司',
    uncid: '91310000MA1FL0000X',
    cycle: '2026-11-20',
    detected_at: new Date('2026-11-20T17:30:00Z'),
    category: 'registered_capital',
    field: 'REGCAP',
    kind: 'modified',
    before: '10000000',
    after: '10497600000',
    detail: 'increase',
    severity: 'low',
    to_version: 3,
    before_currency: 'CNY',
    before_known: true,
    after_currency: 'CNY',
    after_known: true,
    ...o,
  };
}

describe('values on the console', () => {
  it('shows registered capital in one scale: the record and its changes alike', () => {
    const record = capital('zh', zh.t, {
      capital_amount: '10497600000',
      capital_currency: 'CNY',
      reg_cap: '1049760',
      capital_text: '万人民币',
    });
    expect(record).toBe('1,049,760 万元人民币');
    expect(changeText('zh', 'REGCAP', '10497600000', { currency: 'CNY', known: true }, held)).toBe(record);
    expect(changeText('en', 'REGCAP', '10497600000', { currency: 'CNY', known: true }, held)).toBe(
      'CNY 10,497.6 million',
    );
    // Another currency, the version's own.
    expect(changeText('zh', 'REGCAP', '5000000', { currency: 'USD', known: true }, held)).toBe('500 万美元');
    // A figure whose unit nobody could read is shown as registered and says so.
    expect(
      capital('zh', zh.t, {
        capital_amount: null,
        capital_currency: null,
        reg_cap: '300',
        capital_text: null,
      }),
    ).toBe('300（登记原文，单位未知）');
    expect(changeText('zh', 'REGCAP', '300', { currency: null, known: false }, held)).toBe('300');
    expect(changeText('zh', 'REGCAPCUR', 'USD', undefined, held)).toBe('美元');
  });

  it('shows a shareholder by name, type and credit code, linked when held, never by PID', () => {
    const value = `北京某某科技有限公司 [企业法人] PID ${HOLDER}`;
    const linked = changeValue(zh, 'BE_INVEST', value, undefined, held).text;
    expect(linked).toBe(
      `<a href="/ui/companies/${HOLDER}">北京某某科技有限公司</a>（企业法人，统一社会信用代码 91110108MA01ABCD2X）`,
    );
    const english = changeValue(en, 'BE_INVEST', value, undefined, held).text;
    expect(english).toContain('(企业法人, USCC 91110108MA01ABCD2X)');
    const stranger = changeValue(
      zh,
      'BE_INVEST',
      `远方投资有限公司 [企业法人] PID ${STRANGER}`,
      undefined,
      held,
    );
    expect(stranger.text).toBe('远方投资有限公司（企业法人）');
  });

  it('names each observation as its event type does, and its details without PIDs', () => {
    for (const kind of Object.keys(OBSERVATION_TYPES)) {
      expect(OBSERVATION_TYPES[kind], kind).toBe(observationEventType(kind));
      expect(observationLabel(zh, kind)).toBe(eventTypeLabel(observationEventType(kind) as string, 'zh'));
    }
    const resolved = observationDetail(
      zh,
      'resolution_changed',
      `keyword resolved to ${HOLDER} before`,
      held,
    );
    expect(resolved.text).toContain('北京某某科技有限公司');
    expect(resolved.text.replace(/<[^>]*>/g, '')).not.toContain(HOLDER);
    expect(
      observationDetail(en, 'resolution_changed', `keyword resolved to ${STRANGER} before`, held).text,
    ).toBe('the keyword found another company before');
    const stale = observationDetail(
      zh,
      'stale_ignored',
      'fetched 2026-11-20T16:30:00.000Z, before 2026-11-20T17:00:00.000Z',
      held,
    );
    expect(stale.text.replace(/<[^>]*>/g, '')).toBe(
      '抓取于 2026-11-21 00:30（北京时间），早于 2026-11-21 01:00（北京时间）',
    );
    const mismatch = observationDetail(
      zh,
      'resolution_mismatch',
      'expected UNCID 91110108MA01ABCD2X; the answer names 别家公司 (no UNCID)',
      held,
    );
    expect(mismatch.text).toBe(
      '预期 统一社会信用代码 91110108MA01ABCD2X；应答为 别家公司（无统一社会信用代码）',
    );
    // A watched shareholder's answer about another company: no PID, in words.
    const shareholder = observationDetail(
      en,
      'resolution_mismatch',
      `expected PID ${HOLDER}; the answer names 别家公司 (UNCID 91110108MA01ABCD2X, PID ${STRANGER})`,
      held,
    );
    expect(shareholder.text.replace(/<[^>]*>/g, '')).toBe(
      'expected the shareholder its holder&#39;s record names; the answer names 别家公司 (Unified social credit code 91110108MA01ABCD2X)',
    );
  });

  it('writes a CSV line in words for a person, and as the view has it for a program', () => {
    const r = row({});
    expect(csvHeader(null)).toBe(
      'change_id,detected_at,cycle,pid,current_name,category,field,kind,before,after,detail,severity,to_version\r\n',
    );
    expect(csvLine(r, null, held)).toBe(
      `7,2026-11-20T17:30:00.000Z,2026-11-20,${'c'.repeat(32)},某某有限公司,registered_capital,REGCAP,modified,10000000,10497600000,increase,low,3\r\n`,
    );
    const line = csvLine(r, 'zh', held);
    expect(line).toBe(
      '2026-11-21 01:30,2026-11-20,某某有限公司,91310000MA1FL0000X,注册资本,注册资本,变更,"1,000 万元人民币","1,049,760 万元人民币",增资,低,3\r\n',
    );
    expect(humanProblems(line, { lang: 'zh', quoted: ['91310000MA1FL0000X'] })).toEqual([]);
    const holder = csvLine(
      row({
        category: 'shareholders',
        field: 'BE_INVEST',
        kind: 'added',
        before: null,
        after: `北京某某科技有限公司 [企业法人] PID ${HOLDER}`,
        detail: null,
        severity: 'medium',
      }),
      'en',
      held,
    );
    expect(holder).not.toContain(HOLDER);
    expect(holder).toContain('"北京某某科技有限公司 (企业法人, USCC 91110108MA01ABCD2X)"');
    expect(holder).toContain(',Shareholders,Shareholders,added,');
  });
});
