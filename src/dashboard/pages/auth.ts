import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RatePolicy } from '../../domain/rateLimit.js';
import { reserveAttempt } from '../../limits/attemptReservation.js';
import { addressLimitKey } from '../../limits/clientAddress.js';
import { type DashboardOptions, field, formOf, redirectTo, sendPage, viewerOf } from '../context.js';
import { html } from '../html.js';
import { barePage, csrfField, errorBox } from '../layout.js';
import { checkPasswordStrength, hashPassword, verifyAgainstNothing, verifyPassword } from '../passwords.js';
import {
  anonymousCsrfToken,
  anonymousCsrfValid,
  clearSessionCookie,
  sessionTokenHash,
  startSession,
} from '../security.js';
import { consumeSetupToken } from '../setupToken.js';

/** Failed sign-ins allowed per client address, and per email, before a pause. */
export const signInFailuresPerAddress: RatePolicy = { requests: 20, windowS: 600 };
export const signInFailuresPerEmail: RatePolicy = { requests: 5, windowS: 300 };

const emailPattern = /^[^\s@]{1,64}@[^\s@]{1,253}$/;

function signInPage(csrfToken: string, email: string, error?: string) {
  return barePage(
    'Sign in',
    html`${errorBox(error)}
<form method="post" action="/sign-in" class="stack">
  ${csrfField(csrfToken)}
  <div><label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required value="${email}"></div>
  <div><label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required></div>
  <div><button type="submit">Sign in</button></div>
</form>
<p class="muted">No account yet? An operator creates users with <code>callwright users create --email E --account ID</code>.</p>`,
  );
}

function signUpPage(csrfToken: string, email: string, error?: string, setupToken = '') {
  return barePage(
    'Create the first user',
    html`<p>No one has signed up yet. The first user you create here owns the default account; further users are
created with <code>callwright users create</code>.</p>
<p>To show that you run this service, enter the one-time setup token that <code>callwright serve</code> printed
when it started (also in its log), or make a new one with <code>callwright users setup-token</code>.</p>
${errorBox(error)}
<form method="post" action="/sign-up" class="stack">
  ${csrfField(csrfToken)}
  <div><label for="setup_token">Setup token</label><input id="setup_token" name="setup_token" type="text" autocomplete="off" spellcheck="false" required value="${setupToken}"></div>
  <div><label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required value="${email}"></div>
  <div><label for="password">Password <span class="hint">at least 10 characters</span></label>
    <input id="password" name="password" type="password" autocomplete="new-password" minlength="10" required></div>
  <div><label for="confirm">Repeat the password</label><input id="confirm" name="confirm" type="password" autocomplete="new-password" required></div>
  <div><button type="submit">Create user and sign in</button></div>
</form>`,
  );
}

function refuseForm(reply: FastifyReply) {
  return sendPage(
    reply,
    barePage(
      'Refused',
      html`<p class="error" role="alert">This form has expired or did not come from this dashboard.</p><p><a href="/sign-in">Sign in again</a></p>`,
    ),
    403,
  );
}

export function registerAuthPages(app: FastifyInstance, options: DashboardOptions): void {
  const { store, limiter } = options;

  app.get('/sign-in', async (request, reply) => {
    if ((await store.users.count()) === 0) return redirectTo(reply, '/sign-up');
    return sendPage(reply, signInPage(anonymousCsrfToken(options, request, reply), ''));
  });

  app.post('/sign-in', async (request: FastifyRequest, reply) => {
    const form = formOf(request);
    if (!anonymousCsrfValid(options, request, field(form, 'csrf_token'))) return refuseForm(reply);
    const email = field(form, 'email').trim().toLowerCase().slice(0, 320);
    const password = field(form, 'password');
    const csrf = field(form, 'csrf_token');
    // The attempt takes its place in both buckets before the slow hash, and gives it back if it
    // succeeds: a burst of guesses gets as many hashes as the limits allow, never more.
    const reservation = await reserveAttempt(limiter, [
      { key: `dashboard-sign-in:ip:${addressLimitKey(request.ip)}`, policy: signInFailuresPerAddress },
      { key: `dashboard-sign-in:email:${email}`, policy: signInFailuresPerEmail },
    ]);
    if (!reservation.allowed) {
      const waitS = reservation.decision.retryAfterS;
      reply.header('Retry-After', String(waitS));
      return sendPage(
        reply,
        signInPage(csrf, email, `Too many failed sign-ins. Try again in ${waitS} seconds.`),
        429,
      );
    }
    const user = await store.users.findByEmail(email);
    const valid = user
      ? await verifyPassword(password, user.passwordHash)
      : await verifyAgainstNothing(password);
    if (!user || !valid) {
      request.log.info({ event: 'dashboard_sign_in_failed' }, 'dashboard sign-in refused');
      return sendPage(reply, signInPage(csrf, email, 'Wrong email or password.'), 401);
    }
    await reservation.giveBack();
    await startSession(options, reply, user);
    request.log.info({ userId: user.id, accountId: user.accountId }, 'dashboard sign-in');
    return redirectTo(reply, '/');
  });

  app.get('/sign-up', async (request, reply) => {
    if ((await store.users.count()) > 0) return redirectTo(reply, '/sign-in');
    return sendPage(reply, signUpPage(anonymousCsrfToken(options, request, reply), ''));
  });

  app.post('/sign-up', async (request, reply) => {
    const form = formOf(request);
    if (!anonymousCsrfValid(options, request, field(form, 'csrf_token'))) return refuseForm(reply);
    if ((await store.users.count()) > 0) return redirectTo(reply, '/sign-in');
    const csrf = field(form, 'csrf_token');
    const email = field(form, 'email').trim().toLowerCase();
    const password = field(form, 'password');
    const setupToken = field(form, 'setup_token').trim();
    const formError = (message: string) =>
      sendPage(reply, signUpPage(csrf, email, message, setupToken.slice(0, 64)), 400);
    if (!emailPattern.test(email)) return formError('Enter an email address.');
    if (password !== field(form, 'confirm')) return formError('The two passwords differ.');
    try {
      checkPasswordStrength(password);
    } catch (error) {
      return formError((error as Error).message);
    }
    // Checked last, so a mistake in the form does not spend the token.
    if (!(await consumeSetupToken(store, setupToken))) {
      request.log.warn(
        { event: 'dashboard_sign_up_refused' },
        'dashboard sign-up refused: no live setup token',
      );
      return sendPage(
        reply,
        signUpPage(
          csrf,
          email,
          'That setup token is wrong, used or expired. Use the one callwright serve printed at start, or make a new one with callwright users setup-token.',
        ),
        403,
      );
    }
    const account = await store.accounts.getOrCreateDefault();
    const user = await store.users.createFirst({
      accountId: account.id,
      email,
      passwordHash: await hashPassword(password),
    });
    if (!user) return redirectTo(reply, '/sign-in');
    await store.setupTokens.deleteAll();
    await startSession(options, reply, user);
    request.log.info({ userId: user.id, accountId: account.id }, 'dashboard first user created');
    return redirectTo(reply, '/');
  });
}

/** Sign-out sits behind the session and CSRF checks like every other form. */
export function registerSignOut(app: FastifyInstance, options: DashboardOptions): void {
  app.post('/sign-out', async (request, reply) => {
    viewerOf(request);
    const tokenHash = sessionTokenHash(options, request);
    if (tokenHash) await options.store.sessions.delete(tokenHash);
    clearSessionCookie(options, reply);
    return redirectTo(reply, '/sign-in');
  });
}
