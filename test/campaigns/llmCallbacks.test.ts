import { describe, expect, it } from 'vitest';
import { createAgent } from '../../src/admin/agents.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import { fakeToolCallDelta } from '../../src/voice/providers/testing/fakeOpenAiServer.js';
import { jsonApi } from '../helpers/http.js';
import { startLlmTestService } from '../helpers/llmService.js';
import { eventually } from '../webhooks/harness.js';

/**
 * The llm agent's schedule_callback through the fake OpenAI server and the sandbox: the model
 * passes the callee's local time, gets back what was scheduled, and the campaign contact waits for
 * it (`waiting_reason: "callback"`).
 */
function toolCall(index: number, name: string, localTime?: string) {
  const args = localTime ? JSON.stringify({ local_time: localTime }) : '{}';
  return {
    tool_calls: [{ index, id: `call_${name}`, type: 'function', function: { name, arguments: args } }],
  };
}

describe('schedule_callback from an llm agent', () => {
  it.each([
    ['answered, then the model confirms', false],
    ['asked for with the goodbye (end_call in the same reply)', true],
  ])(
    'schedules the local time the model passes: %s',
    async (_name, withGoodbye) => {
      const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
      const toolAnswers: string[] = [];
      const llm = await startLlmTestService({
        chatStreamFor: ({ messages }) => {
          const last = messages.at(-1);
          if (last?.role === 'tool') {
            toolAnswers.push(String(last.content));
            return [
              { delta: { content: 'Talk to you then.' } },
              fakeToolCallDelta('end_call', '{}', 'call_end'),
            ];
          }
          return last?.role === 'user'
            ? [
                { delta: { content: 'Sure.' } },
                ...(withGoodbye
                  ? [
                      // Both in one reply: two tool calls of one assistant message.
                      { delta: toolCall(0, 'schedule_callback', `${tomorrow}T16:00`) },
                      { delta: toolCall(1, 'end_call'), finishReason: 'tool_calls' },
                    ]
                  : [
                      fakeToolCallDelta(
                        'schedule_callback',
                        JSON.stringify({ local_time: `${tomorrow}T16:00` }),
                        'call_cb',
                      ),
                    ]),
              ]
            : [{ delta: { content: 'Hello, is now a good time?' }, finishReason: 'stop' }];
        },
      });
      try {
        const agent = await createAgent(llm.service.store, llm.accountId, {
          name: 'Caller back',
          prompt: 'You call about an appointment.',
          brain: 'llm',
          settings: { llm: { model: 'test-model' } },
          maxDurationS: 8,
        });
        await addPhoneNumber(llm.service.store, llm.accountId, '+15550009986');
        const api = jsonApi(
          () => llm.service.url,
          () => llm.key,
        );
        const created = await api('/campaigns', {
          method: 'POST',
          body: {
            agent_id: agent.id,
            from_number: '+15550009986',
            calling_window: { start: '00:00', end: '23:59' },
            time_zone: 'UTC',
            contacts: [{ to_number: `+1555010000176${withGoodbye ? 2 : 1}`, time_zone: 'UTC' }],
          },
        });
        expect(created.status).toBe(201);
        const campaignId = (created.body as { campaign_id: string }).campaign_id;
        const contact = await eventually(
          async () => {
            const [now] = (
              (await api(`/campaigns/${campaignId}/contacts`)).body as {
                data: { state: string; waiting_reason: string | null; next_attempt_at: string | null }[];
              }
            ).data;
            return now?.state === 'retry_wait' ? now : undefined;
          },
          40_000,
          'the contact waiting for its callback',
        );
        expect(contact).toMatchObject({
          waiting_reason: 'callback',
          next_attempt_at: `${tomorrow}T16:00:00.000Z`,
        });
        if (!withGoodbye)
          expect(JSON.parse(toolAnswers[0] ?? '{}')).toEqual({
            scheduled: true,
            callback_local_time: `${tomorrow}T16:00`,
          });
      } finally {
        await llm.dispose();
      }
    },
    60_000,
  );
});
