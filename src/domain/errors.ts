/**
 * The one error type of callwright. Every failure that reaches a client carries a stable `code`;
 * the HTTP status is derived from the code, so the two can never disagree.
 */
export const errorStatusByCode = {
  validation_error: 400,
  unauthorized: 401,
  /** A signed link that has expired (recordings). */
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  invalid_phone: 422,
  rate_limited: 429,
  server_error: 500,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof errorStatusByCode;

/** One bad row of a batch: its index in a JSON list (0-based) or its line in a CSV file (1-based). */
export interface RowError {
  index?: number;
  line?: number;
  message: string;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** Extra response headers (Retry-After on 429). */
  readonly headers: Record<string, string>;
  /** A batch's problems row by row (a campaign's contacts), reported with the error. */
  readonly rows: RowError[] | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options?: { headers?: Record<string, string>; cause?: unknown; rows?: RowError[] },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = errorStatusByCode[code];
    this.headers = options?.headers ?? {};
    this.rows = options?.rows;
  }
}

export const invalidApiKeyMessage = 'invalid or missing API key';

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError;
}
