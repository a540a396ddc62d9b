import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isAppError } from '../domain/errors.js';
import { registerAssets } from './assets.js';
import { type DashboardOptions, formOf, sendPage, setViewer, viewerOf } from './context.js';
import { html } from './html.js';
import { barePage, page } from './layout.js';
import { registerAgentPages } from './pages/agents.js';
import { registerAgentTestPages } from './pages/agentTests.js';
import { registerAuthPages, registerSignOut } from './pages/auth.js';
import { registerCallPages } from './pages/calls.js';
import { registerCampaignResultPages } from './pages/campaignResults.js';
import { registerCampaignPages } from './pages/campaigns.js';
import { registerDataRulePages } from './pages/dataRules.js';
import { registerDoNotCallPages } from './pages/doNotCall.js';
import { registerKeyPages } from './pages/keys.js';
import { registerOverviewPage } from './pages/overview.js';
import { registerProviderPages } from './pages/providers.js';
import { registerTelephonyPages } from './pages/telephony.js';
import { registerWebhookPages } from './pages/webhook.js';
import {
  csrfTokenFor,
  sameToken,
  securityHeaders,
  sessionIdleMs,
  sessionToken,
  sha256Hex,
} from './security.js';
import { registerTalkAsset, registerTalkRoutes } from './talk.js';

export type { DashboardOptions } from './context.js';

/** An HTML refusal: the dashboard answers people with pages, not JSON. */
export function refuse(request: FastifyRequest, reply: FastifyReply, status: number, message: string) {
  let viewer: ReturnType<typeof viewerOf> | null = null;
  try {
    viewer = viewerOf(request);
  } catch {
    viewer = null;
  }
  const title =
    status === 404 ? 'Not found' : status === 403 ? 'Refused' : status >= 500 ? 'Error' : 'Cannot do that';
  const body = html`<p class="error" role="alert">${message}</p><p><a href="/">Back to the dashboard</a></p>`;
  return sendPage(reply, viewer ? page(viewer, '/', title, body) : barePage(title, body), status);
}

/** Loads the session from its cookie; refuses the request when there is none (or it is idle too long). */
function requireSession(options: DashboardOptions) {
  return async function sessionHook(request: FastifyRequest, reply: FastifyReply) {
    const token = sessionToken(options, request);
    const tokenHash = token ? sha256Hex(token) : null;
    const now = new Date();
    const found = tokenHash ? await options.store.sessions.find(tokenHash, now.toISOString()) : null;
    const idle = found ? now.getTime() - Date.parse(found.session.lastSeenAt) > sessionIdleMs : false;
    if (found && idle) await options.store.sessions.delete(found.session.tokenHash);
    const account = found && !idle ? await options.store.accounts.get(found.user.accountId) : null;
    if (!found || idle || !account) {
      if (request.method === 'GET' || request.method === 'HEAD') {
        return reply.code(303).header('Location', '/sign-in').send();
      }
      return refuse(request, reply, 403, 'Your session has ended: sign in again.');
    }
    // The forms' CSRF token is derived from the cookie's token, never read from the database.
    const csrfToken = csrfTokenFor(token ?? '');
    setViewer(request, { user: found.user, account, session: { ...found.session, csrfToken } });
    if (now.getTime() - Date.parse(found.session.lastSeenAt) > 60_000) {
      await options.store.sessions.touch(found.session.tokenHash, now.toISOString());
    }
  };
}

/** Every state-changing request repeats the session's CSRF token in its form: 403 otherwise. */
async function requireCsrfToken(request: FastifyRequest, reply: FastifyReply) {
  if (request.method === 'GET' || request.method === 'HEAD') return;
  const viewer = viewerOf(request);
  let submitted = '';
  try {
    submitted = formOf(request).get('csrf_token') ?? '';
  } catch {
    submitted = '';
  }
  if (!sameToken(submitted, viewer.session.csrfToken)) {
    request.log.warn({ path: request.url.split('?', 1)[0] }, 'dashboard form refused: bad CSRF token');
    return refuse(
      request,
      reply,
      403,
      'This form has expired or did not come from this dashboard. Reload the page and try again.',
    );
  }
}

/**
 * The account dashboard at `/`: server-rendered pages signed in with a session cookie. Sessions
 * never reach `/v1` (that scope only reads X-API-Key), and API keys are never read here.
 */
export async function dashboardPlugin(app: FastifyInstance, options: DashboardOptions): Promise<void> {
  app.addHook('onSend', async (_request, reply, payload) => {
    securityHeaders(reply);
    return payload;
  });
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (isAppError(error)) return refuse(request, reply, error.status, error.message);
    const status = error.statusCode;
    if (status !== undefined && status >= 400 && status < 500) {
      return refuse(
        request,
        reply,
        status,
        status === 413 ? 'That form is too large.' : 'That request was malformed.',
      );
    }
    request.log.error({ err: error }, 'dashboard error');
    return refuse(request, reply, 500, 'Something went wrong on our side.');
  });

  registerAssets(app);
  registerTalkAsset(app);
  registerAuthPages(app, options);

  await app.register(async (signedIn) => {
    signedIn.addHook('preHandler', requireSession(options));
    signedIn.addHook('preHandler', requireCsrfToken);
    registerSignOut(signedIn, options);
    registerOverviewPage(signedIn, options);
    registerKeyPages(signedIn, options);
    registerProviderPages(signedIn, options);
    registerCallPages(signedIn, options);
    registerAgentPages(signedIn, options);
    registerTalkRoutes(signedIn, options);
    registerAgentTestPages(signedIn, options);
    registerTelephonyPages(signedIn, options);
    registerWebhookPages(signedIn, options);
    registerDoNotCallPages(signedIn, options);
    registerCampaignPages(signedIn, options);
    registerCampaignResultPages(signedIn, options);
    registerDataRulePages(signedIn, options);
  });
}
