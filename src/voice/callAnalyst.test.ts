import { describe, expect, it } from 'vitest';
import { createLogger } from '../logger.js';
import { LlmBrain } from './brains/llmBrain.js';
import { analyzeCall, scriptAnalysis } from './callAnalyst.js';
import { OpenAiChatClient } from './providers/index.js';
import { startFakeOpenAiServer } from './providers/testing/fakeOpenAiServer.js';

const schema = {
  type: 'object',
  properties: { outcome: { type: 'string', enum: ['confirmed', 'declined'] } },
  required: ['outcome'],
};
const settings = { dataSchema: schema, summary: false, successRubric: null };

describe('scriptAnalysis', () => {
  it("passes a script's data that fits the schema", () => {
    expect(scriptAnalysis({ outcome: 'confirmed' }, settings)).toEqual({
      data: { outcome: 'confirmed' },
      analysis: { status: 'completed', reason: null, summary: null, success: null },
    });
  });

  it('reports data that does not fit as failed, without the data', () => {
    const result = scriptAnalysis({}, settings);
    expect(result.data).toEqual({});
    expect(result.analysis).toMatchObject({ status: 'failed' });
    expect(result.analysis.reason).toMatch(/must have required property 'outcome'/);
  });
});

describe('analyzeCall', () => {
  it('skips a call without the callee, and reports a model that fails as a failed analysis', async () => {
    const server = await startFakeOpenAiServer({ apiKey: 'sk-a' });
    try {
      const chat = new OpenAiChatClient({
        endpoint: { baseUrl: server.baseUrl, apiKey: 'sk-a' },
        model: 'm',
      });
      const brain = new LlmBrain(chat, {
        systemPrompt: 'p',
        firstMessage: null,
        extraction: [{ name: 'confirmed', type: 'boolean', description: 'd' }],
        logger: createLogger('silent'),
      });
      const logger = createLogger('silent');
      await expect(analyzeCall(brain, [{ role: 'agent', text: 'Hello?' }], logger)).resolves.toMatchObject({
        data: {},
        analysis: { status: 'skipped', reason: 'the callee never spoke' },
      });
      expect(server.requests).toHaveLength(0);
      server.script.nextFailure = { status: 500, body: '{"error":{"message":"overloaded"}}' };
      const failed = await analyzeCall(brain, [{ role: 'callee', text: '1', event: 'dtmf' }], logger);
      expect(failed).toMatchObject({ data: {}, analysis: { status: 'failed' } });
      expect(failed.analysis.reason).toMatch(/^the analysis failed: .*500/);
    } finally {
      await server.close();
    }
  });

  it('gives up on a model that hangs after the configured analysis timeout (issue 35)', async () => {
    // The model answers after 20 s; the operator allows 300 ms.
    const server = await startFakeOpenAiServer({ responseDelayMs: 20_000 });
    try {
      const chat = new OpenAiChatClient({ endpoint: { baseUrl: server.baseUrl }, model: 'm' });
      const brain = new LlmBrain(chat, {
        systemPrompt: 'p',
        firstMessage: null,
        extraction: [{ name: 'confirmed', type: 'boolean', description: 'd' }],
        logger: createLogger('silent'),
        analysisTimeoutMs: 300,
      });
      const startedAt = performance.now();
      const result = await analyzeCall(brain, [{ role: 'callee', text: 'yes' }], createLogger('silent'));
      expect(performance.now() - startedAt).toBeLessThan(10_000);
      expect(result).toMatchObject({ data: {}, analysis: { status: 'failed' } });
      expect(result.analysis.reason).toMatch(/no answer within 300 ms/);
    } finally {
      await server.close();
    }
  }, 30_000);
});
