import type { FastifyInstance } from 'fastify';
import { AppError } from '../domain/errors.js';
import type { Store } from '../store/types.js';
import { errorResponses } from './schemas.js';

/** Liveness (the process answers) and readiness (the database answers). */
export function registerHealthRoutes(app: FastifyInstance, store: Store): void {
  const status = (value: string) => ({
    type: 'object',
    required: ['status'],
    properties: { status: { type: 'string', enum: [value] } },
  });
  app.get(
    '/healthz',
    {
      schema: {
        summary: 'Liveness: the process answers',
        operationId: 'health',
        tags: ['service'],
        response: { 200: status('ok') },
      },
      config: { public: true },
    },
    async () => ({ status: 'ok' }),
  );
  const readiness = {
    summary: 'Readiness: the database answers',
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
    return { status: 'ready' };
  });
}
