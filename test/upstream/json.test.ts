/**
 * JSON as sent and as Postgres holds it: numbers to the last digit, text Postgres refuses kept
 * with U+FFFD, keys kept whatever they are. The properties run the real path (parse, schema,
 * normalize, the database's numeric and jsonb) over random decimal strings.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { firstDecimal, normalizeEnterprise } from '../../src/normalize/enterprise.ts';
import { normalizeProductList } from '../../src/normalize/product.ts';
import { canonicalJson, toJsonValue } from '../../src/normalize/text.ts';
import {
  decimalOf,
  ExactNumber,
  hasRefusedText,
  parseJsonExact,
  storable,
  storableText,
  stringifyExact,
} from '../../src/upstream/json.ts';
import { EnterpriseSuccess, ProductListSuccess, readStored } from '../../src/upstream/schemas.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';
import { sampleEnterpriseRecord } from '../support/records.ts';

/** A decimal as a registry writes one: no exponent, no superfluous zeros (the canonical text). */
const decimal = fc
  .tuple(
    fc.boolean(),
    fc.stringMatching(/^[1-9]\d{0,39}$/),
    fc.option(fc.stringMatching(/^\d{0,19}[1-9]$/), { nil: undefined }),
  )
  .map(([neg, int, frac]) => `${neg ? '-' : ''}${int}${frac === undefined ? '' : `.${frac}`}`);

const answer = (regcap: string, more = '') =>
  `{"status":"success","markdown":"#","metadata":{"usage":{"credits":3},"content":${JSON.stringify(
    sampleEnterpriseRecord({ PID: 'p1', REGCAPCUR: '万元人民币' }),
  ).replace(/"REGCAP":[^,]+,/, `"REGCAP":${regcap},${more}`)}}}`;

function normalized(text: string) {
  const parsed = readStored(EnterpriseSuccess, parseJsonExact(text));
  if (!parsed.success) throw new Error(parsed.error.message);
  return normalizeEnterprise(parsed.data.metadata.content);
}

describe('parseJsonExact', () => {
  it('is JSON.parse for every document a double holds', () => {
    fc.assert(
      fc.property(fc.jsonValue({ noUnicodeString: false }), (v) => {
        const text = JSON.stringify(v);
        expect(parseJsonExact(text)).toEqual(JSON.parse(text));
      }),
      { numRuns: 300 },
    );
  });

  it('keeps every digit of a number a double does not hold, and reads the rest as numbers', () => {
    const v = parseJsonExact(
      '{"a":123456789012345678901234567890,"b":1e400,"c":0.1,"d":[1.5E+3,-0,9007199254740993],"e":"12345678901234567890"}',
    ) as Record<string, unknown>;
    expect(v.a).toEqual(new ExactNumber('123456789012345678901234567890'));
    expect(v.b).toEqual(new ExactNumber('1e400'));
    expect(v.c).toBe(0.1);
    expect(v.d).toEqual([1500, -0, new ExactNumber('9007199254740993')]);
    expect(v.e).toBe('12345678901234567890');
  });

  it('refuses what JSON.parse refuses', () => {
    for (const bad of ['{"a":1e400,}', '{"a":1e400', '[1e400 2]', '{"a":01e400}', '{"a":1e400}x']) {
      expect(() => parseJsonExact(bad), bad).toThrow(SyntaxError);
    }
  });

  it('keeps __proto__ and constructor keys as own members, with no prototype effect', () => {
    const v = parseJsonExact('{"__proto__":{"polluted":1},"constructor":2,"n":1e400}') as Record<
      string,
      unknown
    >;
    expect(Object.keys(v)).toEqual(['__proto__', 'constructor', 'n']);
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('writes an ExactNumber back as its digits, anywhere in a document', () => {
    const text = '{"a":[123456789012345678901234567890,{"b":-1.00000000000000000000001}],"s":"x"}';
    expect(stringifyExact(parseJsonExact(text))).toBe(text);
  });
});

describe('storable', () => {
  it('replaces NUL and lone surrogates, in values and keys, and nothing else', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        const out = storableText(s);
        expect(hasRefusedText(out)).toBe(false);
        expect(out.length).toBe(s.length);
        if (!hasRefusedText(s)) expect(out).toBe(s);
      }),
    );
    expect(storable({ 'a\u0000': ['x\ud800y', { k: '\udc00' }], ok: '汉字😀' })).toEqual({
      'a\uFFFD': ['x\uFFFDy', { k: '\uFFFD' }],
      ok: '汉字😀',
    });
  });

  it('makes a number beyond any column null, and keeps the others', () => {
    const v = storable(parseJsonExact('[1e400,-1e400,1e-400,0e-400,123456789012345678901234567890]'));
    expect(v).toEqual([null, null, null, 0, new ExactNumber('123456789012345678901234567890')]);
  });
});

describe('a capital written as text', () => {
  it('reads the number in any notation, and never a rounded or truncated one', () => {
    expect(firstDecimal('1.5E+3')).toBe('1500');
    expect(firstDecimal('2e-2 万元')).toBe('0.02');
    expect(firstDecimal('1,000.50 万元')).toBe('1000.5');
    expect(firstDecimal('100 Euro')).toBe('100');
    expect(firstDecimal('123456789012345678901234567890元')).toBe('123456789012345678901234567890');
    // Beyond any column: none, rather than the 1 before its exponent.
    expect(firstDecimal('1e400')).toBeNull();
    expect(normalized(answer('"1e400"')).regCap).toBeNull();
  });
});

describe('an odd value never refuses a paid record', () => {
  it('reads a number where text was documented as its text, an object there as null, and a bare name as a person', () => {
    const content = sampleEnterpriseRecord({
      PID: 'p2',
      REGNO: 310115000999888,
      LEGALPERSON: { name: 'x' },
      PERSONS: ['王五', { NAME: '李四' }],
    });
    const n = normalized(JSON.stringify({ status: 'success', metadata: { content } }));
    expect(n.regNo).toBe('310115000999888');
    expect(n.legalPerson).toBeNull();
    // A child is kept as sent: a bare name in PERSONS is a person of that name.
    expect(n.persons.map((p) => p.name)).toEqual(['王五', '李四']);
  });

  it('keeps a product list whose children or counts are odd', () => {
    const list = {
      result: 'success',
      metadata: [
        {
          id: 'a1',
          product_id: 7,
          name: 'Odd',
          votes_count: '1,234',
          media: [
            { url: null, type: 'image' },
            { url: 'https://m/1.png', type: 7 },
          ],
          product_links: 'none',
          comments: [
            { body: null, created_at: '2026-11-18T00:00:00Z' },
            { body: 'ok', created_at: 5 },
          ],
          topics: ['AI', 3],
        },
      ],
    };
    const parsed = readStored(ProductListSuccess, parseJsonExact(JSON.stringify(list)));
    expect(parsed.success).toBe(true);
    if (!parsed.success) return;
    const p = normalizeProductList(parsed.data.metadata, '2026-11-18', new Date()).products[0];
    expect(p?.votesCount).toBeNull();
    expect(p?.media.map((m) => [m.url, m.type])).toEqual([['https://m/1.png', '7']]);
    expect(p?.links).toEqual([]);
    expect(p?.comments.map((c) => c.body)).toEqual(['ok']);
    expect(p?.topics).toEqual(['AI', '3']);
  });
});

describe('numbers stored exactly', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await freshDatabase();
  });
  afterAll(async () => {
    await t.drop();
  });

  it('a registered capital: the text Postgres stores equals the text sent, and so does the amount', async () => {
    const sent = fc.sample(decimal, { numRuns: 200, seed: 24 });
    const rows = sent.map((d) => {
      const n = normalized(answer(d));
      return { sent: d, reg_cap: n.regCap, capital_amount: n.capitalAmount };
    });
    const stored = await t.sql<{ sent: string; reg_cap: string; capital_amount: string }[]>`
      select sent, reg_cap::numeric::text as reg_cap, capital_amount::numeric::text as capital_amount
      from jsonb_to_recordset(${t.sql.json(rows)}) as r(sent text, reg_cap text, capital_amount text)`;
    for (const r of stored) {
      expect(r.reg_cap).toBe(r.sent);
      // 万: the amount is the same digits, the point four places on.
      expect(decimalOf(`${r.sent}e4`)).toBe(r.capital_amount.replace(/\.0+$/, ''));
    }
  });

  it('an unknown field: jsonb holds the number sent, digit for digit', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(decimal, { minLength: 1, maxLength: 20 }), async (ds) => {
        const n = normalized(answer('1', `"FIGURES":[${ds.join(',')}],`));
        const [row] = await t.sql<{ figures: string[] }[]>`
          select array(select jsonb_array_elements(${t.sql.json(n.extra as never)}::jsonb -> 'FIGURES')::text) as figures`;
        expect(row?.figures).toEqual(ds);
        // The change log compares exact values: a last digit apart is a change.
        const first = ds[0] as string;
        const last = Number(first.at(-1));
        const moved = [`${first.slice(0, -1)}${last === 9 ? 8 : last + 1}`, ...ds.slice(1)];
        const other = normalized(answer('1', `"FIGURES":[${moved.join(',')}],`));
        expect(canonicalJson(toJsonValue(other.extra))).not.toBe(canonicalJson(toJsonValue(n.extra)));
      }),
      { numRuns: 25 },
    );
  });
});
