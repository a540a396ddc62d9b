import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

/**
 * Checks HTTP responses against the service's own OpenAPI 3.1 document: the status must be
 * declared for the operation, headers the document marks required must be there and match their
 * schema, and a JSON body must validate against the declared schema. Used by the `request` and
 * `rawHttp` helpers, so every response of the API tests is checked (set
 * CALLWRIGHT_OPENAPI_CHECK=off to turn it off while debugging).
 */

type Json = Record<string, unknown>;

export interface CheckedResponse {
  method: string;
  /** Path with an optional query string. */
  path: string;
  status: number;
  headers: Record<string, string>;
  text: string;
}

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

interface PathTemplate {
  template: string;
  pattern: RegExp;
}

export class OpenApiResponseChecker {
  private readonly ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
  private readonly validators = new Map<unknown, ValidateFunction>();
  private readonly templates: PathTemplate[];
  private readonly errorEnvelope: Json = {
    type: 'object',
    required: ['error'],
    additionalProperties: false,
    properties: {
      error: {
        type: 'object',
        required: ['code', 'message'],
        additionalProperties: false,
        properties: { code: { type: 'string' }, message: { type: 'string', minLength: 1 } },
      },
    },
  };
  /** Operation id and status of every response checked, e.g. `createOutboundCall 422`. */
  readonly seen = new Set<string>();

  constructor(private readonly document: Json) {
    this.templates = Object.keys((document.paths ?? {}) as Json).map((template) => ({
      template,
      pattern: new RegExp(
        `^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`,
      ),
    }));
  }

  private validate(schema: unknown, value: unknown): string[] {
    let validator = this.validators.get(schema);
    if (!validator) {
      validator = this.ajv.compile(schema as Json);
      this.validators.set(schema, validator);
    }
    if (validator(value)) return [];
    return (validator.errors ?? []).map((error) => `${error.instancePath || '(body)'} ${error.message}`);
  }

  private resolve(value: unknown): Json {
    const ref = (value as { $ref?: string }).$ref;
    if (!ref) return value as Json;
    let node: unknown = this.document;
    for (const part of ref.slice(2).split('/')) node = (node as Json)[part.replace(/~1/g, '/')];
    return node as Json;
  }

  private parse(text: string): { ok: true; value: unknown } | { ok: false } {
    try {
      return { ok: true, value: JSON.parse(text) };
    } catch {
      return { ok: false };
    }
  }

  /** The problems of one response; empty when it conforms (or the path is not the API's). */
  /** Problems of a webhook body against the schema of its type under the document's `webhooks`. */
  checkWebhookBody(body: unknown): string[] {
    const type = (body as { type?: unknown } | null)?.type;
    const webhooks = (this.document.webhooks ?? {}) as Record<string, Json>;
    const webhook = typeof type === 'string' ? webhooks[type] : undefined;
    if (!webhook) return [`no webhook ${String(type)} in the document`];
    const post = webhook.post as { requestBody: { content: Record<string, { schema: unknown }> } };
    const schema = post.requestBody.content['application/json']?.schema;
    return this.validate(schema, body).map((problem) => `webhook ${type}: ${problem}`);
  }

  check(response: CheckedResponse): string[] {
    const method = response.method.toLowerCase();
    const path = decodeURI(response.path.split('?', 1)[0] ?? '');
    const where = `${response.method.toUpperCase()} ${path} → ${response.status}`;
    const headers = Object.fromEntries(
      Object.entries(response.headers).map(([k, v]) => [k.toLowerCase(), v]),
    );
    if (method === 'head' || method === 'options') return [];
    const template = this.templates.find((candidate) => candidate.pattern.test(path));
    const operation = template
      ? ((this.document.paths as Record<string, Json>)[template.template]?.[method] as Json | undefined)
      : undefined;
    if (!operation) {
      // Outside the API (dashboard, metrics): not ours to check. Inside /v1: an unknown route
      // or method must be a plain 404 (or 400 for a request the router cannot read).
      if (!path.startsWith('/v1') && !template) return [];
      this.seen.add(`(unrouted) ${response.status}`);
      const problems =
        response.status === 404 || response.status === 400 ? [] : [`${where}: unrouted request`];
      const parsed = this.parse(response.text);
      if (!parsed.ok) return [...problems, `${where}: body is not JSON`];
      return [...problems, ...this.validate(this.errorEnvelope, parsed.value).map((p) => `${where}: ${p}`)];
    }
    this.seen.add(`${String(operation.operationId)} ${response.status}`);
    const responses = (operation.responses ?? {}) as Record<string, Json>;
    const declared = responses[String(response.status)] ?? responses[`${String(response.status)[0]}XX`];
    if (!declared)
      return [`${where}: status ${response.status} is not declared for ${String(operation.operationId)}`];

    const problems: string[] = [];
    for (const [name, reference] of Object.entries((declared.headers ?? {}) as Json)) {
      const header = this.resolve(reference);
      const value = headers[name.toLowerCase()];
      if (value === undefined) {
        if (header.required === true) problems.push(`${where}: required header ${name} is missing`);
        continue;
      }
      problems.push(...this.validate(header.schema ?? {}, value).map((p) => `${where}: header ${name} ${p}`));
    }
    const content = (declared.content ?? {}) as Record<string, Json>;
    const mediaType = (headers['content-type'] ?? '').split(';', 1)[0]?.trim() ?? '';
    if (Object.keys(content).length === 0) return problems;
    const media = content[mediaType];
    if (!media) return [...problems, `${where}: content type "${mediaType}" is not declared`];
    if (mediaType === 'application/json' && media.schema) {
      const parsed = this.parse(response.text);
      if (!parsed.ok) return [...problems, `${where}: body is not JSON`];
      problems.push(...this.validate(media.schema, parsed.value).map((p) => `${where}: ${p}`));
    }
    return problems;
  }
}

const checkers = new Map<string, Promise<OpenApiResponseChecker>>();

export function openApiCheckEnabled(): boolean {
  return process.env.CALLWRIGHT_OPENAPI_CHECK !== 'off';
}

/** The checker of the service at `origin`, built from its own `GET /v1/openapi.json`. */
export function checkerFor(origin: string): Promise<OpenApiResponseChecker> {
  let checker = checkers.get(origin);
  if (!checker) {
    checker = fetch(`${origin}/v1/openapi.json`)
      .then((response) => response.json() as Promise<Json>)
      .then((document) => new OpenApiResponseChecker(document));
    checker.catch(() => checkers.delete(origin));
    checkers.set(origin, checker);
  }
  return checker;
}

/** Throws when a webhook body does not match its type's schema in the document of the service at `origin`. */
export async function assertWebhookConformsToOpenApi(origin: string, body: unknown) {
  const problems = (await checkerFor(origin)).checkWebhookBody(body);
  if (problems.length > 0) throw new Error(`webhook body does not conform:\n${problems.join('\n')}`);
}

/** Throws when the response does not conform to the document of the service that sent it. */
export async function assertConformsToOpenApi(url: string, response: Omit<CheckedResponse, 'path'>) {
  if (!openApiCheckEnabled()) return;
  const parsed = new URL(url);
  const checker = await checkerFor(parsed.origin);
  const problems = checker.check({ ...response, path: `${parsed.pathname}${parsed.search}` });
  if (problems.length > 0) {
    throw new Error(`response does not conform to the OpenAPI document:\n${problems.join('\n')}`);
  }
}
