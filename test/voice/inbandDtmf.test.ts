import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dtmfToneAudio, InbandDtmfDetector } from '../../src/telephony/rtp/index.js';
import { ScriptBrain } from '../../src/voice/brains/scriptBrain.js';
import { FliteTextToSpeech, PocketsphinxSpeechToText } from '../../src/voice/providers/index.js';
import { conversationPair } from '../helpers/conversationPair.js';

/**
 * Keys as tones in the audio, for lines without RFC 4733: two RTP sessions on loopback, the agent
 * running the real pipeline. On a line that negotiated no telephone-event the agent's `send_dtmf`
 * goes out as dual tones and a callee's tones are heard as keys; with `settings.dtmf: inband` the
 * agent uses tones even where events were negotiated.
 */

const logger = pino({ level: 'silent' });
let flite: FliteTextToSpeech;
let sphinx: PocketsphinxSpeechToText;

beforeAll(async () => {
  flite = await FliteTextToSpeech.start({ defaultVoice: 'kal', logger });
  sphinx = await PocketsphinxSpeechToText.start({ processCount: 1, freeForm: false, logger });
}, 60_000);

afterAll(async () => {
  await flite?.close();
  await sphinx?.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** An agent that says a word, presses 2 then 9, and listens. */
function keyPresser() {
  return new ScriptBrain(
    {
      start: 'press',
      nodes: {
        press: { say: 'Okay.', send_dtmf: '29', next: 'wait' },
        wait: { listen: [{ phrases: ['yes'], next: 'wait' }] },
      },
    },
    {},
    null,
  );
}

/** The keys the callee hears: as RFC 4733 events and as tones in the agent's audio. */
function keysHeardBy(calleeRtp: import('../../src/telephony/rtp/index.js').RtpSession) {
  const heard = { events: '', tones: '' };
  const tones = new InbandDtmfDetector();
  calleeRtp.on('dtmf', ({ digit }) => {
    heard.events += digit;
  });
  calleeRtp.on('audio', (samples) => {
    heard.tones += tones.push(samples) ?? '';
  });
  return heard;
}

describe('in-band DTMF', () => {
  it('a line without telephone-event: the agent presses keys as tones', async () => {
    const pair = await conversationPair({
      brain: keyPresser(),
      tts: flite,
      stt: sphinx,
      telephoneEvent: false,
    });
    const heard = keysHeardBy(pair.calleeRtp);
    pair.conversation.start();
    await sleep(3_000);
    const result = await pair.conversation.finish();
    await pair.close();
    expect(heard).toEqual({ events: '', tones: '29' });
    expect(result.transcript.filter((line) => line.event === 'dtmf')).toEqual([
      expect.objectContaining({ role: 'agent', text: '29' }),
    ]);
  }, 30_000);

  it('settings.dtmf inband: tones even where RFC 4733 was negotiated; rfc4733: events', async () => {
    for (const [dtmf, expected] of [
      ['inband', { events: '', tones: '29' }],
      ['rfc4733', { events: '29', tones: '' }],
    ] as const) {
      const pair = await conversationPair({ brain: keyPresser(), tts: flite, stt: sphinx, dtmf });
      const heard = keysHeardBy(pair.calleeRtp);
      pair.conversation.start();
      await sleep(3_000);
      await pair.conversation.finish();
      await pair.close();
      expect(heard).toEqual(expected);
    }
  }, 30_000);

  it("a line without telephone-event: the callee's tones are heard as keys", async () => {
    const pair = await conversationPair({
      brain: keyPresser(),
      tts: flite,
      stt: sphinx,
      telephoneEvent: false,
    });
    pair.conversation.start();
    await pair.agentSpeaking();
    await sleep(2_000);
    await pair.calleeRtp.play(dtmfToneAudio('7#'));
    await sleep(300);
    const result = await pair.conversation.finish();
    await pair.close();
    expect(result.metrics.dtmf_received).toBe('7#');
    expect(
      result.transcript
        .filter((line) => line.role === 'callee' && line.event === 'dtmf')
        .map((line) => line.text),
    ).toEqual(['7', '#']);
  }, 30_000);
});
