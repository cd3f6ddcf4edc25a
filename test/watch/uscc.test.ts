import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  InvalidUsccError,
  isValidUscc,
  normalizeUscc,
  parseUscc,
  USCC_AUTHORITIES,
  USCC_CHARSET,
  USCC_WEIGHTS,
  usccCheckChar,
  usccProblem,
} from '../../src/watch/uscc.ts';

/** Codes as printed on business licences and in docs/registry.md; their check characters hold. */
const REAL = [
  '91350100M000100Y43',
  '91110000600037341L',
  '91310115342050446K',
  '9152000071430580XT',
  '91330100799655058B',
  '9144030071526726XG',
  '914403001922038216',
  '91110000802100433B',
  '91310000MA1FL1MMXL',
  '12100000400000624D',
];

/** A valid code: an authority, 16 characters of the charset, and the check character. */
const validCode = fc
  .tuple(
    fc.constantFrom(...USCC_AUTHORITIES),
    fc.array(fc.constantFrom(...USCC_CHARSET), { minLength: 16, maxLength: 16 }),
  )
  .map(([authority, body]) => {
    const first17 = authority + body.join('');
    return first17 + usccCheckChar(first17);
  });

/** Characters a code may be mistyped with: the charset, the letters it leaves out, and others. */
const TYPOS = `${USCC_CHARSET}IOSVZ-_/.中`;

describe('unified social credit codes', () => {
  it('uses the weights 3^(i-1) mod 31 of GB 32100', () =>
    expect(USCC_WEIGHTS).toEqual([1, 3, 9, 27, 19, 26, 16, 17, 20, 29, 25, 13, 8, 24, 10, 30, 28]));

  it.each(REAL)('accepts the real code %s', (code) => {
    expect(usccProblem(code)).toBeNull();
    expect(parseUscc(code)).toBe(code);
  });

  it('computes the check as 31 − (Σ value × weight mod 31), writing 31 as 0', () => {
    expect(usccCheckChar('10000000000000000')).toBe('Y'); // Σ = 1: 30 is Y
    expect(usccCheckChar('Y0000000000000000')).toBe('1'); // Σ = 30 × 1: 1
    expect(usccCheckChar('9W000000000000000')).toBe('0'); // Σ = 9 + 28 × 3 = 93 = 3 × 31: 31 → 0
    expect(isValidUscc('9W0000000000000000')).toBe(true);
  });

  it('normalizes by trimming and upper-casing (and full-width forms)', () => {
    expect(normalizeUscc('  91350100m000100y43 \n')).toBe('91350100M000100Y43');
    expect(parseUscc('９１３５０１００Ｍ０００１００Ｙ４３')).toBe('91350100M000100Y43');
  });

  it('names the length of a code that is too short or too long', () => {
    expect(usccProblem('91350100M000100Y4')).toBe(
      'a unified social credit code has 18 characters, this one has 17',
    );
    expect(usccProblem('91350100M000100Y433')).toMatch(/this one has 19/);
    expect(usccProblem('')).toBe('the code is empty');
  });

  it('names the position of a character the code may not hold', () => {
    expect(usccProblem('9135O100M000100Y43')).toBe(
      'the character at position 5 ("O") is not allowed: a code holds only 0-9 and A-Z without I, O, S, V, Z',
    );
    expect(usccProblem('91350100M000100Y4-')).toMatch(/^the character at position 18 \("-"\)/);
  });

  it('names a first character that is no registration authority', () =>
    expect(usccProblem('01350100M000100Y43')).toBe(
      'the character at position 1 ("0") names no registration authority (1-9, A, N or Y)',
    ));

  it('names the check character it expected', () => {
    expect(usccProblem('91350100M000100Y44')).toBe('the check character at position 18 is "4", expected "3"');
    expect(() => parseUscc('91350100m000100y44')).toThrow(InvalidUsccError);
    expect(() => parseUscc('91350100m000100y44')).toThrow(
      '"91350100M000100Y44" is not a valid unified social credit code: the check character at position 18 is "4", expected "3"',
    );
  });

  it('every generated valid code passes, in any letter case', () =>
    fc.assert(
      fc.property(validCode, (code) => {
        expect(usccProblem(code)).toBeNull();
        expect(parseUscc(` ${code.toLowerCase()} `)).toBe(code);
      }),
    ));

  it('any single-character change of a valid code fails', () =>
    fc.assert(
      fc.property(
        validCode,
        fc.integer({ min: 0, max: 17 }),
        fc.constantFrom(...Array.from(TYPOS)),
        (code, at, ch) => {
          fc.pre(code[at] !== ch);
          const changed = code.slice(0, at) + ch + code.slice(at + 1);
          expect(isValidUscc(changed)).toBe(false);
        },
      ),
    ));

  it('any swap of two different neighbours among the first 17 characters fails', () =>
    fc.assert(
      fc.property(validCode, fc.integer({ min: 0, max: 15 }), (code, at) => {
        fc.pre(code[at] !== code[at + 1]);
        const swapped = code.slice(0, at) + code[at + 1] + code[at] + code.slice(at + 2);
        expect(isValidUscc(swapped)).toBe(false);
      }),
    ));

  it('a dropped or added character fails', () =>
    fc.assert(
      fc.property(
        validCode,
        fc.integer({ min: 0, max: 17 }),
        fc.constantFrom(...USCC_CHARSET),
        (code, at, ch) => {
          expect(isValidUscc(code.slice(0, at) + code.slice(at + 1))).toBe(false);
          expect(isValidUscc(code.slice(0, at) + ch + code.slice(at))).toBe(false);
        },
      ),
    ));
});
