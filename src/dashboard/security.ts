import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { UserRecord } from '../domain/records.js';
import type { DashboardOptions } from './context.js';

export const sessionLifetimeMs = 7 * 24 * 3600 * 1000;
export const sessionIdleMs = 12 * 3600 * 1000;

export function cookieNames(secure: boolean) {
  // The __Host- prefix pins a cookie to this host and path / and requires Secure.
  return secure
    ? { session: '__Host-cw_session', csrf: '__Host-cw_csrf' }
    : { session: 'cw_session', csrf: 'cw_csrf' };
}

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/**
 * A session's CSRF token, derived from the session's cookie token: the forms carry it, the
 * database never holds it (the sessions table keeps only the cookie token's SHA-256), so reading
 * the database gives no way to forge a signed-in user's forms.
 */
export function csrfTokenFor(sessionToken: string): string {
  return createHmac('sha256', sessionToken).update('callwright dashboard csrf v1').digest('base64url');
}

/** What the sessions table keeps in place of a CSRF token (an earlier version stored the token). */
export const derivedCsrfToken = 'derived';

export function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

export function sameToken(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && left.length > 0 && timingSafeEqual(left, right);
}

export function readCookies(request: FastifyRequest): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const part of String(request.headers.cookie ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at <= 0) continue;
    const name = part.slice(0, at).trim();
    if (!cookies.has(name)) cookies.set(name, part.slice(at + 1).trim());
  }
  return cookies;
}

function cookie(name: string, value: string, secure: boolean, maxAgeS: number): string {
  const parts = [`${name}=${value}`, 'Path=/', 'HttpOnly', 'SameSite=Lax', `Max-Age=${maxAgeS}`];
  if (secure) parts.push('Secure');
  return parts.join('; ');
}

function appendCookie(reply: FastifyReply, value: string): void {
  const existing = reply.getHeader('Set-Cookie');
  const list = existing === undefined ? [] : Array.isArray(existing) ? existing : [String(existing)];
  reply.header('Set-Cookie', [...list, value]);
}

/** Starts a fresh session (a new token at every sign-in: no fixation) and sets its cookie. */
export async function startSession(
  options: DashboardOptions,
  reply: FastifyReply,
  user: UserRecord,
): Promise<void> {
  const token = randomToken();
  const now = new Date();
  await options.store.sessions.create({
    tokenHash: sha256Hex(token),
    userId: user.id,
    csrfToken: derivedCsrfToken,
    createdAt: now.toISOString(),
    expiresAt: new Date(now.getTime() + sessionLifetimeMs).toISOString(),
  });
  await options.store.users.recordSignIn(user.id, now.toISOString());
  options.store.sessions.deleteExpired(now.toISOString()).catch(() => undefined);
  appendCookie(
    reply,
    cookie(cookieNames(options.cookieSecure).session, token, options.cookieSecure, sessionLifetimeMs / 1000),
  );
}

export function clearSessionCookie(options: DashboardOptions, reply: FastifyReply): void {
  appendCookie(reply, cookie(cookieNames(options.cookieSecure).session, '', options.cookieSecure, 0));
}

/** The session cookie's token, when it has the shape of one. */
export function sessionToken(options: DashboardOptions, request: FastifyRequest): string | null {
  const token = readCookies(request).get(cookieNames(options.cookieSecure).session);
  return token && /^[A-Za-z0-9_-]{43}$/.test(token) ? token : null;
}

export function sessionTokenHash(options: DashboardOptions, request: FastifyRequest): string | null {
  const token = sessionToken(options, request);
  return token ? sha256Hex(token) : null;
}

/**
 * The CSRF token of forms shown before sign-in (sign-in, first-run sign-up): a random value in a
 * cookie that the form must repeat (double submit). Reuses the browser's cookie when it has one.
 */
export function anonymousCsrfToken(
  options: DashboardOptions,
  request: FastifyRequest,
  reply: FastifyReply,
): string {
  const name = cookieNames(options.cookieSecure).csrf;
  const existing = readCookies(request).get(name);
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
  const token = randomToken();
  appendCookie(reply, cookie(name, token, options.cookieSecure, 3600));
  return token;
}

export function anonymousCsrfValid(
  options: DashboardOptions,
  request: FastifyRequest,
  submitted: string,
): boolean {
  const cookieValue = readCookies(request).get(cookieNames(options.cookieSecure).csrf) ?? '';
  return sameToken(cookieValue, submitted);
}

/** Headers on every dashboard response: no framing, no third-party anything, no caching. */
export function securityHeaders(reply: FastifyReply): void {
  reply.header(
    'Content-Security-Policy',
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; media-src 'self'; " +
      "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  );
  reply.header('X-Frame-Options', 'DENY');
  reply.header('X-Content-Type-Options', 'nosniff');
  reply.header('Referrer-Policy', 'same-origin');
  if (!reply.hasHeader('Cache-Control')) reply.header('Cache-Control', 'no-store');
}
