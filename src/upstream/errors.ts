/**
 * One error class per upstream failure, grouped in three classes that decide what the job
 * boundary does: permanent (never retried), budget (pause enterprise work), transient (retry
 * with backoff). Each carries the request context, never the API key.
 */

import { namedError } from '../terms/named-error.ts';

export type Operation = 'enterprise-search' | 'product-listing';

/** What was asked, for error messages and the raw landing. Never holds the key. */
export interface RequestContext {
  operation: Operation;
  params: Record<string, string>;
}

/** What came back, when anything did. */
export interface ResponseContext {
  httpStatus: number | null;
  /** The body as received (text), when one was received. */
  bodyText: string | null;
  durationMs: number;
  /** When the request was sent. */
  fetchedAt: Date;
  /** Set when the body's bytes did not decode as declared (the text holds U+FFFD for them). */
  decoding?: string | null;
  /**
   * The body's bytes as received (the key cut out), when its text cannot stand for them exactly:
   * a charset other than UTF-8, bytes that did not decode, or a NUL character.
   */
  bodyBytes?: Uint8Array | null;
}

export type ErrorClass = 'permanent' | 'budget' | 'transient';

export abstract class UpstreamError extends Error {
  abstract readonly errorClass: ErrorClass;
  /** The documented error code, or a daybook code for failures the spec does not name. */
  abstract readonly code: string;
  readonly request: RequestContext;
  readonly response: ResponseContext | null;

  constructor(message: string, request: RequestContext, response: ResponseContext | null, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.request = request;
    this.response = response;
  }

  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      code: this.code,
      errorClass: this.errorClass,
      message: this.message,
      operation: this.request.operation,
      params: this.request.params,
      httpStatus: this.response?.httpStatus ?? null,
    };
  }
}

/** A parameter that daybook refuses to send (checked before any request). */
export class InvalidRequestError extends namedError('InvalidRequestError') {
  readonly parameter: string;
  constructor(parameter: string, message: string) {
    super(message);
    this.parameter = parameter;
  }
}

/**
 * The bases of the error classes of one group: `permanent('NotFoundError', 'not_found')` fixes the
 * group, the name (a literal, like every error's) and the one code the class stands for.
 */
function codedIn<K extends ErrorClass>(group: K) {
  return <N extends string, C extends string>(errorName: N, errorCode: C) => {
    abstract class Coded extends UpstreamError {
      readonly errorClass = group;
      override readonly name = errorName;
      readonly code = errorCode;
    }
    return Coded;
  };
}
const permanent = codedIn('permanent');
const transient = codedIn('transient');
const budget = codedIn('budget');

/** The base of an error class whose code is the upstream's own word (one of several, or an unknown one). */
function ownCode<K extends ErrorClass, N extends string>(group: K, errorName: N) {
  abstract class OwnCode extends UpstreamError {
    readonly errorClass = group;
    override readonly name = errorName;
    readonly code: string;
    constructor(code: string, message: string, request: RequestContext, response: ResponseContext | null) {
      super(message, request, response);
      this.code = code;
    }
  }
  return OwnCode;
}

export class InvalidParameterError extends permanent('InvalidParameterError', 'invalid_parameter') {}
export class NotFoundError extends permanent('NotFoundError', 'not_found') {}
export class InvalidDateError extends permanent('InvalidDateError', 'invalid_date') {}
export class InvalidProductNameError extends permanent('InvalidProductNameError', 'invalid_product_name') {}
export class MissingParametersError extends permanent('MissingParametersError', 'missing_parameters') {}
/** The key was refused (missing, unknown or revoked). Retrying will not help. */
export class AuthenticationError extends ownCode('permanent', 'AuthenticationError') {}
/**
 * An error body whose code the spec does not list. Transient: errors cost no credits, and a
 * code nobody documented is more often a passing upstream fault than a verdict on the request.
 */
export class UnknownErrorCodeError extends ownCode('transient', 'UnknownErrorCodeError') {}
/**
 * A JSON success body that does not have the documented shape (no PID, say). Retrying returns
 * the same body and, for enterprises, may bill again, so it is permanent; the raw body is landed.
 */
export class UnexpectedResponseError extends permanent('UnexpectedResponseError', 'unexpected_response') {}

export class InsufficientCreditsError extends budget('InsufficientCreditsError', 'insufficient_credits') {}

export class RateLimitedError extends transient('RateLimitedError', 'rate_limit_exceeded') {
  /** How long the upstream asked us to wait, from Retry-After; null when it did not say. */
  readonly retryAfterMs: number | null;
  constructor(
    message: string,
    request: RequestContext,
    response: ResponseContext | null,
    retryAfterMs: number | null,
  ) {
    super(message, request, response);
    this.retryAfterMs = retryAfterMs;
  }
}
export class ServerError extends transient('ServerError', 'server_error') {}
/**
 * What the part of an HTTP 200 answer that arrived before it broke off (or was refused) says
 * about its billing, which is presumed made (src/upstream/client.ts `brokenSuccessOf`).
 */
export interface BrokenSuccess {
  /** metadata.usage.credits, when the answer got that far. */
  credits: number | null;
  /** The enterprise's PID, when the answer got that far. */
  pid: string | null;
}

/** The base of the errors for a body daybook could not use, which may have been a billed success. */
function unusableBody<K extends ErrorClass>(group: K) {
  abstract class UnusableBody extends UpstreamError {
    readonly errorClass = group;
    /**
     * Set when an HTTP 200 body began to arrive and broke off, or was refused, and what arrived
     * does not prove it an error: the upstream bills once it has processed the request, before
     * it sends the body, so the call is presumed billed, though the content is lost.
     */
    readonly brokenSuccess: BrokenSuccess | null;
    constructor(
      message: string,
      request: RequestContext,
      response: ResponseContext | null,
      brokenSuccess: BrokenSuccess | null = null,
    ) {
      super(message, request, response);
      this.brokenSuccess = brokenSuccess;
    }
  }
  return UnusableBody;
}

/** The body is not JSON (an HTML error page, a truncated document). */
export class MalformedBodyError extends unusableBody('transient') {
  override readonly name = 'MalformedBodyError';
  readonly code = 'malformed_body';
}
/**
 * An answer refused for its size or shape before it is read (the same answer would be refused
 * again, so it is permanent for the cycle). A success refused so was billed (`brokenSuccess`).
 */
export abstract class RefusedBodyError extends unusableBody('permanent') {}

/** The body exceeded the size daybook reads (after decompression). */
export class BodyTooLargeError extends RefusedBodyError {
  override readonly name = 'BodyTooLargeError';
  readonly code = 'body_too_large';
}

/** The body nests deeper than daybook reads. */
export class BodyTooDeepError extends RefusedBodyError {
  override readonly name = 'BodyTooDeepError';
  readonly code = 'body_too_deep';
}

export class TimeoutError extends transient('TimeoutError', 'timeout') {}
/** The connection failed or was reset before a full response arrived. */
export class NetworkError extends transient('NetworkError', 'network_error') {}

type PlainErrorClass = new (
  message: string,
  request: RequestContext,
  response: ResponseContext,
) => UpstreamError;

/** The documented codes whose error needs nothing beyond the message and the context. */
const PLAIN_ERRORS = new Map<string, PlainErrorClass>([
  ['invalid_parameter', InvalidParameterError],
  ['not_found', NotFoundError],
  ['invalid_date', InvalidDateError],
  ['invalid_product_name', InvalidProductNameError],
  ['missing_parameters', MissingParametersError],
  ['insufficient_credits', InsufficientCreditsError],
]);

/** Builds the typed error for a documented error code. */
export function errorForCode(
  code: string,
  message: string,
  request: RequestContext,
  response: ResponseContext,
  retryAfterMs: number | null,
): UpstreamError {
  const Plain = PLAIN_ERRORS.get(code);
  if (Plain) return new Plain(message, request, response);
  switch (code) {
    case 'rate_limit_exceeded':
      return new RateLimitedError(message, request, response, retryAfterMs);
    case 'unauthorized':
    case 'invalid_api_key':
    case 'missing_api_key':
    case 'forbidden':
      return new AuthenticationError(code, message, request, response);
    default:
      return new UnknownErrorCodeError(code, message, request, response);
  }
}
