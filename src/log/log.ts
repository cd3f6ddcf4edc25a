/**
 * Logging: pino JSON lines by default, pretty when stderr is a terminal. The API key is redacted
 * twice: by path (any `apiKey`, `authorization` field) and by value (the key anywhere in a line,
 * escaped, URL-encoded or in base64 too, is replaced), so it cannot leak through an error message.
 */
import { createRequire } from 'node:module';
import { type Logger, pino } from 'pino';
import type pinoPretty from 'pino-pretty';
import { redactSecrets } from './redact.ts';

export type { Logger };

export interface LogOptions {
  level: string;
  /** Secrets whose text must never appear in a log line. */
  secrets?: readonly string[];
  /** Pretty output; defaults to whether stderr is a terminal. */
  pretty?: boolean;
  /** Where lines go; defaults to stderr. */
  destination?: NodeJS.WritableStream;
}

/** A writable that replaces every secret's text before passing lines on. */
function scrubbing(out: NodeJS.WritableStream, secrets: readonly string[]): NodeJS.WritableStream {
  const live = secrets.filter((s) => s.length >= 4);
  if (live.length === 0) return out;
  return {
    write(chunk: string | Uint8Array) {
      let text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      text = redactSecrets(text, live);
      return out.write(text);
    },
  } as NodeJS.WritableStream;
}

export function createLogger(options: LogOptions): Logger {
  const destination = scrubbing(options.destination ?? process.stderr, options.secrets ?? []);
  const usePretty = options.pretty ?? (options.destination === undefined && process.stderr.isTTY === true);
  const base = {
    level: options.level,
    base: { pid: process.pid },
    redact: {
      paths: ['apiKey', '*.apiKey', 'authorization', '*.authorization', 'headers.authorization'],
      censor: '[redacted]',
    },
  };
  if (usePretty) {
    // In-process, so its output passes through the scrubber too; loaded only on a terminal.
    const pretty = createRequire(import.meta.url)('pino-pretty') as typeof pinoPretty;
    return pino(base, pretty({ destination, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname' }));
  }
  return pino(base, destination as pino.DestinationStream);
}
