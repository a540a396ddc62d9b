import type { FastifyInstance } from 'fastify';
import {
  addCredential,
  describeCredential,
  describeCredentialTest,
  removeCredential,
  testCredential,
} from '../admin/credentials.js';
import { credentialProviders } from '../domain/agentVoiceSettings.js';
import { AppError } from '../domain/errors.js';
import type { SecretBox } from '../secrets/secretBox.js';
import type { Store } from '../store/types.js';
import { authOf } from './auth.js';
import { readJsonBody } from './jsonBody.js';
import { errorResponses } from './schemas.js';

const credentialSchema = {
  type: 'object',
  required: ['credential_id', 'name', 'provider', 'api_key_last4', 'base_url', 'created_at'],
  properties: {
    credential_id: { type: 'string', examples: ['cred_01JF3Z8V0Q4T7N5W2X9Y6B1C3D'] },
    name: { type: 'string' },
    provider: { type: 'string', enum: [...credentialProviders] },
    api_key_last4: { type: 'string', description: 'All that is ever shown of the key.' },
    base_url: { type: ['string', 'null'] },
    created_at: { type: 'string', format: 'date-time' },
  },
} as const;

const createCredentialRequestSchema = {
  type: 'object',
  required: ['name', 'provider', 'api_key'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', pattern: '^[A-Za-z0-9_.-]{1,64}$' },
    provider: { type: 'string', enum: [...credentialProviders] },
    api_key: { type: 'string', minLength: 8, maxLength: 500, writeOnly: true },
    base_url: { type: ['string', 'null'], description: "The vendor's own address when absent." },
  },
} as const;

const credentialIdParams = {
  type: 'object',
  required: ['credential_id'],
  properties: { credential_id: { type: 'string', maxLength: 100, description: 'The id or the name.' } },
} as const;

function parseCreateRequest(body: unknown) {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw new AppError('validation_error', 'request body must be a JSON object');
  const fields = body as Record<string, unknown>;
  for (const key of Object.keys(fields)) {
    if (!['name', 'provider', 'api_key', 'base_url'].includes(key))
      throw new AppError('validation_error', `unknown field: ${key.slice(0, 60)}`);
  }
  for (const key of ['name', 'provider', 'api_key'] as const) {
    if (typeof fields[key] !== 'string')
      throw new AppError('validation_error', `${key} is required and must be a string`);
  }
  if (fields.base_url !== undefined && fields.base_url !== null && typeof fields.base_url !== 'string')
    throw new AppError('validation_error', 'base_url must be a string');
  return {
    name: fields.name as string,
    provider: fields.provider as string,
    apiKey: fields.api_key as string,
    baseUrl: (fields.base_url as string | null | undefined) ?? null,
  };
}

/**
 * The account's own voice-vendor keys (extension): write-only secrets, sealed at rest; a call's
 * agent uses them before the service-wide keys.
 */
export function registerCredentialRoutes(
  app: FastifyInstance,
  store: Store,
  secretBox: SecretBox | null,
  options: { allowPrivate: boolean },
): void {
  app.post(
    '/credentials',
    {
      schema: {
        summary: "Store one of the account's own voice-vendor keys (extension)",
        description:
          'The key is sealed with the service key before it is stored and never returned: only its last 4 ' +
          "characters are. The account's calls use it before the service-wide keys. 409 when the name is taken.",
        operationId: 'createCredential',
        tags: ['credentials'],
        response: { 200: credentialSchema, ...errorResponses(400, 401, 409, 429, 500, 503) },
      },
      config: { requestBody: createCredentialRequestSchema },
    },
    async (request) => {
      const caller = authOf(request);
      const input = parseCreateRequest(readJsonBody(request));
      if (!secretBox) throw new AppError('unavailable', 'this process cannot seal secrets');
      const credential = await addCredential(store, secretBox, caller.account.id, input, options);
      request.log.info({ credentialId: credential.id, provider: credential.provider }, 'credential stored');
      return describeCredential(credential);
    },
  );

  app.get(
    '/credentials',
    {
      schema: {
        summary: "List the account's voice-vendor keys, without their secrets (extension)",
        operationId: 'listCredentials',
        tags: ['credentials'],
        response: {
          200: {
            type: 'object',
            required: ['data'],
            properties: { data: { type: 'array', items: credentialSchema } },
          },
          ...errorResponses(401, 429, 500),
        },
      },
    },
    async (request) => ({
      data: (await store.credentials.list(authOf(request).account.id)).map(describeCredential),
    }),
  );

  app.delete<{ Params: { credential_id: string } }>(
    '/credentials/:credential_id',
    {
      schema: {
        summary: 'Delete a voice-vendor key (extension)',
        operationId: 'deleteCredential',
        tags: ['credentials'],
        params: credentialIdParams,
        response: {
          200: {
            type: 'object',
            required: ['credential_id', 'deleted'],
            properties: { credential_id: { type: 'string' }, deleted: { type: 'boolean', enum: [true] } },
          },
          ...errorResponses(400, 401, 404, 429, 500),
        },
      },
    },
    async (request) => {
      const removed = await removeCredential(store, authOf(request).account.id, request.params.credential_id);
      return { credential_id: removed.id, deleted: true };
    },
  );

  app.post<{ Params: { credential_id: string } }>(
    '/credentials/:credential_id/test',
    {
      schema: {
        summary: 'Try a voice-vendor key with one cheap request to the vendor (extension)',
        description:
          "Makes the vendor's cheapest authenticated read with the stored key (OpenAI: list models; " +
          'Deepgram: list projects; ElevenLabs: the user; Cartesia: list voices) and reports success or the ' +
          "vendor's error. 200 either way; `ok` says which.",
        operationId: 'testCredential',
        tags: ['credentials'],
        params: credentialIdParams,
        response: {
          200: {
            type: 'object',
            required: ['credential_id', 'name', 'provider', 'ok', 'status', 'message', 'latency_ms'],
            properties: {
              credential_id: { type: 'string' },
              name: { type: 'string' },
              provider: { type: 'string', enum: [...credentialProviders] },
              ok: { type: 'boolean' },
              status: {
                type: ['integer', 'null'],
                description: "The vendor's HTTP status, when it answered.",
              },
              message: { type: 'string' },
              latency_ms: { type: 'integer' },
            },
          },
          ...errorResponses(401, 404, 429, 500, 503),
        },
      },
    },
    async (request) => {
      const caller = authOf(request);
      if (!secretBox) throw new AppError('unavailable', 'this process cannot open secrets');
      const { credential, result } = await testCredential(
        store,
        secretBox,
        caller.account.id,
        request.params.credential_id,
        options,
      );
      request.log.info(
        { credentialId: credential.id, provider: credential.provider, ok: result.ok, status: result.status },
        'credential tested',
      );
      return describeCredentialTest(credential, result);
    },
  );
}
