/**
 * Dropping a child never drops the parent's change, as a property. For random pairs of
 * enterprise records (a status among the registry's, a CLEARINGINFO of 0 to 4 entries, revocation
 * fields set or not, random persons and shareholders, names of text, markup or nothing), the
 * status, liquidation and revocation changes (and so their events) computed with children lost
 * are those computed from the full records:
 * - in the answer: any subset of the child entries blanked (every field empty, whitespace or
 *   null, or the entry not an object), which the normalizer drops;
 * - after normalizing: any subset of the persons, shareholders and clearing members removed or
 *   blanked, whatever a normalizer might drop.
 * (Removing entries from the answer is not a loss: an answer whose CLEARINGINFO has none is a
 * company not in liquidation.) Pure: the normalizer and the classifier, no database. The runs are
 * a fixed budget of work, not of time.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { changeEventType } from '../../src/events/catalogue.ts';
import { diffEnterprises, type EnterpriseChange } from '../../src/history/classify.ts';
import { normalizeEnterprise } from '../../src/normalize/enterprise.ts';
import type { NormalizedEnterprise } from '../../src/normalize/types.ts';
import { ACTIVE_STATUSES, INACTIVE_STATUSES, REVOKE_REASONS } from '../../src/sim/vocab.ts';
import { EnterpriseRecord } from '../../src/upstream/schemas.ts';
import { sampleEnterpriseRecord } from '../support/records.ts';

const RUNS = 200;

const STATUSES = [...ACTIVE_STATUSES, ...INACTIVE_STATUSES].map(([s]) => s);
const MARKUP = ['<img src=x onerror=alert(1)>', '<b></b>', '<span>王&nbsp;五</span>', '&#0;', '<br/>'];
const EMPTY: readonly (string | null | undefined)[] = ['', '   ', '\u3000', null, undefined];

/** A child's text: a name, markup, something random, or nothing. */
const text = fc.oneof(
  fc.constantFrom('张三', '李四', '王五', '赵六', '示例控股有限公司'),
  fc.constantFrom(...MARKUP),
  fc.string({ maxLength: 8 }),
  fc.constantFrom(...EMPTY),
);

const person = fc.record(
  { NAME: text, POSITION: fc.oneof(fc.constantFrom('监事', '董事', '经理'), text), SINCE: text },
  { requiredKeys: ['NAME'] },
);
const shareholder = fc.record(
  { INV: text, INVTYPE: fc.oneof(fc.constantFrom('自然人股东', '企业法人'), text), PID: text },
  { requiredKeys: [] },
);
const clearingEntry = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({ liqMem: text, ligpriSign: fc.constantFrom('1', '2', '', null, 0, '清算组成员') }),
  },
  { weight: 1, arbitrary: fc.constantFrom(null, 'x', 7, [], {}) },
);

/** The fields that vary of one record, over the sample record. */
const record = fc.record({
  ENTSTATUS: fc.oneof(fc.constantFrom(...STATUSES), fc.constantFrom('', null)),
  REVOKEDATE: fc.constantFrom('', null, '2024-01-02', '2023-05-06T00:00:00Z', '0000-00-00', '某日'),
  REVOKEREASON: fc.constantFrom('', null, ...REVOKE_REASONS.slice(0, 3)),
  PERSONS: fc.array(person, { maxLength: 4 }),
  BE_INVEST: fc.array(shareholder, { maxLength: 4 }),
  CLEARINGINFO: fc.oneof(fc.constant([]), fc.array(clearingEntry, { minLength: 1, maxLength: 4 })),
});
type Fields = typeof record extends fc.Arbitrary<infer T> ? T : never;

/** How an entry is blanked: every field empty, whitespace or null, or not an object at all. */
const blankEntry = fc.constantFrom<unknown>(
  {},
  null,
  { NAME: '', POSITION: '  ', liqMem: null, ligpriSign: '', INV: '\u3000', INVTYPE: null, PID: '' },
  { liqMem: ' ', ligpriSign: null },
  { NAME: null, X: ' ', Y: [] },
);

/** For each child list of a record, which entries to blank (and how). */
const blanking = fc.record({
  PERSONS: fc.array(fc.option(blankEntry, { nil: undefined }), { maxLength: 4 }),
  BE_INVEST: fc.array(fc.option(blankEntry, { nil: undefined }), { maxLength: 4 }),
  CLEARINGINFO: fc.array(fc.option(blankEntry, { nil: undefined }), { maxLength: 4 }),
});
type Blanking = typeof blanking extends fc.Arbitrary<infer T> ? T : never;

/** For each normalized child, whether it is kept, removed or blanked. */
const fate = fc.constantFrom('kept', 'removed', 'blanked');
const dropping = fc.record({
  persons: fc.array(fate, { maxLength: 4 }),
  shareholders: fc.array(fate, { maxLength: 4 }),
  clearingMembers: fc.array(fate, { maxLength: 4 }),
});
type Dropping = typeof dropping extends fc.Arbitrary<infer T> ? T : never;

function normalize(fields: Record<string, unknown>): NormalizedEnterprise {
  return normalizeEnterprise(EnterpriseRecord.parse(sampleEnterpriseRecord({ PID: 'p-prop', ...fields })));
}

function blanked(f: Fields, b: Blanking): Record<string, unknown> {
  const blank = (list: readonly unknown[], how: readonly unknown[]) =>
    list.map((entry, i) => (how[i] === undefined ? entry : how[i]));
  return {
    ...f,
    PERSONS: blank(f.PERSONS, b.PERSONS),
    BE_INVEST: blank(f.BE_INVEST, b.BE_INVEST),
    CLEARINGINFO: blank(f.CLEARINGINFO, b.CLEARINGINFO),
  };
}

function dropped(e: NormalizedEnterprise, d: Dropping): NormalizedEnterprise {
  const apply = <T extends object>(list: readonly T[], fates: readonly string[], blank: T): T[] =>
    list.flatMap((child, i) => {
      const f = fates[i] ?? 'kept';
      return f === 'removed' ? [] : f === 'blanked' ? [blank] : [child];
    });
  return {
    ...e,
    persons: apply(e.persons, d.persons, { name: '', position: null, extra: {} }),
    shareholders: apply(e.shareholders, d.shareholders, { name: null, type: null, pid: null, extra: {} }),
    clearingMembers: apply(e.clearingMembers, d.clearingMembers, { name: '', position: null, extra: {} }),
  };
}

/**
 * The status, liquidation and revocation changes as their events: type, severity, kind, detail,
 * and the values for status and revocation (a liquidation's values list its members, which is
 * what a lost child changes).
 */
function parentEvents(rows: readonly EnterpriseChange[]): string[] {
  return rows
    .filter(
      (r) =>
        r.category === 'status' ||
        r.category === 'revocation' ||
        (r.category === 'liquidation' && r.field === 'CLEARINGINFO'),
    )
    .map((r) => {
      const values = r.category === 'liquidation' ? '' : ` ${r.before} → ${r.after}`;
      return `${changeEventType(r.category, r.field, r.detail)} ${r.severity} ${r.kind} ${r.detail}${values}`;
    })
    .sort();
}

describe('children lost never lose a status, liquidation or revocation event', () => {
  it('when any subset of the child entries of the answers is blanked', { timeout: 600_000 }, () => {
    let liquidations = 0;
    fc.assert(
      fc.property(record, record, blanking, blanking, (before, after, bb, ba) => {
        const full = parentEvents(diffEnterprises(normalize(before), normalize(after)));
        const lost = parentEvents(
          diffEnterprises(normalize(blanked(before, bb)), normalize(blanked(after, ba))),
        );
        if (full.some((e) => e.startsWith('company.liquidation'))) liquidations++;
        expect(lost).toEqual(full);
      }),
      { numRuns: RUNS },
    );
    // Not vacuous: about half the pairs open or close a liquidation.
    expect(liquidations).toBeGreaterThan(RUNS / 10);
  });

  it('when any subset of the normalized children is removed or blanked', { timeout: 600_000 }, () => {
    let high = 0;
    fc.assert(
      fc.property(record, record, dropping, dropping, (before, after, db, da) => {
        const b = normalize(before);
        const a = normalize(after);
        const full = parentEvents(diffEnterprises(b, a));
        const lost = parentEvents(diffEnterprises(dropped(b, db), dropped(a, da)));
        if (full.some((e) => e.includes(' high '))) high++;
        expect(lost).toEqual(full);
      }),
      { numRuns: RUNS },
    );
    expect(high).toBeGreaterThan(RUNS / 10);
  });
});
