/**
 * The unified social credit code (统一社会信用代码, GB 32100-2015; docs/registry.md): 18
 * characters from `0-9A-HJ-NPQRTUWXY` (no I, O, S, V, Z), worth 0–30. Position 1 is the
 * registration authority, 2 the category under it, 3–8 the GB/T 2260 division, 9–17 the
 * organisation code and 18 the check character: with weights 3^(i-1) mod 31 for positions 1–17,
 * check value = 31 − (Σ value × weight mod 31), where 31 is written 0. Pure.
 *
 * What is checked: the length, every character, the registration authority (position 1) and the
 * check character. The organisation code's own GB 11714 check (positions 9–17) is not: codes
 * of some registrations (individual businesses among them) do not hold it, and a code that
 * passes the GB 32100 check is what the registry itself prints.
 */

/** The 31 characters a code may hold, in value order 0–30. */
export const USCC_CHARSET = '0123456789ABCDEFGHJKLMNPQRTUWXY';

/** Weights of positions 1–17: 3^(i-1) mod 31. */
export const USCC_WEIGHTS: readonly number[] = Array.from({ length: 17 }, (_, i) => {
  let w = 1;
  for (let k = 0; k < i; k++) w = (w * 3) % 31;
  return w;
});

/**
 * Registration authorities of GB 32100-2015 (position 1): 1 机构编制, 2 外交, 3 司法行政, 4 文化,
 * 5 民政, 6 旅游, 7 宗教, 8 工会, 9 工商 (market regulation, most enterprises), A 中央军委改革和编制办公室,
 * N 农业, Y 其他.
 */
export const USCC_AUTHORITIES = '123456789ANY';

export const USCC_LENGTH = 18;

/** A code that is not a valid unified social credit code; the message names the problem. */
export class InvalidUsccError extends Error {
  override readonly name = 'InvalidUsccError';
  constructor(
    message: string,
    /** The code as given, normalized (trimmed, upper-cased). */
    readonly code: string,
  ) {
    super(message);
  }
}

/**
 * A code as people write it, made comparable: NFKC (full-width ９１ and Ａ become 91 and A),
 * trimmed, upper-cased.
 */
export function normalizeUscc(raw: string): string {
  return raw.normalize('NFKC').trim().toUpperCase();
}

/** The check character of the first 17 characters of a code (each from USCC_CHARSET). */
export function usccCheckChar(first17: string): string {
  const chars = Array.from(first17);
  if (chars.length !== 17) throw new RangeError(`a code body has 17 characters, got ${chars.length}`);
  let sum = 0;
  for (const [i, ch] of chars.entries()) {
    const value = USCC_CHARSET.indexOf(ch);
    if (value < 0) throw new RangeError(`"${ch}" is not a code character`);
    sum += value * (USCC_WEIGHTS[i] as number);
  }
  return USCC_CHARSET[(31 - (sum % 31)) % 31] as string;
}

/** What is wrong with a normalized code, or null when it is valid. */
export function usccProblem(code: string): string | null {
  const chars = Array.from(code);
  if (chars.length === 0) return 'the code is empty';
  if (chars.length !== USCC_LENGTH) {
    return `a unified social credit code has ${USCC_LENGTH} characters, this one has ${chars.length}`;
  }
  for (const [i, ch] of chars.entries()) {
    if (!USCC_CHARSET.includes(ch)) {
      return `the character at position ${i + 1} (${JSON.stringify(ch)}) is not allowed: a code holds only 0-9 and A-Z without I, O, S, V, Z`;
    }
  }
  const authority = chars[0] as string;
  if (!USCC_AUTHORITIES.includes(authority)) {
    return `the character at position 1 ("${authority}") names no registration authority (1-9, A, N or Y)`;
  }
  const expected = usccCheckChar(chars.slice(0, 17).join(''));
  if (chars[17] !== expected) {
    return `the check character at position 18 is "${chars[17]}", expected "${expected}"`;
  }
  return null;
}

/** True when `raw`, normalized, is a valid code. */
export function isValidUscc(raw: string): boolean {
  return usccProblem(normalizeUscc(raw)) === null;
}

/** The normalized code, or InvalidUsccError naming the problem. */
export function parseUscc(raw: string): string {
  const code = normalizeUscc(raw);
  const problem = usccProblem(code);
  if (problem !== null)
    throw new InvalidUsccError(`"${code}" is not a valid unified social credit code: ${problem}`, code);
  return code;
}
