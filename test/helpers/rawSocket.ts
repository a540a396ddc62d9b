import { connect, type Socket } from 'node:net';
import { assertConformsToOpenApi } from './openApiCheck.js';

/**
 * Raw TCP exchanges with the service, for what an HTTP client library would never send: slow
 * clients, malformed requests, bodies far larger than they claim or than the service accepts.
 */

export interface RawResponse {
  /** Null when the server closed without answering. */
  status: number | null;
  headers: Record<string, string>;
  body: unknown;
  text: string;
}

export interface RawExchange {
  response: RawResponse;
  /** The server closed the connection (false: the deadline came first and the test closed it). */
  closedByServer: boolean;
  /** Body bytes the socket accepted (handed to the kernel) before the server closed. */
  bodyBytesAccepted: number;
}

export function parseRawResponse(bytes: Buffer): RawResponse {
  const text = bytes.toString('utf8');
  const headEnd = text.indexOf('\r\n\r\n');
  if (headEnd < 0) return { status: null, headers: {}, body: null, text };
  const [statusLine = '', ...headerLines] = text.slice(0, headEnd).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  const bodyText = text.slice(headEnd + 4);
  let body: unknown = null;
  try {
    body = JSON.parse(bodyText);
  } catch {
    body = null;
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body, text: bodyText };
}

/** Checks an answer against the service's OpenAPI document, like every other API test response. */
export async function assertRawConforms(
  baseUrl: string,
  method: string,
  target: string,
  response: RawResponse,
) {
  if (response.status === null) return;
  await assertConformsToOpenApi(new URL(target, baseUrl).href, {
    method,
    status: response.status,
    headers: response.headers,
    text: response.text,
  });
}

function openSocket(baseUrl: string): Socket {
  const { hostname, port } = new URL(baseUrl);
  return connect({ host: hostname, port: Number(port) });
}

/**
 * Writes `head` (and then `body`: `totalBytes` in chunks, as fast as the socket takes them) and
 * reads until the server closes or `deadlineMs` passes. Writing stops at the first error, which
 * is how a server that refuses the rest of a body looks from here.
 */
export function exchangeRaw(
  baseUrl: string,
  head: string | Buffer,
  options: {
    deadlineMs: number;
    /** `chunked`: each chunk goes out framed for Transfer-Encoding: chunked (and counts its data only). */
    body?: { totalBytes: number; chunkBytes?: number; chunked?: boolean };
  },
): Promise<RawExchange> {
  const socket = openSocket(baseUrl);
  const received: Buffer[] = [];
  let bodyBytesAccepted = 0;
  let closedByServer = false;
  let finished = false;
  return new Promise((resolve) => {
    const finish = () => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ response: parseRawResponse(Buffer.concat(received)), closedByServer, bodyBytesAccepted });
    };
    const timer = setTimeout(finish, options.deadlineMs);
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    socket.on('error', () => {
      closedByServer = true;
    });
    socket.on('close', () => {
      closedByServer = closedByServer || !finished;
      finish();
    });
    socket.on('end', () => {
      closedByServer = true;
      // Half-closed by the server: nothing more will be read, so the exchange is over.
      finish();
    });
    socket.write(head);
    const body = options.body;
    if (!body) return;
    const chunk = Buffer.alloc(body.chunkBytes ?? 64 * 1024, 0x61);
    let written = 0;
    const pump = () => {
      while (!finished && !socket.destroyed && written < body.totalBytes) {
        const piece = chunk.subarray(0, Math.min(chunk.length, body.totalBytes - written));
        written += piece.length;
        const framed = body.chunked
          ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')])
          : piece;
        const more = socket.write(framed, (error) => {
          if (!error) bodyBytesAccepted += piece.length;
        });
        if (!more) {
          socket.once('drain', pump);
          return;
        }
      }
    };
    pump();
  });
}
