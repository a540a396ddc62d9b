import { AppError } from '../../domain/errors.js';
import { scrubSecrets } from '../../domain/secretScrubbing.js';

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

  constructor(
    provider: string,
    message: string,
    options?: { providerStatus?: number; cause?: unknown; secrets?: readonly (string | undefined)[] },
  ) {
    super(
      'unavailable',
      scrubSecrets(`${provider}: ${message}`, options?.secrets),
      options?.cause === undefined ? {} : { cause: options.cause },
    );
    this.name = 'ProviderError';
    this.provider = provider;
    this.providerStatus = options?.providerStatus;
  }
}

/** The reason an aborted signal carries, or a standard AbortError when it carries none. */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}
