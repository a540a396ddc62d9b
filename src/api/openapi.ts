import type { RouteOptions } from 'fastify';
import { errorSchemaFor } from './schemas.js';
import { statusEventWebhooks } from './statusEventSchemas.js';
import { callCompletedWebhook } from './webhookSchemas.js';

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

/** What a route's `config` may add to the reference beyond its schema. */
interface DocumentationConfig {
  /** The JSON request body (bodies are parsed by the route itself, after auth and the rate limit). */
  requestBody?: unknown;
  /** Other media types the body may have besides JSON (e.g. `text/csv`), each with its schema. */
  requestBodyAlternatives?: Record<string, unknown>;
  /** No API key: the route is outside the /v1 authentication and rate limit. */
  public?: boolean;
  /** Responses that are not JSON (e.g. a WAV), keyed by status: `{ description, content }`. */
  extraResponses?: Record<string, unknown>;
}

interface CollectedRoute {
  method: string;
  url: string;
  schema: Record<string, unknown>;
  config: DocumentationConfig;
}

type JsonSchemaObject = { properties?: Record<string, unknown>; required?: string[] };

const apiDescription = `Outbound AI voice calls. \`POST /v1/calls/outbound\` is the specified operation; operations
marked **(extension)** are callwright additions.

**Authentication.** Every \`/v1\` request carries the key in the header named exactly \`X-API-Key\`
(any other casing counts as no key): \`401 unauthorized\` otherwise.

**Errors.** Every error is \`{"error":{"code":"…","message":"…"}}\`. The status follows from the code:
400 \`validation_error\`, 401 \`unauthorized\`, 403 \`forbidden\` (an expired recording link), 404 \`not_found\`
(also unknown routes and methods), 409 \`conflict\`, 422 \`invalid_phone\`, 429 \`rate_limited\`,
500 \`server_error\`, 503 \`unavailable\`. Treat the status as decisive and the message as text for people.
Every response carries \`X-Request-Id\`; quote it when you report a problem.

**Rate limits.** A token bucket per account (default 100 requests per 10 s). Authenticated responses
carry \`RateLimit-Policy\` and \`RateLimit\` (IETF httpapi draft); a 429 carries \`Retry-After\` in seconds.
Wait at least that long, then retry with exponential backoff and jitter. A 429 is answered before the
request is looked at (authentication, then the rate limit, then everything else), so retrying any
request after a 429 is safe — even \`POST /v1/calls/outbound\`, which has no de-duplication and must
otherwise never be retried blindly after the request may have reached the server.

**Versioning.** \`/v1\` changes only additively (new operations, optional request fields, response
fields, error codes within a documented status, event fields). Deprecations are announced with the
\`Deprecation\` and \`Sunset\` response headers at least 6 months ahead. See \`docs/versioning.md\`.`;

const tags = [
  { name: 'calls', description: 'Place calls and read their records.' },
  {
    name: 'events',
    description: 'The call.completed events of the account and their delivery attempts (extension).',
  },
  {
    name: 'credentials',
    description: "The account's own voice-vendor keys, write-only (extension).",
  },
  { name: 'agents', description: 'Create, read, change and (de)activate agents (extension).' },
  { name: 'numbers', description: 'The caller IDs the account may use as from_number (extension).' },
  { name: 'webhook', description: "The account's webhook endpoint and its signing secret (extension)." },
  {
    name: 'do-not-call',
    description: 'Numbers the account never dials: calls to them end at once, undialled (extension).',
  },
  { name: 'service', description: 'Health and this reference; no API key needed.' },
  { name: 'webhooks', description: 'What callwright sends to your endpoint.' },
];

/**
 * Any operation can get a 400: the HTTP parser refuses malformed requests (bad header lines,
 * conflicting lengths, a request line and headers over 16 KiB) and requests that do not arrive
 * within the request timeout, before any route sees them.
 */
function malformedRequestResponse(authenticated: boolean) {
  const { description, ...schema } = errorSchemaFor(400);
  return {
    description: `${description} Also a malformed HTTP request, headers over 16 KiB, or a request that did not arrive in time.`,
    headers: responseHeaders('400', authenticated),
    content: { 'application/json': { schema } },
  };
}

/** Operations served outside the route schemas: the reference itself. */
const referencePaths = {
  '/v1/openapi.json': {
    get: {
      operationId: 'getOpenApiDocument',
      summary: 'This OpenAPI 3.1 document (extension)',
      tags: ['service'],
      security: [],
      responses: {
        '200': {
          description: 'The document.',
          content: { 'application/json': { schema: { type: 'object', required: ['openapi', 'paths'] } } },
        },
        '400': malformedRequestResponse(false),
      },
    },
  },
  '/docs': {
    get: {
      operationId: 'getReferencePage',
      summary: 'This reference as one HTML page, rendered by the service (extension)',
      tags: ['service'],
      security: [],
      responses: {
        '200': { description: 'The page; self-contained, no external assets.', content: { 'text/html': {} } },
        '400': malformedRequestResponse(false),
      },
    },
  },
};

/** Collects routes as they are registered, so the reference is generated from the route schemas. */
export class OpenApiCollector {
  private readonly routes: CollectedRoute[] = [];

  onRoute = (route: RouteOptions): void => {
    const schema = route.schema as Record<string, unknown> | undefined;
    if (!schema || (schema as { hide?: boolean }).hide) return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const config = (route.config ?? {}) as DocumentationConfig;
    for (const method of methods) {
      if (method === 'HEAD') continue;
      this.routes.push({ method: method.toLowerCase(), url: route.url, schema, config });
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
        description: apiDescription,
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      },
      servers: [{ url: serverUrl }],
      security: [{ apiKey: [] }],
      tags,
      paths: { ...paths, ...referencePaths },
      webhooks: { 'call.completed': callCompletedWebhook, ...statusEventWebhooks },
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
            description:
              'The policy that applied: `"account";q=<requests>;w=<seconds>` (IETF httpapi draft); ' +
              '`"auth_failures";…` on answers to failed authentications.',
            schema: { type: 'string', pattern: '^"[a-z_]+";q=[0-9]+;w=[0-9]+$' },
            example: '"account";q=100;w=10',
          },
          RateLimit: {
            description: 'Requests remaining and seconds until the bucket is full: `"account";r=<n>;t=<s>`.',
            schema: { type: 'string', pattern: '^"[a-z_]+";r=[0-9]+;t=[0-9]+$' },
            example: '"account";r=57;t=3',
          },
          'Retry-After': {
            description: 'Seconds to wait before retrying.',
            required: true,
            schema: { type: 'string', pattern: '^[0-9]+$' },
            example: '2',
          },
          'X-Request-Id': {
            description: 'The id of this request in the service logs.',
            schema: { type: 'string', pattern: '^req_[0-9a-f]{16}$' },
            example: 'req_5f0c8e2a9b1d3c47',
          },
        },
      },
    };
  }
}

function responseHeaders(status: string, authenticated: boolean): Record<string, unknown> {
  const headers: Record<string, unknown> = { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } };
  if (authenticated) {
    headers['RateLimit-Policy'] = { $ref: '#/components/headers/RateLimit-Policy' };
    headers.RateLimit = { $ref: '#/components/headers/RateLimit' };
  }
  if (status === '429') headers['Retry-After'] = { $ref: '#/components/headers/Retry-After' };
  return headers;
}

function operation(route: CollectedRoute): Record<string, unknown> {
  const { schema, config } = route;
  const authenticated = config.public !== true;
  const parameters: unknown[] = [];
  for (const [location, key] of [
    ['path', 'params'],
    ['query', 'querystring'],
  ] as const) {
    const group = schema[key] as JsonSchemaObject | undefined;
    for (const [name, property] of Object.entries(group?.properties ?? {})) {
      const { description, ...propertySchema } = property as { description?: string };
      parameters.push({
        name,
        in: location,
        required: location === 'path' || (group?.required ?? []).includes(name),
        ...(description ? { description } : {}),
        schema: propertySchema,
      });
    }
  }
  const responses: Record<string, unknown> = {};
  for (const [status, responseSchema] of Object.entries((schema.response ?? {}) as Record<string, unknown>)) {
    const { description, ...body } = responseSchema as { description?: string };
    responses[status] = {
      description: description ?? (status.startsWith('2') ? 'Success' : 'Error'),
      headers: responseHeaders(status, authenticated),
      content: { 'application/json': { schema: body } },
    };
  }
  for (const [status, response] of Object.entries(config.extraResponses ?? {})) {
    responses[status] = { headers: responseHeaders(status, authenticated), ...(response as object) };
  }
  responses['400'] ??= malformedRequestResponse(authenticated);
  const sorted = Object.fromEntries(
    Object.entries(responses).sort(([left], [right]) => left.localeCompare(right)),
  );
  return {
    operationId: schema.operationId,
    summary: schema.summary,
    ...(schema.description ? { description: schema.description } : {}),
    tags: schema.tags,
    ...(authenticated ? {} : { security: [] }),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(config.requestBody
      ? {
          requestBody: {
            required: true,
            content: {
              'application/json': { schema: config.requestBody },
              ...Object.fromEntries(
                Object.entries(config.requestBodyAlternatives ?? {}).map(([type, schema]) => [
                  type,
                  { schema },
                ]),
              ),
            },
          },
        }
      : {}),
    responses: sorted,
  };
}
