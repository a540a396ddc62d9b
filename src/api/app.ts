import type { Tracer } from '@opentelemetry/api';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { CallControl } from '../calls/callControl.js';
import type { Config } from '../config.js';
import { type DashboardOptions, dashboardPlugin } from '../dashboard/plugin.js';
import { AppError } from '../domain/errors.js';
import type { CallRecord } from '../domain/records.js';
import { PostgresRateLimiter } from '../limits/postgresRateLimiter.js';
import type { RateLimiter } from '../limits/rateLimiter.js';
import type { Logger } from '../logger.js';
import type { MetricsRegistry } from '../metrics/registry.js';
import type { SecretBox } from '../secrets/secretBox.js';
import type { Store } from '../store/types.js';
import { traceCallCreations } from '../telemetry/apiRequestSpans.js';
import type { EngineHealth } from '../voice/providers/enginePool.js';
import { createAccountRateLimit } from './accountRateLimit.js';
import { registerAgentRoutes } from './agentRoutes.js';
import { registerAgentTestRoutes } from './agentTestRoutes.js';
import { createAuthenticator } from './auth.js';
import {
  type AuthorizedCreateOptions,
  authorizesInStore,
  createAuthorizedHandler,
} from './authorizedCreate.js';
import { registerCallRoutes } from './calls.js';
import { registerCampaignContactRoutes } from './campaignContactRoutes.js';
import { registerCampaignEditRoutes } from './campaignEditRoutes.js';
import { registerCampaignResultRoutes } from './campaignResultRoutes.js';
import { registerCampaignRoutes } from './campaignRoutes.js';
import { registerCredentialRoutes } from './credentials.js';
import { registerDialRateRoutes } from './dialRateRoutes.js';
import { registerDoNotCallRoutes } from './doNotCall.js';
import { installErrorHandlers, sendError } from './errors.js';
import { registerEventRoutes } from './events.js';
import { registerHealthRoutes } from './health.js';
import { registerHoldAudioRoutes } from './holdAudioRoutes.js';
import {
  closeConnectionsWithUnreadBodies,
  httpServerOptions,
  newRequestId,
  trustProxyOption,
} from './httpConnections.js';
import { registerInboundNumberRoutes } from './inboundNumberRoutes.js';
import { maxBodyBytes } from './jsonBody.js';
import { registerMetricsRoute } from './metrics.js';
import { registerNumberAndWebhookRoutes } from './numberAndWebhookRoutes.js';
import { OpenApiCollector } from './openapi.js';
import { registerPrivacyRoutes } from './privacyRoutes.js';
import { type RecordingAccess, registerRecordingRoutes, signedRecordingRequest } from './recordings.js';
import { renderReferencePage } from './referencePage.js';
import { registerWebCallConnectRoute, registerWebCallRoutes, type WebCallStarter } from './webCalls.js';

export interface AppDependencies {
  store: Store;
  config: Pick<Config, 'ratePolicy' | 'authFailurePolicy' | 'publicUrl' | 'trustProxy'> &
    Partial<Pick<Config, 'httpTimeouts' | 'webCallConnectPolicy' | 'webCallIceServers'>>;
  logger: Logger;
  limiter: RateLimiter;
  version: string;
  /** Prometheus series served at /metrics, only with the bearer token; absent: no /metrics route. */
  metrics?: { registry: MetricsRegistry; token: string };
  /** The call workers of this process; null in an API-only process. */
  callControl?: CallControl | null;
  /** Starts web calls whose browser connected (the dispatcher); absent: the connect route answers 503. */
  webCalls?: WebCallStarter | null;
  /** Runs an ended call's analysis again (POST /v1/calls/{id}/analysis); absent where no voice stack runs. */
  reanalyzeCall?: (accountId: string, callId: string) => Promise<CallRecord>;
  /** The offline speech engines' state for /healthz and /readyz; absent where no calls run. */
  speechEngines?: () => readonly EngineHealth[];
  /** The account dashboard at `/` (issue 6); absent: no dashboard. */
  dashboard?: Omit<DashboardOptions, 'store' | 'logger' | 'limiter' | 'callControl'> | null;
  /** Signed recording links and where recordings live; null: every recording is 404. */
  recordings?: RecordingAccess | null;
  /** A hint to the webhook delivery worker of this process (an event was re-queued). */
  wakeWebhookDelivery?: () => void;
  /** Seals the account's vendor keys (POST /v1/credentials); absent: that route answers 503. */
  secretBox?: SecretBox | null;
  /** CALLWRIGHT_PROVIDER_ALLOW_PRIVATE: credential base URLs may name private addresses. */
  providerAllowPrivate?: boolean;
  /** CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE: PUT /v1/webhook may name a private address. */
  webhookAllowPrivate?: boolean;
  /** Whether a voice vendor has a service-wide key (test scenarios' persona and callee voice). */
  vendorConfigured?: (provider: string) => boolean;
  /** OpenTelemetry on (src/telemetry/tracing.ts): call-creating requests are traced; absent: not. */
  tracer?: Tracer;
}

/**
 * The one-round-trip create and authorization (issue 12) when the store offers it and the limiter
 * keeps its buckets in that store (the dashboard's limits take from the same rows).
 */
function authorizedCreateOptions(deps: AppDependencies): AuthorizedCreateOptions | null {
  const { store, limiter, config, logger } = deps;
  const createAuthorized = store.calls.createAuthorized?.bind(store.calls);
  if (!createAuthorized || !(limiter instanceof PostgresRateLimiter) || !limiter.keepsBucketsIn(store))
    return null;
  return {
    createAuthorized,
    authFailurePolicy: config.authFailurePolicy,
    defaultRatePolicy: config.ratePolicy,
    touchLastUsed: (keyId, atIso) => store.apiKeys.touchLastUsed(keyId, atIso),
    logger,
  };
}

/**
 * Builds the HTTP application without listening, so tests and the server share one code path.
 */
export async function buildApp(deps: AppDependencies): Promise<FastifyInstance> {
  const { store, config, logger, limiter } = deps;
  if (config.trustProxy === true) {
    logger.warn(
      'CALLWRIGHT_TRUST_PROXY=true: the client address is the leftmost X-Forwarded-For entry, which clients write ' +
        'themselves; set a hop count or the proxy addresses instead',
    );
  }
  const app = Fastify({
    ...httpServerOptions(config.httpTimeouts),
    loggerInstance: logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: maxBodyBytes,
    trustProxy: trustProxyOption(config.trustProxy),
    requestIdHeader: false,
    genReqId: newRequestId,
    // A request in flight while the process closes is answered as usual: the store closes only after
    // the HTTP server has (src/server.ts), and 503 is not a status of the specified operation.
    return503OnClosing: false,
    // Unknown query parameters are refused, not silently dropped.
    ajv: { customOptions: { removeAdditional: false, coerceTypes: true, useDefaults: true } },
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 200 },
    frameworkErrors: (_error, _request, reply) => {
      sendError(reply, new AppError('validation_error', 'malformed request'));
    },
  });

  // Tracing on: the requests that create calls become spans linked to the calls' traces.
  if (deps.tracer) traceCallCreations(app, deps.tracer);
  app.decorateRequest('auth', null);
  // Bodies arrive as raw bytes; the route checks Content-Type and parses JSON itself, after
  // authentication and the rate limit (DESIGN §1 fixes that order).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
  installErrorHandlers(app);
  closeConnectionsWithUnreadBodies(app);

  app.addHook('onSend', async (request, reply) => {
    reply.header('X-Request-Id', request.id);
  });
  const healthPaths = new Set(['/healthz', '/readyz']);
  app.addHook('onResponse', async (request, reply) => {
    // One line per request. The query string is left out: recording links carry signatures there.
    // Health polls (every few seconds from a load balancer) are logged at debug only.
    const path = request.url.split('?', 1)[0] ?? '';
    const level = healthPaths.has(path) && reply.statusCode < 400 ? 'debug' : 'info';
    request.log[level](
      {
        method: request.method,
        path,
        status: reply.statusCode,
        durationMs: Math.round(reply.elapsedTime * 100) / 100,
        accountId: request.auth?.account.id,
      },
      'request',
    );
  });

  const openApi = new OpenApiCollector();
  app.addHook('onRoute', openApi.onRoute);

  registerHealthRoutes(app, store, deps.speechEngines);
  if (deps.metrics) registerMetricsRoute(app, deps.metrics.registry, { token: deps.metrics.token });
  app.get('/v1/openapi.json', { config: { public: true } }, async () =>
    openApi.document(`${config.publicUrl}`, deps.version),
  );
  let referencePage: string | undefined;
  app.get('/docs', { config: { public: true } }, async (_request, reply) => {
    referencePage ??= renderReferencePage(openApi.document(`${config.publicUrl}`, deps.version));
    return reply
      .type('text/html; charset=utf-8')
      .header('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'")
      .send(referencePage);
  });

  const authenticate = createAuthenticator({ store, limiter, authFailurePolicy: config.authFailurePolicy });
  const limitAccount = createAccountRateLimit(limiter, config.ratePolicy);
  const oneRoundTripOptions = authorizedCreateOptions(deps);
  const oneRoundTrip = oneRoundTripOptions ? createAuthorizedHandler(oneRoundTripOptions) : null;
  await app.register(
    async (api) => {
      const links = deps.recordings?.links ?? null;
      // A valid signed recording link stands in for the API key (and its account's rate limit).
      // The create authorizes itself; with a store that can, every other route's key and limits
      // are one round trip too.
      api.addHook('onRequest', async (request, reply) => {
        if (signedRecordingRequest(request, links) || authorizesInStore(request)) return;
        if (oneRoundTrip) return oneRoundTrip.authorize(request, reply);
        return authenticate(request, reply);
      });
      // The account's limit: taken in the store's round trip when there is one.
      if (!oneRoundTrip) {
        api.addHook('onRequest', async (request, reply) =>
          request.auth === null && request.routeOptions.url?.endsWith('/recording')
            ? undefined
            : limitAccount(request, reply),
        );
      }
      registerCallRoutes(
        api,
        store,
        deps.callControl ?? null,
        oneRoundTrip,
        links,
        deps.reanalyzeCall ?? null,
      );
      registerWebCallRoutes(api, store, config.webCallIceServers ?? []);
      registerRecordingRoutes(api, store, deps.recordings ?? null);
      registerEventRoutes(api, store, deps.wakeWebhookDelivery ?? (() => {}));
      registerDoNotCallRoutes(api, store);
      registerCampaignRoutes(api, store, deps.logger);
      registerCampaignEditRoutes(api, store);
      registerCampaignContactRoutes(api, store);
      registerCampaignResultRoutes(api, store);
      registerPrivacyRoutes(api, store, deps.recordings?.storage ?? null);
      registerDialRateRoutes(api, store);
      registerAgentRoutes(api, store, {
        toolAllowPrivate: deps.webhookAllowPrivate === true,
        secretBox: deps.secretBox ?? null,
      });
      registerHoldAudioRoutes(api, store);
      registerAgentTestRoutes(api, store, { vendorConfigured: deps.vendorConfigured ?? (() => false) });
      registerNumberAndWebhookRoutes(api, store, deps.secretBox ?? null, {
        webhookAllowPrivate: deps.webhookAllowPrivate === true,
      });
      registerInboundNumberRoutes(api, store);
      registerCredentialRoutes(api, store, deps.secretBox ?? null, {
        allowPrivate: deps.providerAllowPrivate === true,
      });
    },
    { prefix: '/v1' },
  );
  // Outside the API-key hooks: the browser's one-use token is its credential.
  registerWebCallConnectRoute(app, store, {
    starter: deps.webCalls ?? null,
    limiter,
    perAddress: config.webCallConnectPolicy ?? { requests: 10, windowS: 60 },
    serviceOrigin: new URL(config.publicUrl).origin,
  });
  if (deps.dashboard) await app.register(dashboardPlugin, { ...deps, ...deps.dashboard });
  return app;
}
