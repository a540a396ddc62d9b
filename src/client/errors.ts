/** The errors the client throws: one base class, one subclass per kind of failure. */

export type ApiErrorCode =
  | 'validation_error'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'invalid_phone'
  | 'rate_limited'
  | 'server_error'
  | 'unavailable';

/** Codes of failures that never got an HTTP answer. */
export type ClientErrorCode = 'network_error' | 'timeout' | 'aborted';

export interface CallwrightErrorFields {
  /** HTTP status; 0 when no answer arrived. */
  status: number;
  code: ApiErrorCode | ClientErrorCode | (string & {});
  message: string;
  /** `X-Request-Id` of the answer, for support; null without an answer. */
  requestId: string | null;
  /** A batch request's bad rows (a campaign's contacts), when the server named them. */
  rows?: { index?: number; line?: number; message: string }[] | null;
  cause?: unknown;
}

export class CallwrightError extends Error {
  readonly status: number;
  readonly code: CallwrightErrorFields['code'];
  readonly requestId: string | null;
  /** A batch request's bad rows (a campaign's contacts) by index or CSV line; null otherwise. */
  readonly rows: { index?: number; line?: number; message: string }[] | null;

  constructor(fields: CallwrightErrorFields) {
    super(fields.message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.name = new.target.name;
    this.status = fields.status;
    this.code = fields.code;
    this.requestId = fields.requestId;
    this.rows = fields.rows ?? null;
  }
}

/** 400 `validation_error`: a parameter is missing or invalid (the message names it). */
export class ValidationError extends CallwrightError {}
/** 401 `unauthorized`: the API key is missing, invalid or revoked. */
export class AuthenticationError extends CallwrightError {}
/** 403 `forbidden`: a signed link has expired. */
export class ForbiddenError extends CallwrightError {}
/** 404 `not_found`: no such call, event or agent (or the agent is inactive). */
export class NotFoundError extends CallwrightError {}
/** 409 `conflict`: e.g. cancelling a call that has already ended. */
export class ConflictError extends CallwrightError {}
/** 422 `invalid_phone`: a phone number is not E.164. */
export class InvalidPhoneError extends CallwrightError {}

/** 429 `rate_limited`, after the client's retries (if any) were used up. */
export class RateLimitError extends CallwrightError {
  /** The server's `Retry-After`, in milliseconds, when it sent one. */
  readonly retryAfterMs: number | null;
  constructor(fields: CallwrightErrorFields & { retryAfterMs: number | null }) {
    super(fields);
    this.retryAfterMs = fields.retryAfterMs;
  }
}

/** 5xx: `server_error`, `unavailable`, or a proxy's error page. */
export class ServerError extends CallwrightError {}

/**
 * No answer: the connection failed or was reset. For `calls.createOutbound` the call may or may
 * not have been created — look it up with `calls.list` before placing it again.
 */
export class NetworkError extends CallwrightError {}
/** The attempt took longer than `timeoutMs` (a NetworkError: the server may have acted on it). */
export class TimeoutError extends NetworkError {}
/** The caller's AbortSignal fired. */
export class AbortError extends CallwrightError {}

const classByStatus: Record<number, typeof CallwrightError> = {
  400: ValidationError,
  401: AuthenticationError,
  403: ForbiddenError,
  404: NotFoundError,
  409: ConflictError,
  422: InvalidPhoneError,
};

/** The typed error of an HTTP error answer. */
export function errorFromResponse(
  status: number,
  body: unknown,
  requestId: string | null,
  retryAfterMs: number | null,
): CallwrightError {
  const error = (body as { error?: { code?: unknown; message?: unknown; rows?: unknown } } | null)?.error;
  const code =
    typeof error?.code === 'string' ? error.code : status >= 500 ? 'server_error' : `http_${status}`;
  const message = typeof error?.message === 'string' ? error.message : `HTTP ${status}`;
  const rows = Array.isArray(error?.rows) ? (error.rows as CallwrightErrorFields['rows']) : null;
  const fields = { status, code, message, requestId, rows };
  if (status === 429) return new RateLimitError({ ...fields, retryAfterMs });
  if (status >= 500) return new ServerError(fields);
  const ErrorClass = classByStatus[status] ?? CallwrightError;
  return new ErrorClass(fields);
}
