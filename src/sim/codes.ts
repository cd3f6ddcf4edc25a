/**
 * Registry code maths (docs/registry.md): the 18-character unified social credit code of GB 32100-2015
 * with its organisation-code check (GB 11714), and the 15-digit registration number with its
 * ISO 7064 MOD 11,10 check digit. Pure functions; randomness only through the `Rng` passed in.
 */
import type { Rng } from './rng.ts';

/** The 31 characters a USCC may hold (no I, O, S, V, Z), in value order 0–30. */
export const USCC_CHARSET = '0123456789ABCDEFGHJKLMNPQRTUWXY';
const USCC_WEIGHTS = [1, 3, 9, 27, 19, 26, 16, 17, 20, 29, 25, 13, 8, 24, 10, 30, 28];
const ORG_WEIGHTS = [3, 7, 9, 10, 5, 8, 4, 2];
const USCC_RE = /^[0-9A-HJ-NPQRTUWXY]{18}$/;
const DIGITS = '0123456789';

/** The check character (position 18) of the first 17 characters of a USCC. */
export function usccCheckChar(first17: string): string {
  if (first17.length !== 17) throw new RangeError(`a USCC body has 17 characters, got ${first17.length}`);
  let sum = 0;
  for (let i = 0; i < 17; i++) {
    const v = USCC_CHARSET.indexOf(first17[i] as string);
    if (v < 0) throw new RangeError(`"${first17[i]}" is not a USCC character`);
    sum += v * (USCC_WEIGHTS[i] as number);
  }
  return USCC_CHARSET[(31 - (sum % 31)) % 31] as string;
}

/** The GB 11714 check character of an 8-character organisation code body (0–9, A–Z). */
export function orgCodeCheckChar(body8: string): string {
  if (!/^[0-9A-Z]{8}$/.test(body8)) throw new RangeError(`not an organisation code body: ${body8}`);
  let sum = 0;
  for (let i = 0; i < 8; i++) {
    // parseInt base 36 maps 0–9 to 0–9 and A–Z to 10–35, as GB 11714 does.
    sum += Number.parseInt(body8[i] as string, 36) * (ORG_WEIGHTS[i] as number);
  }
  const c = 11 - (sum % 11);
  return c === 10 ? 'X' : c === 11 ? '0' : String(c);
}

/** True when `code` is an 18-character USCC whose own check and organisation-code check both hold. */
export function isValidUscc(code: string): boolean {
  return (
    USCC_RE.test(code) &&
    usccCheckChar(code.slice(0, 17)) === code[17] &&
    orgCodeCheckChar(code.slice(8, 16)) === code[16]
  );
}

/**
 * A valid USCC registered by industry and commerce (9) in `division` (6-digit GB/T 2260 code of
 * the registering authority). `category` is 1 for enterprises, 2 individual businesses, 3 farmers'
 * cooperatives. `era` says when the organisation code was issued: codes issued with the USCC
 * reform (from October 2015) start MA, older ones are all digits.
 */
export function makeUscc(
  rng: Rng,
  division: string,
  category: 1 | 2 | 3 = 1,
  era: 'old' | 'new' | 'either' = 'either',
): string {
  if (!/^\d{6}$/.test(division)) throw new RangeError(`not a 6-digit division code: ${division}`);
  const reform = era === 'new' || (era === 'either' && rng.chance(0.6));
  const body = reform
    ? `MA${Array.from({ length: 6 }, () => USCC_CHARSET[rng.int(0, 30)]).join('')}`
    : Array.from({ length: 8 }, () => DIGITS[rng.int(0, 9)]).join('');
  // The organisation check is 0–9 or X, all of which the USCC charset holds.
  const first17 = `9${category}${division}${body}${orgCodeCheckChar(body)}`;
  return first17 + usccCheckChar(first17);
}

/** The ISO 7064 MOD 11,10 check digit of a 14-digit registration number body. */
export function regnoCheckDigit(first14: string): string {
  if (!/^\d{14}$/.test(first14)) throw new RangeError(`a registration number body has 14 digits: ${first14}`);
  let p = 10;
  for (const ch of first14) {
    const s = ((Number(ch) + p) % 10 || 10) * 2;
    p = s % 11;
  }
  return String((11 - p) % 10);
}

/** True when `s` is 15 digits whose last is the MOD 11,10 check digit of the first 14. */
export function isValidRegno(s: string): boolean {
  return /^\d{15}$/.test(s) && regnoCheckDigit(s.slice(0, 14)) === s[14];
}

/** A valid 15-digit registration number under a 6-digit authority code. */
export function makeRegno(rng: Rng, authorityCode: string): string {
  if (!/^\d{6}$/.test(authorityCode)) throw new RangeError(`not a 6-digit authority code: ${authorityCode}`);
  const first14 = `${authorityCode}${String(rng.int(0, 99_999_999)).padStart(8, '0')}`;
  return first14 + regnoCheckDigit(first14);
}
