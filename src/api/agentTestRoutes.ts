import type { FastifyInstance } from 'fastify';
import { startTestRun, testRunReport } from '../agentTests/testRuns.js';
import { scenarioFromCall } from '../domain/callReplay.js';
import { AppError } from '../domain/errors.js';
import { scenarioJsonSchema, scenarioLimits } from '../domain/scenarios.js';
import type { Store } from '../store/types.js';
import { authOf } from './auth.js';
import { readJsonBody } from './jsonBody.js';
import { errorResponses } from './schemas.js';

const freeObject = { type: 'object', additionalProperties: true } as const;
const nullableInteger = { type: ['integer', 'null'] } as const;

const transcriptSchema = {
  type: 'array',
  items: {
    type: 'object',
    properties: {
      role: { type: 'string' },
      text: { type: 'string' },
      start_ms: { type: 'number' },
      end_ms: { type: 'number' },
      event: { type: 'string' },
    },
  },
} as const;

const turnSideSchema = {
  type: ['object', 'null'],
  properties: {
    callee_text: { type: 'string' },
    latency_ms: nullableInteger,
    wait_ms: { ...nullableInteger, description: 'The end-of-turn wait the agent chose for this turn' },
    agent_text: { type: 'string' },
    agent_interrupted: { type: 'boolean' },
    dead_air_ms: { type: 'integer' },
    understood: {
      type: ['string', 'null'],
      description:
        'What a script agent understood of the turn: the step, the option that matched (or none) and why',
    },
  },
} as const;

const diffSchema = {
  type: 'object',
  description: "A replay's turn-by-turn comparison with the call it replays.",
  properties: {
    before_call_id: { type: 'string' },
    after_call_id: { type: 'string' },
    summary: { type: 'array', items: { type: 'string' } },
    turns: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          turn: { type: 'integer' },
          before: turnSideSchema,
          after: turnSideSchema,
          changes: { type: 'array', items: { type: 'string' } },
        },
      },
    },
    data: {
      type: 'array',
      items: { type: 'object', properties: { field: { type: 'string' }, before: {}, after: {} } },
    },
  },
} as const;

const rate = {
  type: ['number', 'null'],
  description: 'passed ÷ (passed + failed); null while none ended',
} as const;

const testRunSchema = {
  type: 'object',
  required: ['id', 'agent_id', 'status', 'created_at', 'summary', 'scenarios', 'results'],
  properties: {
    id: { type: 'string', examples: ['trn_01JF3Z8V0Q4T7N5W2X9Y6B1C3D'] },
    agent_id: { type: 'string' },
    status: { type: 'string', enum: ['running', 'completed'] },
    created_at: { type: 'string', format: 'date-time' },
    replay_of: { type: ['string', 'null'] },
    summary: {
      type: 'object',
      properties: {
        total: { type: 'integer' },
        passed: { type: 'integer' },
        failed: { type: 'integer' },
        running: { type: 'integer' },
        pass_rate: rate,
      },
    },
    scenarios: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          name: { type: 'string' },
          runs: { type: 'integer' },
          passed: { type: 'integer' },
          failed: { type: 'integer' },
          pass_rate: rate,
        },
      },
    },
    results: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          scenario: { type: 'string' },
          repeat: { type: 'integer' },
          call_id: { type: 'string' },
          status: { type: 'string', enum: ['running', 'passed', 'failed'] },
          failures: { type: 'array', items: { type: 'string' }, description: 'Why it failed, one line each' },
          call_status: { type: ['string', 'null'] },
          end_reason: { type: ['string', 'null'] },
          duration_s: { type: ['number', 'null'] },
          max_latency_ms: nullableInteger,
          transcript: transcriptSchema,
          diff: diffSchema,
        },
      },
    },
  },
} as const;

const testRunRequestSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'Either `scenarios` or `replay_of`.',
  properties: {
    scenarios: {
      type: 'array',
      minItems: 1,
      maxItems: scenarioLimits.scenariosPerRunMax,
      items: { ...scenarioJsonSchema, $id: undefined },
    },
    replay_of: {
      type: 'string',
      description: 'A completed call of this agent to replay from its recording.',
    },
    repeat: { type: 'integer', minimum: 1, maximum: scenarioLimits.repeatMax, default: 1 },
    from_number: {
      type: 'string',
      description: "A sandbox number of the account (default: the account's first).",
    },
    agent_overrides: {
      type: 'object',
      additionalProperties: false,
      description: "What this run's calls alone run with: merged over the agent, which is not changed.",
      properties: {
        prompt: { type: 'string', maxLength: 20_000 },
        settings: freeObject,
        script: { ...freeObject, description: "A script agent's dialog script, instead of its own" },
      },
    },
  },
} as const;

const agentIdParams = {
  type: 'object',
  required: ['agent_id'],
  properties: { agent_id: { type: 'string', maxLength: 100 } },
} as const;

/**
 * Agent tests (extension, docs/testing.md): run scenarios against an agent, each a real sandbox
 * call; read a run's results; turn a completed call into a scenario that replays it.
 */
export function registerAgentTestRoutes(
  app: FastifyInstance,
  store: Store,
  options: { vendorConfigured: (provider: string) => boolean },
): void {
  const tags = ['agent tests'];
  app.post<{ Params: { agent_id: string } }>(
    '/agents/:agent_id/tests',
    {
      bodyLimit: 2 * 1024 * 1024,
      schema: {
        summary: 'Run test scenarios against an agent, each a sandbox call (extension)',
        description:
          'Starts a run and answers at once; read it with getAgentTestRun until `status` is `completed`. Nothing is dialled unless every scenario is valid.',
        operationId: 'runAgentTests',
        tags,
        params: agentIdParams,
        response: { 201: testRunSchema, ...errorResponses(400, 401, 404, 429, 500) },
      },
      config: { requestBody: testRunRequestSchema },
    },
    async (request, reply) => {
      const caller = authOf(request);
      const report = await startTestRun(
        store,
        { account: caller.account, apiKeyId: caller.apiKeyId },
        request.params.agent_id,
        readJsonBody(request),
        { vendorConfigured: options.vendorConfigured },
      );
      request.log.info({ runId: report.id, calls: report.summary.total }, 'agent test run started');
      return reply.code(201).send(report);
    },
  );

  app.get<{ Params: { agent_id: string } }>(
    '/agents/:agent_id/tests',
    {
      schema: {
        summary: "List an agent's latest test runs (extension)",
        operationId: 'listAgentTestRuns',
        tags,
        params: agentIdParams,
        response: {
          200: {
            type: 'object',
            required: ['data'],
            properties: {
              data: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: {
                    id: { type: 'string' },
                    created_at: { type: 'string', format: 'date-time' },
                    calls: { type: 'integer' },
                    replay_of: { type: ['string', 'null'] },
                  },
                },
              },
            },
          },
          ...errorResponses(401, 404, 429, 500),
        },
      },
    },
    async (request) => {
      const accountId = authOf(request).account.id;
      const agent = await store.agents.get(accountId, request.params.agent_id);
      if (!agent) throw new AppError('not_found', 'no such agent in this account');
      const runs = await store.agentTests.listRuns(accountId, agent.id, 50);
      return {
        data: runs.map((run) => ({
          id: run.runId,
          created_at: run.createdAt,
          calls: run.calls,
          replay_of: run.replayOf,
        })),
      };
    },
  );

  app.get<{ Params: { agent_id: string; run_id: string } }>(
    '/agents/:agent_id/tests/:run_id',
    {
      schema: {
        summary: 'Read a test run: each scenario passed, failed (and why) or still running (extension)',
        operationId: 'getAgentTestRun',
        tags,
        params: {
          type: 'object',
          required: ['agent_id', 'run_id'],
          properties: {
            agent_id: { type: 'string', maxLength: 100 },
            run_id: { type: 'string', maxLength: 100 },
          },
        },
        response: { 200: testRunSchema, ...errorResponses(401, 404, 429, 500) },
      },
    },
    async (request) =>
      testRunReport(store, authOf(request).account.id, request.params.agent_id, request.params.run_id),
  );

  app.get<{ Params: { call_id: string } }>(
    '/calls/:call_id/scenario',
    {
      schema: {
        summary: "A scenario that replays a completed call's callee from its recording (extension)",
        operationId: 'getCallScenario',
        tags,
        params: {
          type: 'object',
          required: ['call_id'],
          properties: { call_id: { type: 'string', maxLength: 100 } },
        },
        response: { 200: freeObject, ...errorResponses(400, 401, 404, 429, 500) },
      },
    },
    async (request) => {
      const call = await store.calls.get(authOf(request).account.id, request.params.call_id);
      if (!call) throw new AppError('not_found', `call ${request.params.call_id} does not exist`);
      return scenarioFromCall(call);
    },
  );
}
