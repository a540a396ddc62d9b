import {
  AbortError,
  type CallwrightError,
  errorFromResponse,
  NetworkError,
  RateLimitError,
  ServerError,
  TimeoutError,
} from './errors.js';
import type { RequestOptions } from './types.js';

/** What a failed attempt may be retried on. */
export type RetryPolicy =
  /** Idempotent reads: 429, network errors, timeouts and 5xx. */
  | 'idempotent'
  /**
   * Operations that must not run twice: only 429 (refused before anything happened, DESIGN §1:
   * authentication, then the rate limit, then the rest) and a refused connection (nothing sent).
   */
  | 'unsafe';

export interface RetryInfo {
  /** 1 for the first retry. */
  retry: number;
  delayMs: number;
  error: CallwrightError;
}

export interface TransportOptions {
  apiKey: string;
  baseUrl: string;
  timeoutMs: number;
  maxRetries: number;
  baseDelayMs: number;
  maxDelayMs: number;
  maxRetryAfterMs: number;
  fetch: typeof fetch;
  onRetry?: ((info: RetryInfo) => void) | undefined;
  random: () => number;
}

export interface ApiRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  retry: RetryPolicy;
  /** Read the answer as bytes instead of JSON. */
  binary?: boolean;
  /** Hand back the answer's body as a stream of bytes, unread (a long export). */
  stream?: boolean;
  /** Send `body` as this text with this media type instead of JSON (e.g. a CSV file). */
  text?: { contentType: string; body: string };
}

const timeoutReason = Symbol('timeout');

/** `Retry-After` as milliseconds: delta-seconds or an HTTP date. */
export function parseRetryAfterMs(value: string | null, nowMs = Date.now()): number | null {
  if (value === null) return null;
  if (/^\s*\d+\s*$/.test(value)) return Number(value) * 1000;
  const dateMs = Date.parse(value);
  return Number.isNaN(dateMs) ? null : Math.max(0, dateMs - nowMs);
}

function connectionRefused(error: unknown): boolean {
  for (let cause: unknown = error, depth = 0; cause && depth < 5; depth++) {
    if ((cause as { code?: unknown }).code === 'ECONNREFUSED') return true;
    cause = (cause as { cause?: unknown }).cause;
  }
  return false;
}

/** Waits `ms`; rejects with the signal's reason when it fires first. */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** One HTTP exchange with retries: the only place the client touches the network. */
export class Transport {
  private readonly origin: string;

  constructor(private readonly options: TransportOptions) {
    this.origin = options.baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
  }

  /** Full jitter: a random delay between 0 and min(max, base · 2^retry). */
  backoffMs(retry: number): number {
    const ceiling = Math.min(this.options.maxDelayMs, this.options.baseDelayMs * 2 ** (retry - 1));
    return Math.floor(this.options.random() * ceiling);
  }

  async request<T>(call: ApiRequest, options: RequestOptions = {}): Promise<T> {
    for (let retry = 0; ; retry++) {
      const outcome = await this.attempt<T>(call, options);
      if (outcome.ok) return outcome.value;
      const { error, retryable } = outcome;
      if (!retryable || retry >= this.options.maxRetries) throw error;
      let delayMs = this.backoffMs(retry + 1);
      if (error instanceof RateLimitError && error.retryAfterMs !== null) {
        // Never earlier than the server asked; the jitter on top spreads clients that were told the same.
        if (error.retryAfterMs > this.options.maxRetryAfterMs) throw error;
        delayMs += error.retryAfterMs;
      }
      this.options.onRetry?.({ retry: retry + 1, delayMs, error });
      try {
        await sleep(delayMs, options.signal);
      } catch (reason) {
        throw new AbortError({
          status: 0,
          code: 'aborted',
          message: 'request aborted',
          requestId: null,
          cause: reason,
        });
      }
    }
  }

  private url(call: ApiRequest): string {
    const url = new URL(`${this.origin}${call.path}`);
    for (const [name, value] of Object.entries(call.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    return url.href;
  }

  private async attempt<T>(
    call: ApiRequest,
    options: RequestOptions,
  ): Promise<{ ok: true; value: T } | { ok: false; error: CallwrightError; retryable: boolean }> {
    const controller = new AbortController();
    const onAbort = () => controller.abort(options.signal?.reason);
    if (options.signal?.aborted) onAbort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(
      () => controller.abort(timeoutReason),
      options.timeoutMs ?? this.options.timeoutMs,
    );
    try {
      const response = await this.options.fetch(this.url(call), {
        method: call.method,
        headers: {
          'X-API-Key': this.options.apiKey,
          Accept: call.binary || call.stream ? '*/*' : 'application/json',
          ...(call.text
            ? { 'Content-Type': call.text.contentType }
            : call.body === undefined
              ? {}
              : { 'Content-Type': 'application/json' }),
        },
        ...(call.text
          ? { body: call.text.body }
          : call.body === undefined
            ? {}
            : { body: JSON.stringify(call.body) }),
        // A redirect would carry the key to wherever it points: refuse it.
        redirect: 'error',
        signal: controller.signal,
      });
      const requestId = response.headers.get('x-request-id');
      if (response.ok) {
        if (call.stream) return { ok: true, value: response.body as T };
        const value = call.binary ? new Uint8Array(await response.arrayBuffer()) : await response.json();
        return { ok: true, value: value as T };
      }
      const text = await response.text();
      let body: unknown = null;
      try {
        body = JSON.parse(text);
      } catch {
        body = null;
      }
      const error = errorFromResponse(
        response.status,
        body,
        requestId,
        parseRetryAfterMs(response.headers.get('retry-after')),
      );
      const retryable =
        error instanceof RateLimitError ||
        (call.retry === 'idempotent' && error instanceof ServerError && response.status !== 501);
      return { ok: false, error, retryable };
    } catch (cause) {
      const base = { status: 0, requestId: null, cause };
      if (options.signal?.aborted) {
        return {
          ok: false,
          retryable: false,
          error: new AbortError({ ...base, code: 'aborted', message: 'request aborted' }),
        };
      }
      if (controller.signal.reason === timeoutReason) {
        const error = new TimeoutError({
          ...base,
          code: 'timeout',
          message: `no answer within the time limit`,
        });
        return { ok: false, retryable: call.retry === 'idempotent', error };
      }
      const message = `network error: ${(cause as Error).message ?? String(cause)}`;
      const error = new NetworkError({ ...base, code: 'network_error', message });
      return { ok: false, retryable: call.retry === 'idempotent' || connectionRefused(cause), error };
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
    }
  }
}
