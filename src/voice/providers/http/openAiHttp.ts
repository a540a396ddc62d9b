import { vendorErrorCode } from '../../../domain/secretScrubbing.js';
import { type GuardedConnections, sendGuardedRequest } from '../../../net/guardedConnections.js';
import { abortReason, ProviderError } from '../providerError.js';

/** Where an OpenAI-compatible server lives (OpenAI itself, or a self-hosted model server). */
export interface OpenAiCompatibleEndpoint {
  /** Up to and including the version segment, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer …` when set (self-hosted servers often need none). */
  apiKey?: string;
  /**
   * Longest wait for the response to start, and for streamed responses the longest gap between
   * two pieces of the body. Default 30 000 ms.
   */
  timeoutMs?: number;
  /**
   * The address guard of every connection (an account's credential: private addresses refused
   * unless allowed, the address pinned); absent: the host as it resolves (the operator's own).
   * Redirects are never followed either way.
   */
  connections?: GuardedConnections;
}

const defaultTimeoutMs = 30_000;

export interface ProviderRequest {
  providerName: string;
  endpoint: OpenAiCompatibleEndpoint;
  /** Appended to baseUrl, e.g. `/audio/speech`. */
  path: string;
  body: string | FormData;
  signal?: AbortSignal | undefined;
}

/** A response whose body can still be read, with the deadline kept alive for streaming. */
export interface ProviderResponse {
  response: Response;
  /** Push the deadline back (call on each streamed piece); also arms it for the body. */
  extendDeadline(): void;
  /** Stop the deadline once the body has been read. */
  done(): void;
  /** Turns an error thrown while reading the body into the right ProviderError. */
  explain(error: unknown): unknown;
}

function joinUrl(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}${path}`;
}

/**
 * The short code of an OpenAI-style error body (`error.code`, else `error.type`: `invalid_api_key`,
 * `rate_limit_exceeded`…), or null. The body's free text is never kept: a vendor may echo the key
 * in it, and an internal server its internals (issue 33).
 */
function errorCodeOf(bodyText: string, apiKey: string | undefined): string | null {
  try {
    const parsed: unknown = JSON.parse(bodyText);
    if (typeof parsed === 'object' && parsed !== null && 'error' in parsed) {
      const error = (parsed as { error: unknown }).error;
      if (typeof error === 'object' && error !== null) {
        const { code, type } = error as { code?: unknown; type?: unknown };
        return vendorErrorCode(code, [apiKey]) ?? vendorErrorCode(type, [apiKey]);
      }
      return vendorErrorCode(error, [apiKey]);
    }
  } catch {
    // Not JSON: nothing of it is kept.
  }
  return null;
}

/**
 * POSTs to an OpenAI-compatible server. Resolves once a 2xx response has started; rejects with a
 * ProviderError carrying the status and the server's message otherwise, or on timeout. When the
 * caller's signal aborts, rejects with the signal's reason, unwrapped.
 */
export async function postToProvider(request: ProviderRequest): Promise<ProviderResponse> {
  const { providerName, endpoint, signal } = request;
  if (signal?.aborted) throw abortReason(signal);
  const timeoutMs = endpoint.timeoutMs ?? defaultTimeoutMs;
  const deadline = new AbortController();
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  const armDeadline = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      timedOut = true;
      deadline.abort(new ProviderError(providerName, `no response within ${timeoutMs} ms`));
    }, timeoutMs);
  };
  const done = (): void => clearTimeout(timer);
  const explain = (error: unknown): unknown => {
    done();
    if (signal?.aborted) return abortReason(signal);
    if (timedOut)
      return new ProviderError(providerName, `no response within ${timeoutMs} ms`, { cause: error });
    if (error instanceof ProviderError) return error;
    const message = error instanceof Error ? error.message : String(error);
    return new ProviderError(providerName, `request to ${endpoint.baseUrl} failed: ${message}`, {
      cause: error,
    });
  };

  const headers: Record<string, string> = {};
  if (endpoint.apiKey) headers.authorization = `Bearer ${endpoint.apiKey}`;
  if (typeof request.body === 'string') headers['content-type'] = 'application/json';
  armDeadline();
  let response: Response;
  try {
    response = await sendGuardedRequest(joinUrl(endpoint.baseUrl, request.path), {
      method: 'POST',
      headers,
      body: request.body,
      signal: signal ? AbortSignal.any([signal, deadline.signal]) : deadline.signal,
      connections: endpoint.connections,
    });
  } catch (error) {
    throw explain(error);
  }
  if (!response.ok) {
    let bodyText = '';
    try {
      bodyText = await response.text();
    } catch (error) {
      throw explain(error);
    }
    done();
    const code = errorCodeOf(bodyText, endpoint.apiKey);
    throw new ProviderError(providerName, `HTTP ${response.status}${code ? ` ${code}` : ''}`, {
      providerStatus: response.status,
      secrets: [endpoint.apiKey],
    });
  }
  armDeadline();
  return { response, extendDeadline: armDeadline, done, explain };
}

/** POSTs JSON and parses the JSON answer. */
export async function postJsonToProvider(request: ProviderRequest): Promise<unknown> {
  const { response, done, explain } = await postToProvider(request);
  try {
    const text = await response.text();
    done();
    return JSON.parse(text) as unknown;
  } catch (error) {
    if (error instanceof SyntaxError) {
      throw new ProviderError(
        request.providerName,
        `answered with something that is not JSON: ${error.message}`,
      );
    }
    throw explain(error);
  }
}

/** Reads a streamed body piece by piece, pushing the idle deadline back on each piece. */
export async function* readBodyPieces(providerResponse: ProviderResponse): AsyncIterable<Uint8Array> {
  const body = providerResponse.response.body;
  if (!body) return;
  const reader = body.getReader();
  try {
    while (true) {
      let piece: Awaited<ReturnType<typeof reader.read>>;
      try {
        piece = await reader.read();
      } catch (error) {
        throw providerResponse.explain(error);
      }
      if (piece.done) break;
      providerResponse.extendDeadline();
      yield piece.value;
    }
  } finally {
    providerResponse.done();
    reader.releaseLock();
    await body.cancel().catch(() => undefined);
  }
}
