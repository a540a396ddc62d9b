import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, parseVariableDeclaration } from '../../src/admin/agents.js';
import { addPhoneNumber } from '../../src/admin/numbers.js';
import type { CallRecord } from '../../src/domain/records.js';
import { InbandDtmfDetector } from '../../src/telephony/rtp/index.js';
import {
  type FakeChatDelta,
  type FakeOpenAiServer,
  fakeToolCallDelta,
} from '../../src/voice/providers/testing/fakeOpenAiServer.js';
import { type startFullService, waitForTerminal } from '../helpers/fullService.js';
import { postCall } from '../helpers/http.js';
import { startLlmTestService } from '../helpers/llmService.js';
import { calleeChannel, loudFrames } from '../helpers/recordings.js';

/**
 * Phone menus: the sandbox's IVR persona (+15550100013) plays "for sales press one, for support
 * press two" until it hears 2. An llm agent (the model a fake of OpenAI's chat protocol, the
 * speech recogniser a fake of its transcription endpoint) that presses 2 gets through — the menu
 * says goodbye and hangs up; one that never presses the right key hears the same prompt again and
 * again, and the call ends `ivr_loop` instead of running to its maximum duration.
 */

const menu = 'For sales, press one. For support, press two.';
let fake: FakeOpenAiServer;
let service: Awaited<ReturnType<typeof startFullService>>;
let key: string;
let accountId: string;
let agentId: string;
let offlineAgentId: string;

function playModel({ messages }: { messages: Array<Record<string, unknown>> }): FakeChatDelta[] {
  const mode = /Case: (\w+)/.exec(String(messages[0]?.content ?? ''))?.[1];
  if (messages.at(-1)?.role !== 'user' || mode !== 'navigate')
    return [{ delta: { content: '' }, finishReason: 'stop' }];
  return [fakeToolCallDelta('send_dtmf', '{"digits":"2"}', 'call_keys')];
}

beforeAll(async () => {
  ({ fake, service, key, accountId } = await startLlmTestService({
    transcriptionText: menu,
    chatStreamFor: playModel,
  }));
  agentId = (
    await createAgent(service.store, accountId, {
      name: 'Menu walker',
      prompt: 'You reach support through phone menus. Case: {{mode}}',
      variables: ['mode'].map(parseVariableDeclaration),
      brain: 'llm',
      settings: {
        llm: { model: 'test-model' },
        stt: { provider: 'openai' },
        ivr: { max_prompt_repeats: 2 },
        // A phone menu's prompt is a recording too: only a beep may end this call as a machine.
        voicemail: { detection: 'beep' },
        turn_taking: { wait_for_callee: true },
      },
      maxDurationS: 40,
    })
  ).id;
  offlineAgentId = (
    await createAgent(service.store, accountId, {
      name: 'Menu walker, offline ears',
      prompt: 'You reach support through phone menus. Case: {{mode}}',
      variables: ['mode'].map(parseVariableDeclaration),
      brain: 'llm',
      settings: {
        llm: { model: 'test-model' },
        // The offline recogniser: each hearing of the same recording comes out a little different.
        ivr: { max_prompt_repeats: 3 },
        voicemail: { detection: 'beep' },
        turn_taking: { wait_for_callee: true },
      },
      maxDurationS: 50,
    })
  ).id;
  await addPhoneNumber(service.store, accountId, '+15550009994');
});

afterAll(async () => {
  await service?.dispose();
  await fake?.close();
});

async function callMenu(mode: string, to = '+15550100013', agent = agentId): Promise<CallRecord> {
  const result = await postCall(service.url, key, {
    agent_id: agent,
    from_number: '+15550009994',
    to_number: to,
    variables: { mode },
  });
  expect(result.status).toBe(200);
  return waitForTerminal(service, (result.body as { call_id: string }).call_id, 45_000);
}

describe('phone menus', () => {
  it('gets through by pressing the key the menu asks for (RFC 4733), and the menu connects', async () => {
    const call = await callMenu('navigate');
    expect(call).toMatchObject({ status: 'completed', endReason: 'callee_hangup' });
    const keys = call.transcript.filter((entry) => entry.event === 'dtmf');
    expect(keys).toEqual([expect.objectContaining({ role: 'agent', text: '2' })]);
  }, 50_000);

  it('gets through a menu on a line without RFC 4733 by pressing the key as tones', async () => {
    const call = await callMenu('navigate', '+15550100017');
    expect(call).toMatchObject({ status: 'completed', endReason: 'callee_hangup' });
    const keys = call.transcript.filter((entry) => entry.event === 'dtmf');
    expect(keys).toEqual([expect.objectContaining({ role: 'agent', text: '2' })]);
    // The key is in the agent's audio (right channel of the recording), as the menu heard it.
    const wav = readFileSync(call.recordingPath as string);
    const tones = new InbandDtmfDetector();
    let heard = '';
    for (let offset = 44; offset + 640 <= wav.length; offset += 640) {
      const frame = new Int16Array(160);
      for (let i = 0; i < 160; i++) frame[i] = wav.readInt16LE(offset + i * 4 + 2);
      heard += tones.push(frame) ?? '';
    }
    expect(heard).toBe('2');
  }, 50_000);

  it('ends with ivr_loop when the same prompt keeps coming back', async () => {
    const call = await callMenu('stuck');
    expect(call).toMatchObject({ status: 'completed', endReason: 'ivr_loop' });
    const prompts = call.transcript.filter((entry) => entry.role === 'callee' && entry.text === menu);
    expect(prompts).toHaveLength(2);
    expect(call.transcript.some((entry) => entry.event === 'dtmf')).toBe(false);
  }, 50_000);

  it('ends with ivr_loop at the configured count when the offline recogniser hears the menu (issue 35)', async () => {
    const call = await callMenu('stuck', '+15550100013', offlineAgentId);
    expect(call).toMatchObject({ status: 'completed', endReason: 'ivr_loop' });
    // The recording holds the menu exactly 3 times (bursts of sound 1.5 s apart or more), not 4 to 7.
    const callee = calleeChannel(readFileSync(call.recordingPath as string));
    let plays = 0;
    let quietMs = Number.POSITIVE_INFINITY;
    for (let at = 0; at + 160 <= callee.length; at += 160) {
      const loud = loudFrames(callee.subarray(at, at + 160)) > 0;
      if (loud && quietMs >= 1_500) plays++;
      quietMs = loud ? 0 : quietMs + 20;
    }
    expect(plays).toBe(3);
    expect(call.transcript.filter((entry) => entry.role === 'callee' && !entry.event).length).toBeGreaterThan(
      0,
    );
  }, 70_000);
});
