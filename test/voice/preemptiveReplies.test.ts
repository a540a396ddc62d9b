import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { firstAudibleIndex, lastAudibleIndex } from '../../src/telephony/rtp/index.js';
import { LlmBrain } from '../../src/voice/brains/llmBrain.js';
import { sameWords } from '../../src/voice/preemptiveReplies.js';
import {
  DeepgramSpeechToText,
  FliteTextToSpeech,
  OpenAiChatClient,
} from '../../src/voice/providers/index.js';
import {
  type FakeOpenAiServer,
  startFakeOpenAiServer,
} from '../../src/voice/providers/testing/fakeOpenAiServer.js';
import type { TurnTiming } from '../../src/voice/turnTimeline.js';
import { type FakeDeepgram, startFakeDeepgram } from '../fakes/deepgramLiveServer.js';
import {
  concat,
  conversationPair,
  type HeardFrame,
  silence,
  synthesizeWhole,
} from '../helpers/conversationPair.js';

/**
 * Preemptive generation (issue 33 item 4) on the real pipeline — fvad, the Deepgram adapter
 * against a fake of Deepgram's live protocol (interim results, then the final on Finalize), the
 * LLM brain against a fake OpenAI-compatible server, flite's voice, paced RTP on loopback — with
 * assertions on what the callee heard: a reply begun on the interim words is kept when the final
 * says the same, dropped unheard when it does not, and a pause inside one answer is one turn.
 */

const logger = pino({ level: 'silent' });
let flite: FliteTextToSpeech;
let deepgram: FakeDeepgram;
let openAi: FakeOpenAiServer;
const greeting = 'Hello, can you make Tuesday?';

/** What the fake model answers: the callee's words back, and a long reply to "Tuesday". */
function replyTo(words: string): string {
  const plain = words.replace(/[^\w ]/g, '');
  return /tuesday/i.test(words)
    ? `Noted ${plain} thanks. I will write that into the calendar right away and send you a reminder the day before the visit.`
    : `Noted ${plain} thanks.`;
}

beforeAll(async () => {
  flite = await FliteTextToSpeech.start({ defaultVoice: 'kal', logger });
  deepgram = await startFakeDeepgram({ apiKey: 'dg-preempt', transcripts: ['Yes, that works.'] });
  openAi = await startFakeOpenAiServer({
    apiKey: 'sk-preempt',
    chatStreamFor: ({ messages }) => {
      const user = String(messages.findLast((message) => message.role === 'user')?.content ?? '');
      return replyTo(user)
        .split(/(?<= )/)
        .map((token, index) => ({
          delta: index === 0 ? { role: 'assistant', content: token } : { content: token },
        }));
    },
  });
}, 60_000);

afterAll(async () => {
  await flite?.close();
  await deepgram?.close();
  await openAi?.close();
});

function chatRequests(since: number) {
  return openAi.requests
    .slice(since)
    .filter((request) => request.path.endsWith('/chat/completions'))
    .map((request) => (request.json as { messages: { role: string; content: string | null }[] }).messages);
}

/** Stretches of the agent's speech the callee heard after `afterMs` (a gap of 400 ms splits them). */
function heardStretches(heard: HeardFrame[], afterMs: number): { startMs: number; endMs: number }[] {
  const stretches: { startMs: number; endMs: number }[] = [];
  for (const frame of heard) {
    if (!frame.loud || frame.atMs < afterMs) continue;
    const last = stretches.at(-1);
    if (last && frame.atMs - last.endMs < 400) last.endMs = frame.atMs + 20;
    else stretches.push({ startMs: frame.atMs, endMs: frame.atMs + 20 });
  }
  return stretches;
}

async function converse(calleeSpeech: Int16Array) {
  const requestsBefore = openAi.requests.length;
  const pair = await conversationPair({
    brain: new LlmBrain(
      new OpenAiChatClient({
        endpoint: { baseUrl: openAi.baseUrl, apiKey: 'sk-preempt' },
        model: 'm',
        logger,
      }),
      { systemPrompt: 'Confirm the appointment.', firstMessage: greeting, extraction: [], logger },
    ),
    tts: flite,
    stt: new DeepgramSpeechToText({ apiKey: 'dg-preempt', baseUrl: deepgram.baseUrl }),
  });
  try {
    pair.conversation.start();
    // The greeting's end: longer than the pause flite's voice makes at its comma (230-280 ms heard
    // on loopback, more on a loaded machine), or the callee would start inside the greeting.
    await pair.agentFinished(600);
    const spokeAtMs = pair.nowMs();
    await pair.calleeRtp.play(calleeSpeech);
    const calleeDoneMs = pair.nowMs();
    await pair.agentSpeaking(10_000, calleeDoneMs);
    await pair.agentFinished(1_500);
    const result = await pair.conversation.finish();
    return {
      result,
      turns: (result.metrics as { turns: TurnTiming[] }).turns,
      agentLines: result.transcript.filter((line) => line.role === 'agent').map((line) => line.text),
      calleeLines: result.transcript.filter((line) => line.role === 'callee').map((line) => line.text),
      chats: chatRequests(requestsBefore),
      stretches: heardStretches(pair.heard, spokeAtMs),
      calleeDoneMs,
    };
  } finally {
    await pair.close();
  }
}

describe('preemptive generation', () => {
  it('compares words, not case, punctuation or hesitations', () => {
    expect(sameWords('yes that works', 'Yes, that works.')).toBe(true);
    expect(sameWords('um yes that works', 'Yes — uh, that works!')).toBe(true);
    expect(sameWords('yes that', 'Yes, that works.')).toBe(false);
    expect(sameWords('yes tuesday', 'Yes, Thursday.')).toBe(false);
    expect(sameWords('', '')).toBe(false);
  });

  it('keeps the reply begun on the interim words when the final says the same', async () => {
    deepgram.script.transcripts = ['Yes, that works.'];
    deepgram.script.finalizeDelayMs = 150;
    // The interim results have every word by the time the callee stops.
    deepgram.script.interimInFull = true;
    openAi.script.responseDelayMs = 100;
    const speech = await synthesizeWhole(flite, 'yes that works');
    const { turns, agentLines, chats, stretches } = await converse(speech).finally(() => {
      deepgram.script.interimInFull = false;
    });
    expect(agentLines).toEqual([greeting, 'Noted Yes that works thanks.']);
    // The reply heard was asked for on the interim words (the same as the final's); one begun on
    // fewer words, as the callee paused inside a word, was dropped before the turn ended.
    expect(chats.at(-1)?.at(-1)).toMatchObject({ role: 'user', content: 'Yes, that works.' });
    expect(turns).toHaveLength(1);
    expect(turns[0]?.preemptive_reply).toBe('used');
    // Heard: the callee's words, then one reply.
    expect(stretches.length).toBe(1);
  }, 40_000);

  it('drops, unheard, a reply to words the final transcript does not say, and answers the final', async () => {
    deepgram.script.transcripts = ['Yes, Tuesday is fine.'];
    deepgram.script.reviseFinal = () => 'No, Thursday is better.';
    // The reply to the interim words is synthesised long before the final arrives.
    deepgram.script.finalizeDelayMs = 600;
    openAi.script.responseDelayMs = 0;
    try {
      const speech = await synthesizeWhole(flite, 'yes tuesday is fine');
      const { turns, agentLines, calleeLines, chats, stretches } = await converse(speech);
      expect(calleeLines).toEqual(['No, Thursday is better.']);
      expect(agentLines).toEqual([greeting, 'Noted No Thursday is better thanks.']);
      expect(agentLines.slice(1).join(' ')).not.toMatch(/Tuesday|calendar/);
      // The model was asked on the interim words, then on the final ones — with no trace of the
      // dropped turn in its history.
      expect(chats.some((messages) => messages.at(-1)?.content === 'Yes, Tuesday is fine.')).toBe(true);
      expect(chats.at(-1)?.filter((message) => message.role !== 'system')).toEqual([
        { role: 'assistant', content: greeting },
        { role: 'user', content: 'No, Thursday is better.' },
      ]);
      expect(turns).toHaveLength(1);
      expect(turns[0]?.preemptive_reply).toBe('discarded');
      // What the callee heard after their turn is the short reply only, not the long dropped one.
      const shortMs = (await synthesizeWhole(flite, 'Noted No Thursday is better thanks.')).length / 8;
      const longMs = (await synthesizeWhole(flite, replyTo('Yes, Tuesday is fine.'))).length / 8;
      expect(longMs).toBeGreaterThan(shortMs + 2_000);
      expect(stretches).toHaveLength(1);
      const heardMs = (stretches[0]?.endMs ?? 0) - (stretches[0]?.startMs ?? 0);
      expect(heardMs).toBeLessThan(shortMs + 500);
    } finally {
      deepgram.script.reviseFinal = null;
    }
  }, 40_000);

  it('a pause inside "yes … that works" is one turn with one reply', async () => {
    deepgram.script.transcripts = ['Yes. | That works.'];
    deepgram.script.finalizeDelayMs = 150;
    openAi.script.responseDelayMs = 250;
    // 300 ms from the last audible sample of "yes" to the first of "that works" (the voice's own
    // leading and trailing silence cut).
    const audible = (samples: Int16Array) =>
      samples.subarray(firstAudibleIndex(samples), lastAudibleIndex(samples) + 1);
    const speech = concat(
      audible(await synthesizeWhole(flite, 'yes')),
      silence(300),
      audible(await synthesizeWhole(flite, 'that works')),
      silence(200),
    );
    const { turns, agentLines, calleeLines, chats, stretches } = await converse(speech);
    expect(calleeLines).toEqual(['Yes. That works.']);
    expect(agentLines).toEqual([greeting, 'Noted Yes That works thanks.']);
    expect(turns).toHaveLength(1);
    // Whatever the model was asked on the way, its history holds the one turn.
    expect(chats.at(-1)?.filter((message) => message.role !== 'system')).toEqual([
      { role: 'assistant', content: greeting },
      { role: 'user', content: 'Yes. That works.' },
    ]);
    expect(stretches).toHaveLength(1);
  }, 40_000);
});
