/**
 * Registry code maths (DOMAIN.md): the 18-character unified social credit code of GB 32100-2015
 * with its organisation-code check (GB 11714), and the 15-digit registration number with its
 * ISO 7064 MOD 11,10 check digit. Pure.
 */
import type { Rng } from './rng.ts';

export const USCC_CHARSET = '0123456789ABCDEFGHJKLMNPQRTUWXY';
const USCC_WEIGHTS = [1, 3, 9, 27, 19, 26, 16, 17, 20, 29, 25, 13, 8, 24, 10, 30, 28];
const ORG_WEIGHTS = [3, 7, 9, 10, 5, 8, 4, 2];

/** The check character of the first 17 characters of a USCC. */
export function usccCheckChar(first17: string): string {
  let sum = 0;
  for (let i = 0; i < 17; i++) {
    const v = USCC_CHARSET.indexOf(first17[i] ?? '');
    if (v < 0) throw new RangeError(`"${first17[i]}" is not a USCC character`);
    sum += v * (USCC_WEIGHTS[i] as number);
  }
  return USCC_CHARSET[(31 - (sum % 31)) % 31] as string;
}

/** The check character of an 8-character organisation code body. */
export function orgCodeCheckChar(body8: string): string {
  let sum = 0;
  for (let i = 0; i < 8; i++) {
    const ch = body8[i] ?? '';
    const v = /\d/.test(ch) ? Number(ch) : ch.charCodeAt(0) - 55;
    sum += v * (ORG_WEIGHTS[i] as number);
  }
  const c = 11 - (sum % 11);
  return c === 10 ? 'X' : c === 11 ? '0' : String(c);
}

export function isValidUscc(code: string): boolean {
  return (
    /^[0-9A-HJ-NPQRTUWXY]{18}$/.test(code) &&
    usccCheckChar(code.slice(0, 17)) === code[17] &&
    orgCodeCheckChar(code.slice(8, 16)) === code[16]
  );
}

/** A valid USCC for an enterprise (register 9, category 1) registered in `division` (6 digits). */
export function makeUscc(rng: Rng, division: string): string {
  const digits = '0123456789';
  const orgChars = '0123456789ABCDEFGHJKLMNPQRTUWXY';
  // Newer organisation codes start MA; older ones are digits.
  const body = rng.chance(0.6)
    ? `MA${Array.from({ length: 6 }, () => rng.pick([...orgChars])).join('')}`
    : Array.from({ length: 8 }, () => rng.pick([...digits])).join('');
  const org = body + orgCodeCheckChar(body);
  // The organisation check may be X, which the USCC charset holds; 0-9 likewise.
  const first17 = `91${division}${org}`;
  return first17 + usccCheckChar(first17);
}

/** The ISO 7064 MOD 11,10 check digit of a 14-digit registration number body. */
export function regnoCheckDigit(first14: string): string {
  let p = 10;
  for (const ch of first14) {
    const s = ((Number(ch) + p) % 10 || 10) * 2;
    p = s % 11;
  }
  return String((11 - p) % 10);
}

export function isValidRegno(s: string): boolean {
  return /^\d{15}$/.test(s) && regnoCheckDigit(s.slice(0, 14)) === s[14];
}

/** A valid 15-digit registration number under a 6-digit authority code. */
export function makeRegno(rng: Rng, authority: string): string {
  const first14 = `${authority}${String(rng.int(0, 99_999_999)).padStart(8, '0')}`;
  return first14 + regnoCheckDigit(first14);
}
