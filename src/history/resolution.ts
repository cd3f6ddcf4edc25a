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
      /** The code expected; null when the entry expected a PID only. */
      expected: string | null;
      /** The PID expected (a watched shareholder's, src/watch/related.ts), if any. */
      expectedPid: string | null;
      /** The answer's code, normalized; null when it carries none. */
      found: string | null;
      foundName: string;
      foundPid: string;
      /** For people: both codes and the name found. */
      message: string;
    };

/** What a watch entry expects of its answers: a credit code, a PID, both or neither. */
export interface Expected {
  uscc: string | null;
  pid?: string | null;
}

/**
 * The decision for an answer about `found` when the entry expects `expected` (a code, or only a
 * code given as a string; nulls: anything goes). A PID expected must be the answer's; so must a
 * code.
 */
export function resolutionVerdict(
  expected: Expected | string | null,
  found: ResolvedEnterprise,
): ResolutionVerdict {
  const want: Expected = typeof expected === 'string' || expected === null ? { uscc: expected } : expected;
  const code = found.uncid === null ? '' : normalizeUscc(found.uncid);
  const pidOk = want.pid == null || want.pid === found.pid;
  const codeOk = want.uscc === null || code === normalizeUscc(want.uscc);
  if (pidOk && codeOk) return { kind: 'accepted' };
  const what = code === '' ? 'an enterprise whose answer carries no UNCID' : `UNCID ${code}`;
  const wanted = [
    ...(want.uscc === null ? [] : [want.uscc]),
    ...(want.pid == null ? [] : [`PID ${want.pid}`]),
  ].join(', ');
  return {
    kind: 'mismatch',
    expected: want.uscc,
    expectedPid: want.pid ?? null,
    found: code === '' ? null : code,
    foundName: found.entName,
    foundPid: found.pid,
    message: `the keyword resolved to ${found.entName} (${what}, PID ${found.pid}), not to the expected ${wanted}: not merged into history`,
  };
}
