/**
 * Cohorts: enterprises alike in what the registry says of them (status, type, industry, capital
 * band), the unit the planner pools change rates over (src/plan/estimate.ts) and the key history
 * records with each refresh (src/history/ingest.ts). Pure; below both of them.
 */

/** What a cohort is read from: the current version of the enterprise. */
export interface CohortFacts {
  entStatus: string | null;
  entTypeCode: string | null;
  industryPhy: string | null;
  /** Registered capital in whole currency units, a decimal string. */
  capitalAmount: string | null;
}

/** Capital bands, by powers of ten of the registered capital (currency units). */
export function capitalBand(amount: string | null): string {
  const v = amount === null ? Number.NaN : Number(amount);
  if (!Number.isFinite(v) || v <= 0) return '?';
  const e = Math.floor(Math.log10(v));
  if (e < 5) return '<1e5';
  if (e >= 9) return '1e9+';
  return `1e${e}`;
}

/** The cohort key `status|type|industry|capital`: the enterprise type by its first two digits. */
export function cohortKey(f: CohortFacts): string {
  const clean = (s: string | null) => (s ?? '').replace(/[|\s]/g, '') || '?';
  return [
    clean(f.entStatus),
    clean(f.entTypeCode?.slice(0, 2) ?? null),
    clean(f.industryPhy),
    capitalBand(f.capitalAmount),
  ].join('|');
}

/** The levels of a cohort key, most specific first: a|b|c|d, a|b, a, and '*' (everyone). */
export function cohortLevels(key: string): string[] {
  const known = levelsMemo.get(key);
  if (known) return [...known];
  const levels = levelsOf(key);
  if (levelsMemo.size >= 100_000) levelsMemo.clear();
  levelsMemo.set(key, levels);
  return [...levels];
}

/** Cohort keys' levels, remembered (a plan asks for the same few thousand again and again). */
const levelsMemo = new Map<string, readonly string[]>();

function levelsOf(key: string): string[] {
  const parts = key.split('|');
  const levels = [key];
  if (parts.length >= 2) levels.push(parts.slice(0, 2).join('|'));
  if (parts.length >= 1 && parts[0] !== key) levels.push(parts[0] as string);
  levels.push('*');
  return [...new Set(levels)];
}

/** The status part of a cohort key. */
export function statusOfCohort(key: string | null): string | null {
  if (key === null) return null;
  const bar = key.indexOf('|');
  const s = bar < 0 ? key : key.slice(0, bar);
  return s === '?' ? null : s;
}
