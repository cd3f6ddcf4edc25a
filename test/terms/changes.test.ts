/**
 * The shared words of a change: the facts a change row carries, whoever picks them; which status
 * texts name a bad state, in the registry's Chinese and in English; and the category lists, each
 * a list of distinct names.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  changeFacts,
  ENTERPRISE_CHANGE_CATEGORIES,
  isBadStatus,
  PRODUCT_CHANGE_CATEGORIES,
} from '../../src/terms/changes.ts';

const FACTS = ['after', 'before', 'detail', 'field', 'kind', 'severity'];

describe('changeFacts', () => {
  it('keeps the six facts of a row, values as they are, and nothing else', () => {
    const facts = {
      field: 'REGCAP',
      kind: 'modified',
      before: null,
      after: '10497600000',
      detail: undefined,
      severity: 'high',
    };
    const picked = changeFacts({ id: 7, ...facts, before_currency: 'CNY' });
    expect(picked).toStrictEqual(facts);
    // A fact that is undefined is still there, so a spread over another row overwrites it.
    expect(Object.keys(picked).sort()).toEqual(FACTS);
  });

  it('holds for any row: exactly the six keys, each the same value', () => {
    fc.assert(
      fc.property(
        fc.record({
          field: fc.anything(),
          kind: fc.anything(),
          before: fc.anything(),
          after: fc.anything(),
          detail: fc.anything(),
          severity: fc.anything(),
        }),
        fc.dictionary(
          fc.string().filter((k) => !FACTS.includes(k) && k !== '__proto__'),
          fc.anything(),
        ),
        (facts, others) => {
          const picked = changeFacts({ ...others, ...facts });
          expect(Object.keys(picked).sort()).toEqual(FACTS);
          for (const k of FACTS)
            expect(Object.is(picked[k as keyof typeof picked], facts[k as keyof typeof facts])).toBe(true);
        },
      ),
    );
  });
});

describe('isBadStatus', () => {
  it.each([
    // The registry's words for a company that is gone or going.
    ['吊销，未注销', true],
    ['注销', true],
    ['已注销', true],
    ['清算', true],
    ['停业', true],
    ['撤销', true],
    // English statuses, in any case.
    ['Cancelled', true],
    ['REVOKED', true],
    ['in liquidation', true],
    ['liquidated', true],
    ['suspended', true],
    // A company in business.
    ['存续（在营、开业、在册）', false],
    ['在业', false],
    ['开业', false],
    ['迁出', false],
    ['active', false],
    ['', false],
  ] as const)('%j is bad: %s', (status, bad) => {
    expect(isBadStatus(status)).toBe(bad);
  });

  it('says no status is no bad status', () => {
    expect(isBadStatus(null)).toBe(false);
  });

  it('finds a bad word wherever it stands in the text', () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.constantFrom('吊销', '注销', '清算', '停业', '撤销', 'Cancel', 'revok', 'LIQUIDAT', 'Suspend'),
        fc.string(),
        (before, word, after) => {
          expect(isBadStatus(`${before}${word}${after}`)).toBe(true);
        },
      ),
    );
  });
});

describe('the change categories', () => {
  it.each([
    ['enterprise', ENTERPRISE_CHANGE_CATEGORIES],
    ['product', PRODUCT_CHANGE_CATEGORIES],
  ] as const)('name each %s category once', (_, categories) => {
    expect(new Set(categories).size).toBe(categories.length);
  });
});
