/**
 * What a person is told about companies named by events: the current name and 统一社会信用代码,
 * and each version's capital currency (a change's amounts are shown in it). Read from history
 * when a message is written, so an event's payload stays as it was recorded.
 */
import type { Sql } from '../db/connect.ts';
import type { DriverRow } from '../db/rows.ts';
import type { enterpriseVersions } from '../db/schema.ts';

export interface CompanyFacts {
  /** By PID: the current version's name and credit code. */
  current: Map<string, { name: string | null; uscc: string | null; currency: string | null }>;
  /** By `pid|version`: that version's capital currency. */
  currency: Map<string, string | null>;
}

/** A version as the facts read it. */
type VersionFacts = Pick<
  DriverRow<typeof enterpriseVersions>,
  'pid' | 'version' | 'is_current' | 'ent_name' | 'uncid' | 'capital_currency'
>;

/** The facts of the companies `pids` (only those daybook holds are in the answer). */
export async function companyFacts(sql: Sql, pids: readonly string[]): Promise<CompanyFacts> {
  const facts: CompanyFacts = { current: new Map(), currency: new Map() };
  if (pids.length === 0) return facts;
  const rows = await sql<VersionFacts[]>`
    select pid, version, is_current, ent_name, uncid, capital_currency
    from enterprise_versions where pid = any(${pids as string[]}::text[])`;
  for (const r of rows) {
    facts.currency.set(`${r.pid}|${r.version}`, r.capital_currency);
    if (r.is_current)
      facts.current.set(r.pid, { name: r.ent_name, uscc: r.uncid, currency: r.capital_currency });
  }
  return facts;
}
