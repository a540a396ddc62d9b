import { createHash, randomBytes } from 'node:crypto';
import { AppError } from './errors.js';
import { isPlainObject, outboundCallLimits, parseVariables, requiredString } from './outboundCallRequest.js';
import type { VariableValue } from './templates.js';

/** How long a web call's connection token may wait for its browser (one use within it). */
export const webCallTokenTtlMs = 120_000;

/** The metadata a web call may carry back in its creation response (kept with the call's token row). */
export const webCallMetadataMaxBytes = 4_096;

/** The body of `POST /v1/web-calls`, validated at the edge. */
export interface WebCallRequest {
  agent_id: string;
  variables?: Record<string, VariableValue>;
  metadata?: Record<string, unknown>;
}

const knownFields: ReadonlySet<string> = new Set(['agent_id', 'variables', 'metadata']);

export function parseWebCallRequest(body: unknown): WebCallRequest {
  if (!isPlainObject(body)) throw new AppError('validation_error', 'request body must be a JSON object');
  for (const field of Object.keys(body)) {
    if (!knownFields.has(field))
      throw new AppError('validation_error', `unknown field: ${field.slice(0, 70)}`);
  }
  const request: WebCallRequest = {
    agent_id: requiredString(body, 'agent_id', outboundCallLimits.idMaxChars),
  };
  const variables = parseVariables(body.variables);
  if (variables !== undefined) request.variables = variables;
  if (body.metadata !== undefined) {
    if (!isPlainObject(body.metadata)) throw new AppError('validation_error', 'metadata must be an object');
    if (Buffer.byteLength(JSON.stringify(body.metadata)) > webCallMetadataMaxBytes) {
      throw new AppError(
        'validation_error',
        `metadata must be at most ${webCallMetadataMaxBytes} bytes of JSON`,
      );
    }
    request.metadata = body.metadata;
  }
  return request;
}

/** A new connection token: 256 random bits, shown once; only its hash is stored. */
export function newWebCallToken(): string {
  return `wct_${randomBytes(32).toString('base64url')}`;
}

export function webCallTokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** The body of `POST /v1/web-calls/connect`: the token and the browser's SDP offer (non-trickle). */
export interface WebCallConnectRequest {
  token: string;
  sdp: string;
  /** The agent the page means to talk to: a token for another agent is refused (and kept). */
  agent_id?: string;
}

const sdpMaxBytes = 16_384;

export function parseWebCallConnectRequest(body: unknown): WebCallConnectRequest {
  if (!isPlainObject(body)) throw new AppError('validation_error', 'request body must be a JSON object');
  const token = requiredString(body, 'token', 100);
  const sdp = requiredString(body, 'sdp', sdpMaxBytes);
  if (!sdp.startsWith('v=0')) throw new AppError('validation_error', 'sdp must be an SDP offer');
  for (const field of Object.keys(body)) {
    if (!['token', 'sdp', 'agent_id'].includes(field))
      throw new AppError('validation_error', `unknown field: ${field.slice(0, 70)}`);
  }
  if (body.agent_id === undefined) return { token, sdp };
  return { token, sdp, agent_id: requiredString(body, 'agent_id', outboundCallLimits.idMaxChars) };
}

/** How many origins an account may allow its web calls from. */
export const webCallOriginsMax = 20;

/**
 * An origin as browsers send it (`scheme://host[:port]`, lower case, no path): https anywhere,
 * plain http only for the local machine (a developer's page). Null when `text` is not one.
 */
export function normalizedWebOrigin(text: string): string | null {
  if (text.length > 200) return null;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  const bare = url.pathname === '/' && !url.search && !url.hash && !url.username && !url.password;
  if (url.origin === 'null' || !bare || text.endsWith('/')) return null;
  const local = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && local)) return null;
  return url.origin;
}

/** The body of `PUT /v1/web-calls/origins`: the whole allow-list, replacing the one before. */
export function parseWebCallOrigins(body: unknown): string[] {
  if (!isPlainObject(body)) throw new AppError('validation_error', 'request body must be a JSON object');
  for (const field of Object.keys(body)) {
    if (field !== 'origins') throw new AppError('validation_error', `unknown field: ${field.slice(0, 70)}`);
  }
  const { origins } = body;
  if (!Array.isArray(origins) || origins.length > webCallOriginsMax)
    throw new AppError('validation_error', `origins must be a list of at most ${webCallOriginsMax} origins`);
  const normalized = origins.map((origin) => {
    const parsed = typeof origin === 'string' ? normalizedWebOrigin(origin) : null;
    if (parsed === null) {
      throw new AppError(
        'validation_error',
        `origins: ${JSON.stringify(String(origin).slice(0, 80))} is not an origin (https://host[:port], or http://localhost[:port])`,
      );
    }
    return parsed;
  });
  return [...new Set(normalized)];
}

/**
 * Whether a browser on `origin` may connect an account's web call: a request without an Origin
 * header (not a browser's) may; a browser's only from the service's own pages (the dashboard) or
 * an origin the account allows. Nothing is allowed by default.
 */
export function webCallOriginAllowed(
  origin: string | undefined,
  allowed: readonly string[],
  service: { origin: string; requestHost: string | undefined },
): boolean {
  if (origin === undefined) return true;
  const lower = origin.toLowerCase();
  if (lower === service.origin.toLowerCase() || allowed.includes(lower)) return true;
  // A page of the service itself, reached under another name than CALLWRIGHT_PUBLIC_URL's
  // (127.0.0.1 for localhost): the browser's Origin names the host the request went to.
  let host: string;
  try {
    host = new URL(lower).host;
  } catch {
    return false;
  }
  return host !== '' && host === service.requestHost?.toLowerCase();
}

/** A STUN or TURN server for web calls' ICE, as both werift and browsers take it. */
export interface WebIceServer {
  urls: string;
  username?: string;
  credential?: string;
}

/**
 * CALLWRIGHT_WEB_ICE_SERVERS: a JSON list of `{urls, username?, credential?}` with `stun:`,
 * `turn:` or `turns:` URLs (TURN needs both credentials). Returns the problem as a message.
 */
export function parseWebIceServers(text: string): WebIceServer[] | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return 'must be a JSON list of {"urls": "stun:host:port"} objects';
  }
  if (!Array.isArray(parsed) || parsed.length > 10) return 'must be a JSON list of at most 10 servers';
  const servers: WebIceServer[] = [];
  for (const entry of parsed) {
    if (!isPlainObject(entry) || typeof entry.urls !== 'string') return 'each server needs "urls" (a string)';
    const scheme = /^(stun|turns?):/.exec(entry.urls)?.[1];
    if (!scheme) return `"${entry.urls.slice(0, 60)}" is not a stun:, turn: or turns: URL`;
    const { username, credential } = entry;
    if (username !== undefined && typeof username !== 'string') return 'username must be a string';
    if (credential !== undefined && typeof credential !== 'string') return 'credential must be a string';
    if (scheme !== 'stun' && (!username || !credential)) return 'a TURN server needs username and credential';
    servers.push({
      urls: entry.urls,
      ...(username ? { username } : {}),
      ...(credential ? { credential } : {}),
    });
  }
  return servers;
}
