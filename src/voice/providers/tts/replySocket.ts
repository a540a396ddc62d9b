import WebSocket from 'ws';
import { vendorErrorCode } from '../../../domain/secretScrubbing.js';
import type { GuardedConnections } from '../../../net/guardedConnections.js';
import { decodeG711 } from '../../../telephony/rtp/g711.js';
import { abortReason, ProviderError } from '../providerError.js';
import type { AudioChunk } from '../types.js';
import { AudioReplyQueue } from './audioReplyQueue.js';

/** What a vendor's JSON message meant for the reply. */
export type ReplyMessage =
  | { kind: 'audio'; mulawBase64: string; last?: boolean }
  | { kind: 'end' }
  | { kind: 'error'; message: string; status?: number }
  /** A message of the protocol's shape that makes no sense (audio without audio…). */
  | { kind: 'garbage'; message: string }
  | { kind: 'ignore' };

export interface ReplySocketOptions {
  provider: string;
  url: string;
  headers: Record<string, string>;
  signal?: AbortSignal | undefined;
  /** The messages to send once the socket is open. */
  openingMessages: unknown[];
  /** Reads one JSON message of the vendor's protocol. */
  readMessage: (message: Record<string, unknown>) => ReplyMessage;
  /** Sent (best effort) before the socket is dropped on an abort, e.g. a cancel of the context. */
  cancelMessage?: unknown;
  /** Where a socket opened ahead of the reply may be waiting (see SocketWarmer). */
  warmer?: SocketWarmer;
  /** Binary frames are the audio itself (8 kHz μ-law), not base64 in JSON. */
  binaryAudio?: boolean;
  /** The address guard of the connection (see src/net/guardedConnections.ts); absent: none. */
  connections?: GuardedConnections | undefined;
}

/** The `ws` options of a vendor socket: its headers, and the guarded agent when there is one. */
export function socketOptions(
  url: string,
  headers: Record<string, string>,
  connections?: GuardedConnections,
) {
  return { headers, ...(connections ? { agent: connections.agentFor(url) } : {}) };
}

const isLive = (socket: WebSocket) =>
  socket.readyState === WebSocket.OPEN || socket.readyState === WebSocket.CONNECTING;

/**
 * Sockets opened ahead of need, at most one per URL: a reply takes the one for its URL, so the
 * TCP, TLS and upgrade round trips happened while the callee was still talking (or while the
 * phone rang), not after. A spare the vendor refuses or closes is dropped quietly; the reply then
 * opens its own and meets the refusal itself. `close()` ends the spares with the call.
 */
export class SocketWarmer {
  readonly #spares = new Map<string, WebSocket>();
  #closed = false;

  constructor(
    private readonly headers: Record<string, string>,
    private readonly connections?: GuardedConnections,
  ) {}

  warm(url: string): void {
    const existing = this.#spares.get(url);
    if (this.#closed || (existing && isLive(existing))) return;
    const socket = new WebSocket(url, socketOptions(url, this.headers, this.connections));
    socket.on('error', () => undefined);
    socket.on('unexpected-response', () => socket.terminate());
    socket.on('close', () => {
      if (this.#spares.get(url) === socket) this.#spares.delete(url);
    });
    this.#spares.set(url, socket);
  }

  /** The spare for `url` when it is open or opening; from then on it is the caller's. */
  take(url: string): WebSocket | null {
    const socket = this.#spares.get(url);
    if (!socket) return null;
    this.#spares.delete(url);
    if (!isLive(socket)) return null;
    socket.removeAllListeners('unexpected-response');
    socket.removeAllListeners('close');
    return socket;
  }

  close(): void {
    this.#closed = true;
    for (const socket of this.#spares.values()) socket.terminate();
    this.#spares.clear();
  }
}

/** Strict base64 (the vendors' audio encoding): anything else is not audio. */
export const base64Pattern = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** `ws://` and `wss://` for the http(s) base URLs an operator may give. */
export function webSocketBase(baseUrl: string | null | undefined, vendorDefault: string): string {
  return (baseUrl ?? vendorDefault).replace(/\/+$/, '').replace(/^http(s?):/, 'ws$1:');
}

/**
 * One streamed reply over a vendor's WebSocket, 8 kHz μ-law in base64 JSON messages: the shared
 * part of the socket text-to-speech adapters. A refused upgrade (with its HTTP status), a socket
 * error, a frame that is not a JSON message, an error message, audio that does not decode and a
 * close before the end are each a ProviderError of its kind — never a key, never audio. From the
 * first failure on nothing the socket sends is played: audio after a garbage frame is dropped with
 * the socket. An abort (barge-in) drops the socket at once and the iterator throws the abort's reason.
 */
export async function* streamReplyOverSocket(options: ReplySocketOptions): AsyncIterable<AudioChunk> {
  const { provider, signal } = options;
  if (signal?.aborted) throw abortReason(signal);
  const reply = new AudioReplyQueue();
  const socket =
    options.warmer?.take(options.url) ??
    new WebSocket(options.url, socketOptions(options.url, options.headers, options.connections));
  const onAbort = () => {
    reply.fail(signal ? abortReason(signal) : new Error('aborted'));
    if (options.cancelMessage !== undefined && socket.readyState === WebSocket.OPEN)
      socket.send(JSON.stringify(options.cancelMessage));
    socket.terminate();
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  /** The reply cannot be trusted from here on: fail it and drop the socket. */
  const failWith = (error: ProviderError, closeGently = false) => {
    reply.fail(error);
    if (closeGently) socket.close();
    else socket.terminate();
  };
  let opened = socket.readyState === WebSocket.OPEN;
  socket.on('unexpected-response', (_request, response) => {
    const status = response.statusCode;
    failWith(
      new ProviderError(provider, `the socket was refused (HTTP ${status})`, {
        kind: 'refused',
        ...(status ? { providerStatus: status } : {}),
      }),
    );
  });
  socket.on('error', (error) =>
    reply.fail(
      new ProviderError(provider, `socket error: ${error.message.slice(0, 200)}`, {
        kind: opened ? 'closed' : 'unreachable',
      }),
    ),
  );
  const sendOpening = () => {
    for (const message of options.openingMessages) socket.send(JSON.stringify(message));
  };
  if (socket.readyState === WebSocket.OPEN) sendOpening();
  else
    socket.on('open', () => {
      opened = true;
      sendOpening();
    });
  socket.on('message', (data, isBinary) => {
    if (reply.settled) return;
    if (isBinary && options.binaryAudio) {
      // The vendor's audio as raw 8 kHz μ-law frames (Deepgram Aura).
      const bytes = Buffer.isBuffer(data)
        ? data
        : Buffer.concat(Array.isArray(data) ? data : [Buffer.from(data)]);
      if (bytes.length > 0)
        reply.push({ samples: decodeG711('PCMU', new Uint8Array(bytes)), sampleRateHz: 8000 });
      return;
    }
    let message: Record<string, unknown>;
    try {
      if (isBinary) throw new Error('binary frame');
      message = JSON.parse(String(data)) as Record<string, unknown>;
    } catch {
      failWith(new ProviderError(provider, 'sent a frame that is not a JSON message', { kind: 'garbage' }));
      return;
    }
    if (typeof message !== 'object' || message === null || Array.isArray(message)) {
      failWith(new ProviderError(provider, 'sent JSON that is not a message', { kind: 'garbage' }));
      return;
    }
    const meaning = options.readMessage(message);
    if (meaning.kind === 'error') {
      failWith(
        new ProviderError(provider, meaning.message.slice(0, 300), {
          kind: 'error_frame',
          ...(meaning.status ? { providerStatus: meaning.status } : {}),
        }),
        true,
      );
      return;
    }
    if (meaning.kind === 'garbage') {
      failWith(new ProviderError(provider, meaning.message.slice(0, 300), { kind: 'garbage' }));
      return;
    }
    if (meaning.kind === 'audio') {
      const bytes = base64Pattern.test(meaning.mulawBase64)
        ? Buffer.from(meaning.mulawBase64, 'base64')
        : Buffer.alloc(0);
      if (bytes.length === 0) {
        failWith(new ProviderError(provider, 'sent audio that does not decode', { kind: 'garbage' }));
        return;
      }
      reply.push({ samples: decodeG711('PCMU', new Uint8Array(bytes)), sampleRateHz: 8000 });
    }
    if (meaning.kind === 'end' || (meaning.kind === 'audio' && meaning.last)) {
      reply.finish();
      socket.close(1000);
    }
  });
  socket.on('close', (code, reason) => {
    if (!reply.settled)
      reply.fail(
        new ProviderError(
          provider,
          `the socket closed before the end of the audio (${code} ${vendorErrorCode(String(reason)) ?? 'no code'})`,
          { kind: 'closed', ...(code ? { providerStatus: code } : {}) },
        ),
      );
  });
  try {
    yield* reply.drain();
  } finally {
    signal?.removeEventListener('abort', onAbort);
    if (socket.readyState === WebSocket.CONNECTING || socket.readyState === WebSocket.OPEN)
      socket.terminate();
  }
}
