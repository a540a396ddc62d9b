import type { FastifyInstance } from 'fastify';
import { AppError } from '../domain/errors.js';
import type { Store } from '../store/types.js';

/** Liveness (the process answers) and readiness (the database answers). */
export function registerHealthRoutes(app: FastifyInstance, store: Store): void {
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async () => {
    try {
      await store.ping();
    } catch (error) {
      throw new AppError('unavailable', 'database is not reachable', { cause: error });
    }
    return { status: 'ready' };
  });
}
