import type { FastifyInstance } from 'fastify';
import {
  type AgentInput,
  checkToolUrls,
  createAgent,
  describeAgent,
  parseExtractionField,
  parseVariableDeclaration,
  setAgentActive,
  updateAgent,
} from '../admin/agents.js';
import { AppError } from '../domain/errors.js';
import { agentVariableTypes, extractionFieldTypes } from '../domain/records.js';
import type { SecretBox } from '../secrets/secretBox.js';
import type { Store } from '../store/types.js';
import { authOf } from './auth.js';
import { readJsonBody } from './jsonBody.js';
import { errorResponses } from './schemas.js';

const freeObject = { type: 'object', additionalProperties: true } as const;

const agentSchema = {
  type: 'object',
  required: ['agent_id', 'name', 'active', 'prompt', 'brain', 'created_at'],
  properties: {
    agent_id: { type: 'string', examples: ['agt_01JF3Z8V0Q4T7N5W2X9Y6B1C3D'] },
    name: { type: 'string' },
    active: { type: 'boolean' },
    prompt: { type: 'string' },
    first_message: { type: 'string' },
    variables: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          name: { type: 'string' },
          default: { type: ['string', 'null'] },
          description: { type: 'string' },
          required: { type: 'boolean' },
          type: { type: 'string', enum: [...agentVariableTypes] },
        },
      },
    },
    extraction: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          name: { type: 'string' },
          type: { type: 'string', enum: [...extractionFieldTypes] },
          description: { type: 'string' },
        },
      },
    },
    brain: { type: 'string', enum: ['script', 'llm'] },
    script: { type: ['object', 'null'], additionalProperties: true },
    settings: freeObject,
    max_duration_s: { type: 'integer' },
    silence_timeout_s: { type: 'integer' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
} as const;

const agentRequestSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    name: { type: 'string', maxLength: 200 },
    prompt: { type: 'string', maxLength: 20_000 },
    first_message: { type: 'string', maxLength: 2_000 },
    variables: {
      type: 'array',
      maxItems: 50,
      items: {
        type: 'string',
        description: 'NAME[:TYPE][!][=DEFAULT], e.g. `customer_name!`, `party_size:number=2`',
      },
    },
    extraction: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'type'],
        properties: {
          name: { type: 'string' },
          type: { type: 'string', enum: [...extractionFieldTypes] },
          description: { type: 'string' },
        },
      },
    },
    brain: { type: 'string', enum: ['script', 'llm'] },
    script: { type: ['object', 'null'], description: 'The dialog graph of a script agent (docs/agents.md).' },
    settings: {
      type: 'object',
      description:
        'Voice, tools, transfer, voicemail… (docs/agents.md). A tool\'s secret headers and auth fields are write-only: sent as text, shown as {"sealed": true}; send {"sealed": true} to keep one.',
    },
    max_duration_s: { type: 'integer', minimum: 1, maximum: 14_400 },
    silence_timeout_s: { type: 'integer', minimum: 1, maximum: 14_400 },
  },
} as const;

const agentIdParams = {
  type: 'object',
  required: ['agent_id'],
  properties: { agent_id: { type: 'string', maxLength: 100 } },
} as const;

const fieldNames: Record<string, keyof AgentInput> = {
  name: 'name',
  prompt: 'prompt',
  first_message: 'firstMessage',
  variables: 'variables',
  extraction: 'extraction',
  brain: 'brain',
  script: 'script',
  settings: 'settings',
  max_duration_s: 'maxDurationS',
  silence_timeout_s: 'silenceTimeoutS',
};

/** A request body's agent fields, each checked for its type; the agent rules are the admin's. */
function parseAgentBody(body: unknown, { creating }: { creating: boolean }): Partial<AgentInput> {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw new AppError('validation_error', 'request body must be a JSON object');
  const fields = body as Record<string, unknown>;
  const input: Partial<AgentInput> = {};
  for (const [key, value] of Object.entries(fields)) {
    const name = fieldNames[key];
    if (!name) throw new AppError('validation_error', `unknown field: ${key.slice(0, 60)}`);
    Object.assign(input, { [name]: parseField(key, value) });
  }
  if (creating)
    for (const required of ['name', 'prompt'] as const)
      if (input[required] === undefined) throw new AppError('validation_error', `${required} is required`);
  return input;
}

function parseField(key: string, value: unknown): unknown {
  const fail = (what: string): never => {
    throw new AppError('validation_error', `${key} must be ${what}`);
  };
  switch (key) {
    case 'name':
    case 'prompt':
    case 'first_message':
      return typeof value === 'string' ? value : fail('a string');
    case 'brain':
      return value === 'script' || value === 'llm' ? value : fail('"script" or "llm"');
    case 'max_duration_s':
    case 'silence_timeout_s':
      return Number.isInteger(value) ? value : fail('a whole number of seconds');
    case 'settings':
      return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : fail('an object');
    case 'script':
      return value === null || (typeof value === 'object' && !Array.isArray(value))
        ? value
        : fail('an object or null');
    case 'variables':
      if (!Array.isArray(value) || value.some((entry) => typeof entry !== 'string'))
        return fail('a list of declarations NAME[:TYPE][!][=DEFAULT]');
      return (value as string[]).map(parseVariableDeclaration);
    case 'extraction':
      if (!Array.isArray(value)) return fail('a list of {name, type, description}');
      return value.map((entry, index) => {
        const field = entry as { name?: unknown; type?: unknown; description?: unknown } | null;
        if (!field || typeof field.name !== 'string' || typeof field.type !== 'string')
          throw new AppError('validation_error', `extraction[${index}] needs a name and a type`);
        const description = typeof field.description === 'string' ? field.description : '';
        return parseExtractionField(`${field.name}:${field.type}:${description}`);
      });
    default:
      return fail('known');
  }
}

/**
 * Agents over the API (extension, issue 17's management API): create, read, list, change and
 * (de)activate, with the same checks as the dashboard and the command line.
 */
export function registerAgentRoutes(
  app: FastifyInstance,
  store: Store,
  options: { toolAllowPrivate: boolean; secretBox?: SecretBox | null } = { toolAllowPrivate: false },
): void {
  const tags = ['agents'];
  app.post(
    '/agents',
    {
      schema: {
        summary: 'Create an agent (extension)',
        operationId: 'createAgent',
        tags,
        response: { 200: agentSchema, ...errorResponses(400, 401, 429, 500) },
      },
      config: { requestBody: { ...agentRequestSchema, required: ['name', 'prompt'] } },
    },
    async (request) => {
      const accountId = authOf(request).account.id;
      const input = parseAgentBody(readJsonBody(request), { creating: true }) as AgentInput;
      checkToolUrls(input.settings, { allowPrivate: options.toolAllowPrivate });
      const agent = await createAgent(store, accountId, input, { secretBox: options.secretBox ?? null });
      request.log.info({ agentId: agent.id }, 'agent created over the API');
      return describeAgent(agent);
    },
  );

  app.get(
    '/agents',
    {
      schema: {
        summary: "List the account's agents (extension)",
        operationId: 'listAgents',
        tags,
        response: {
          200: {
            type: 'object',
            required: ['data'],
            properties: { data: { type: 'array', items: agentSchema } },
          },
          ...errorResponses(401, 429, 500),
        },
      },
    },
    async (request) => ({ data: (await store.agents.list(authOf(request).account.id)).map(describeAgent) }),
  );

  app.get<{ Params: { agent_id: string } }>(
    '/agents/:agent_id',
    {
      schema: {
        summary: 'Read an agent (extension)',
        operationId: 'getAgent',
        tags,
        params: agentIdParams,
        response: { 200: agentSchema, ...errorResponses(401, 404, 429, 500) },
      },
    },
    async (request) => {
      const agent = await store.agents.get(authOf(request).account.id, request.params.agent_id);
      if (!agent) throw new AppError('not_found', 'no such agent in this account');
      return describeAgent(agent);
    },
  );

  app.patch<{ Params: { agent_id: string } }>(
    '/agents/:agent_id',
    {
      schema: {
        summary: "Change an agent's fields (extension)",
        description: 'The fields given replace the stored ones; the others stay. Checked as a new agent is.',
        operationId: 'updateAgent',
        tags,
        params: agentIdParams,
        response: { 200: agentSchema, ...errorResponses(400, 401, 404, 429, 500) },
      },
      config: { requestBody: agentRequestSchema },
    },
    async (request) => {
      const accountId = authOf(request).account.id;
      const patch = parseAgentBody(readJsonBody(request), { creating: false });
      checkToolUrls((patch as { settings?: unknown }).settings, { allowPrivate: options.toolAllowPrivate });
      const agent = await updateAgent(store, accountId, request.params.agent_id, patch, {
        secretBox: options.secretBox ?? null,
      });
      request.log.info({ agentId: agent.id, fields: Object.keys(patch) }, 'agent changed over the API');
      return describeAgent(agent);
    },
  );

  for (const [verb, active] of [
    ['deactivate', false],
    ['activate', true],
  ] as const) {
    app.post<{ Params: { agent_id: string } }>(
      `/agents/:agent_id/${verb}`,
      {
        schema: {
          summary: active
            ? 'Activate an agent: calls can be placed with it again (extension)'
            : 'Deactivate an agent: new calls with it get 404 (extension)',
          operationId: `${verb}Agent`,
          tags,
          params: agentIdParams,
          response: { 200: agentSchema, ...errorResponses(401, 404, 429, 500) },
        },
      },
      async (request) => {
        const agent = await setAgentActive(
          store,
          authOf(request).account.id,
          request.params.agent_id,
          active,
        );
        request.log.info({ agentId: agent.id, active }, 'agent (de)activated over the API');
        return describeAgent(agent);
      },
    );
  }
}
