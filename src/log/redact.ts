/**
 * Redaction of a secret by value, in every encoding a body or a message can carry it in: as is,
 * in any letter case, with any of its characters written as a JSON escape (`\u0073`, `\/`) or
 * URL-encoded (`%73`), and in base64 or base64url at any byte alignment. An upstream that echoes
 * the key back, escaped or encoded, gets it cut out before anything lands, parses, logs or prints
 * it. Pure.
 */

const MARK = '[redacted]';

function escapeRegex(c: string): string {
  return c.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

/** One character of the secret in any of its written forms. */
function charForms(c: string): string {
  const code = c.codePointAt(0) ?? 0;
  const hex = code.toString(16).padStart(2, '0');
  // Escapes may be escaped again (a message quoting JSON): any run of backslashes.
  const forms = [escapeRegex(c), `\\\\+u${code.toString(16).padStart(4, '0')}`, `%${hex}`, `%25${hex}`];
  if (c === '/') forms.push('\\\\+/');
  return `(?:${forms.join('|')})`;
}

/** The stretches of the secret's base64 (and base64url) that do not depend on the bytes around it. */
function base64Cores(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  const cores = new Set<string>();
  for (let offset = 0; offset < 3; offset++) {
    const b64 = Buffer.concat([Buffer.alloc(offset), bytes])
      .toString('base64')
      .replace(/=+$/, '');
    // The first group mixes in the bytes before when offset > 0; the last may mix in those after.
    const core = b64.slice(offset === 0 ? 0 : 4, Math.max(0, b64.length - 4));
    if (core.length >= 8) {
      cores.add(core);
      cores.add(core.replace(/\+/g, '-').replace(/\//g, '_'));
    }
  }
  return [...cores];
}

/** A matcher of `secret` in every form above; null for secrets too short to redact safely. */
export function secretMatcher(secret: string): RegExp | null {
  if (secret.length < 4) return null;
  const plain = [...secret].map(charForms).join('');
  const encoded = base64Cores(secret).map(escapeRegex);
  return new RegExp([plain, ...encoded].join('|'), 'gi');
}

/** `text` with every form of each secret replaced by a mark. */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) {
    const m = secretMatcher(s);
    if (m) out = out.replace(m, MARK);
  }
  return out;
}
