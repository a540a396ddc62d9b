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
}

const sdpMaxBytes = 16_384;

export function parseWebCallConnectRequest(body: unknown): WebCallConnectRequest {
  if (!isPlainObject(body)) throw new AppError('validation_error', 'request body must be a JSON object');
  const token = requiredString(body, 'token', 100);
  const sdp = requiredString(body, 'sdp', sdpMaxBytes);
  if (!sdp.startsWith('v=0')) throw new AppError('validation_error', 'sdp must be an SDP offer');
  return { token, sdp };
}
