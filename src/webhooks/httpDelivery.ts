/**
 * One webhook delivery attempt: a POST to the vetted address of the endpoint, no redirects, one
 * deadline for the whole attempt, a bounded read of the response. Failures are reported in the
 * result, never thrown, so the caller can log every attempt the same way.
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { performance } from 'node:perf_hooks';
import { isAppError } from '../domain/errors.js';
import { type DeliveryTarget, type HostnameLookup, resolveDeliveryAddress } from './urlGuard.js';

export const defaultDeliveryTimeoutMs = 15_000;
export const defaultMaxResponseBytes = 4096;
const userAgent = 'callwright-webhooks/1';
const maximumLocationLength = 200;
const maximumErrorLength = 300;

export interface DeliveryAttemptRequest {
  url: string | URL;
  /** POST unless given (an agent's tool may use another method; GET and DELETE send no body). */
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** The exact bytes that were signed. */
  body: string | Buffer;
  /** Signature and content headers (see webhookHeaders); Host and Content-Length are set here. */
  headers: Readonly<Record<string, string>>;
  /** Deadline for the whole attempt: DNS, connect, request and response. */
  timeoutMs?: number;
  allowPrivate: boolean;
  /** At most this much of the response body is read (and kept as the excerpt). */
  maxResponseBytes?: number;
  lookup?: HostnameLookup;
}

export interface DeliveryAttemptResult {
  /** Only a 2xx response is a success. */
  ok: boolean;
  /** The HTTP status, or null when no response arrived. */
  status: number | null;
  latencyMs: number;
  /** The start of the response body (at most maxResponseBytes), decoded as UTF-8. */
  responseExcerpt: string;
  /** Why the attempt failed, or null when ok. */
  error: string | null;
  /** From Retry-After on a 429 or 503, else null. */
  retryAfterMs: number | null;
  /** The endpoint answered 410 Gone: it asks not to be called again. */
  gone: boolean;
  /**
   * Whether the whole body arrived before the deadline (false: it was cut by the deadline, the
   * connection closing, or `maxResponseBytes`). A webhook reads only the status; a tool's answer
   * is its body, so a partial one is a failure (issue 34).
   */
  responseComplete: boolean;
}

interface ReceivedResponse {
  status: number;
  headers: IncomingHttpHeaders;
  bodyExcerpt: Buffer;
  complete: boolean;
}

class DeliveryTimeoutError extends Error {}

/**
 * Milliseconds to wait according to a Retry-After value (delay-seconds or HTTP-date), or null when
 * the value is absent or unreadable. A date in the past gives 0.
 */
export function parseRetryAfterMs(value: string | undefined, nowMs: number = Date.now()): number | null {
  const text = value?.trim();
  if (text === undefined || text === '') return null;
  if (/^[0-9]+$/.test(text)) return Math.min(Number(text) * 1000, Number.MAX_SAFE_INTEGER);
  if (!/[a-z]/i.test(text)) return null;
  const dateMs = Date.parse(text);
  return Number.isNaN(dateMs) ? null : Math.max(0, dateMs - nowMs);
}

function requestHeaders(
  headers: Readonly<Record<string, string>>,
  target: DeliveryTarget,
  contentLength: number | null,
): Record<string, string> {
  const merged: Record<string, string> = { 'user-agent': userAgent };
  for (const [name, value] of Object.entries(headers)) merged[name.toLowerCase()] = value;
  merged.host = target.hostHeader;
  if (contentLength !== null) merged['content-length'] = String(contentLength);
  return merged;
}

/** Rejects with a DeliveryTimeoutError when the signal aborts first. */
function beforeDeadline<T>(work: Promise<T>, deadline: AbortSignal): Promise<T> {
  if (deadline.aborted) return Promise.reject(new DeliveryTimeoutError());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new DeliveryTimeoutError());
    deadline.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => deadline.removeEventListener('abort', onAbort));
  });
}

/**
 * Sends the request (a POST, for a webhook) and reads at most maxResponseBytes of the response. Once the status line has
 * arrived, a deadline or a broken connection ends the read but still yields the response.
 */
function post(
  method: string,
  target: DeliveryTarget,
  headers: Record<string, string>,
  bodyBytes: Buffer,
  maxResponseBytes: number,
  deadline: AbortSignal,
): Promise<ReceivedResponse> {
  if (deadline.aborted) return Promise.reject(new DeliveryTimeoutError());
  return new Promise<ReceivedResponse>((resolve, reject) => {
    let response: IncomingMessage | undefined;
    const chunks: Buffer[] = [];
    let receivedBytes = 0;
    let settled = false;

    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      deadline.removeEventListener('abort', onDeadline);
      outcome();
      outgoing.destroy();
    };
    let ended = false;
    const finish = () =>
      settle(() => {
        if (response === undefined) return reject(new Error('connection closed before a response'));
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          bodyExcerpt: Buffer.concat(chunks),
          complete: ended,
        });
      });
    const fail = (error: Error) => (response === undefined ? settle(() => reject(error)) : finish());
    const onDeadline = () => (response === undefined ? fail(new DeliveryTimeoutError()) : finish());

    const send = target.url.protocol === 'https:' ? httpsRequest : httpRequest;
    const outgoing = send({
      host: target.address,
      family: target.family,
      port: target.port,
      method,
      path: `${target.url.pathname}${target.url.search}`,
      headers,
      servername: target.tlsServerName,
      agent: false,
    });
    deadline.addEventListener('abort', onDeadline, { once: true });
    outgoing.on('error', (error) => (response === undefined ? fail(error) : finish()));
    outgoing.on('response', (incoming: IncomingMessage) => {
      response = incoming;
      incoming.on('data', (chunk: Buffer) => {
        const room = maxResponseBytes - receivedBytes;
        if (room > 0) {
          const kept = chunk.subarray(0, room);
          chunks.push(kept);
          receivedBytes += kept.length;
        }
        if (receivedBytes >= maxResponseBytes) finish();
      });
      incoming.on('end', () => {
        ended = true;
        finish();
      });
      incoming.on('error', finish);
      incoming.on('close', finish);
    });
    outgoing.end(bodyBytes);
  });
}

function describeFailure(error: unknown, timeoutMs: number): string {
  if (error instanceof DeliveryTimeoutError) return `timed out after ${timeoutMs} ms`;
  if (isAppError(error)) return error.message;
  if (!(error instanceof Error)) return String(error).slice(0, maximumErrorLength);
  const code = (error as { code?: unknown }).code;
  const message = error.message.replace(/\s+/g, ' ').trim();
  const described = typeof code === 'string' && !message.includes(code) ? `${message} (${code})` : message;
  return described.slice(0, maximumErrorLength);
}

function describeUnsuccessfulStatus(response: ReceivedResponse): string {
  if (response.status >= 300 && response.status < 400) {
    const location = response.headers.location?.slice(0, maximumLocationLength);
    return `redirect not followed (HTTP ${response.status}${location ? ` to ${location}` : ''})`;
  }
  return `endpoint responded with HTTP ${response.status}`;
}

function resultOf(response: ReceivedResponse, latencyMs: number): DeliveryAttemptResult {
  const ok = response.status >= 200 && response.status < 300;
  const honoursRetryAfter = response.status === 429 || response.status === 503;
  const retryAfterHeader = response.headers['retry-after'];
  return {
    ok,
    status: response.status,
    latencyMs,
    responseExcerpt: response.bodyExcerpt.toString('utf8'),
    error: ok ? null : describeUnsuccessfulStatus(response),
    retryAfterMs: honoursRetryAfter ? parseRetryAfterMs(retryAfterHeader) : null,
    gone: response.status === 410,
    responseComplete: response.complete,
  };
}

/** One delivery attempt; never throws for network, DNS, TLS, timeout or refused-address failures. */
export async function deliverOnce(request: DeliveryAttemptRequest): Promise<DeliveryAttemptResult> {
  const timeoutMs = request.timeoutMs ?? defaultDeliveryTimeoutMs;
  const maxResponseBytes = request.maxResponseBytes ?? defaultMaxResponseBytes;
  const startedAtMs = performance.now();
  const elapsedMs = () => Math.round(performance.now() - startedAtMs);
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), timeoutMs);
  try {
    const target = await beforeDeadline(
      resolveDeliveryAddress(request.url, {
        allowPrivate: request.allowPrivate,
        ...(request.lookup ? { lookup: request.lookup } : {}),
      }),
      deadline.signal,
    );
    const method = request.method ?? 'POST';
    const bodyless = method === 'GET' || method === 'DELETE';
    const bodyBytes = bodyless
      ? Buffer.alloc(0)
      : typeof request.body === 'string'
        ? Buffer.from(request.body, 'utf8')
        : request.body;
    const headers = requestHeaders(request.headers, target, bodyless ? null : bodyBytes.length);
    const response = await post(method, target, headers, bodyBytes, maxResponseBytes, deadline.signal);
    return resultOf(response, elapsedMs());
  } catch (error) {
    return {
      ok: false,
      status: null,
      latencyMs: elapsedMs(),
      responseExcerpt: '',
      error: describeFailure(error, timeoutMs),
      retryAfterMs: null,
      gone: false,
      responseComplete: false,
    };
  } finally {
    clearTimeout(timer);
  }
}
