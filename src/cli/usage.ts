/**
 * Bad input from a person: a clear message, exit code 2, never a stack trace. Also the
 * argument parsers commander calls, each naming the problem, and the checks of option values
 * that several commands share.
 */
import { InvalidArgumentError, Option } from 'commander';
import type { Config } from '../config/config.ts';
import { EVENT_TYPES } from '../events/catalogue.ts';
import { typeMatches } from '../events/feed.ts';
import { LANGS } from '../terms/fields.ts';
import { isCalendarDate, pacificDate } from '../time/cycles.ts';

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

/** The longest statement_timeout Postgres takes, in whole seconds (2^31 - 1 ms: about 24.8 days). */
export const MAX_TIMEOUT_SECONDS = 2_147_483;

/**
 * A number of seconds above 0, whole or with up to three decimals (60, 1.5, 0.25), at most
 * MAX_TIMEOUT_SECONDS: a whole number of milliseconds from 1 up, as Postgres keeps a timeout.
 */
export function secondsArg(what: string) {
  return (raw: string): number => {
    const s = raw.trim();
    if (!/^\d+(\.\d{1,3})?$/.test(s)) {
      throw new InvalidArgumentError(
        `${what} must be a number of seconds, whole or with up to three decimals (as 60 or 0.5), got "${raw}".`,
      );
    }
    const n = Number(s);
    if (n <= 0 || n > MAX_TIMEOUT_SECONDS) {
      throw new InvalidArgumentError(
        `${what} must be more than 0 and at most ${MAX_TIMEOUT_SECONDS} seconds, got "${raw}".`,
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

/** A real calendar date, YYYY-MM-DD. */
export function dateArg(what: string) {
  return (raw: string): string => {
    if (!isCalendarDate(raw.trim()))
      throw new InvalidArgumentError(`${what} "${raw}" is not a real calendar date YYYY-MM-DD.`);
    return raw.trim();
  };
}

/** An option that takes a real calendar date, `--flag <date>`; its errors name the flag. */
export function dateOption(flag: `--${string}`, description: string): Option {
  return new Option(`${flag} <date>`, description).argParser(dateArg(flag));
}

/** `--cycle <date>`: `what` a command acts on, the current cycle when it is left out. */
export function cycleOption(what = 'the cycle', current = 'the current one'): Option {
  return dateOption('--cycle', `${what} (default: ${current})`);
}

/**
 * An option's help that names the setting it defaults to, `help (default KEY, else fallback)`:
 * the key is one of the configuration's, so the help cannot name a setting that does not exist.
 */
export function fromConfig(help: string, key: keyof Config, fallback?: string): string {
  return `${help} (default ${key}${fallback === undefined ? '' : `, else ${fallback}`})`;
}

/**
 * `--lang zh|en`: the language a person reads the text output of `changes`, `status` and
 * `digest` in. Without it the command takes DAYBOOK_LANG (en when unset); --json is for machines
 * and keeps the codes whatever the language.
 */
export function langOption(): Option {
  return new Option(
    '--lang <lang>',
    'the language of the text: zh (Chinese) or en (English): field names, words for codes, amounts with their unit; default DAYBOOK_LANG, else en (--json keeps the codes and raw values)',
  ).argParser(choiceArg('--lang', LANGS));
}

/** A subscription id, as `subscribe` and `deliveries` take it. */
export const subscriptionIdArg = intArg('subscription id', 1);

/** Each `--type` pattern names at least one event type, or a usage error says which does not. */
export function checkEventTypes(types: readonly string[]): void {
  const known = Object.keys(EVENT_TYPES);
  for (const t of types)
    if (!known.some((k) => typeMatches(t, k)))
      throw new UsageError(
        `--type ${t} matches no event type; types look like company.status.changed or company.status.* (see docs/channels.md, Events)`,
      );
}

/**
 * Refuses a list date after today's date in US Pacific time (the upstream's product day, taken
 * from `now`): that day has not begun there, and its list would come back empty.
 */
export function notAfterToday(what: string, date: string, now: Date): void {
  const today = pacificDate(now);
  if (date > today) {
    throw new UsageError(
      `${what} ${date} is after today's date in US Pacific time, ${today} (the upstream's product day): that day has not begun there, so it has no list yet. Give ${today} or an earlier date.`,
    );
  }
}
