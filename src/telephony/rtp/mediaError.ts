import { AppError, type ErrorCode } from '../../domain/errors.js';

/**
 * Why a media operation failed. The SIP layer maps these to responses: `no_common_codec`,
 * `no_common_crypto` and `invalid_sdp` become 488 Not Acceptable Here, `ports_exhausted` a 503 / a failed call.
 */
export type MediaErrorReason =
  | 'invalid_sdp'
  | 'no_common_codec'
  | 'no_common_crypto'
  | 'media_rejected'
  | 'ports_exhausted';

const codeByReason: Record<MediaErrorReason, ErrorCode> = {
  invalid_sdp: 'validation_error',
  no_common_codec: 'validation_error',
  no_common_crypto: 'validation_error',
  media_rejected: 'validation_error',
  ports_exhausted: 'unavailable',
};

/** An AppError (stable `code`) with a finer, media-specific `reason`. */
export class MediaError extends AppError {
  readonly reason: MediaErrorReason;

  constructor(reason: MediaErrorReason, message: string, options?: { cause?: unknown }) {
    super(codeByReason[reason], message, options);
    this.name = 'MediaError';
    this.reason = reason;
  }
}

export function isMediaError(value: unknown): value is MediaError {
  return value instanceof MediaError;
}
