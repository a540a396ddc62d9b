import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import { defaultHttpTimeouts, type HttpTimeouts, type TrustProxySetting } from '../config.js';
import { pooledRandomBytes } from '../domain/ids.js';
import { errorBody } from './errors.js';

/**
 * What every HTTP listener of the service (API, worker, metrics) does about clients that are slow,
 * send more than they may, or send what the HTTP parser refuses (issue 12, defects 8 and 9).
 */

/** Node's limit on the request line plus headers (its default, stated here so the docs can say it). */
export const maxHeaderBytes = 16 * 1024;

/** How long a connection refused mid-request stays half-open, unread, before it is dropped. */
export const closeLingerMs = 2_000;

/**
 * Ends a connection that still has request bytes on the way without reading them: FIN after the
 * answer, no further reads, and the socket dropped after `closeLingerMs`. Closing at once would
 * reset the connection while the client is still sending, and a client that sees the reset
 * before it reads loses the answer (measured: about half the time on loopback).
 */
export function closeWithoutReading(socket: Socket): void {
  if (socket.destroyed) return;
  // Node's own error listener may be gone (it removes it before a clientError): a reset while
  // lingering must not become an uncaught exception.
  socket.on('error', () => {});
  socket.end();
  socket.pause();
  const timer = setTimeout(() => socket.destroy(), closeLingerMs);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}

export function newRequestId(): string {
  return `req_${pooledRandomBytes(8).toString('hex')}`;
}

/** Node's words for why a request was refused, as a client can act on them. */
function clientErrorMessage(error: NodeJS.ErrnoException & { reason?: unknown }): string {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return 'the request did not arrive in time';
    case 'HPE_HEADER_OVERFLOW':
      return `the request line and headers must be at most ${maxHeaderBytes / 1024} KiB`;
    default: {
      const reason = typeof error.reason === 'string' ? error.reason.slice(0, 100) : '';
      return reason ? `malformed HTTP request: ${reason}` : 'malformed HTTP request';
    }
  }
}

/**
 * The server's `clientError` listener. Node reports here what never becomes a request (bad
 * header lines, conflicting lengths, oversized headers, requests that did not arrive in time),
 * and would answer 400, 408 or 431 in its own words; the answer is a 400 in the error model.
 * Nothing from the refused bytes is logged: they may carry a key.
 */
function answerClientError(this: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const requestId = newRequestId();
  this.log.info({ requestId, reason: error.code }, 'refused a malformed or late request');
  // A response already under way cannot be replaced; only close then.
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) {
    const body = JSON.stringify(errorBody('validation_error', clientErrorMessage(error)));
    socket.write(
      [
        'HTTP/1.1 400 Bad Request',
        'Content-Type: application/json; charset=utf-8',
        `Content-Length: ${Buffer.byteLength(body)}`,
        `X-Request-Id: ${requestId}`,
        'Connection: close',
        '',
        body,
      ].join('\r\n'),
    );
  }
  closeWithoutReading(socket);
}

/**
 * X-Forwarded-For as CALLWRIGHT_TRUST_PROXY allows. A hop count becomes a function of the hop's
 * index (Fastify's own number option trusts no hop at all); proxy-addr walks the header from the
 * right and stops at the first hop not trusted, so the entries a client wrote are never reached.
 */
export function trustProxyOption(setting: TrustProxySetting): FastifyServerOptions['trustProxy'] {
  if (typeof setting === 'boolean') return setting;
  if ('hops' in setting) {
    const { hops } = setting;
    return (_address: string, hopIndex: number) => hopIndex < hops;
  }
  return setting.addresses;
}

/** Fastify options of every listener: timeouts, the parser-error answer. */
export function httpServerOptions(timeouts: HttpTimeouts = defaultHttpTimeouts) {
  const shortest = Math.min(timeouts.requestTimeoutMs, timeouts.headersTimeoutMs);
  return {
    requestTimeout: timeouts.requestTimeoutMs,
    connectionTimeout: timeouts.idleTimeoutMs,
    keepAliveTimeout: timeouts.keepAliveTimeoutMs,
    http: {
      requestTimeout: timeouts.requestTimeoutMs,
      headersTimeout: timeouts.headersTimeoutMs,
      maxHeaderSize: maxHeaderBytes,
      // Node looks for late requests this often (its default, 30 s, would let them run that long).
      connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.floor(shortest / 4))),
    },
    clientErrorHandler: answerClientError,
  } satisfies Partial<FastifyServerOptions> & { http: object };
}

/**
 * A response sent before the request body was read (a 401 from the key check, a 429, a 404, a
 * body refused by its Content-Length) closes the connection. Otherwise Node would read and
 * discard the rest of the body to reuse the connection: all 50 MB of it, from anyone.
 */
export function closeConnectionsWithUnreadBodies(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply) => {
    if (request.raw.complete) return;
    reply.header('Connection', 'close');
    // After a `Connection: close` response Node calls destroySoon(): linger instead (see above).
    const socket = request.raw.socket;
    socket.destroySoon = () => closeWithoutReading(socket);
  });
}
