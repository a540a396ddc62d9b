import { createHash, timingSafeEqual } from 'node:crypto';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyRequest,
  LogController,
} from 'fastify';
import type { HttpTimeouts } from '../config.js';
import { AppError } from '../domain/errors.js';
import type { Logger } from '../logger.js';
import type { MetricsRegistry } from '../metrics/registry.js';
import { installErrorHandlers } from './errors.js';
import { closeConnectionsWithUnreadBodies, httpServerOptions, newRequestId } from './httpConnections.js';
import { errorResponses } from './schemas.js';

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** `Authorization: Bearer <token>`, compared in constant time (digests, so the length leaks nothing). */
function presentsToken(request: FastifyRequest, tokenDigest: Buffer): boolean {
  const header = request.headers.authorization;
  const match = typeof header === 'string' ? /^Bearer ([\x21-\x7e]{1,500})$/.exec(header) : null;
  return match !== null && timingSafeEqual(digest(match[1] as string), tokenDigest);
}

/**
 * `GET /metrics` in the Prometheus text format: counts and latencies of every account (no ids, no
 * numbers). With a token, a scrape without `Authorization: Bearer <token>` is 401 (issue 12,
 * defect 10); without one, only a listener of its own (CALLWRIGHT_METRICS_PORT) may serve it.
 */
export function registerMetricsRoute(
  app: FastifyInstance,
  registry: MetricsRegistry,
  options: { token: string | null },
): void {
  const tokenDigest = options.token === null ? null : digest(options.token);
  const schema = {
    summary: 'Prometheus metrics (extension)',
    ...(tokenDigest ? { description: 'Send `Authorization: Bearer <CALLWRIGHT_METRICS_TOKEN>`.' } : {}),
    operationId: 'metrics',
    tags: ['service'],
    response: errorResponses(...(tokenDigest ? [400, 401] : [400])),
  };
  const text = { description: 'Prometheus text format 0.0.4.', content: { 'text/plain': {} } };
  app.get(
    '/metrics',
    { schema, config: { public: true, extraResponses: { 200: text } } },
    async (request, reply) => {
      if (tokenDigest && !presentsToken(request, tokenDigest)) {
        throw new AppError('unauthorized', 'invalid or missing metrics token', {
          headers: { 'WWW-Authenticate': 'Bearer realm="metrics"' },
        });
      }
      reply.type('text/plain; version=0.0.4; charset=utf-8');
      return registry.render();
    },
  );
}

/** The listener of CALLWRIGHT_METRICS_PORT: /metrics and nothing else. */
export async function buildMetricsApp(options: {
  registry: MetricsRegistry;
  token: string | null;
  logger: Logger;
  httpTimeouts?: HttpTimeouts;
}): Promise<FastifyInstance> {
  const app = Fastify({
    ...httpServerOptions(options.httpTimeouts),
    loggerInstance: options.logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: false,
    genReqId: newRequestId,
  });
  installErrorHandlers(app);
  closeConnectionsWithUnreadBodies(app);
  app.addHook('onSend', async (request, reply) => {
    reply.header('X-Request-Id', request.id);
  });
  registerMetricsRoute(app, options.registry, { token: options.token });
  await app.ready();
  return app;
}
