import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DialogScript } from '../../src/voice/brains/dialogScript.js';
import { ScriptBrain } from '../../src/voice/brains/scriptBrain.js';
import { FliteTextToSpeech, PocketsphinxSpeechToText } from '../../src/voice/providers/index.js';
import { conversationPair, sleep, synthesizeWhole } from '../helpers/conversationPair.js';

/**
 * The agent must not hear itself, on the real pipeline (fvad, the offline recogniser and voice,
 * paced RTP on loopback): a callee whose phone sends the agent's audio back (delayed 120 ms,
 * 10 dB down: a speakerphone with no echo cancellation) does not cut the greeting and is not
 * written down as saying the agent's words; the same callee talking over the greeting still cuts in.
 */

const logger = pino({ level: 'silent' });
let flite: FliteTextToSpeech;
let sphinx: PocketsphinxSpeechToText;

const greetingText =
  'Hello, this is Bright Smile Dental calling about your appointment on Tuesday at ten in the morning with doctor Patel. Can you make it?';
// The agent's own words are in the grammar: its echo, if heard, would be recognised as an answer.
const answers = ['yes', 'no', 'wait i have a question', 'appointment on tuesday', 'bright smile dental'];

function script(): DialogScript {
  return {
    start: 'greet',
    nodes: {
      greet: { say: greetingText, listen: [{ phrases: answers, capture: 'answer', next: 'bye' }] },
      bye: { say: 'Thank you. Goodbye.', end: true },
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

const echoDelayFrames = 6; // 120 ms
const echoGain = 10 ** (-10 / 20); // -10 dB

/**
 * A callee whose line echoes: every frame the agent's audio brings is sent back `echoDelayFrames`
 * later at `echoGain`, with whatever the callee itself says (`speak`) mixed in.
 */
async function echoingCallee() {
  const pair = await conversationPair({
    brain: new ScriptBrain(script(), {}, null),
    tts: flite,
    stt: sphinx,
  });
  const delayLine: Int16Array[] = [];
  let speech: Int16Array | null = null;
  let speechOffset = 0;
  pair.calleeRtp.on('audio', (samples: Int16Array) => {
    delayLine.push(Int16Array.from(samples, (sample) => Math.round(sample * echoGain)));
    if (delayLine.length <= echoDelayFrames) return;
    const out = delayLine.shift() as Int16Array;
    if (speech) {
      for (let index = 0; index < out.length && speechOffset < speech.length; index++, speechOffset++) {
        const mixed = (out[index] as number) + (speech[speechOffset] as number);
        out[index] = Math.max(-32768, Math.min(32767, mixed));
      }
      if (speechOffset >= speech.length) speech = null;
    }
    void pair.calleeRtp.play(out);
  });
  return {
    pair,
    speak(samples: Int16Array) {
      speech = samples;
      speechOffset = 0;
    },
  };
}

function metricsOf(result: { metrics: Record<string, unknown> }) {
  return result.metrics as {
    barge_ins: number;
    echo: { frames_suppressed: number; delay_ms: number | null; loss_db: number | null };
  };
}

describe('echo guard', () => {
  it('the agent’s echo does not cut the greeting and is not taken for the callee’s words', async () => {
    const { pair } = await echoingCallee();
    pair.conversation.start();
    await pair.agentSpeaking();
    await pair.agentFinished(1_000);
    const result = await pair.conversation.finish();
    await pair.close();
    const metrics = metricsOf(result);
    expect(metrics.barge_ins).toBe(0);
    expect(result.transcript[0]).toMatchObject({ role: 'agent', text: greetingText });
    expect(result.transcript.filter((line) => line.role === 'callee')).toEqual([]);
    // The echo was there and found: its path at the callee's delay (plus the two jitter buffers).
    expect(metrics.echo.frames_suppressed).toBeGreaterThan(50);
    expect(metrics.echo.delay_ms).toBeGreaterThanOrEqual(120);
    expect(metrics.echo.delay_ms).toBeLessThanOrEqual(260);
    // The agent channel of the recording holds the whole greeting (flite speaks it in ~7 s).
    const agentFramesLoud = pair.heard.filter((frame) => frame.loud).length;
    expect(agentFramesLoud * 20).toBeGreaterThan(4_000);
  }, 60_000);

  it('the callee talking over the greeting, its echo included, still cuts in', async () => {
    const callee = await echoingCallee();
    const { pair } = callee;
    const question = await synthesizeWhole(flite, 'wait i have a question', 'rms');
    pair.conversation.start();
    await pair.agentSpeaking();
    await sleep(2_000);
    callee.speak(question);
    await pair.hungUp();
    const result = await pair.conversation.finish();
    await pair.close();
    expect(metricsOf(result).barge_ins).toBe(1);
    const [greeting, answer] = result.transcript;
    expect(greeting?.role).toBe('agent');
    expect(greeting?.text.length).toBeLessThan(greetingText.length);
    expect(answer).toMatchObject({ role: 'callee', text: 'wait i have a question' });
    expect(pair.hangUps).toEqual(['agent_hangup']);
  }, 60_000);
});
