/**
 * The typed client for the two upstream operations. It checks parameters before sending, reads
 * every answer (any HTTP status, a 200 carrying `status: error` included) into either a parsed
 * result or a typed error, and hands back what the landing step needs: the raw body, the HTTP
 * status and the timing. The API key lives in a private field and goes only into the
 * Authorization header.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { subscribe } from 'node:diagnostics_channel';
import type { z } from 'zod';
import { redactSecrets } from '../log/redact.ts';
import { parseRetryAfter } from '../retry/retry-after.ts';
import {
  AuthenticationError,
  BodyTooDeepError,
  BodyTooLargeError,
  type BrokenSuccess,
  errorForCode,
  MalformedBodyError,
  NetworkError,
  type Operation,
  RateLimitedError,
  RefusedBodyError,
  type RequestContext,
  type ResponseContext,
  ServerError,
  TimeoutError,
  UnexpectedResponseError,
  type UpstreamError,
} from './errors.ts';
import { outsideStrings, parseJsonExact } from './json.ts';
import { checkEntName, checkListDate, checkListLimit, checkProductName } from './params.ts';
import {
  EnterpriseSuccess,
  ErrorBody,
  ProductDetailSuccess,
  ProductListSuccess,
  readStored,
} from './schemas.ts';

export interface ClientOptions {
  /** e.g. https://api.example.com (without /v1). */
  baseUrl: string;
  apiKey: string;
  /** Per-request timeout covering connect, headers and the whole body read. Default 30 s. */
  timeoutMs?: number;
  /** The largest body read, after decompression; a larger one is cut off and refused. Default 16 MiB. */
  maxBodyBytes?: number;
  /** Clock for Retry-After dates; defaults to the system clock. */
  now?: () => Date;
}

/** One request/response exchange as it happened, for the raw landing. Never holds the key. */
export interface Exchange extends ResponseContext {
  operation: Operation;
  params: Record<string, string>;
  /** The body parsed as JSON, or undefined when it was not JSON. */
  bodyJson: unknown;
}

/** A parsed success with the exchange that produced it. */
export interface UpstreamResult<T> {
  data: T;
  exchange: Exchange;
}

const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024;

/**
 * The deepest nesting of objects and arrays daybook reads. The documented record is 4 levels
 * deep; an answer nested deeper than this would only drive recursive code (hashing, diffing,
 * serialising) into the stack's limit, so it is refused before anything walks it.
 */
export const MAX_JSON_DEPTH = 64;

/** How deeply `text` nests objects and arrays, read in one pass outside strings (no recursion). */
export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  outsideStrings(text, (_i, c) => {
    if (c === 0x7b || c === 0x5b) max = Math.max(max, ++depth);
    else if (c === 0x7d || c === 0x5d) depth--;
    return 0;
  });
  return max;
}

export class UpstreamClient {
  readonly #apiKey: string;
  readonly baseUrl: string;
  readonly timeoutMs: number;
  readonly maxBodyBytes: number;
  readonly #now: () => Date;

  constructor(options: ClientOptions) {
    if (!options.apiKey) throw new TypeError('UpstreamClient needs an API key');
    this.#apiKey = options.apiKey;
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    this.#now = options.now ?? (() => new Date());
  }

  /** Looks up one enterprise by name keyword (billed: 3 credits on success). */
  searchEnterprise(name: string): Promise<UpstreamResult<EnterpriseSuccess>> {
    const entName = checkEntName(name);
    return this.#call('enterprise-search', { ent_name: entName }, EnterpriseSuccess);
  }

  /** The trending list of `date` (YYYY-MM-DD); `limit` 1–20, the upstream's default when omitted. */
  listProducts(date: string, limit?: number | string): Promise<UpstreamResult<ProductListSuccess>> {
    const params: Record<string, string> = { date: checkListDate(date) };
    if (limit !== undefined) params.limit = String(checkListLimit(limit));
    return this.#call('product-listing', params, ProductListSuccess);
  }

  /** The detail of one product by name. */
  getProduct(name: string): Promise<UpstreamResult<ProductDetailSuccess>> {
    return this.#call('product-listing', { product_name: checkProductName(name) }, ProductDetailSuccess);
  }

  toJSON(): Record<string, unknown> {
    return { baseUrl: this.baseUrl, timeoutMs: this.timeoutMs, apiKey: '[redacted]' };
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `UpstreamClient { baseUrl: '${this.baseUrl}', apiKey: [redacted] }`;
  }

  async #call<S extends z.ZodType>(
    operation: Operation,
    params: Record<string, string>,
    schema: S,
  ): Promise<UpstreamResult<z.infer<S>>> {
    const request: RequestContext = { operation, params };
    const url = `${this.baseUrl}/v1/${operation}?${new URLSearchParams(params).toString()}`;
    const fetchedAt = this.#now();
    const started = performance.now();
    // One deadline for the whole call: connecting, the headers and every byte of the body.
    const deadline = Date.now() + this.timeoutMs;
    const elapsed = () => Math.round(performance.now() - started);

    let res: Response;
    const sending: Sending = { created: false, sent: false };
    try {
      res = await SENDING.run(sending, () =>
        fetch(url, {
          method: 'GET',
          headers: {
            Authorization: `Bearer ${this.#apiKey}`,
            'Content-Type': 'application/json',
            Accept: 'application/json',
          },
          signal: AbortSignal.timeout(this.timeoutMs),
        }),
      );
    } catch (err) {
      const error = this.#transportError(err, request, {
        httpStatus: null,
        bodyText: null,
        durationMs: elapsed(),
        fetchedAt,
      });
      REQUEST_SENT.set(error, { sent: requestSent(sending, err), timeoutMs: this.timeoutMs });
      throw error;
    }

    const body = await readBody(res, deadline, this.maxBodyBytes);
    const decoded = decodeBody(body.bytes, res.headers.get('content-type'));
    // An upstream that echoes the key back (in an error message, say) must not get it landed,
    // logged or recorded: it is cut out of the body, in any encoding, before anything reads it.
    const text = redactSecrets(decoded.text, [this.#apiKey]);
    const exact = decoded.charset === 'utf-8' && decoded.problem === null && !text.includes('\u0000');
    const response: ResponseContext = {
      httpStatus: res.status,
      bodyText: text,
      durationMs: elapsed(),
      fetchedAt,
      decoding: decoded.problem,
      // Bytes read as latin1 are one character each, so the key's ASCII is cut out of them too.
      bodyBytes: exact
        ? null
        : Buffer.from(redactSecrets(Buffer.from(body.bytes).toString('latin1'), [this.#apiKey]), 'latin1'),
    };
    if (body.tooLarge) {
      throw new BodyTooLargeError(
        `${operation} (HTTP ${res.status}): the body exceeded ${this.maxBodyBytes} bytes and was cut off there`,
        request,
        response,
        res.status === 200 ? brokenSuccessOf(text, operation) : null,
      );
    }
    if (body.timedOut) {
      throw new TimeoutError(
        `${operation}: no complete answer within ${this.timeoutMs} ms (${body.bytes.length} bytes of the body arrived)`,
        request,
        response,
      );
    }
    if (body.error) throw this.#transportError(body.error, request, response);

    const depth = jsonDepth(text);
    if (depth > MAX_JSON_DEPTH) {
      throw new BodyTooDeepError(
        `${operation} (HTTP ${res.status}): the body is nested ${depth} levels deep, more than the ${MAX_JSON_DEPTH} daybook reads`,
        request,
        response,
        res.status === 200 ? brokenSuccessOf(text, operation) : null,
      );
    }
    const exchange: Exchange = { operation, params, ...response, bodyJson: parseJson(text) };
    const error = this.#errorOf(exchange, res.headers.get('retry-after'), request, response);
    if (error) throw error;
    // The schemas read what Postgres can store; the landing keeps the answer as received.
    const parsed = readStored(schema, exchange.bodyJson);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'unknown shape';
      throw new UnexpectedResponseError(
        `${operation} answered HTTP ${res.status} with a body that is not the documented success shape (${where})`,
        request,
        response,
      );
    }
    return { data: parsed.data, exchange };
  }

  /** The typed error an answer stands for, or null when it should be a success. */
  #errorOf(
    exchange: Exchange,
    retryAfterHeader: string | null,
    request: RequestContext,
    response: ResponseContext,
  ): UpstreamError | null {
    const status = response.httpStatus ?? 0;
    const retryAfterMs = parseRetryAfter(retryAfterHeader, this.#now());
    const where = `${request.operation} (HTTP ${status})`;
    if (exchange.bodyJson === undefined) {
      if (status === 429)
        return new RateLimitedError(`${where}: rate limited`, request, response, retryAfterMs);
      if (status >= 500)
        return new ServerError(`${where}: server error with a non-JSON body`, request, response);
      if (status === 401 || status === 403) {
        return new AuthenticationError(
          'unauthorized',
          `${where}: the API key was refused`,
          request,
          response,
        );
      }
      const broken = status === 200 ? brokenSuccessOf(response.bodyText, request.operation) : null;
      return new MalformedBodyError(
        broken
          ? `${where}: an answer that began as the upstream's JSON is cut off or malformed after ${response.bodyText?.length ?? 0} characters (presumed billed by the upstream)`
          : `${where}: the body is not JSON (${describeText(response.bodyText)})`,
        request,
        response,
        broken,
      );
    }
    const errorBody = ErrorBody.safeParse(exchange.bodyJson);
    if (errorBody.success) {
      const { code, message } = errorBody.data.error;
      const error = errorForCode(
        code,
        `${where}: ${code}: ${message ?? 'no message'}`,
        request,
        response,
        retryAfterMs,
      );
      // An undocumented code on a 5xx is a server fault; on a 401/403 it is the key.
      if (error.name === 'UnknownErrorCodeError' && status >= 500) {
        return new ServerError(error.message, request, response);
      }
      if (error.name === 'UnknownErrorCodeError' && (status === 401 || status === 403)) {
        return new AuthenticationError(code, error.message, request, response);
      }
      return error;
    }
    if (status === 429)
      return new RateLimitedError(`${where}: rate limited`, request, response, retryAfterMs);
    if (status >= 500) return new ServerError(`${where}: server error`, request, response);
    if (status === 401 || status === 403) {
      return new AuthenticationError('unauthorized', `${where}: the API key was refused`, request, response);
    }
    return null;
  }

  #transportError(err: unknown, request: RequestContext, response: ResponseContext): UpstreamError {
    const name = err instanceof Error ? err.name : '';
    if (name === 'TimeoutError' || name === 'AbortError') {
      return new TimeoutError(
        `${request.operation}: no complete answer within ${this.timeoutMs} ms`,
        request,
        response,
        err,
      );
    }
    const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
    const detail =
      cause instanceof Error ? ((cause as NodeJS.ErrnoException).code ?? cause.message) : String(cause);
    return new NetworkError(`${request.operation}: connection failed (${detail})`, request, response, err);
  }
}

interface BodyRead {
  bytes: Uint8Array;
  error: unknown;
  tooLarge: boolean;
  timedOut: boolean;
}

/**
 * Reads the body as bytes, keeping what arrived when the stream breaks, and stopping at
 * `maxBytes` (after decompression: a small gzip can inflate to gigabytes) or at the call's
 * `deadline`. It always settles: each read races the deadline, and the stream is cancelled.
 */
async function readBody(res: Response, deadline: number, maxBytes: number): Promise<BodyRead> {
  const out: BodyRead = { bytes: new Uint8Array(0), error: null, tooLarge: false, timedOut: false };
  if (!res.body) return out;
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'expired'>((resolve) => {
    timer = setTimeout(() => resolve('expired'), Math.max(0, deadline - Date.now()));
  });
  try {
    for (;;) {
      const next = await Promise.race([reader.read(), expired]);
      if (next === 'expired') {
        out.timedOut = true;
        break;
      }
      if (next.done) break;
      const room = maxBytes - size;
      if (next.value.length > room) {
        chunks.push(next.value.subarray(0, room));
        size += room;
        out.tooLarge = true;
        break;
      }
      chunks.push(next.value);
      size += next.value.length;
    }
  } catch (error) {
    out.error = error;
  } finally {
    clearTimeout(timer);
    if (out.timedOut || out.tooLarge) reader.cancel().catch(() => {});
  }
  out.bytes = Buffer.concat(chunks, size);
  return out;
}

/**
 * The body's text, decoded by its declared charset (UTF-8 when none is declared; GBK, GB18030,
 * Big5 and the other WHATWG labels are honoured). Bytes that do not decode become U+FFFD in the
 * text, and `problem` says so: the landing then keeps the bytes as received, and format drift
 * reports it.
 */
export function decodeBody(
  bytes: Uint8Array,
  contentType: string | null,
): { text: string; charset: string; problem: string | null } {
  const declared = /charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? '')?.[1]?.toLowerCase() ?? 'utf-8';
  let decoder: InstanceType<typeof TextDecoder>;
  let charset = declared;
  let problem: string | null = null;
  try {
    decoder = new TextDecoder(declared, { fatal: true });
  } catch {
    decoder = new TextDecoder('utf-8', { fatal: true });
    charset = 'utf-8';
    problem = `unknown charset "${declared.slice(0, 40)}": read as UTF-8`;
  }
  try {
    return { text: decoder.decode(bytes), charset, problem };
  } catch {
    const text = new TextDecoder(charset).decode(bytes);
    return { text, charset, problem: `bytes that are not valid ${charset}` };
  }
}

/** The body as JSON, numbers to the last digit (src/upstream/json.ts); undefined when it is not JSON. */
function parseJson(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return parseJsonExact(text);
  } catch {
    return undefined;
  }
}

/**
 * Whether the part of an HTTP 200 answer that arrived shows that it was not billed. The upstream
 * bills once it has processed the request, before it sends the body, so a 200 whose body began
 * to arrive is a billed success unless its bytes prove otherwise: nothing but whitespace arrived;
 * the first character is not `{` (an HTML gateway page, say: not the upstream's JSON); or the
 * object shows, at its top level, the verdict key (`status`, and `result` for products) with a
 * string value that cannot be "success" (`"status":"err`), or an `error` key (the documented
 * error body). Only the top level is read, outside strings: text inside markdown or a nested
 * object cannot fake a verdict. A verdict that says "success" in full wins over an `error` key.
 */
export function provablyUnbilled(text: string, operation: Operation): boolean {
  let i = skipSpace(text, 0);
  if (i >= text.length) return true;
  if (text.charCodeAt(i) !== 0x7b) return true;
  const verdictKeys = operation === 'product-listing' ? ['result', 'status'] : ['status'];
  let errorKey = false;
  i++;
  for (;;) {
    i = skipSpace(text, i);
    if (i >= text.length) break;
    const c = text.charCodeAt(i);
    if (c === 0x2c) {
      i++;
      continue;
    }
    // The object's end, or something that is not JSON: nothing more can be read at this level.
    if (c !== 0x22) break;
    const keyEnd = stringEnd(text, i);
    if (keyEnd < 0) break;
    const key = stringText(text.slice(i + 1, keyEnd - 1));
    if (key === 'error') errorKey = true;
    i = skipSpace(text, keyEnd);
    if (text.charCodeAt(i) !== 0x3a) break;
    i = skipSpace(text, i + 1);
    if (i >= text.length) break;
    if (key !== null && verdictKeys.includes(key) && text.charCodeAt(i) === 0x22) {
      const end = stringEnd(text, i);
      const said = stringText(text.slice(i + 1, end < 0 ? text.length : end - 1));
      if (said !== null) {
        if (end >= 0) return said !== 'success';
        // Cut off inside the value: what arrived either can still become "success" or cannot.
        return !'success'.startsWith(said);
      }
      if (end < 0) break;
      i = end;
      continue;
    }
    const end = valueEnd(text, i);
    if (end < 0) break;
    i = end;
  }
  return errorKey;
}

/**
 * The billing an HTTP 200 answer that could not complete (cut off by the timeout, a broken
 * connection or the size limit, nested too deep, not parseable) is presumed to have made: what
 * the part that arrived shows of `metadata.usage.credits` (null when it got no further: the
 * configured cost is booked) and of the enterprise's PID. Null when the bytes prove it was not
 * billed (`provablyUnbilled`).
 */
export function brokenSuccessOf(text: string | null, operation: Operation): BrokenSuccess | null {
  if (text === null || provablyUnbilled(text, operation)) return null;
  // An amount counts only once a character after it arrived: "3" may be the start of "30".
  const credits = /"usage"\s*:\s*\{[^{}]*?"credits"\s*:\s*"?(\d+)(?=[\s,}"])/.exec(text);
  const pid = /"content"\s*:\s*\{\s*"PID"\s*:\s*"((?:[^"\\]|\\.)+)"/.exec(text);
  return {
    credits: credits ? Number(credits[1]) : null,
    pid: pid ? stringText(pid[1] as string) : null,
  };
}

/**
 * The billing a failed call is presumed to have made: an HTTP 200 answer that began to arrive
 * and could not complete, unless its bytes prove it was not billed (`brokenSuccessOf`). Null for
 * every other failure (an error answer, another status, nothing received).
 */
export function presumedBillingOf(err: UpstreamError): BrokenSuccess | null {
  if (err.response?.httpStatus !== 200) return null;
  if (err instanceof MalformedBodyError || err instanceof RefusedBodyError) return err.brokenSuccess;
  if (err instanceof TimeoutError || err instanceof NetworkError)
    return brokenSuccessOf(err.response.bodyText, err.request.operation);
  return null;
}

/** Whether a call's request left daybook: `unsent` only when that is known (`requestSent`). */
export type RequestSent = 'sent' | 'unsent' | 'unknown';

/** What the HTTP stack told of one call's request: made (dispatched), its headers written. */
interface Sending {
  created: boolean;
  sent: boolean;
}

/**
 * The call each request of Node's fetch (undici) belongs to: `#call` runs fetch inside its own
 * store, undici publishes `undici:request:create` within that call's async context and
 * `undici:client:sendHeaders` right before it writes the request on the socket, for the same
 * request object.
 */
const SENDING = new AsyncLocalStorage<Sending>();
const SENDING_OF = new WeakMap<object, Sending>();
/** Whether this process has seen undici announce a request written: its announcements can be trusted. */
let announcesSending = false;
subscribe('undici:request:create', (message) => {
  const sending = SENDING.getStore();
  const req = (message as { request?: object }).request;
  if (sending && req) {
    sending.created = true;
    SENDING_OF.set(req, sending);
  }
});
subscribe('undici:client:sendHeaders', (message) => {
  announcesSending = true;
  const req = (message as { request?: object }).request;
  const sending = req ? SENDING_OF.get(req) : undefined;
  if (sending) sending.sent = true;
});

/**
 * Failures that happen before a request is written: the name does not resolve, nothing listens,
 * the host or network is unreachable, the connection or the TLS handshake fails or times out, a
 * certificate is refused, fetch refuses the URL or port. A request that meets one was not sent.
 */
const BEFORE_SENDING = new Set([
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_FAIL',
  'EAI_NONAME',
  'ECONNREFUSED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENETDOWN',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_INVALID_ARG',
  'ERR_INVALID_URL',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_REVOKED',
  'CERT_SIGNATURE_FAILURE',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'HOSTNAME_MISMATCH',
]);

/** The error codes of a fetch failure and its causes, outermost first. */
function codesOf(err: unknown): string[] {
  const out: string[] = [];
  let e: unknown = err;
  for (let i = 0; i < 4 && e instanceof Error; i++) {
    const code = (e as NodeJS.ErrnoException).code;
    if (typeof code === 'string') out.push(code);
    e = e.cause;
  }
  return out;
}

/**
 * Whether the request of a call that failed before any answer was written on the socket. Sent
 * when undici announced it; unsent when the failure is one that comes before sending (a refused
 * connection, a failed TLS handshake: `BEFORE_SENDING`, or any `ERR_SSL_`/`ERR_TLS_` code), or
 * when undici, whose announcements this process has seen, never announced it. Unknown otherwise
 * (an HTTP stack that announces nothing): the caller then counts it as sent.
 */
function requestSent(sending: Sending, err: unknown): RequestSent {
  if (sending.sent) return 'sent';
  const codes = codesOf(err);
  if (codes.some((c) => BEFORE_SENDING.has(c) || c.startsWith('ERR_SSL_') || c.startsWith('ERR_TLS_')))
    return 'unsent';
  // Nothing dispatched at all (fetch refused the URL or the port), or dispatched and never written.
  if (announcesSending) return 'unsent';
  return 'unknown';
}

/**
 * Of each failure with no answer `#call` throws: whether its request was sent, and the timeout
 * it had.
 */
const REQUEST_SENT = new WeakMap<UpstreamError, { sent: RequestSent; timeoutMs: number }>();

/** A call sent that got no complete answer: it may have been billed (`unansweredCallOf`). */
export interface UnansweredCall {
  /** What happened, for the ledger's remark: `no answer within 30000 ms; the request was sent`. */
  what: string;
}

/**
 * A call whose request was sent (or may have been: daybook cannot tell) and that got no complete
 * answer, so the upstream may have billed it without daybook ever knowing: the timeout struck
 * before or while the headers came; the connection was reset or closed after the request was
 * written; or an HTTP 200 arrived and its body broke off (or timed out) before one byte other
 * than whitespace. Null for everything else: an answer whose status or bytes say what it was
 * (an error, or a success presumed billed: `presumedBillingOf`), and a request never sent (a
 * refused connection, a name that does not resolve, a TLS handshake that failed).
 */
export function unansweredCallOf(err: UpstreamError): UnansweredCall | null {
  if (!(err instanceof TimeoutError || err instanceof NetworkError)) return null;
  const cut = err instanceof TimeoutError ? 'the timeout struck' : 'the connection broke';
  const status = err.response?.httpStatus ?? null;
  if (status !== null) {
    if (status !== 200 || (err.response?.bodyText ?? '').trim() !== '') return null;
    return { what: `HTTP 200 and no byte of the body before ${cut}; the request was sent` };
  }
  const known = REQUEST_SENT.get(err);
  const sent = known?.sent ?? 'unknown';
  if (sent === 'unsent') return null;
  const written = sent === 'sent' ? 'the request was sent' : 'the request may have been sent';
  if (err instanceof TimeoutError)
    return {
      what: `no answer${known ? ` within ${known.timeoutMs} ms` : ' before the timeout'}; ${written}`,
    };
  const code = codesOf(err.cause)[0];
  return { what: `the connection broke before an answer${code ? ` (${code})` : ''}; ${written}` };
}

/** JSON's whitespace: space, tab, line feed, carriage return. */
function skipSpace(text: string, at: number): number {
  let i = at;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) break;
  }
  return i;
}

/** The index after the closing quote of the string opening at `at`; -1 when the text ends inside it. */
function stringEnd(text: string, at: number): number {
  for (let i = at + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5c) i++;
    else if (c === 0x22) return i + 1;
  }
  return -1;
}

/**
 * Where the value starting at `at` ends: after its string, object or array (nesting and strings
 * skipped whole), or at the `,` or `}` after a number or literal. -1 when the text ends inside it.
 */
function valueEnd(text: string, at: number): number {
  let depth = 0;
  for (let i = at; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const end = stringEnd(text, i);
      if (end < 0) return -1;
      if (depth === 0) return end;
      i = end - 1;
    } else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      if (depth === 0) return i;
      depth--;
      if (depth === 0) return i + 1;
    } else if (c === 0x2c && depth === 0) return i;
  }
  return -1;
}

/**
 * What the characters of a string (between its quotes, perhaps cut short) say, escapes read; an
 * escape cut off at the end is left out. Null when they are not a JSON string's characters.
 */
function stringText(raw: string): string | null {
  let end = raw.length;
  for (let i = 0; i < raw.length; i++) {
    if (raw.charCodeAt(i) !== 0x5c) continue;
    const length = raw[i + 1] === 'u' ? 6 : 2;
    if (i + length > raw.length) {
      end = i;
      break;
    }
    i += length - 1;
  }
  try {
    return JSON.parse(`"${raw.slice(0, end)}"`) as string;
  } catch {
    return null;
  }
}

function describeText(text: string | null): string {
  if (!text) return 'empty';
  const head = text.slice(0, 60).replace(/\s+/g, ' ');
  return `${text.length} characters starting "${head}"`;
}
