/**
 * What a person must never read in a human format (chat, mail, the digest, the console, the CLI's
 * text): a raw field code or an untranslated token, a hex PID where the company's name and credit
 * code are known, a number with no unit. `humanProblems` names each one found in a text, so a
 * failing test says what it saw; the lists come from the catalogues, so a code added later is
 * checked as soon as it exists.
 */
import { EVENT_TYPES } from '../../src/events/catalogue.ts';
import { ENTERPRISE_FIELDS as HASHED_FIELDS } from '../../src/history/hash.ts';
import { ENTERPRISE_CHANGE_CATEGORIES, PRODUCT_CHANGE_CATEGORIES } from '../../src/terms/changes.ts';
import {
  CHANGE_COLUMNS,
  ENTERPRISE_COLUMNS,
  ENTERPRISE_FIELDS,
  type Lang,
  PRODUCT_FIELDS,
  TOKENS,
} from '../../src/terms/fields.ts';

/** Codes that are never words in either language: upstream field names, snake_case columns, event types. */
export function rawCodes(): string[] {
  const codes = new Set<string>();
  for (const k of [...Object.keys(ENTERPRISE_FIELDS), ...HASHED_FIELDS]) codes.add(k);
  for (const k of [...Object.keys(ENTERPRISE_COLUMNS), ...Object.keys(CHANGE_COLUMNS)])
    if (k.includes('_')) codes.add(k);
  for (const k of Object.keys(PRODUCT_FIELDS)) if (k.includes('_')) codes.add(k);
  for (const c of [...ENTERPRISE_CHANGE_CATEGORIES, ...PRODUCT_CHANGE_CATEGORIES])
    if (c.includes('_')) codes.add(c);
  for (const group of Object.values(TOKENS))
    for (const k of Object.keys(group)) if (k.includes('_')) codes.add(k);
  for (const t of Object.keys(EVENT_TYPES)) codes.add(t);
  // Child fields that are ordinary words in English (NAME, POSITION) count only in capitals.
  return [...codes];
}

/** English tokens that must not show in a Chinese text. */
export function englishTokens(): string[] {
  const words = new Set<string>();
  for (const group of Object.values(TOKENS)) for (const k of Object.keys(group)) words.add(k);
  for (const c of [...ENTERPRISE_CHANGE_CATEGORIES, ...PRODUCT_CHANGE_CATEGORIES]) words.add(c);
  return [...words];
}

const reEscape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function wordRe(words: readonly string[], flags: string): RegExp {
  const sorted = [...words].sort((a, b) => b.length - a.length).map(reEscape);
  return new RegExp(`(?<![A-Za-z0-9_.\\-])(?:${sorted.join('|')})(?![A-Za-z0-9_\\-])`, flags);
}

/** URLs out (a link may hold ids and numbers that nobody reads as text). */
function withoutUrls(text: string): string {
  return text.replace(/https?:\/\/[^\s)"'<>\]]+/g, ' ');
}

export interface HumanCheck {
  lang: Lang;
  /** Text from the upstream that a message quotes as it was (a name may hold anything): not checked. */
  quoted?: readonly string[];
}

/** What a person should not read in `text`; empty when it reads well. */
export function humanProblems(text: string, o: HumanCheck): string[] {
  let t = withoutUrls(text);
  for (const q of o.quoted ?? []) if (q) t = t.split(q).join(' ');
  const problems: string[] = [];
  const codes = t.match(wordRe(rawCodes(), 'g')) ?? [];
  for (const c of new Set(codes)) problems.push(`raw code ${c}`);
  if (o.lang === 'zh') {
    const tokens = t.match(wordRe(englishTokens(), 'gi')) ?? [];
    for (const c of new Set(tokens)) problems.push(`English token ${c}`);
  }
  for (const h of new Set(t.match(/(?<![0-9a-zA-Z])[0-9a-f]{32}(?![0-9a-zA-Z])/gi) ?? []))
    problems.push(`hex id ${h}`);
  // A number of five digits or more that no unit follows (dates, credit codes and registration
  // numbers are not amounts).
  const unitAfter = /^\s*(万|亿|元|人|名|票|条|million|people|holders|votes|comments|credits|积分|次|%)/;
  for (const m of t.matchAll(/(?<![\w.,-])\d[\d,]{4,}(?:\.\d+)?(?![\w.,-])/g)) {
    // A credit code (18) or registration number (15) of digits only is a code, not an amount.
    if (/^\d{15}$|^\d{18}$/.test(m[0])) continue;
    const after = t.slice((m.index ?? 0) + m[0].length);
    if (!unitAfter.test(after)) problems.push(`number without unit ${m[0]}`);
  }
  return problems;
}
