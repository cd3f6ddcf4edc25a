/**
 * One HTTP POST of a delivery: no redirect followed, one deadline for the whole exchange
 * (15 s by default), at most 1 KB of the answer kept, and private addresses refused at
 * connection time unless allowed (address.ts). An abort signal closes it at once, unanswered.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { guardedLookup } from './address.ts';

export const RESPONSE_KEEP_BYTES = 1024;

export interface SendResult {
  status: number | null;
  /** At most RESPONSE_KEEP_BYTES of the answer's body, as text. */
  response: string | null;
  retryAfter: string | undefined;
  error: string | null;
  latencyMs: number;
}

export async function post(
  url: URL,
  headers: Record<string, string>,
  body: string,
  options: { timeoutMs: number; allowPrivate: boolean; signal?: AbortSignal | undefined },
): Promise<SendResult> {
  const started = performance.now();
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<SendResult>((resolve) => {
    let settled = false;
    const done = (r: Omit<SendResult, 'latencyMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', abandon);
      req.destroy();
      resolve({ ...r, latencyMs: Math.round(performance.now() - started) });
    };
    // The caller stopped waiting (daybook run's wait is over): the request is closed, unanswered.
    const abandon = () =>
      done({ status: null, response: null, retryAfter: undefined, error: 'abandoned before an answer came' });
    const req = send(
      url,
      {
        method: 'POST',
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
          'user-agent': 'daybook-webhooks',
        },
        lookup: guardedLookup(options.allowPrivate) as never,
      },
      (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        const finish = () =>
          done({
            status: res.statusCode ?? null,
            response: Buffer.concat(chunks).toString('utf8'),
            retryAfter: res.headers['retry-after'],
            error: null,
          });
        res.on('data', (c: Buffer) => {
          if (kept < RESPONSE_KEEP_BYTES) {
            const part = c.subarray(0, RESPONSE_KEEP_BYTES - kept);
            chunks.push(part);
            kept += part.length;
          }
          // The rest is not read: the status is what counts.
          if (kept >= RESPONSE_KEEP_BYTES) finish();
        });
        res.on('end', finish);
        res.on('error', finish);
      },
    );
    const timer = setTimeout(
      () =>
        done({
          status: null,
          response: null,
          retryAfter: undefined,
          error: `no answer within ${options.timeoutMs} ms`,
        }),
      options.timeoutMs,
    );
    req.on('error', (err: NodeJS.ErrnoException) =>
      done({
        status: null,
        response: null,
        retryAfter: undefined,
        error: err.message || err.code || 'request failed',
      }),
    );
    if (options.signal?.aborted) abandon();
    else options.signal?.addEventListener('abort', abandon, { once: true });
    req.end(body);
  });
}
