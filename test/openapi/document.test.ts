import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callCompletedEventSchema } from '../../src/api/webhookSchemas.js';
import { errorStatusByCode } from '../../src/domain/errors.js';
import { optionalEventTypes } from '../../src/domain/statusEvents.js';
import { request } from '../helpers/http.js';
import { OpenApiResponseChecker } from '../helpers/openApiCheck.js';
import { startTestService, type TestService } from '../helpers/service.js';

type Json = Record<string, unknown>;
type Operation = {
  operationId: string;
  security?: unknown[];
  requestBody?: { content: Record<string, { schema: Json }> };
  responses: Record<
    string,
    { headers?: Record<string, unknown>; content?: Record<string, { schema: Json }> }
  >;
};

let service: TestService;
let document: Json;

function operations(): Array<{ path: string; method: string; operation: Operation }> {
  const found: Array<{ path: string; method: string; operation: Operation }> = [];
  for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, Operation>>)) {
    for (const [method, operation] of Object.entries(item)) found.push({ path, method, operation });
  }
  return found;
}

beforeAll(async () => {
  service = await startTestService();
  document = (await request(`${service.url}/v1/openapi.json`)).body as Json;
});

afterAll(async () => {
  await service.close();
});

describe('GET /v1/openapi.json', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(document);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('the validator refuses a broken document (the check can fail)', async () => {
    const broken = structuredClone(document);
    (broken.paths as Record<string, Json>)['/v1/calls'] = { get: { responses: 'none' } };
    expect((await new Validator().validate(broken)).valid).toBe(false);
  });

  it('describes every operation, the specified one and the extensions', () => {
    const ids = operations()
      .map(({ operation }) => operation.operationId)
      .sort();
    expect(ids).toEqual(
      [
        'cancelCall',
        'createCredential',
        'createOutboundCall',
        'deleteCredential',
        'getCall',
        'getCallRecording',
        'getEvent',
        'getOpenApiDocument',
        'getReferencePage',
        'health',
        'listCalls',
        'listCredentials',
        'listEvents',
        'ready',
        // Re-running an ended call's analysis (issue 35).
        'reanalyzeCall',
        'resendEvent',
        'testCredential',
        // The management API and the do-not-call list (issue 17).
        'activateAgent',
        'addDoNotCall',
        'addNumber',
        'createAgent',
        'deactivateAgent',
        'getAgent',
        'getDoNotCall',
        'getWebhook',
        'listAgents',
        'listDoNotCall',
        'listNumbers',
        'removeDoNotCall',
        'removeNumber',
        'rotateWebhookSecret',
        // Inbound calls (issue 40).
        'setNumberInbound',
        'setWebhook',
        'setWebhookEvents',
        'updateAgent',
        // Campaigns (issue 17).
        'cancelCampaign',
        'createCampaign',
        'getCampaign',
        'listCampaignContacts',
        'listCampaigns',
        'pauseCampaign',
        'resumeCampaign',
        // Live edits, results export and figures (issue 37).
        'updateCampaign',
        'addCampaignContacts',
        'removeCampaignContacts',
        'exportCampaignResults',
        'getCampaignFigures',
        // Caps by caller ID and trunk, and data rules (issue 17).
        'listDialRates',
        'setDialRate',
        'getQuietHours',
        'setQuietHours',
        'eraseNumber',
        'getRetention',
        'listAuditLog',
        'setRetention',
        // Agent tests and replays (issue 19).
        'getAgentTestRun',
        'getCallScenario',
        'listAgentTestRuns',
        'runAgentTests',
        // An agent's hold audio file (issue 35).
        'deleteAgentHoldAudio',
        'putAgentHoldAudio',
        // Web calls (issue 39).
        'connectWebCall',
        'createWebCall',
        // The origins a web call's page may connect from (issue 39).
        'getWebCallOrigins',
        'setWebCallOrigins',
        ...(ids.includes('metrics') ? ['metrics'] : []),
      ].sort(),
    );
  });

  it('every /v1 operation with a key declares 401, 429 and 500, with only the codes of each status', () => {
    for (const { path, operation } of operations()) {
      if (!path.startsWith('/v1') || operation.security?.length === 0) continue;
      expect(Object.keys(operation.responses), operation.operationId).toEqual(
        expect.arrayContaining(['401', '429', '500']),
      );
      for (const [status, response] of Object.entries(operation.responses)) {
        if (status.startsWith('2')) continue;
        const error = response.content?.['application/json']?.schema as {
          properties: { error: { properties: { code: { enum: string[] } } } };
          examples: unknown[];
        };
        const codes = Object.entries(errorStatusByCode)
          .filter(([, codeStatus]) => String(codeStatus) === status)
          .map(([code]) => code);
        expect(error.properties.error.properties.code.enum, `${operation.operationId} ${status}`).toEqual(
          codes,
        );
        expect(error.examples.length).toBeGreaterThan(0);
        expect(response.headers).toHaveProperty('RateLimit');
        expect(response.headers).toHaveProperty('RateLimit-Policy');
        expect(response.headers).toHaveProperty('X-Request-Id');
        if (status === '429') expect(response.headers).toHaveProperty('Retry-After');
      }
    }
    const create = (document.paths as Record<string, Record<string, Operation>>)['/v1/calls/outbound']?.post;
    expect(Object.keys(create?.responses ?? {})).toEqual(['200', '400', '401', '404', '422', '429', '500']);
    const cancel = (document.paths as Record<string, Record<string, Operation>>)['/v1/calls/{call_id}/cancel']
      ?.post;
    expect(Object.keys(cancel?.responses ?? {})).toEqual(expect.arrayContaining(['409', '503']));
    const headers = (document.components as { headers: Record<string, { required?: boolean }> }).headers;
    expect(Object.keys(headers).sort()).toEqual([
      'RateLimit',
      'RateLimit-Policy',
      'Retry-After',
      'X-Request-Id',
    ]);
    expect(headers['Retry-After']?.required).toBe(true);
  });

  it('carries examples for the request body and the success responses', () => {
    const create = (document.paths as Record<string, Record<string, Operation>>)['/v1/calls/outbound']?.post;
    expect(create?.requestBody?.content['application/json']?.schema.examples).toHaveLength(1);
    expect(create?.responses['200']?.content?.['application/json']?.schema.examples).toHaveLength(1);
    const getCall = (document.paths as Record<string, Record<string, Operation>>)['/v1/calls/{call_id}']?.get;
    expect(getCall?.responses['200']?.content?.['application/json']?.schema.examples).toHaveLength(1);
  });

  it('describes the call.completed webhook: payload schema, example and Standard Webhooks headers', () => {
    const webhook = (document.webhooks as Record<string, { post: Json }>)['call.completed']?.post as {
      parameters: Array<{ name: string; in: string; required: boolean }>;
      requestBody: { content: Record<string, { schema: Json }> };
    };
    expect(webhook.parameters.map((p) => [p.name, p.in, p.required])).toEqual([
      ['webhook-id', 'header', true],
      ['webhook-timestamp', 'header', true],
      ['webhook-signature', 'header', true],
    ]);
    expect(webhook.requestBody.content['application/json']?.schema).toEqual(
      JSON.parse(JSON.stringify(callCompletedEventSchema)),
    );
  });
});

describe('the opt-in status events under webhooks', () => {
  it('has each one with the signing headers, a schema and an example that the schema accepts', () => {
    const checker = new OpenApiResponseChecker(document);
    const webhooks = document.webhooks as Record<string, { post: Json }>;
    expect(Object.keys(webhooks).sort()).toEqual([
      'call.answered',
      'call.completed',
      'call.ringing',
      'call.transferred',
      'campaign.canceled',
      'campaign.completed',
      'campaign.paused',
      'number.rested',
    ]);
    for (const type of optionalEventTypes) {
      const post = webhooks[type]?.post as {
        operationId: string;
        parameters: Array<{ name: string }>;
        requestBody: { content: Record<string, { schema: { examples: unknown[] } }> };
      };
      expect(post.parameters.map((p) => p.name)).toEqual([
        'webhook-id',
        'webhook-timestamp',
        'webhook-signature',
      ]);
      const examples = post.requestBody.content['application/json']?.schema.examples ?? [];
      expect(examples).toHaveLength(1);
      expect(checker.checkWebhookBody(examples[0])).toEqual([]);
      // A body of another type, or without its data, is refused.
      expect(checker.checkWebhookBody({ ...(examples[0] as object), data: {} })).not.toEqual([]);
    }
    expect(checker.checkWebhookBody({ type: 'call.unknown' })).toEqual([
      'no webhook call.unknown in the document',
    ]);
  });
});

describe('GET /docs', () => {
  it('renders every operation and the webhook into one self-contained page', async () => {
    const page = await request(`${service.url}/docs`);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['content-security-policy']).toBe("default-src 'none'; style-src 'unsafe-inline'");
    for (const { path, operation } of operations()) {
      expect(page.text).toContain(operation.operationId);
      expect(page.text).toContain(path.replace(/&/g, '&amp;'));
    }
    expect(page.text).toContain('callCompletedWebhook');
    for (const operationId of [
      'callRingingWebhook',
      'callAnsweredWebhook',
      'callTransferredWebhook',
      'campaignCompletedWebhook',
    ])
      expect(page.text).toContain(operationId);
    expect(page.text).toContain('webhook-signature');
    expect(page.text).toContain('invalid_phone');
    // Nothing is loaded from anywhere: no scripts, no external stylesheets, images or fonts.
    expect(page.text).not.toMatch(/<script|<link|<img|@import|url\(/i);
    expect(page.text).not.toMatch(/\b(src|href)="(https?:)?\/\//i);
  });
});

describe('the response checker used by the test helpers', () => {
  it('refuses an undeclared status, a body off its schema and a 429 without Retry-After', () => {
    const checker = new OpenApiResponseChecker(document);
    const json = { 'content-type': 'application/json; charset=utf-8' };
    const ok = checker.check({
      method: 'GET',
      path: '/v1/calls/call_x',
      status: 404,
      headers: json,
      text: '{"error":{"code":"not_found","message":"call call_x not found"}}',
    });
    expect(ok).toEqual([]);
    expect(
      checker.check({ method: 'GET', path: '/v1/calls', status: 409, headers: json, text: '{}' })[0],
    ).toMatch(/not declared/);
    expect(
      checker.check({
        method: 'GET',
        path: '/v1/calls/call_x',
        status: 404,
        headers: json,
        text: '{"error":{"code":"invalid_phone","message":"x"}}',
      })[0],
    ).toMatch(/code/);
    expect(
      checker.check({
        method: 'POST',
        path: '/v1/calls/outbound',
        status: 429,
        headers: json,
        text: '{"error":{"code":"rate_limited","message":"slow down"}}',
      }),
    ).toEqual(['POST /v1/calls/outbound → 429: required header Retry-After is missing']);
    expect(
      checker.check({ method: 'PUT', path: '/v1/calls', status: 200, headers: json, text: '{}' })[0],
    ).toMatch(/unrouted/);
  });

  it('makes the request helper fail on a response that does not conform', async () => {
    let server: Server | undefined;
    try {
      server = createServer((req, res) => {
        res.setHeader('content-type', 'application/json');
        res.end(req.url === '/v1/openapi.json' ? JSON.stringify(document) : '{"data":"not a list"}');
      });
      await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      await expect(request(`http://127.0.0.1:${port}/v1/calls`)).rejects.toThrow(/does not conform/);
    } finally {
      await new Promise((resolve) => server?.close(resolve));
    }
  });
});
