/**
 * `daybook doctor`'s checks of the servers daybook talks to over the network, other than its
 * database and Redis: the upstream API (its name resolves, and its origin answers a HEAD over
 * TLS: no operation is called, so no credit is spent), the API key's presence and shape (never
 * sent, never shown), and the SMTP server (EHLO; STARTTLS before any password goes out).
 */
import { lookup } from 'node:dns/promises';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import nodemailer from 'nodemailer';
import type { Config } from '../config/config.ts';
import { isPrivateAddress } from '../delivery/address.ts';
import { PLAINTEXT_LOGIN, smtpHasLogin, smtpSecrets } from '../delivery/mailer.ts';
import { probeSmtp, smtpEndpoint } from '../delivery/smtp-probe.ts';
import { redactSecrets } from '../log/redact.ts';
import { SANDBOX_KEY } from '../sim/options.ts';
import { within } from '../time/deadline.ts';
import { keyShapeProblem } from '../upstream/key-shape.ts';
import { type CheckResult, codeOf, fail, inWords, isCertificateError, pass, skip } from './doctor-result.ts';

const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;

/** Whether every address is this machine or a private network (plain HTTP does not cross the internet). */
const allPrivate = (addresses: readonly string[]) =>
  addresses.length > 0 && addresses.every(isPrivateAddress);

/** The addresses `host` resolves to (itself when it is an address). */
async function resolve(host: string, timeoutMs: number): Promise<string[]> {
  if (isIP(host)) return [host];
  const all = await within(lookup(host, { all: true }), timeoutMs, `looking up ${host}`);
  return all.map((a) => a.address);
}

/**
 * A HEAD of `origin`/ (no key, no operation): resolves with the status of any HTTP answer, rejects
 * with ETIMEDOUT when none came within `timeoutMs` (the connection and TLS handshake included).
 */
function head(origin: URL, timeoutMs: number): Promise<number> {
  return new Promise((done, failed) => {
    const send = origin.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(
      {
        protocol: origin.protocol,
        host: origin.hostname.replace(/^\[(.*)\]$/, '$1'),
        port: origin.port || undefined,
        path: '/',
        method: 'HEAD',
        agent: false,
        headers: { 'user-agent': 'daybook doctor' },
      },
      (res) => {
        clearTimeout(timer);
        res.resume();
        done(res.statusCode ?? 0);
        req.destroy();
      },
    );
    const timer = setTimeout(
      () => req.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })),
      timeoutMs,
    );
    req.on('error', (err) => {
      clearTimeout(timer);
      failed(err);
    });
    req.end();
  });
}

/** The upstream's base URL: set, resolving, answering (over TLS when https). */
async function baseUrlCheck(
  config: Config,
  timeoutMs: number,
): Promise<{ result: CheckResult; remote: boolean }> {
  const check = 'upstream';
  const base = config.DAYBOOK_API_BASE_URL;
  if (!base)
    return {
      result: fail(
        check,
        'DAYBOOK_API_BASE_URL is not set',
        "set it to the upstream's base URL (without /v1), or start the simulator (daybook sim) and set it to http://127.0.0.1:8787",
      ),
      remote: false,
    };
  const url = new URL(base);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: string[];
  try {
    addresses = await resolve(host, timeoutMs);
  } catch (err) {
    return {
      result: fail(
        check,
        `${host}: ${inWords(err)}`,
        "correct the host in DAYBOOK_API_BASE_URL, or this machine's DNS",
      ),
      remote: true,
    };
  }
  const remote = !addresses.every((a) => /^(127\.|::1$|::ffff:127\.)/.test(a));
  const shown = `${url.origin} (${addresses.slice(0, 3).join(', ')}${addresses.length > 3 ? ', …' : ''})`;
  try {
    await head(url, timeoutMs);
  } catch (err) {
    if (isCertificateError(err))
      return {
        result: fail(
          check,
          `${shown}: ${inWords(err)}`,
          'check the host name; behind a proxy that inspects TLS, add its authority with NODE_EXTRA_CA_CERTS',
        ),
        remote,
      };
    const late = codeOf(err) === 'ETIMEDOUT';
    return {
      result: fail(
        check,
        `${shown} ${late ? `did not answer within ${seconds(timeoutMs)}` : `cannot be reached: ${inWords(err)}`}`,
        'check the host and port in DAYBOOK_API_BASE_URL (or that the simulator runs); a firewall or proxy may block the way',
      ),
      remote,
    };
  }
  if (url.protocol === 'http:' && !allPrivate(addresses))
    return {
      result: fail(
        check,
        `${shown} answers over plain HTTP, across the internet: the API key would travel in the clear`,
        'use https:// in DAYBOOK_API_BASE_URL',
      ),
      remote,
    };
  return {
    result: pass(
      check,
      `${shown} answers${url.protocol === 'https:' ? ' over TLS' : ' (plain HTTP, on this machine or network)'}`,
    ),
    remote,
  };
}

/** The upstream and the API key. */
export async function upstreamChecks(config: Config, timeoutMs: number): Promise<CheckResult[]> {
  const { result, remote } = await baseUrlCheck(config, timeoutMs);
  const key = config.DAYBOOK_API_KEY;
  if (!key)
    return [
      result,
      fail(
        'API key',
        'DAYBOOK_API_KEY is not set',
        `set DAYBOOK_API_KEY to the key the upstream gave you (the simulator takes ${SANDBOX_KEY})`,
      ),
    ];
  const problem = keyShapeProblem(key, { remote, sandboxKey: SANDBOX_KEY });
  if (problem) return [result, fail('API key', problem.detail, problem.fix)];
  return [result, pass('API key', `set, ${key.length} characters (not tried: a call would spend credits)`)];
}

/** nodemailer's verify: the TLS handshake and, with a user in the URL, the login. */
async function verifyLogin(url: string, timeoutMs: number, requireTLS: boolean): Promise<void> {
  const transport = nodemailer.createTransport({
    url,
    requireTLS,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    logger: false,
  });
  try {
    await within(transport.verify(), timeoutMs * 2, 'the SMTP server');
  } finally {
    transport.close();
  }
}

/** The SMTP server of DAYBOOK_SMTP_URL, and its sender; skipped when unset. */
export async function smtpChecks(config: Config, timeoutMs: number): Promise<CheckResult[]> {
  const url = config.DAYBOOK_SMTP_URL;
  if (!url) return [skip('SMTP', 'DAYBOOK_SMTP_URL is not set (only mail subscriptions need it)')];
  const out: CheckResult[] = [];
  if (!config.DAYBOOK_SMTP_FROM)
    out.push(
      fail(
        'SMTP sender',
        'DAYBOOK_SMTP_FROM is not set: mail has no sender',
        'set DAYBOOK_SMTP_FROM, such as daybook <daybook@example.com>',
      ),
    );
  const { host, port, secure } = smtpEndpoint(url);
  const where = `${host}:${port}`;
  const login = smtpHasLogin(url);
  const allowPlain = config.DAYBOOK_SMTP_ALLOW_PLAINTEXT_AUTH;
  const clean = (text: string) => redactSecrets(text, smtpSecrets(url));
  let offer: Awaited<ReturnType<typeof probeSmtp>>;
  try {
    offer = await within(probeSmtp(url, timeoutMs), timeoutMs + 500, `the SMTP server at ${where}`);
  } catch (err) {
    const cert = isCertificateError(err);
    out.unshift(
      fail(
        'SMTP',
        clean(`${where}: ${inWords(err)}`),
        cert
          ? 'give the server a certificate for that name from a trusted authority, or add its authority with NODE_EXTRA_CA_CERTS'
          : 'check the host and port in DAYBOOK_SMTP_URL (587 takes STARTTLS, 465 takes smtps://)',
      ),
    );
    return out;
  }
  const plain = !secure && !offer.startTls;
  // The mailer's rule (mailer.ts): a login goes only over TLS unless DAYBOOK_SMTP_ALLOW_PLAINTEXT_AUTH.
  if (login && plain && !allowPlain) {
    out.unshift(
      fail(
        'SMTP',
        `${where} answers EHLO but offers no STARTTLS; ${PLAINTEXT_LOGIN.why}, so mail fails`,
        PLAINTEXT_LOGIN.fix,
      ),
    );
    return out;
  }
  if (plain && !login) {
    out.unshift(
      pass('SMTP', `${where} answers EHLO; no STARTTLS, so mail goes unencrypted (no password is sent)`),
    );
    return out;
  }
  try {
    // STARTTLS required as the mailer requires it: with a login, unless plaintext logins are allowed.
    await verifyLogin(url, timeoutMs, !secure && !allowPlain);
  } catch (err) {
    const code = codeOf(err);
    out.unshift(
      code === 'EAUTH'
        ? fail('SMTP', `${where} refused the login`, 'correct the user and password in DAYBOOK_SMTP_URL')
        : fail(
            'SMTP',
            clean(`${where}: ${secure ? 'TLS' : 'STARTTLS'} failed: ${inWords(err)}`),
            isCertificateError(err)
              ? 'give the server a certificate for that name from a trusted authority, or add its authority with NODE_EXTRA_CA_CERTS'
              : 'check the server, or use smtps:// on port 465',
          ),
    );
    return out;
  }
  const how = secure
    ? 'over TLS'
    : plain
      ? 'offers no STARTTLS: the login goes in the clear, as DAYBOOK_SMTP_ALLOW_PLAINTEXT_AUTH=true allows'
      : 'offers STARTTLS';
  out.unshift(pass('SMTP', `${where} answers EHLO, ${how}${login ? ', and accepts the login' : ''}`));
  return out;
}
