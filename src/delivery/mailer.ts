/**
 * Mail over SMTP (nodemailer), configured by DAYBOOK_SMTP_URL (`smtp://user:password@host:587`,
 * `smtps://…:465`) and DAYBOOK_SMTP_FROM. A mail is one multipart message: a text part and an
 * HTML part. The URL's password never reaches a message: errors are redacted of it.
 *
 * A URL with a login (a user, a password, or both) sends it only over TLS: smtps://, or STARTTLS,
 * which is then required (nodemailer's requireTLS): a server that offers no STARTTLS, or a
 * man-in-the-middle that strips it from the EHLO answer, gets no AUTH command, and the mail fails
 * with an error that says so (PLAINTEXT_LOGIN). DAYBOOK_SMTP_ALLOW_PLAINTEXT_AUTH=true lifts
 * that for a relay on a network the operator trusts (STARTTLS is still used when offered).
 */
import nodemailer from 'nodemailer';
import { redactSecrets } from '../log/redact.ts';
import type { Mail } from './channels/mail.ts';

export interface MailSettings {
  url: string;
  from: string;
  /** How long one mail may take, connecting included. */
  timeoutMs?: number;
  /**
   * DAYBOOK_SMTP_ALLOW_PLAINTEXT_AUTH: the URL's login may go over a connection that is not
   * encrypted (a relay on this machine or a trusted network). False by default.
   */
  allowPlaintextAuth?: boolean;
}

export interface MailResult {
  ok: boolean;
  /** The server's answer to the message (`250 …`), or why it failed. */
  response: string | null;
  error: string | null;
  latencyMs: number;
}

/** Sends a mail; `signal` abandons it (the connection is closed, the result is a failure). */
export type Mailer = (to: readonly string[], mail: Mail, signal?: AbortSignal) => Promise<MailResult>;

/** The secrets of an SMTP URL: its password (and user). */
export function smtpSecrets(url: string): string[] {
  try {
    const u = new URL(url);
    return [decodeURIComponent(u.password), u.password].filter((s) => s.length >= 4);
  } catch {
    return [];
  }
}

/** Whether an SMTP URL carries a login: a user or a password. */
export function smtpHasLogin(url: string): boolean {
  try {
    const u = new URL(url);
    return u.username !== '' || u.password !== '';
  } catch {
    return false;
  }
}

/**
 * Whether mail through `url` must be encrypted before anything else goes: it holds a login, and
 * plaintext logins are not allowed. (smtps:// is encrypted from the first byte; smtp:// then
 * requires STARTTLS.)
 */
export function smtpRequiresTls(url: string, allowPlaintextAuth = false): boolean {
  return !allowPlaintextAuth && smtpHasLogin(url);
}

/**
 * What is said when a server offers no STARTTLS and the URL holds a login (the mailer's error,
 * doctor's check): why nothing goes, and the fix. Never the password.
 */
export const PLAINTEXT_LOGIN = {
  why: 'DAYBOOK_SMTP_URL holds a login, and daybook does not send a password in the clear',
  fix: 'use smtps:// (port 465) or a server that offers STARTTLS; for a relay on this machine or a network you trust, DAYBOOK_SMTP_ALLOW_PLAINTEXT_AUTH=true lets the login go unencrypted',
} as const;

/**
 * The URL nodemailer is given: with `requireTLS=true` in its query when TLS is required, so that
 * nothing in the query (its options win over nodemailer's own: `requireTLS=false`) turns it off.
 * `ignoreTLS` and `opportunisticTLS` give way to requireTLS in nodemailer.
 */
function transportUrl(url: string, requireTls: boolean): string {
  if (!requireTls) return url;
  const u = new URL(url);
  u.searchParams.set('requireTLS', 'true');
  return u.toString();
}

/** Whether a nodemailer error says STARTTLS was required and the server did not take it. */
function noStartTls(err: unknown): boolean {
  const e = err as { code?: unknown; command?: unknown; message?: unknown } | null;
  return (
    e?.code === 'ETLS' &&
    (e.command === 'STARTTLS' || /upgrading connection with STARTTLS/i.test(String(e.message ?? '')))
  );
}

/** host:port of an SMTP URL (587 for smtp://, 465 for smtps:// when it names none). */
function whereOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || (u.protocol === 'smtps:' ? '465' : '587')}`;
  } catch {
    return 'the SMTP server';
  }
}

/**
 * A mailer sending through the SMTP server of `s` (a connection per mail). With a login in the
 * URL, TLS is required unless `allowPlaintextAuth` (smtpRequiresTls).
 */
export function smtpMailer(s: MailSettings): Mailer {
  const timeout = s.timeoutMs ?? 15_000;
  const requireTls = smtpRequiresTls(s.url, s.allowPlaintextAuth);
  const transport = nodemailer.createTransport({
    url: transportUrl(s.url, requireTls),
    ...(requireTls ? { requireTLS: true } : {}),
    connectionTimeout: timeout,
    greetingTimeout: timeout,
    socketTimeout: timeout,
  });
  const secrets = smtpSecrets(s.url);
  return async (to, mail, signal) => {
    const started = performance.now();
    const latencyMs = () => Math.round(performance.now() - started);
    try {
      // nodemailer takes an AbortSignal in the message's options (its types do not say so yet).
      const message = {
        from: s.from,
        to: [...to],
        subject: mail.subject,
        text: mail.text,
        html: mail.html,
        ...(signal ? { signal } : {}),
      };
      const info = (await transport.sendMail(message)) as { response?: string; rejected?: unknown[] };
      const rejected = (info.rejected ?? []).map(String);
      const response = redactSecrets(String(info.response ?? ''), secrets) || null;
      if (rejected.length > 0)
        return {
          ok: false,
          response,
          error: `the server refused ${rejected.join(', ')}`,
          latencyMs: latencyMs(),
        };
      return { ok: true, response, error: null, latencyMs: latencyMs() };
    } catch (err) {
      if (requireTls && noStartTls(err)) {
        return {
          ok: false,
          response: null,
          error: `${whereOf(s.url)} offers no STARTTLS; ${PLAINTEXT_LOGIN.why} (neither it nor the mail was sent). Fix: ${PLAINTEXT_LOGIN.fix}`,
          latencyMs: latencyMs(),
        };
      }
      const message = err instanceof Error ? err.message : String(err);
      return { ok: false, response: null, error: redactSecrets(message, secrets), latencyMs: latencyMs() };
    }
  };
}

/** The addresses of a `mailto:a@example.com,b@example.com` URL; throws on a bad one. */
export function mailAddresses(url: string): string[] {
  if (!/^mailto:/i.test(url)) throw new Error(`"${url}" is not a mailto: URL`);
  const list = decodeURIComponent(url.slice('mailto:'.length).split('?')[0] ?? '')
    .split(',')
    .map((a) => a.trim())
    .filter((a) => a !== '');
  if (list.length === 0) throw new Error('a mailto: URL needs at least one address (mailto:ops@example.com)');
  const bad = list.filter((a) => !/^[^\s@<>(),;:"]+@[^\s@<>(),;:"]+\.[^\s@<>(),;:"]+$/.test(a));
  if (bad.length > 0) throw new Error(`not a mail address: ${bad.map((a) => JSON.stringify(a)).join(', ')}`);
  return list;
}
