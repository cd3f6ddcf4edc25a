/**
 * What an SMTP server offers, asked without sending anything of a mail or a login: connect (over
 * TLS for smtps://), read the greeting, EHLO, QUIT. Whether it offers STARTTLS is known before
 * any password could go over the connection, so a caller can refuse to send one in the clear.
 * The ports are nodemailer's defaults: 465 for smtps://, 587 for smtp://.
 */
import { isIP, Socket } from 'node:net';
import { hostname } from 'node:os';
import { connect as tlsConnect } from 'node:tls';

export interface SmtpOffer {
  host: string;
  port: number;
  /** smtps://: TLS from the first byte. */
  secure: boolean;
  /** The keywords of the EHLO answer (STARTTLS, AUTH PLAIN LOGIN, SIZE 1000…), upper-cased. */
  extensions: string[];
  startTls: boolean;
  /** The login mechanisms offered now (over this connection, before any STARTTLS). */
  auth: string[];
}

export class SmtpProbeError extends Error {
  override readonly name = 'SmtpProbeError';
  /** The socket's error code (ECONNREFUSED, ENOTFOUND, a certificate's), or TIMEOUT or PROTOCOL. */
  readonly code: string;
  constructor(message: string, code: string) {
    super(message);
    this.code = code;
  }
}

/** Where an smtp:// or smtps:// URL points. */
export function smtpEndpoint(url: string): { host: string; port: number; secure: boolean } {
  const u = new URL(url);
  const secure = u.protocol === 'smtps:';
  return {
    host: u.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: u.port === '' ? (secure ? 465 : 587) : Number(u.port),
    secure,
  };
}

/** The name this side gives in EHLO: the machine's when it is a full domain name, else a literal. */
function ehloName(): string {
  let name = '';
  try {
    name = hostname();
  } catch {
    name = '';
  }
  return name.includes('.') ? name : '[127.0.0.1]';
}

/** Reads SMTP replies off a socket: each resolves with the reply's code and its lines' text. */
function replyReader(socket: Socket) {
  let buffer = '';
  let lines: string[] = [];
  const waiting: ((r: { code: number; lines: string[] }) => void)[] = [];
  const ready: { code: number; lines: string[] }[] = [];
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    buffer += chunk;
    for (let at = buffer.indexOf('\n'); at >= 0; at = buffer.indexOf('\n')) {
      const line = buffer.slice(0, at).replace(/\r$/, '');
      buffer = buffer.slice(at + 1);
      lines.push(line.slice(4));
      if (/^\d{3}-/.test(line)) continue;
      const reply = { code: Number(line.slice(0, 3)) || 0, lines };
      lines = [];
      const next = waiting.shift();
      if (next) next(reply);
      else ready.push(reply);
    }
  });
  return () =>
    new Promise<{ code: number; lines: string[] }>((resolve) => {
      const r = ready.shift();
      if (r) resolve(r);
      else waiting.push(resolve);
    });
}

/** Connects to the server of `url`, reads its greeting and its EHLO answer, and says QUIT. */
export async function probeSmtp(url: string, timeoutMs: number): Promise<SmtpOffer> {
  const { host, port, secure } = smtpEndpoint(url);
  // Over smtps:// the certificate is not judged here: nothing secret goes over this connection,
  // and whether the certificate is trusted is for the sender's own TLS settings (nodemailer's,
  // which the URL's query may set) to say.
  const socket: Socket = secure
    ? tlsConnect({ host, port, rejectUnauthorized: false, ...(isIP(host) ? {} : { servername: host }) })
    : new Socket().connect({ host, port });
  const failed = new Promise<never>((_, reject) => {
    socket.once('error', (err: NodeJS.ErrnoException) =>
      reject(new SmtpProbeError(err.message, err.code ?? 'ERROR')),
    );
    socket.once('close', () => reject(new SmtpProbeError('the server closed the connection', 'PROTOCOL')));
    socket.setTimeout(timeoutMs, () =>
      reject(new SmtpProbeError(`no answer within ${Math.round(timeoutMs / 100) / 10} s`, 'TIMEOUT')),
    );
  });
  failed.catch(() => {});
  const reply = replyReader(socket);
  const next = () => Promise.race([reply(), failed]);
  try {
    const greeting = await next();
    if (greeting.code !== 220)
      throw new SmtpProbeError(`the server greeted with ${greeting.code}, not 220`, 'PROTOCOL');
    socket.write(`EHLO ${ehloName()}\r\n`);
    const ehlo = await next();
    if (ehlo.code !== 250)
      throw new SmtpProbeError(`the server answered EHLO with ${ehlo.code}, not 250`, 'PROTOCOL');
    const extensions = ehlo.lines.slice(1).map((l) => l.trim().toUpperCase());
    socket.write('QUIT\r\n');
    const auth = extensions.find((e) => /^AUTH[ =]/.test(e));
    return {
      host,
      port,
      secure,
      extensions,
      startTls: extensions.some((e) => e === 'STARTTLS' || e.startsWith('STARTTLS ')),
      auth: auth ? auth.slice(5).split(/\s+/).filter(Boolean) : [],
    };
  } finally {
    socket.removeAllListeners('close');
    socket.destroy();
  }
}
