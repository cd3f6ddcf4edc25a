/**
 * How well a watch keyword matched the enterprise it resolved to. The upstream matches a
 * keyword with a model (docs/upstream.md): a full name matches best, a former name next, and
 * anything else resolves to some partial match, which may name another company than meant.
 * Pure.
 *
 * - `code`: the keyword is the enterprise's unified social credit code;
 * - `exact`: the keyword is its registered name (ENTNAME);
 * - `former_name`: the keyword is its former name (HISTORYNAME);
 * - `partial`: anything else.
 *
 * Names are compared after trimming and writing full-width brackets half-width (registry names
 * mix `（）` and `()`); codes after `normalizeUscc`.
 */
import { normalizeUscc } from './uscc.ts';

export const MATCH_LEVELS = ['code', 'exact', 'former_name', 'partial'] as const;
export type MatchLevel = (typeof MATCH_LEVELS)[number];

/** What the keyword resolved to, as far as the match is concerned. */
export interface Resolved {
  entName: string;
  /** HISTORYNAME: the former name, null or empty for none (several may be separated by ; or ；). */
  historyName: string | null;
  uncid: string | null;
}

/** A name made comparable: trimmed, full-width brackets written half-width. */
export function normalizeName(name: string): string {
  return name.trim().replace(/（/g, '(').replace(/）/g, ')');
}

/** The former names a HISTORYNAME holds. */
export function formerNames(historyName: string | null): string[] {
  if (historyName === null) return [];
  return historyName
    .split(/[;；]/)
    .map(normalizeName)
    .filter((n) => n !== '');
}

/** How `keyword` matched `resolved`. */
export function matchLevel(keyword: string, resolved: Resolved): MatchLevel {
  const uncid = resolved.uncid === null ? '' : normalizeUscc(resolved.uncid);
  if (uncid !== '' && normalizeUscc(keyword) === uncid) return 'code';
  const k = normalizeName(keyword);
  if (k === normalizeName(resolved.entName)) return 'exact';
  if (formerNames(resolved.historyName).includes(k)) return 'former_name';
  return 'partial';
}
