/**
 * Mail over SMTP (nodemailer), configured by DAYBOOK_SMTP_URL (`smtp://user:password@host:587`,
 * `smtps://…:465`) and DAYBOOK_SMTP_FROM. A mail is one multipart message: a text part and an
 * HTML part. The URL's password never reaches a message: errors are redacted of it.
 */
import nodemailer from 'nodemailer';
import { redactSecrets } from '../log/redact.ts';
import type { Mail } from './channels/mail.ts';

export interface MailSettings {
  url: string;
  from: string;
  /** How long one mail may take, connecting included. */
  timeoutMs?: number;
}

export interface MailResult {
  ok: boolean;
  /** The server's answer to the message (`250 …`), or why it failed. */
  response: string | null;
  error: string | null;
  latencyMs: number;
}

export type Mailer = (to: readonly string[], mail: Mail) => Promise<MailResult>;

/** The secrets of an SMTP URL: its password (and user). */
export function smtpSecrets(url: string): string[] {
  try {
    const u = new URL(url);
    return [decodeURIComponent(u.password), u.password].filter((s) => s.length >= 4);
  } catch {
    return [];
  }
}

/** A mailer sending through the SMTP server of `s`, over one pooled transport. */
export function smtpMailer(s: MailSettings): Mailer {
  const timeout = s.timeoutMs ?? 15_000;
  const transport = nodemailer.createTransport({
    url: s.url,
    connectionTimeout: timeout,
    greetingTimeout: timeout,
    socketTimeout: timeout,
  });
  const secrets = smtpSecrets(s.url);
  return async (to, mail) => {
    const started = performance.now();
    const latencyMs = () => Math.round(performance.now() - started);
    try {
      const info = (await transport.sendMail({
        from: s.from,
        to: [...to],
        subject: mail.subject,
        text: mail.text,
        html: mail.html,
      })) as { response?: string; rejected?: unknown[] };
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
