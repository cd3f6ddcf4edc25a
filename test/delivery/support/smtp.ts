/** An SMTP server on loopback (smtp-server) that takes every mail, parsed with mailparser. */
import type { AddressInfo } from 'node:net';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface SmtpReceiver {
  /** smtp://user:password@127.0.0.1:port */
  url: string;
  password: string;
  mails: (ParsedMail & { envelopeTo: string[]; raw: string })[];
  close: () => Promise<void>;
}

export async function smtpReceiver(password = 'smtp-pass-7f3a9c'): Promise<SmtpReceiver> {
  const mails: SmtpReceiver['mails'] = [];
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, cb) {
      if (auth.username === 'daybook' && auth.password === password) cb(null, { user: 'daybook' });
      else cb(new Error('Invalid username or password'));
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        void simpleParser(raw).then((m) => {
          mails.push(Object.assign(m, { envelopeTo: session.envelope.rcptTo.map((r) => r.address), raw }));
          cb();
        }, cb);
      });
    },
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://daybook:${password}@127.0.0.1:${port}`,
    password,
    mails,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
