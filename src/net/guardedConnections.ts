/**
 * Outbound connections to an address chosen by an account holder (a vendor credential's base URL),
 * guarded at every connection, not only when the address was saved: the host is resolved by our
 * own lookup, every address it resolves to is checked against the refused ranges (src/net/hostGuard.ts)
 * with the setting as it is NOW, and the socket connects to the address that was checked — pinned,
 * so a name cannot answer a public address to the check and a private one to the connection. An
 * IP literal (which `net.connect` never looks up) is checked before the socket is made.
 *
 * One pair of Node agents carries it to every client we use: `node:http(s)` requests, `ws`
 * sockets and the Deepgram SDK (which takes an agent). None of those follows a redirect (`ws`
 * only with `followRedirects`, which we never set; the HTTP helper below never follows one), so a
 * redirect to an internal address is an answer, not a connection.
 */
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { Readable } from 'node:stream';
import { checkHost, type HostGuardOptions, type HostnameLookup, resolveVettedHost } from './hostGuard.js';
import { unbracketed } from './ipRanges.js';

export interface ConnectionGuardOptions extends HostGuardOptions {
  /** How names are resolved (tests inject a resolver of their own); default `dns.promises.lookup`. */
  lookup?: HostnameLookup;
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | { address: string; family: number }[],
  family?: number,
) => void;

/**
 * A `lookup` for `net.connect`/`tls.connect`: resolves with resolveVettedHost (all addresses
 * vetted) and answers the vetted one, in either of the two shapes Node asks for.
 */
export function guardedLookup(options: ConnectionGuardOptions): LookupFunction {
  return ((hostname: string, lookupOptions: { all?: boolean }, callback: LookupCallback) => {
    resolveVettedHost(hostname, options).then(
      (vetted) => {
        if (lookupOptions?.all) callback(null, [vetted]);
        else callback(null, vetted.address, vetted.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, ''),
    );
  }) as unknown as LookupFunction;
}

type CreateConnection = (
  options: Record<string, unknown>,
  callback?: (error: Error | null, socket?: unknown) => void,
) => unknown;

/** Makes every connection of `agent` go through the guard. */
function guardAgent<A extends HttpAgent>(agent: A, options: ConnectionGuardOptions): A {
  const create = (agent as unknown as { createConnection: CreateConnection }).createConnection.bind(agent);
  const lookup = guardedLookup(options);
  (agent as unknown as { createConnection: CreateConnection }).createConnection = (
    connectOptions,
    callback,
  ) => {
    const host = String(connectOptions.host ?? connectOptions.hostname ?? 'localhost');
    try {
      // IP literals and `localhost` names are judged here: net.connect does not look literals up.
      checkHost(unbracketed(host), options);
    } catch (error) {
      callback?.(error as Error);
      return undefined;
    }
    return create({ ...connectOptions, lookup }, callback);
  };
  return agent;
}

/** The agents of one guard: one for `http:`/`ws:` and one for `https:`/`wss:` URLs. */
export class GuardedConnections {
  readonly http: HttpAgent;
  readonly https: HttpsAgent;

  constructor(readonly options: ConnectionGuardOptions) {
    this.http = guardAgent(new HttpAgent(), options);
    this.https = guardAgent(new HttpsAgent(), options);
  }

  /** The agent for a URL's scheme. */
  agentFor(url: string | URL): HttpAgent {
    const protocol = typeof url === 'string' ? new URL(url).protocol : url.protocol;
    return protocol === 'https:' || protocol === 'wss:' ? this.https : this.http;
  }

  /** Ends the agents' idle sockets (they keep none alive, but an open one is closed). */
  close(): void {
    this.http.destroy();
    this.https.destroy();
  }
}

export interface GuardedRequest {
  method: string;
  headers: Record<string, string>;
  /** JSON or other text, or a multipart form (encoded here with its boundary). */
  body?: string | FormData;
  signal?: AbortSignal | undefined;
  /** The guard; without one the host is reached as it resolves (the operator's own endpoints). */
  connections?: GuardedConnections | undefined;
}

const bodylessStatuses = new Set([101, 204, 205, 304]);

/**
 * One HTTP request through the guard, answered as a web `Response` whose body streams as it
 * arrives. A redirect is returned as it is (status 3xx), never followed. The signal aborts the
 * request and the body. `fetch` cannot be given a connection agent, hence this (docs/decisions.md).
 */
export async function sendGuardedRequest(url: string, request: GuardedRequest): Promise<Response> {
  const target = new URL(url);
  const headers: Record<string, string> = { ...request.headers };
  let body: Buffer | undefined;
  if (typeof request.body === 'string') body = Buffer.from(request.body, 'utf8');
  else if (request.body !== undefined) {
    const encoded = new Response(request.body);
    headers['content-type'] = encoded.headers.get('content-type') ?? 'multipart/form-data';
    body = Buffer.from(await encoded.arrayBuffer());
  }
  if (body !== undefined) headers['content-length'] = String(body.length);
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const outgoing = send(
      target,
      {
        method: request.method,
        headers,
        ...(request.signal ? { signal: request.signal } : {}),
        ...(request.connections ? { agent: request.connections.agentFor(target) } : {}),
      },
      (incoming) => {
        const status = incoming.statusCode ?? 0;
        const responseHeaders = new Headers();
        for (const [name, value] of Object.entries(incoming.headers)) {
          if (Array.isArray(value)) for (const each of value) responseHeaders.append(name, each);
          else if (value !== undefined) responseHeaders.set(name, value);
        }
        const bodyless = bodylessStatuses.has(status) || request.method === 'HEAD';
        if (bodyless) incoming.resume();
        try {
          resolve(
            new Response(bodyless ? null : (Readable.toWeb(incoming) as ReadableStream<Uint8Array>), {
              status,
              statusText: incoming.statusMessage ?? '',
              headers: responseHeaders,
            }),
          );
        } catch (error) {
          incoming.destroy();
          reject(error);
        }
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}
