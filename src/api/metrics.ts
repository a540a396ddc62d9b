import type { FastifyInstance } from 'fastify';
import type { MetricsRegistry } from '../metrics/registry.js';

/**
 * `GET /metrics` in the Prometheus text format. It carries counts and latencies only (no ids, no
 * numbers), and is served without a key like /healthz: restrict it at your proxy if you need to.
 */
export function registerMetricsRoute(app: FastifyInstance, registry: MetricsRegistry): void {
  const schema = { summary: 'Prometheus metrics (extension)', operationId: 'metrics', tags: ['service'] };
  const text = { description: 'Prometheus text format 0.0.4.', content: { 'text/plain': {} } };
  app.get(
    '/metrics',
    { schema, config: { public: true, extraResponses: { 200: text } } },
    async (_request, reply) => {
      reply.type('text/plain; version=0.0.4; charset=utf-8');
      return registry.render();
    },
  );
}
