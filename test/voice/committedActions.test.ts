import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TransferResult } from '../../src/telephony/sip/index.js';
import { LlmBrain } from '../../src/voice/brains/llmBrain.js';
import {
  FliteTextToSpeech,
  OpenAiChatClient,
  PocketsphinxSpeechToText,
} from '../../src/voice/providers/index.js';
import {
  type FakeChatDelta,
  type FakeOpenAiServer,
  fakeToolCallDelta,
  startFakeOpenAiServer,
} from '../../src/voice/providers/testing/fakeOpenAiServer.js';
import { conversationPair, sleep, synthesizeWhole } from '../helpers/conversationPair.js';

/**
 * Actions the model chose are carried out whatever the callee does while the agent announces them
 * (issue 35, defects 1 and 6): a transfer announced in a long sentence still happens when the
 * callee talks over it or presses a key, and a goodbye that carries end_call is heard to its end
 * before the line drops. The real pipeline (fvad, pocketsphinx, flite, paced RTP on loopback) and
 * the model as a fake of OpenAI's chat protocol.
 */

const logger = pino({ level: 'silent' });
let flite: FliteTextToSpeech;
let sphinx: PocketsphinxSpeechToText;
let fake: FakeOpenAiServer;

const transferSentence =
  'Of course. I am transferring you now to one of our people, who will be able to help you with all of this, so please stay on the line.';
const goodbyeSentence =
  'Thank you so much for your time today, we look forward to seeing you on Tuesday at ten. Goodbye.';
const talkOver = 'wait a moment please I have one more question about my appointment on Tuesday';

/** The model: a key or words → the transfer (or the goodbye with end_call); later turns → "please hold". */
function playModel({ messages }: { messages: Array<Record<string, unknown>> }): FakeChatDelta[] {
  const system = String(messages[0]?.content ?? '');
  const spokenTo = messages.filter((message) => message.role === 'user').length;
  if (spokenTo === 1) {
    if (system.includes('Goodbye agent'))
      return [{ delta: { content: goodbyeSentence } }, fakeToolCallDelta('end_call', '{}', 'call_end')];
    return [
      { delta: { content: transferSentence } },
      fakeToolCallDelta('transfer_call', JSON.stringify({ target: 'human' }), 'call_transfer'),
    ];
  }
  return [{ delta: { content: 'Please hold.' }, finishReason: 'stop' }];
}

beforeAll(async () => {
  flite = await FliteTextToSpeech.start({ defaultVoice: 'kal', logger });
  sphinx = await PocketsphinxSpeechToText.start({ processCount: 1, freeForm: true, logger });
  fake = await startFakeOpenAiServer({ chatStreamFor: playModel });
}, 60_000);

afterAll(async () => {
  await flite?.close();
  await sphinx?.close();
  await fake?.close();
});

async function agentPair(kind: 'transfer' | 'goodbye') {
  const transfers: string[] = [];
  const brain = new LlmBrain(
    new OpenAiChatClient({ endpoint: { baseUrl: fake.baseUrl }, model: 'm', logger }),
    {
      systemPrompt: kind === 'goodbye' ? 'Goodbye agent.' : 'You put callers through.',
      firstMessage: 'Hello, press one for a person.',
      extraction: [],
      logger,
      transferTargets: ['human'],
    },
  );
  const pair = await conversationPair({
    brain,
    tts: flite,
    stt: sphinx,
    transfer: async (target): Promise<TransferResult> => {
      transfers.push(target);
      await sleep(200);
      return { kind: 'transferred', status: 200 };
    },
  });
  return { pair, transfers };
}

/** What the callee heard the agent say, its lines (not its events) joined. */
function agentWords(result: { transcript: { role: string; text: string; event?: string }[] }): string {
  return result.transcript
    .filter((line) => line.role === 'agent' && !line.event)
    .map((line) => line.text)
    .join(' ');
}

describe('a transfer announced while the callee acts', () => {
  it('happens when the callee talks over the transfer sentence', async () => {
    const { pair, transfers } = await agentPair('transfer');
    const words = await synthesizeWhole(flite, talkOver, 'rms');
    try {
      pair.conversation.start();
      await pair.agentFinished(600);
      const pressedAt = pair.nowMs();
      await pair.calleeRtp.sendDtmf('1');
      await pair.agentSpeaking(10_000, pressedAt);
      await sleep(800);
      await pair.calleeRtp.play(words);
      await pair.hungUp(15_000);
      expect(pair.hangUps).toEqual(['transferred']);
      expect(transfers).toEqual(['human']);
      const result = await pair.conversation.finish();
      // The announcement was heard to its end, then the transfer left.
      expect(agentWords(result)).toContain(transferSentence);
      const event = result.transcript.find((line) => line.event === 'transfer');
      expect(event?.text).toBe('human: transferred (200)');
    } finally {
      await pair.close();
    }
  }, 60_000);

  it('happens when the callee presses a key during the transfer sentence', async () => {
    const { pair, transfers } = await agentPair('transfer');
    try {
      pair.conversation.start();
      await pair.agentFinished(600);
      const pressedAt = pair.nowMs();
      await pair.calleeRtp.sendDtmf('1');
      await pair.agentSpeaking(10_000, pressedAt);
      await sleep(800);
      await pair.calleeRtp.sendDtmf('5');
      await pair.hungUp(15_000);
      expect(pair.hangUps).toEqual(['transferred']);
      expect(transfers).toEqual(['human']);
      const result = await pair.conversation.finish();
      expect(agentWords(result)).toContain(transferSentence);
    } finally {
      await pair.close();
    }
  }, 60_000);
});

describe('a goodbye that carries end_call', () => {
  it('is heard to its end when the callee talks over it, then the call ends', async () => {
    const { pair } = await agentPair('goodbye');
    const words = await synthesizeWhole(flite, talkOver, 'rms');
    try {
      pair.conversation.start();
      await pair.agentFinished(600);
      const pressedAt = pair.nowMs();
      await pair.calleeRtp.sendDtmf('1');
      await pair.agentSpeaking(10_000, pressedAt);
      await sleep(800);
      await pair.calleeRtp.play(words);
      await pair.hungUp(15_000);
      expect(pair.hangUps).toEqual(['agent_hangup']);
      const result = await pair.conversation.finish();
      // Not cut mid-word: the whole goodbye is in the transcript, as the callee heard it.
      expect(agentWords(result)).toContain(goodbyeSentence);
    } finally {
      await pair.close();
    }
  }, 60_000);
});
