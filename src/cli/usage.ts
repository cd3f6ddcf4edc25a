/**
 * Bad input from a person: a clear message, exit code 2, never a stack trace. Also the
 * argument parsers commander calls, each naming the problem.
 */
import { InvalidArgumentError } from 'commander';

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** A whole number within [min, max]. */
export function intArg(what: string, min: number, max = Number.MAX_SAFE_INTEGER) {
  return (raw: string): number => {
    if (!/^-?\d+$/.test(raw.trim()))
      throw new InvalidArgumentError(`${what} must be a whole number, got "${raw}".`);
    const n = Number(raw);
    if (n < min || n > max) {
      throw new InvalidArgumentError(
        max === Number.MAX_SAFE_INTEGER
          ? `${what} must be at least ${min}.`
          : `${what} must be from ${min} to ${max}.`,
      );
    }
    return n;
  };
}

/** One of a fixed set of words. */
export function choiceArg<T extends string>(what: string, choices: readonly T[]) {
  return (raw: string): T => {
    if (!(choices as readonly string[]).includes(raw)) {
      throw new InvalidArgumentError(`${what} must be one of ${choices.join(', ')}; got "${raw}".`);
    }
    return raw as T;
  };
}

/** Collects a repeatable option into an array. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}
