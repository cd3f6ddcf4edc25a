/**
 * One error class per upstream failure, grouped in three classes that decide what the job
 * boundary does: permanent (never retried), budget (pause enterprise work), transient (retry
 * with backoff). Each carries the request context, never the API key.
 */

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
export class InvalidRequestError extends Error {
  override readonly name = 'InvalidRequestError';
  readonly parameter: string;
  constructor(parameter: string, message: string) {
    super(message);
    this.parameter = parameter;
  }
}

abstract class PermanentError extends UpstreamError {
  readonly errorClass = 'permanent' as const;
}
abstract class TransientError extends UpstreamError {
  readonly errorClass = 'transient' as const;
}

export class InvalidParameterError extends PermanentError {
  override readonly name = 'InvalidParameterError';
  readonly code = 'invalid_parameter';
}
export class NotFoundError extends PermanentError {
  override readonly name = 'NotFoundError';
  readonly code = 'not_found';
}
export class InvalidDateError extends PermanentError {
  override readonly name = 'InvalidDateError';
  readonly code = 'invalid_date';
}
export class InvalidProductNameError extends PermanentError {
  override readonly name = 'InvalidProductNameError';
  readonly code = 'invalid_product_name';
}
export class MissingParametersError extends PermanentError {
  override readonly name = 'MissingParametersError';
  readonly code = 'missing_parameters';
}
/** The key was refused (missing, unknown or revoked). Retrying will not help. */
export class AuthenticationError extends PermanentError {
  override readonly name = 'AuthenticationError';
  readonly code: string;
  constructor(code: string, message: string, request: RequestContext, response: ResponseContext | null) {
    super(message, request, response);
    this.code = code;
  }
}
/**
 * An error body whose code the spec does not list. Transient: errors cost no credits, and a
 * code nobody documented is more often a passing upstream fault than a verdict on the request.
 */
export class UnknownErrorCodeError extends TransientError {
  override readonly name = 'UnknownErrorCodeError';
  readonly code: string;
  constructor(code: string, message: string, request: RequestContext, response: ResponseContext | null) {
    super(message, request, response);
    this.code = code;
  }
}
/**
 * A JSON success body that does not have the documented shape (no PID, say). Retrying returns
 * the same body and, for enterprises, may bill again, so it is permanent; the raw body is landed.
 */
export class UnexpectedResponseError extends PermanentError {
  override readonly name = 'UnexpectedResponseError';
  readonly code = 'unexpected_response';
}

export class InsufficientCreditsError extends UpstreamError {
  override readonly name = 'InsufficientCreditsError';
  readonly errorClass = 'budget' as const;
  readonly code = 'insufficient_credits';
}

export class RateLimitedError extends TransientError {
  override readonly name = 'RateLimitedError';
  readonly code = 'rate_limit_exceeded';
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
export class ServerError extends TransientError {
  override readonly name = 'ServerError';
  readonly code = 'server_error';
}
/** What the part of a success answer that arrived before it broke off says about billing. */
export interface BrokenSuccess {
  /** metadata.usage.credits, when the answer got that far. */
  credits: number | null;
  /** The enterprise's PID, when the answer got that far. */
  pid: string | null;
}

/** The body is not JSON (an HTML error page, a truncated document). */
export class MalformedBodyError extends TransientError {
  override readonly name = 'MalformedBodyError';
  readonly code = 'malformed_body';
  /**
   * Set when an HTTP 200 body began as a success document and broke off: the upstream processed
   * the request and bills it (credits are deducted after processing), though the content is lost.
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
/**
 * An answer refused for its size or shape before it is read (the same answer would be refused
 * again, so it is permanent for the cycle). A success refused so was billed (`brokenSuccess`).
 */
export abstract class RefusedBodyError extends PermanentError {
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

export class TimeoutError extends TransientError {
  override readonly name = 'TimeoutError';
  readonly code = 'timeout';
}
/** The connection failed or was reset before a full response arrived. */
export class NetworkError extends TransientError {
  override readonly name = 'NetworkError';
  readonly code = 'network_error';
}

/** Builds the typed error for a documented error code. */
export function errorForCode(
  code: string,
  message: string,
  request: RequestContext,
  response: ResponseContext,
  retryAfterMs: number | null,
): UpstreamError {
  switch (code) {
    case 'invalid_parameter':
      return new InvalidParameterError(message, request, response);
    case 'not_found':
      return new NotFoundError(message, request, response);
    case 'invalid_date':
      return new InvalidDateError(message, request, response);
    case 'invalid_product_name':
      return new InvalidProductNameError(message, request, response);
    case 'missing_parameters':
      return new MissingParametersError(message, request, response);
    case 'insufficient_credits':
      return new InsufficientCreditsError(message, request, response);
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
