import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SpeechPrefetch } from '../../src/voice/agentSpeaker.js';
import type { DialogScript } from '../../src/voice/brains/dialogScript.js';
import { LlmBrain } from '../../src/voice/brains/llmBrain.js';
import { ScriptBrain } from '../../src/voice/brains/scriptBrain.js';
import {
  FliteTextToSpeech,
  OpenAiChatClient,
  PocketsphinxSpeechToText,
  type SpeechToText,
  type TextToSpeech,
} from '../../src/voice/providers/index.js';
import { startFakeOpenAiServer } from '../../src/voice/providers/testing/fakeOpenAiServer.js';
import type { TurnTiming } from '../../src/voice/turnTimeline.js';
import { concat, conversationPair, silence, sleep, synthesizeWhole } from '../helpers/conversationPair.js';

/**
 * Turn-taking on the real pipeline (fvad, the offline recogniser and voice, paced RTP on loopback):
 * callees who backchannel, cough, interrupt, start in a gap, pause mid-number, go quiet, hang up
 * mid-sentence; assertions on the transcript, the cut point and the timing.
 */

const logger = pino({ level: 'silent' });
let flite: FliteTextToSpeech;
let sphinx: PocketsphinxSpeechToText;

const greetingText =
  'Hello, this is Bright Smile Dental calling about your appointment on Tuesday at ten in the morning with doctor Patel. Can you make it?';
const answers = [
  'yes',
  'no',
  'yes that works',
  'wait i have a question',
  'my number is five five five one two three four',
];

function script(byeText = 'Thank you. Goodbye.'): DialogScript {
  return {
    start: 'greet',
    nodes: {
      greet: {
        say: greetingText,
        listen: [{ phrases: answers, capture: 'answer', next: 'bye' }],
        otherwise: 'greet',
      },
      bye: { say: byeText, end: true },
    },
  };
}

beforeAll(async () => {
  flite = await FliteTextToSpeech.start({ defaultVoice: 'kal', logger });
  sphinx = await PocketsphinxSpeechToText.start({ processCount: 1, freeForm: false, logger });
}, 60_000);

afterAll(async () => {
  await flite?.close();
  await sphinx?.close();
});

/** The example-like script agent on the offline stack, with `overrides`. */
function scriptedPair(overrides: Partial<Parameters<typeof conversationPair>[0]> = {}) {
  return conversationPair({
    brain: new ScriptBrain(script(), {}, null),
    tts: flite,
    stt: sphinx,
    ...overrides,
  });
}

function metricsOf(result: { metrics: Record<string, unknown> }) {
  return result.metrics as {
    barge_ins: number;
    backchannels_ignored: number;
    barge_in_stop_ms: number[];
    barge_in_decision_ms: number[];
    still_there_prompts: number;
    turns: TurnTiming[];
    greeting_first_rtp_ms: number | null;
    greeting_audible_ms: number | null;
  };
}

/** White noise (a knock, a cough, a scrape on the line) of `ms`. */
function noiseBurst(ms: number, amplitude = 9000): Int16Array {
  const samples = new Int16Array(ms * 8);
  for (let index = 0; index < samples.length; index++)
    samples[index] = Math.round((Math.random() * 2 - 1) * amplitude);
  return samples;
}

describe('backchannels and interruptions', () => {
  it('a "yeah", an "uh huh", an "okay", a "right", a knock and a cough do not cut the greeting', async () => {
    const pair = await scriptedPair();
    const sounds = [
      await synthesizeWhole(flite, 'yeah', 'rms'),
      noiseBurst(250),
      await synthesizeWhole(flite, 'uh huh', 'slt'),
      await synthesizeWhole(flite, 'okay', 'awb'),
      noiseBurst(300, 5000),
      await synthesizeWhole(flite, 'right', 'rms'),
    ];
    pair.conversation.start();
    await pair.agentSpeaking();
    await sleep(800);
    for (const sound of sounds) {
      await pair.calleeRtp.play(sound);
      await sleep(500);
    }
    await pair.agentFinished(800);
    const result = await pair.conversation.finish();
    await pair.close();
    const metrics = metricsOf(result);
    expect(metrics.barge_ins).toBe(0);
    expect(metrics.backchannels_ignored).toBeGreaterThanOrEqual(4);
    expect(result.transcript[0]).toMatchObject({ role: 'agent', text: greetingText });
    // None of them was taken as an answer.
    expect(result.transcript.filter((line) => line.role === 'callee')).toEqual([]);
  }, 60_000);

  it('a real interruption cuts the agent within a frame of the decision, and the callee is heard', async () => {
    const pair = await scriptedPair();
    const question = await synthesizeWhole(flite, 'wait i have a question', 'rms');
    pair.conversation.start();
    await pair.agentSpeaking();
    await sleep(1500);
    // On the callee's media clock (frames heard so far), not the wall clock: a machine busy enough
    // to deschedule the process delays frames and then catches up, which moves wall-clock times.
    const spokeAtFrame = pair.heard.length;
    await pair.calleeRtp.play(question);
    await pair.hungUp();
    const result = await pair.conversation.finish();
    await pair.close();
    const metrics = metricsOf(result);
    expect(metrics.barge_ins).toBe(1);
    expect(metrics.barge_in_decision_ms[0]).toBeGreaterThanOrEqual(500);
    expect(metrics.barge_in_decision_ms[0]).toBeLessThan(900);
    const [greeting, answer] = result.transcript;
    expect(greeting?.role).toBe('agent');
    expect(greeting?.text.length).toBeLessThan(greetingText.length);
    expect(greetingText.startsWith(greeting?.text ?? 'x')).toBe(true);
    expect(answer).toMatchObject({ role: 'callee', text: 'wait i have a question' });
    // The callee heard the agent stop: no agent audio from the decision until the callee's reply,
    // beyond a frame and the two jitter buffers between the sides (the callee's speech reaches the
    // agent through one, the agent's audio the callee through the other).
    const frameMs = 20;
    const decidedAtMs = spokeAtFrame * frameMs + (metrics.barge_in_decision_ms[0] as number);
    const questionEndMs = spokeAtFrame * frameMs + question.length / 8;
    // A frame's index in `heard` is its place on the callee's media clock (one per 20 ms tick).
    const talkedOver = pair.heard.filter(
      (frame, index) => frame.loud && index * frameMs > decidedAtMs + 260 && index * frameMs < questionEndMs,
    );
    expect(talkedOver).toEqual([]);
    expect(pair.hangUps).toEqual(['agent_hangup']);
  }, 60_000);

  it('a callee who starts in the gap before the next sentence is not talked over', async () => {
    const slowSecondSentence: TextToSpeech = {
      async *synthesize(text, options) {
        if (text.startsWith('And')) await sleep(3_000);
        yield* flite.synthesize(text, options);
      },
      close: async () => {},
    };
    const twoSentences: DialogScript = {
      start: 'one',
      nodes: {
        one: { say: 'Hello there.', next: 'two' },
        two: {
          say: 'And this is the second sentence of the greeting.',
          listen: [{ phrases: answers, next: 'bye' }],
        },
        bye: { say: 'Goodbye.', end: true },
      },
    };
    const pair = await conversationPair({
      brain: new ScriptBrain(twoSentences, {}, null),
      tts: slowSecondSentence,
      stt: sphinx,
    });
    const question = await synthesizeWhole(flite, 'wait i have a question', 'rms');
    pair.conversation.start();
    await pair.agentFinished(500);
    const spokeAtMs = pair.nowMs();
    await pair.calleeRtp.play(question);
    await pair.agentFinished(400);
    const result = await pair.conversation.finish();
    await pair.close();
    const overlap = pair.heard.filter(
      (frame) => frame.loud && frame.atMs > spokeAtMs && frame.atMs < spokeAtMs + question.length / 8,
    );
    expect(overlap).toEqual([]);
    expect(result.transcript.map((line) => line.text)).not.toContain(
      'And this is the second sentence of the greeting.',
    );
    expect(result.transcript.find((line) => line.role === 'callee')?.text).toBe('wait i have a question');
  }, 60_000);

  it('a sound that cut the agent off, with no words in it, lets the agent pick up where it stopped', async () => {
    const hearsNothing: SpeechToText = {
      async startSession() {
        return { pushAudio() {}, onPartial() {}, finish: async () => ({ text: '' }), close() {} };
      },
      close: async () => {},
    };
    const pair = await conversationPair({
      brain: new ScriptBrain(script(), {}, null),
      tts: flite,
      stt: hearsNothing,
    });
    const sound = await synthesizeWhole(flite, 'something something something', 'rms');
    pair.conversation.start();
    await pair.agentSpeaking();
    await sleep(1500);
    await pair.calleeRtp.play(sound);
    await pair.agentSpeaking(10_000, pair.nowMs());
    await pair.agentFinished(800);
    const result = await pair.conversation.finish();
    await pair.close();
    expect(metricsOf(result).barge_ins).toBe(1);
    const agentLines = result.transcript.filter((line) => line.role === 'agent').map((line) => line.text);
    expect(agentLines).toHaveLength(2);
    expect(`${agentLines[0]} ${agentLines[1]}`).toBe(greetingText);
  }, 60_000);

  it('talking over the goodbye does not cut it: it is heard to its end, then the call ends', async () => {
    const longBye =
      'Thank you so much for your time today, we look forward to seeing you on Tuesday. Goodbye.';
    const pair = await conversationPair({
      brain: new ScriptBrain(script(longBye), {}, null),
      tts: flite,
      stt: sphinx,
    });
    const yes = await synthesizeWhole(flite, 'yes that works', 'rms');
    const question = await synthesizeWhole(flite, 'wait i have a question', 'rms');
    pair.conversation.start();
    await pair.agentFinished(800);
    const answeredAt = pair.nowMs();
    await pair.calleeRtp.play(yes);
    await pair.agentSpeaking(10_000, answeredAt + 300);
    await sleep(800);
    await pair.calleeRtp.play(question);
    await pair.hungUp(15_000);
    expect(pair.hangUps).toEqual(['agent_hangup']);
    const result = await pair.conversation.finish();
    await pair.close();
    expect(metricsOf(result).barge_ins).toBe(0);
    const agentLines = result.transcript.filter((line) => line.role === 'agent').map((line) => line.text);
    expect(agentLines.at(-1)).toBe(longBye);
  }, 60_000);
});

describe('end of turn', () => {
  it('waits out a pause in the middle of a number, and answers a complete one quickly', async () => {
    const pair = await scriptedPair();
    const first = await synthesizeWhole(flite, 'my number is five five five', 'rms');
    const rest = await synthesizeWhole(flite, 'one two three four', 'rms');
    pair.conversation.start();
    await pair.agentFinished(800);
    await pair.calleeRtp.play(concat(first, silence(900), rest));
    await pair.hungUp();
    const result = await pair.conversation.finish();
    await pair.close();
    const callee = result.transcript.filter((line) => line.role === 'callee');
    expect(callee).toHaveLength(1);
    expect(callee[0]?.text).toBe('my number is five five five one two three four');
    const [turn] = metricsOf(result).turns;
    expect(turn?.end_of_turn).toBe('complete');
  }, 60_000);

  it('measures voice-to-voice as the recording shows it', async () => {
    const pair = await scriptedPair();
    const yes = await synthesizeWhole(flite, 'yes that works', 'rms');
    pair.conversation.start();
    await pair.agentFinished(800);
    await pair.calleeRtp.play(yes);
    await pair.hungUp();
    const result = await pair.conversation.finish();
    await pair.close();
    const [turn] = metricsOf(result).turns;
    expect(turn).toBeDefined();
    expect(turn?.end_of_turn).toBe('complete');
    const wav = result.recorder.toWav();
    const samples = new Int16Array(wav.buffer, wav.byteOffset + 44, (wav.length - 44) / 2);
    const loud = (value: number) => Math.abs(value) >= 500;
    // The agent's reply begins at its first audible sample after the callee spoke; the callee's
    // speech ends at its last audible sample before that.
    let calleeStart = -1;
    for (let index = 0; index < samples.length / 2; index++)
      if (loud(samples[index * 2] as number)) {
        calleeStart = index;
        break;
      }
    let agentOnset = -1;
    for (let index = calleeStart; index < samples.length / 2; index++)
      if (loud(samples[index * 2 + 1] as number)) {
        agentOnset = index;
        break;
      }
    let calleeEnd = -1;
    for (let index = agentOnset; index > calleeStart; index--)
      if (loud(samples[index * 2] as number)) {
        calleeEnd = index;
        break;
      }
    const onRecordingMs = (agentOnset - calleeEnd) / 8;
    expect(Math.abs((turn?.voice_to_voice_ms as number) - onRecordingMs)).toBeLessThanOrEqual(25);
    expect(turn?.callee_speech_end_ms).toBeCloseTo(calleeEnd / 8, -2);
  }, 60_000);

  it('takes the turn from a monologue at the longest utterance', async () => {
    const pair = await scriptedPair({ turnTaking: { maxUtteranceMs: 3_000 } });
    const long = await synthesizeWhole(
      flite,
      'yes that works and I also wanted to tell you about my neighbour and the dog and the garden and the fence and everything else that happened',
      'rms',
    );
    pair.conversation.start();
    await pair.agentFinished(800);
    void pair.calleeRtp.play(long);
    await sleep(4_000);
    const result = await pair.conversation.finish();
    await pair.close();
    const [turn] = metricsOf(result).turns;
    expect(turn?.end_of_turn).toBe('max_utterance');
    const callee = result.transcript.find((line) => line.role === 'callee');
    expect((callee?.end_ms ?? 0) - (callee?.start_ms ?? 0)).toBeGreaterThanOrEqual(2_900);
    expect((callee?.end_ms ?? 0) - (callee?.start_ms ?? 0)).toBeLessThan(3_300);
  }, 60_000);
});

describe('nothing said is lost, nothing hangs', () => {
  it('keeps the words of a callee who hangs up mid-sentence, and DTMF as timed events', async () => {
    const pair = await scriptedPair();
    const yes = await synthesizeWhole(flite, 'yes that works', 'rms');
    pair.conversation.start();
    await pair.agentFinished(800);
    await pair.calleeRtp.sendDtmf('5');
    await sleep(300);
    // The line goes away while the callee is still speaking.
    void pair.calleeRtp.play(yes);
    await sleep(Math.round(yes.length / 8) - 100);
    const result = await pair.conversation.finish();
    await pair.close();
    const dtmf = result.transcript.find((line) => line.event === 'dtmf');
    expect(dtmf).toMatchObject({ role: 'callee', text: '5' });
    const words = result.transcript.find((line) => line.role === 'callee' && !line.event);
    expect(words?.text).toMatch(/yes/);
  }, 60_000);

  it('asks "are you still there?" before hanging up on a quiet line', async () => {
    const pair = await scriptedPair({
      silenceTimeoutMs: 1_500,
      turnTaking: { stillThereText: 'Hello? Are you still there?', stillThereCount: 1 },
    });
    pair.conversation.start();
    await pair.agentFinished(800);
    const until = pair.nowMs() + 10_000;
    while (pair.hangUps.length === 0 && pair.nowMs() < until) await sleep(50);
    const result = await pair.conversation.finish();
    await pair.close();
    expect(pair.hangUps).toEqual(['silence_timeout']);
    expect(result.transcript.map((line) => line.text)).toEqual([greetingText, 'Hello? Are you still there?']);
    expect(metricsOf(result).still_there_prompts).toBe(1);
  }, 60_000);
});

describe('the greeting', () => {
  it('synthesised while the phone rings, its first audible sample leaves within a frame or two of the answer', async () => {
    const brain = new ScriptBrain(script(), {}, null);
    const prefetch = new SpeechPrefetch(flite, undefined, logger);
    prefetch.prefetch(brain.greeting() as string);
    await sleep(800);
    const pair = await conversationPair({ brain, tts: flite, stt: sphinx, prefetch });
    pair.conversation.start();
    await pair.agentFinished(800);
    const result = await pair.conversation.finish();
    await pair.close();
    const metrics = metricsOf(result);
    expect(metrics.greeting_first_rtp_ms).toBeLessThanOrEqual(60);
    expect(metrics.greeting_audible_ms).toBeLessThanOrEqual(80);
    expect(result.transcript[0]?.text).toBe(greetingText);
  }, 60_000);
});

describe('the language model’s history after a barge-in', () => {
  it('keeps the agent’s reply cut to what the callee heard, then the callee’s words', async () => {
    const fake = await startFakeOpenAiServer({
      chatStreamDeltas: [
        {
          delta: {
            content: 'Hello, this is Bright Smile Dental calling about your appointment on Tuesday at ten. ',
          },
        },
        {
          delta: { content: 'We wanted to confirm that you can make it, and remind you to bring your card.' },
        },
        { delta: {}, finishReason: 'stop' },
      ],
    });
    // A streaming recogniser that hears the callee's words as soon as they speak.
    const hearsTheQuestion: SpeechToText = {
      async startSession() {
        const listeners: ((partial: { text: string }) => void)[] = [];
        return {
          pushAudio() {
            for (const listener of listeners.splice(0)) listener({ text: 'wait i have a question' });
          },
          onPartial(listener) {
            listeners.push(listener);
          },
          finish: async () => ({ text: 'wait i have a question' }),
          close() {},
        };
      },
      close: async () => {},
    };
    const brain = new LlmBrain(
      new OpenAiChatClient({ endpoint: { baseUrl: fake.baseUrl }, model: 'm', logger }),
      {
        systemPrompt: 'You confirm appointments.',
        firstMessage: null,
        extraction: [],
        logger,
      },
    );
    const pair = await conversationPair({ brain, tts: flite, stt: hearsTheQuestion });
    const question = await synthesizeWhole(flite, 'wait i have a question', 'rms');
    try {
      pair.conversation.start();
      await pair.agentSpeaking();
      await sleep(2_000);
      await pair.calleeRtp.play(question);
      const until = pair.nowMs() + 10_000;
      while (fake.requests.filter((request) => request.path.endsWith('/chat/completions')).length < 2) {
        if (pair.nowMs() > until) throw new Error('no second request to the model');
        await sleep(50);
      }
      const result = await pair.conversation.finish();
      const second = fake.requests.filter((request) => request.path.endsWith('/chat/completions'))[1];
      const messages =
        (second?.json as { messages?: { role: string; content: string | null }[] } | undefined)?.messages ??
        [];
      expect(messages.map((message) => message.role)).toEqual(['system', 'assistant', 'user']);
      const heard = messages[1]?.content ?? '';
      expect(heard.length).toBeGreaterThan(0);
      expect(heard.length).toBeLessThan(60);
      expect(
        'Hello, this is Bright Smile Dental calling about your appointment on Tuesday at ten.',
      ).toContain(heard);
      expect(messages[2]?.content).toBe('wait i have a question');
      // The transcript says the same as the history.
      expect(result.transcript.find((line) => line.role === 'agent')?.text).toBe(heard);
    } finally {
      await pair.close();
      await fake.close();
    }
  }, 60_000);
});

describe('per-agent switches', () => {
  it('interruptions off: the callee talking over the agent does not cut the passage', async () => {
    const pair = await scriptedPair({ turnTaking: { interruptionsEnabled: false } });
    const question = await synthesizeWhole(flite, 'wait i have a question', 'rms');
    pair.conversation.start();
    await pair.agentSpeaking();
    await sleep(1_500);
    await pair.calleeRtp.play(question);
    await pair.agentFinished(800);
    const result = await pair.conversation.finish();
    await pair.close();
    expect(metricsOf(result).barge_ins).toBe(0);
    expect(result.transcript[0]).toMatchObject({ role: 'agent', text: greetingText });
  }, 60_000);

  it('wait_for_callee: the agent greets only after the callee’s "hello"', async () => {
    const pair = await scriptedPair({ turnTaking: { waitForCallee: true } });
    const hello = await synthesizeWhole(flite, 'hello', 'rms');
    pair.conversation.start();
    await sleep(1_500);
    expect(pair.heard.some((frame) => frame.loud)).toBe(false);
    const saidHelloAt = pair.nowMs();
    await pair.calleeRtp.play(hello);
    const greetedAt = await pair.agentSpeaking(10_000);
    expect(greetedAt).toBeGreaterThan(saidHelloAt);
    // The hello opened the call, not the 4 s after which a silent callee is greeted anyway.
    expect(greetedAt).toBeLessThan(3_800);
    await pair.agentFinished(800);
    const result = await pair.conversation.finish();
    await pair.close();
    // (Whether "hello" is written down depends on the grammar: it is no expected answer.)
    expect(result.transcript.filter((line) => line.role === 'agent').map((line) => line.text)).toEqual([
      greetingText,
    ]);
  }, 60_000);
});
