import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { quote, splitOutsideQuotes, unquote } from './grammar.js';
import { headerValues, type SipHeader, type SipMessageBase } from './message.js';

/**
 * HTTP digest authentication as SIP uses it (RFC 3261 §22, RFC 2617, RFC 7616, RFC 8760):
 * MD5 and SHA-256 (and their -sess forms), qop=auth or no qop.
 */

export type DigestAlgorithm = 'MD5' | 'MD5-sess' | 'SHA-256' | 'SHA-256-sess';

export interface DigestChallenge {
  readonly realm: string;
  readonly nonce: string;
  readonly opaque: string | null;
  readonly algorithm: DigestAlgorithm;
  /** The qop options offered; empty when the challenge has no qop (RFC 2069 style). */
  readonly qopOptions: readonly string[];
  readonly stale: boolean;
}

export interface DigestCredentials {
  readonly username: string;
  readonly password: string;
}

const algorithms: ReadonlyMap<string, DigestAlgorithm> = new Map([
  ['md5', 'MD5'],
  ['md5-sess', 'MD5-sess'],
  ['sha-256', 'SHA-256'],
  ['sha-256-sess', 'SHA-256-sess'],
]);

/** Parses `name=value, name="quoted, value"` pairs; null when malformed. Names are lower-cased. */
export function parseAuthParams(text: string): Map<string, string> | null {
  const params = new Map<string, string>();
  for (const part of splitOutsideQuotes(text, ',')) {
    const trimmed = part.trim();
    if (trimmed === '') continue;
    const equals = trimmed.indexOf('=');
    if (equals <= 0) return null;
    const name = trimmed.slice(0, equals).trim().toLowerCase();
    if (!/^[a-z0-9\-_]+$/.test(name)) return null;
    params.set(name, unquote(trimmed.slice(equals + 1)));
  }
  return params;
}

/** Parses one WWW-Authenticate or Proxy-Authenticate value; null unless it is a usable Digest challenge. */
export function parseDigestChallenge(headerValue: string): DigestChallenge | null {
  const match = /^\s*digest\s+(.*)$/is.exec(headerValue);
  if (match === null) return null;
  const params = parseAuthParams(match[1] ?? '');
  if (params === null) return null;
  const realm = params.get('realm');
  const nonce = params.get('nonce');
  if (realm === undefined || nonce === undefined || nonce === '') return null;
  const algorithm = algorithms.get((params.get('algorithm') ?? 'MD5').toLowerCase());
  if (algorithm === undefined) return null;
  const qopOptions = (params.get('qop') ?? '')
    .split(',')
    .map((option) => option.trim().toLowerCase())
    .filter((option) => option !== '');
  if (qopOptions.length > 0 && !qopOptions.includes('auth')) return null;
  return {
    realm,
    nonce,
    opaque: params.get('opaque') ?? null,
    algorithm,
    qopOptions,
    stale: (params.get('stale') ?? '').toLowerCase() === 'true',
  };
}

/** How strong a digest algorithm's hash is: SHA-256 (and -sess) 2, MD5 (and -sess) 1. */
export function digestStrength(algorithm: DigestAlgorithm): number {
  return algorithm.startsWith('SHA-256') ? 2 : 1;
}

/**
 * Of several challenges (one per header value), the strongest this stack supports; null when
 * there is none, or when the strongest is weaker than `minimumStrength` (a re-challenge after a
 * stronger one: answering it would let whoever sent it downgrade the hash).
 */
export function selectDigestChallenge(
  headerValues: readonly string[],
  minimumStrength = 0,
): DigestChallenge | null {
  const challenges = headerValues
    .map((value) => parseDigestChallenge(value))
    .filter((challenge) => challenge !== null);
  const strongest =
    challenges.find((challenge) => challenge.algorithm.startsWith('SHA-256')) ?? challenges[0] ?? null;
  return strongest !== null && digestStrength(strongest.algorithm) >= minimumStrength ? strongest : null;
}

function hashHex(algorithm: DigestAlgorithm, text: string): string {
  return createHash(algorithm.startsWith('SHA-256') ? 'sha256' : 'md5')
    .update(text, 'utf8')
    .digest('hex');
}

export interface DigestResponseInput {
  readonly algorithm: DigestAlgorithm;
  readonly username: string;
  readonly password: string;
  readonly realm: string;
  readonly nonce: string;
  readonly method: string;
  readonly uri: string;
  /** `auth`, or null for the legacy form without qop. */
  readonly qop: 'auth' | null;
  /** Eight hex digits, e.g. `00000001`; ignored without qop. */
  readonly nonceCount: string;
  readonly cnonce: string;
}

/** The `response` value: KD(H(A1), nonce:nc:cnonce:qop:H(A2)), or KD(H(A1), nonce:H(A2)) without qop. */
export function computeDigestResponse(input: DigestResponseInput): string {
  let ha1 = hashHex(input.algorithm, `${input.username}:${input.realm}:${input.password}`);
  if (input.algorithm.endsWith('-sess'))
    ha1 = hashHex(input.algorithm, `${ha1}:${input.nonce}:${input.cnonce}`);
  const ha2 = hashHex(input.algorithm, `${input.method}:${input.uri}`);
  if (input.qop === null) return hashHex(input.algorithm, `${ha1}:${input.nonce}:${ha2}`);
  return hashHex(
    input.algorithm,
    `${ha1}:${input.nonce}:${input.nonceCount}:${input.cnonce}:${input.qop}:${ha2}`,
  );
}

/** The Authorization (or Proxy-Authorization) header value answering a challenge. */
export function buildDigestAuthorization(
  challenge: DigestChallenge,
  credentials: DigestCredentials,
  request: { method: string; uri: string },
  options: { nonceCount?: number; cnonce?: string } = {},
): string {
  const qop = challenge.qopOptions.includes('auth') ? 'auth' : null;
  const nonceCount = (options.nonceCount ?? 1).toString(16).padStart(8, '0');
  const cnonce = options.cnonce ?? randomBytes(12).toString('hex');
  const response = computeDigestResponse({
    algorithm: challenge.algorithm,
    username: credentials.username,
    password: credentials.password,
    realm: challenge.realm,
    nonce: challenge.nonce,
    method: request.method,
    uri: request.uri,
    qop,
    nonceCount,
    cnonce,
  });
  const parts = [
    `username=${quote(credentials.username)}`,
    `realm=${quote(challenge.realm)}`,
    `nonce=${quote(challenge.nonce)}`,
    `uri=${quote(request.uri)}`,
    `response=${quote(response)}`,
    `algorithm=${challenge.algorithm}`,
  ];
  if (challenge.opaque !== null) parts.push(`opaque=${quote(challenge.opaque)}`);
  if (qop !== null) parts.push(`qop=${qop}`, `nc=${nonceCount}`);
  if (qop !== null || challenge.algorithm.endsWith('-sess')) parts.push(`cnonce=${quote(cnonce)}`);
  return `Digest ${parts.join(', ')}`;
}

/** A challenge header value for a UAS or proxy (the sandbox carrier, tests). */
export function buildDigestChallenge(options: {
  realm: string;
  algorithm?: DigestAlgorithm;
  nonce?: string;
  opaque?: string;
  qop?: boolean;
}): string {
  const parts = [
    `realm=${quote(options.realm)}`,
    `nonce=${quote(options.nonce ?? randomBytes(16).toString('hex'))}`,
    `algorithm=${options.algorithm ?? 'MD5'}`,
  ];
  if (options.opaque !== undefined) parts.push(`opaque=${quote(options.opaque)}`);
  if (options.qop ?? true) parts.push('qop="auth"');
  return `Digest ${parts.join(', ')}`;
}

/**
 * Checks an Authorization value against known credentials: username, realm, nonce (when given)
 * and the response hash. Constant-time on the hash.
 */
export function verifyDigestAuthorization(
  authorization: string,
  expected: { method: string; realm: string; credentials: DigestCredentials; nonce?: string },
): boolean {
  const match = /^\s*digest\s+(.*)$/is.exec(authorization);
  const params = match === null ? null : parseAuthParams(match[1] ?? '');
  if (params === null) return false;
  const algorithm = algorithms.get((params.get('algorithm') ?? 'MD5').toLowerCase());
  const nonce = params.get('nonce');
  const uri = params.get('uri');
  const response = params.get('response');
  if (algorithm === undefined || nonce === undefined || uri === undefined || response === undefined)
    return false;
  if (params.get('username') !== expected.credentials.username || params.get('realm') !== expected.realm) {
    return false;
  }
  if (expected.nonce !== undefined && nonce !== expected.nonce) return false;
  const qopText = params.get('qop');
  if (qopText !== undefined && qopText !== 'auth') return false;
  const computed = computeDigestResponse({
    algorithm,
    username: expected.credentials.username,
    password: expected.credentials.password,
    realm: expected.realm,
    nonce,
    method: expected.method,
    uri,
    qop: qopText === 'auth' ? 'auth' : null,
    nonceCount: params.get('nc') ?? '',
    cnonce: params.get('cnonce') ?? '',
  });
  const left = Buffer.from(computed, 'utf8');
  const right = Buffer.from(response.toLowerCase(), 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * The header answering a 401 (Authorization) or 407 (Proxy-Authorization) digest challenge to
 * `request`; null for any other response or one without a usable challenge.
 */
export function answerDigestChallenge(
  response: SipMessageBase & { readonly status: number },
  credentials: DigestCredentials,
  request: { method: string; uri: string },
): SipHeader | null {
  if (response.status !== 401 && response.status !== 407) return null;
  const proxy = response.status === 407;
  const challenge = selectDigestChallenge(
    headerValues(response, proxy ? 'Proxy-Authenticate' : 'WWW-Authenticate'),
  );
  if (challenge === null) return null;
  return {
    name: proxy ? 'Proxy-Authorization' : 'Authorization',
    value: buildDigestAuthorization(challenge, credentials, request),
  };
}
