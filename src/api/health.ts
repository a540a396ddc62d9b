import type { FastifyInstance } from 'fastify';
import { AppError } from '../domain/errors.js';
import type { Store } from '../store/types.js';
import type { EngineHealth } from '../voice/providers/enginePool.js';
import { errorResponses } from './schemas.js';

const speechEngineSchema = {
  type: 'object',
  required: ['engine', 'processes', 'ready', 'failures', 'start_failures', 'available'],
  properties: {
    engine: { type: 'string', description: 'pocketsphinx (recognition) or flite (speech).' },
    processes: { type: 'integer', description: 'Engine processes wanted.' },
    ready: { type: 'integer', description: 'Engine processes serving now.' },
    failures: { type: 'integer', description: 'Engine processes that failed while serving (each replaced).' },
    start_failures: { type: 'integer', description: 'Engine processes that failed to start.' },
    available: { type: 'boolean', description: 'False when none serves and the latest start failed.' },
  },
};

/**
 * Liveness (the process answers, with its offline speech engines' state) and readiness (the
 * database answers, and every offline speech engine can serve). `speechEngines` is absent in a
 * process that holds no calls.
 */
export function registerHealthRoutes(
  app: FastifyInstance,
  store: Store,
  speechEngines?: () => readonly EngineHealth[],
): void {
  const status = (value: string) => ({
    type: 'object',
    required: ['status'],
    properties: { status: { type: 'string', enum: [value] } },
  });
  const liveness = status('ok');
  const engines = () =>
    (speechEngines?.() ?? []).map((health) => ({
      engine: health.engine,
      processes: health.processes,
      ready: health.ready,
      failures: health.failures,
      start_failures: health.startFailures,
      available: health.available,
    }));
  app.get(
    '/healthz',
    {
      schema: {
        summary: 'Liveness: the process answers',
        operationId: 'health',
        tags: ['service'],
        response: {
          200: {
            ...liveness,
            properties: {
              ...liveness.properties,
              speech_engines: { type: 'array', items: speechEngineSchema },
            },
          },
        },
      },
      config: { public: true },
    },
    async () => (speechEngines ? { status: 'ok', speech_engines: engines() } : { status: 'ok' }),
  );
  const readiness = {
    summary: 'Readiness: the database answers and the offline speech engines can serve',
    operationId: 'ready',
    tags: ['service'],
    response: { 200: status('ready'), ...errorResponses(503) },
  };
  app.get('/readyz', { schema: readiness, config: { public: true } }, async () => {
    try {
      await store.ping();
    } catch (error) {
      throw new AppError('unavailable', 'database is not reachable', { cause: error });
    }
    // An engine whose processes all failed and cannot be restarted fails every call it is
    // given; a replacement merely starting (after a crash) still counts as ready.
    const unavailable = engines().filter((engine) => !engine.available);
    if (unavailable.length > 0) {
      const names = unavailable.map((engine) => engine.engine).join(', ');
      throw new AppError('unavailable', `offline speech engine cannot be started: ${names}`);
    }
    return { status: 'ready' };
  });
}
