/**
 * What each check of `daybook doctor` says: passed, failed (and how to fix it) or skipped (and
 * why), and the errors of sockets, TLS and drivers in words.
 */

export interface CheckResult {
  /** What was checked, in words: "Postgres", "Redis key prefix", "subscription 3". */
  check: string;
  /** False only when the check failed; a skipped check is not a failure. */
  ok: boolean;
  /** The check does not apply to this setup (detail says why). */
  skipped: boolean;
  /** What was found, or why the check was skipped. */
  detail: string;
  /** How to fix a failed check; null otherwise. */
  fix: string | null;
}

export const pass = (check: string, detail: string): CheckResult => ({
  check,
  ok: true,
  skipped: false,
  detail,
  fix: null,
});

export const fail = (check: string, detail: string, fix: string): CheckResult => ({
  check,
  ok: false,
  skipped: false,
  detail,
  fix,
});

export const skip = (check: string, why: string): CheckResult => ({
  check,
  ok: true,
  skipped: true,
  detail: why,
  fix: null,
});

/** Socket, DNS and TLS error codes in words. */
const WORDS: Record<string, string> = {
  ECONNREFUSED: 'connection refused: nothing listens there',
  ECONNRESET: 'the connection was reset',
  ETIMEDOUT: 'the connection timed out',
  CONNECT_TIMEOUT: 'the connection timed out',
  ESOCKETTIMEDOUT: 'the connection timed out',
  EHOSTUNREACH: 'no route to that host',
  ENETUNREACH: 'no route to that network',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the name server did not answer',
  EPIPE: 'the connection was closed',
  EPROTO: 'the other side does not speak TLS there',
  CERT_HAS_EXPIRED: 'its TLS certificate has expired',
  CERT_NOT_YET_VALID: 'its TLS certificate is not valid yet',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'its TLS certificate is self-signed',
  SELF_SIGNED_CERT_IN_CHAIN: 'its TLS certificate is signed by an authority this machine does not trust',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    'its TLS certificate is signed by an authority this machine does not trust',
  UNABLE_TO_GET_ISSUER_CERT: 'its TLS certificate is signed by an authority this machine does not trust',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    'its TLS certificate is signed by an authority this machine does not trust',
  ERR_TLS_CERT_ALTNAME_INVALID: 'its TLS certificate is for another name',
  ERR_SSL_WRONG_VERSION_NUMBER: 'the other side does not speak TLS there',
};

/** Whether an error is about a TLS certificate (its fix is the certificate, not the address). */
export function isCertificateError(err: unknown): boolean {
  if (/CERT|LEAF_SIGNATURE|ALTNAME/.test(codeOf(err))) return true;
  return /certificate/i.test(err instanceof Error ? err.message : String(err));
}

/** The code of an error, or of the error it wraps (fetch and nodemailer wrap the socket's). */
export function codeOf(err: unknown): string {
  if (!err || typeof err !== 'object') return '';
  const own = (err as { code?: unknown }).code;
  if (typeof own === 'string' && own !== '') return own;
  return codeOf((err as { cause?: unknown }).cause);
}

/** An error in one short line of words: the code's words when known, else its first line. */
export function inWords(err: unknown): string {
  const code = codeOf(err);
  const known = WORDS[code];
  if (known) return known;
  const message = err instanceof Error ? err.message : String(err);
  if (/^Connection is closed\.?$/i.test(message)) return 'the connection was closed';
  const line = (message.split('\n')[0] ?? '').trim().slice(0, 200);
  return line || code || 'unknown error';
}
