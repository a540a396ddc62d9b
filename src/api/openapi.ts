import type { RouteOptions } from 'fastify';

declare module 'fastify' {
  /** Documentation keywords a route schema may carry into the generated reference. */
  interface FastifySchema {
    summary?: string;
    description?: string;
    operationId?: string;
    tags?: string[];
    hide?: boolean;
  }
}

interface CollectedRoute {
  method: string;
  url: string;
  schema: Record<string, unknown>;
  requestBody?: unknown;
  authenticated: boolean;
}

type JsonSchemaObject = { properties?: Record<string, unknown>; required?: string[] };

/** Collects routes as they are registered, so the reference is generated from the route schemas. */
export class OpenApiCollector {
  private readonly routes: CollectedRoute[] = [];

  onRoute = (route: RouteOptions): void => {
    const schema = route.schema as Record<string, unknown> | undefined;
    if (!schema || (schema as { hide?: boolean }).hide) return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const config = (route.config ?? {}) as { requestBody?: unknown; public?: boolean };
    for (const method of methods) {
      if (method === 'HEAD') continue;
      this.routes.push({
        method: method.toLowerCase(),
        url: route.url,
        schema,
        requestBody: config.requestBody,
        authenticated: config.public !== true,
      });
    }
  };

  document(serverUrl: string, version: string): Record<string, unknown> {
    const paths: Record<string, Record<string, unknown>> = {};
    for (const route of this.routes) {
      const path = route.url.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
      paths[path] ??= {};
      (paths[path] as Record<string, unknown>)[route.method] = operation(route);
    }
    return {
      openapi: '3.1.0',
      info: {
        title: 'callwright API',
        version,
        description:
          'Outbound AI voice calls. `POST /v1/calls/outbound` is the specified operation; operations marked ' +
          '"extension" are callwright additions. Every error is `{"error":{"code","message"}}`.',
      },
      servers: [{ url: serverUrl }],
      security: [{ apiKey: [] }],
      components: {
        securitySchemes: {
          apiKey: {
            type: 'apiKey',
            in: 'header',
            name: 'X-API-Key',
            description: 'The header name is case-sensitive: any other casing counts as no key.',
          },
        },
        headers: {
          'RateLimit-Policy': {
            description: 'The account\'s policy, e.g. `"account";q=100;w=10` (IETF httpapi draft).',
            schema: { type: 'string' },
          },
          RateLimit: {
            description: 'Remaining requests and seconds to a full bucket, e.g. `"account";r=57;t=3`.',
            schema: { type: 'string' },
          },
          'Retry-After': {
            description: 'Seconds to wait before retrying (429 only).',
            schema: { type: 'integer' },
          },
        },
      },
      paths,
    };
  }
}

function operation(route: CollectedRoute): Record<string, unknown> {
  const { schema } = route;
  const parameters: unknown[] = [];
  for (const [location, key] of [
    ['path', 'params'],
    ['query', 'querystring'],
  ] as const) {
    const group = schema[key] as JsonSchemaObject | undefined;
    for (const [name, property] of Object.entries(group?.properties ?? {})) {
      parameters.push({
        name,
        in: location,
        required: location === 'path' || (group?.required ?? []).includes(name),
        schema: property,
      });
    }
  }
  const responses: Record<string, unknown> = {};
  for (const [status, responseSchema] of Object.entries((schema.response ?? {}) as Record<string, unknown>)) {
    const { description, ...body } = responseSchema as { description?: string };
    const headers: Record<string, unknown> = route.authenticated
      ? {
          'RateLimit-Policy': { $ref: '#/components/headers/RateLimit-Policy' },
          RateLimit: { $ref: '#/components/headers/RateLimit' },
        }
      : {};
    if (status === '429') headers['Retry-After'] = { $ref: '#/components/headers/Retry-After' };
    responses[status] = {
      description: description ?? (status === '200' ? 'Success' : 'Error'),
      ...(Object.keys(headers).length > 0 ? { headers } : {}),
      content: { 'application/json': { schema: body } },
    };
  }
  return {
    operationId: schema.operationId,
    summary: schema.summary,
    ...(schema.description ? { description: schema.description } : {}),
    tags: schema.tags,
    ...(route.authenticated ? {} : { security: [] }),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(route.requestBody
      ? { requestBody: { required: true, content: { 'application/json': { schema: route.requestBody } } } }
      : {}),
    responses,
  };
}
