import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/admin/agents.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import type { CallRecord } from '../../src/domain/records.js';
import { speechLikeTone } from '../../src/telephony/sandbox/index.js';
import { fakeToolCallDelta } from '../../src/voice/providers/testing/fakeOpenAiServer.js';
import { waitForTerminal } from '../helpers/fullService.js';
import { postCall } from '../helpers/http.js';
import { startLlmTestService } from '../helpers/llmService.js';
import { heardOnTheLine } from '../helpers/recordingSilences.js';

/**
 * Issue 33: a reply's first clause ("Okay,") is voiced as soon as the model has written it, while
 * the model still writes the rest of its sentence — the callee hears the agent one voice request
 * earlier. The sentence stays one line of the transcript and one turn of the model's history.
 *
 * The model here writes "Okay," and then waits 1.5 s before the rest: a reply voiced sentence by
 * sentence would be silent for those 1.5 s, this one is not.
 */

const restDelayMs = 1_500;
let test: Awaited<ReturnType<typeof startLlmTestService>>;
let agentId: string;

beforeAll(async () => {
  test = await startLlmTestService({
    speechSamples: speechLikeTone(500),
    speechSampleRateHz: 8000,
    chatStreamDeltas: [
      { delta: { role: 'assistant', content: 'Okay,' } },
      { delta: { content: ' thank you for holding.' } },
      { delta: { content: ' Goodbye!' } },
      { ...fakeToolCallDelta('end_call'), finishReason: 'tool_calls' },
    ],
    chatDeltaIntervalMs: restDelayMs,
  });
  agentId = (
    await createAgent(test.service.store, test.accountId, {
      name: 'First clause',
      prompt: 'You thank the callee and say goodbye.',
      brain: 'llm',
      settings: { tts: { provider: 'openai', model: 'tts-1' }, llm: { model: 'test-model' } },
      maxDurationS: 30,
    })
  ).id;
  await addPhoneNumber(test.service.store, test.accountId, '+15550009999');
}, 60_000);

afterAll(async () => {
  await test?.dispose();
});

describe("a reply's first clause", () => {
  it('is heard before the model has written the rest of its sentence, and kept as one line', async () => {
    const created = await postCall(test.service.url, test.key, {
      agent_id: agentId,
      from_number: '+15550009999',
      to_number: '+15550100007',
    });
    expect(created.status).toBe(200);
    const call: CallRecord = await waitForTerminal(
      test.service,
      (created.body as { call_id: string }).call_id,
      40_000,
    );
    expect(call.status).toBe('completed');

    // The voice was asked for the clause alone, then for the rest of its sentence.
    const voiced = test.fake.requests
      .filter((request) => request.path.endsWith('/audio/speech'))
      .map((request) => (request.json as { input: string }).input);
    expect(voiced).toEqual(['Okay,', 'thank you for holding.', 'Goodbye!']);

    // The transcript keeps the sentence whole, as it was said.
    const agentLines = call.transcript.filter((line) => line.role === 'agent' && !line.event);
    expect(agentLines.map((line) => line.text)).toEqual(['Okay, thank you for holding.', 'Goodbye!']);

    // On the recording: the agent is heard well before the rest of the sentence was written (the
    // model started at the answer; the rest came 1.5 s later).
    const heard = heardOnTheLine(call.recordingPath as string);
    expect(heard.firstAgentSoundMs).not.toBeNull();
    expect(heard.firstAgentSoundMs!).toBeLessThan(restDelayMs - 300);
    // The rest followed the clause: agent sound again after the rest was written.
    expect(heard.agentSoundAfter(restDelayMs)).not.toBeNull();
  }, 60_000);
});
