import { AppError } from '../../domain/errors.js';
import { scrubSecrets } from '../../domain/secretScrubbing.js';

/**
 * What went wrong with a vendor, for the call record's `provider_failures[].kind`:
 * - `refused`: it answered with an HTTP or upgrade status that is not a success (a wrong key, 4xx, 5xx);
 * - `unreachable`: no connection (DNS, TCP, TLS, a socket error before anything came);
 * - `timeout`: nothing in time where something was owed (first audio, first token, final transcript);
 * - `stall`: it started, then went quiet for longer than the gap allowed mid-stream;
 * - `garbage`: it sent something that is not its protocol (not JSON, audio that does not decode);
 * - `error_frame`: it sent its protocol's error message;
 * - `closed`: the connection closed before the end of what was owed;
 * - `unusable`: the call could not use it at all (no credential): never dialled;
 * - `error`: anything else.
 */
export type ProviderFailureKind =
  | 'refused'
  | 'unreachable'
  | 'timeout'
  | 'stall'
  | 'garbage'
  | 'error_frame'
  | 'closed'
  | 'unusable'
  | 'error';

/**
 * A speech or language provider failed: an HTTP server answered with an error, timed out, sent
 * something we cannot parse, or an offline engine broke. It is an AppError with code `unavailable`
 * (a call cannot proceed without its providers), plus the status and short code the provider gave.
 * Its message is scrubbed when it is made — the `secrets` given (the adapter's key) and anything
 * that looks like a key (src/domain/secretScrubbing.ts) — since it is kept in the call's
 * `provider_failures`, shown in the calls list and the dashboard, and logged.
 */
export class ProviderError extends AppError {
  /** Which provider failed, e.g. `openai-speech`, `pocketsphinx`. */
  readonly provider: string;
  /** The HTTP status the provider answered with, when it answered. */
  readonly providerStatus: number | undefined;
  /** What kind of failure it was, when the place that saw it knows (see ProviderFailureKind). */
  readonly kind: ProviderFailureKind | undefined;

  constructor(
    provider: string,
    message: string,
    options?: {
      providerStatus?: number;
      cause?: unknown;
      kind?: ProviderFailureKind;
      secrets?: readonly (string | undefined)[];
    },
  ) {
    super(
      'unavailable',
      scrubSecrets(`${provider}: ${message}`, options?.secrets),
      options?.cause === undefined ? {} : { cause: options.cause },
    );
    this.name = 'ProviderError';
    this.provider = provider;
    this.providerStatus = options?.providerStatus;
    this.kind = options?.kind;
  }
}

/** The kind of a failure as the call record lists it (a status without a kind is a refusal). */
export function failureKindOf(error: unknown): ProviderFailureKind {
  if (!(error instanceof ProviderError)) return 'error';
  if (error.kind) return error.kind;
  if (error.cause instanceof ProviderError && error.cause.kind) return error.cause.kind;
  return error.providerStatus === undefined ? 'error' : 'refused';
}

/** The reason an aborted signal carries, or a standard AbortError when it carries none. */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}
