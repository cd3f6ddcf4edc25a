/**
 * The parameters of the admin server's routes (the console's pages and the event feed), checked
 * before any query runs. One helper, `readParams`, reads a route's query string or path
 * parameters by a spec of zod schemas made here: every value is text of a bounded length without
 * control characters, noncharacters or lone surrogates (Postgres refuses a NUL, and a terminal or
 * a log line should not get an escape sequence), given once; a date is a calendar date from
 * 0001-01-01 to 9999-12-31; a whole number lies within its range. A bad value throws BadParam,
 * which names the parameter and the problem, and which the console says in the page's language
 * and the API in English, with 400. Parameters a spec does not name are ignored.
 */
import { z } from 'zod';
import type { Lang } from './i18n.ts';

/** What is wrong with a parameter. */
export type ParamProblem =
  | { kind: 'repeated' }
  | { kind: 'long'; max: number }
  | { kind: 'text' }
  | { kind: 'date' }
  | { kind: 'whole'; min: number; max: number }
  | { kind: 'oneOf'; values: readonly string[] }
  | { kind: 'many'; max: number }
  | { kind: 'pattern'; expected: { en: string; zh: string } };

/** A parameter the route cannot take: answered with 400 and a message naming it. */
export class BadParam extends Error {
  override readonly name = 'BadParam';
  constructor(
    readonly param: string,
    readonly problem: ParamProblem,
    /** The value given, when it is short, printable text worth quoting back. */
    readonly given: string | null,
  ) {
    super(paramMessage('en', param, problem, given));
  }
}

const WORDS = {
  en: {
    repeated: 'must be given once',
    long: 'must be at most {0} characters',
    text: 'must not contain control characters or invalid text',
    date: 'must be a date as YYYY-MM-DD, from 0001-01-01 to 9999-12-31',
    whole: 'must be a whole number from {0} to {1}',
    oneOf: 'must be one of {0}',
    many: 'may be given at most {0} times',
    not: ', not "{0}"',
    or: ', ',
  },
  zh: {
    repeated: '只能给出一次',
    long: '不能超过 {0} 个字符',
    text: '不能包含控制字符或无效文本',
    date: '必须是 YYYY-MM-DD 格式的日期，从 0001-01-01 到 9999-12-31',
    whole: '必须是从 {0} 到 {1} 的整数',
    oneOf: '必须是以下之一：{0}',
    many: '最多只能给出 {0} 次',
    not: '，而不是“{0}”',
    or: '、',
  },
} as const;

const fill = (template: string, ...args: (string | number)[]) =>
  template.replace(/\{(\d)\}/g, (_, i: string) => String(args[Number(i)] ?? ''));

/** What is wrong, without the parameter's name: `must be a date as YYYY-MM-DD, … , not "x"`. */
export function problemText(lang: Lang, problem: ParamProblem, given: string | null): string {
  const w = WORDS[lang];
  const said = (() => {
    switch (problem.kind) {
      case 'long':
        return fill(w.long, problem.max);
      case 'whole':
        return fill(w.whole, problem.min, problem.max);
      case 'oneOf':
        return fill(w.oneOf, problem.values.join(w.or));
      case 'many':
        return fill(w.many, problem.max);
      case 'pattern':
        return problem.expected[lang];
      default:
        return w[problem.kind];
    }
  })();
  return given === null ? said : `${said}${fill(w.not, given)}`;
}

/** The whole message: `at must be a date as YYYY-MM-DD, …, not "2026-02-30"`. */
export function paramMessage(lang: Lang, param: string, problem: ParamProblem, given: string | null): string {
  return `${param} ${problemText(lang, problem, given)}`;
}

/** The longest value quoted back in a message. */
const QUOTED_MAX = 40;

/** C0 and C1 controls, DEL, noncharacters and lone surrogates: never a parameter's text. */
const UNFIT = /[\p{Cc}\p{Cs}\ufdd0-\ufdef\ufffe\uffff]/u;

/** Whether `s` is text a parameter may hold (no control character, noncharacter or lone surrogate). */
export function isFitText(s: string): boolean {
  return !UNFIT.test(s);
}

/**
 * A value as a parameter schema sees it: one string (trimmed; empty is absent), or a problem.
 * Every schema made here starts with this check.
 */
function oneText(v: unknown, max: number): { value: string | null } | { problem: ParamProblem } {
  if (v === undefined || v === null) return { value: null };
  if (Array.isArray(v)) return { problem: { kind: 'repeated' } };
  if (typeof v !== 'string') return { problem: { kind: 'text' } };
  if (v.length > max) return { problem: { kind: 'long', max } };
  if (UNFIT.test(v)) return { problem: { kind: 'text' } };
  const s = v.trim();
  return { value: s === '' ? null : s };
}

type Ctx = z.RefinementCtx;

function fail(ctx: Ctx, problem: ParamProblem, given: string | null): typeof z.NEVER {
  ctx.addIssue({ code: 'custom', message: problem.kind, params: { problem, given } });
  return z.NEVER;
}

/** A value quoted back in a message only when it is short (anything unfit never gets this far). */
const quoted = (s: string) => (s.length <= QUOTED_MAX ? s : null);

/** A parameter schema: one value checked by `check` after the common checks, or null when absent. */
function single<T>(max: number, check: (s: string, ctx: Ctx) => T): z.ZodType<T | null> {
  return z.unknown().transform((v, ctx): T | null => {
    const t = oneText(v, max);
    if ('problem' in t) return fail(ctx, t.problem, null);
    return t.value === null ? null : check(t.value, ctx);
  }) as unknown as z.ZodType<T | null>;
}

/** Whether `s` (YYYY-MM-DD) is a real day from 0001-01-01 to 9999-12-31. */
export function isDay(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (y < 1 || mo < 1 || mo > 12 || d < 1) return false;
  const t = new Date(0);
  t.setUTCFullYear(y, mo - 1, d);
  return t.getUTCFullYear() === y && t.getUTCMonth() === mo - 1 && t.getUTCDate() === d;
}

/** The parameter schemas, each for one value (`many`: a list of them). */
export const param = {
  /** Text of at most `max` characters. */
  text: (max: number) => single(max, (s) => s),
  /** Text matching `re` (a whole value), `expected` saying what it must be in words. */
  pattern: (max: number, re: RegExp, expected: { en: string; zh: string }) =>
    single(max, (s, ctx) => (re.test(s) ? s : fail(ctx, { kind: 'pattern', expected }, quoted(s)))),
  /** A day, YYYY-MM-DD, from 0001-01-01 to 9999-12-31. */
  day: () => single(10, (s, ctx) => (isDay(s) ? s : fail(ctx, { kind: 'date' }, quoted(s)))),
  /** A whole number from `min` to `max` (at most Number.MAX_SAFE_INTEGER), in decimal digits. */
  whole: (min: number, max = Number.MAX_SAFE_INTEGER) =>
    single(20, (s, ctx) => {
      const n = /^\d{1,16}$/.test(s) ? Number(s) : Number.NaN;
      return Number.isSafeInteger(n) && n >= min && n <= max
        ? n
        : fail(ctx, { kind: 'whole', min, max }, quoted(s));
    }),
  /** One of `values`. */
  oneOf: <const V extends string>(values: readonly V[]) =>
    single(Math.max(...values.map((v) => v.length)), (s, ctx) =>
      (values as readonly string[]).includes(s) ? (s as V) : fail(ctx, { kind: 'oneOf', values }, quoted(s)),
    ),
  /** `item` given up to `max` times (`?type=a&type=b`); absent is an empty list. */
  many: <T>(item: z.ZodType<T | null>, max: number) =>
    z.unknown().transform((v, ctx): T[] => {
      const values = v === undefined || v === null ? [] : Array.isArray(v) ? v : [v];
      if (values.length > max) return fail(ctx, { kind: 'many', max }, null);
      const out: T[] = [];
      for (const one of values) {
        const r = item.safeParse(one);
        if (!r.success) {
          for (const issue of r.error.issues) ctx.addIssue({ ...issue, path: [] } as never);
          return z.NEVER;
        }
        if (r.data !== null) out.push(r.data);
      }
      return out;
    }) as unknown as z.ZodType<T[]>,
};

export type ParamSpec = Record<string, z.ZodType<unknown>>;
export type ParamsOf<S extends ParamSpec> = { [K in keyof S]: z.output<S[K]> };

/**
 * The parameters `spec` names, read from `source` (a request's query or its path parameters) and
 * checked in the spec's order; the first bad one throws BadParam.
 */
export function readParams<S extends ParamSpec>(spec: S, source: unknown): ParamsOf<S> {
  const given = (source ?? {}) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(spec)) {
    const r = schema.safeParse(Object.hasOwn(given, name) ? given[name] : undefined);
    if (!r.success) {
      const issue = r.error.issues[0] as { params?: { problem?: ParamProblem; given?: string | null } };
      throw new BadParam(name, issue?.params?.problem ?? { kind: 'text' }, issue?.params?.given ?? null);
    }
    out[name] = r.data;
  }
  return out as ParamsOf<S>;
}

/**
 * A request target without any `token` query parameter, the rest kept as sent; always a path on
 * this server (leading slashes and backslashes folded into one: `//evil.example` in a Location is
 * another site). What a sign-in redirects to, and what a log line shows of an address.
 */
export function withoutToken(url: string): string {
  const q = url.indexOf('?');
  const path = `/${(q === -1 ? url : url.slice(0, q)).replace(/^[/\\]+/, '')}`;
  const kept =
    q === -1
      ? []
      : url
          .slice(q + 1)
          .split('&')
          .filter((part) => part !== '' && [...new URLSearchParams(part).keys()][0] !== 'token');
  return kept.length > 0 ? `${path}?${kept.join('&')}` : path;
}
