/**
 * Whether an enterprise answer may be applied to history for a watch entry that expects a
 * unified social credit code: the one decision live ingestion (src/history/ingest.ts, for
 * jobs/enterprise.ts) and `daybook rebuild` (src/history/rebuild.ts) both take. An answer naming
 * an enterprise whose UNCID is not the expected code (or that carries none) resolved the keyword
 * to another company: it stays landed and booked, and is not applied. Pure.
 */
import { normalizeUscc } from '../watch/uscc.ts';

/** What the decision reads of the answer's enterprise (normalized: src/normalize/enterprise.ts). */
export interface ResolvedEnterprise {
  pid: string;
  entName: string;
  uncid: string | null;
}

export type ResolutionVerdict =
  | { kind: 'accepted' }
  | {
      kind: 'mismatch';
      expected: string;
      /** The answer's code, normalized; null when it carries none. */
      found: string | null;
      foundName: string;
      foundPid: string;
      /** For people: both codes and the name found. */
      message: string;
    };

/** The decision for an answer about `found` when the entry expects `expected` (null: anything goes). */
export function resolutionVerdict(expected: string | null, found: ResolvedEnterprise): ResolutionVerdict {
  if (expected === null) return { kind: 'accepted' };
  const code = found.uncid === null ? '' : normalizeUscc(found.uncid);
  if (code === normalizeUscc(expected)) return { kind: 'accepted' };
  const what = code === '' ? 'an enterprise whose answer carries no UNCID' : `UNCID ${code}`;
  return {
    kind: 'mismatch',
    expected,
    found: code === '' ? null : code,
    foundName: found.entName,
    foundPid: found.pid,
    message: `the keyword resolved to ${found.entName} (${what}, PID ${found.pid}), not to the expected ${expected}: not merged into history`,
  };
}
