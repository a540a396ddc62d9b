import { describe, expect, it } from 'vitest';
import { concatSamples } from '../../voice/providers/audio/samples.js';
import { FliteTextToSpeech } from '../../voice/providers/tts/fliteTextToSpeech.js';
import { beepTone, speechLikeTone } from '../sandbox/sandboxAudio.js';
import { decodeG711, encodeG711 } from './g711.js';
import { dtmfToneAudio, InbandDtmfDetector } from './inbandDtmf.js';

/** Every key the detector hears in `audio`, 20 ms at a time. */
function heard(audio: Int16Array): string {
  const detector = new InbandDtmfDetector();
  let keys = '';
  for (let offset = 0; offset + 160 <= audio.length; offset += 160) {
    keys += detector.push(audio.subarray(offset, offset + 160)) ?? '';
  }
  return keys;
}

function withNoise(audio: Int16Array, amplitude: number, seed = 5): Int16Array {
  const out = new Int16Array(audio.length);
  let state = seed;
  for (let i = 0; i < audio.length; i++) {
    state = (state * 1103515245 + 12345) % 2147483648;
    out[i] = Math.max(
      -32768,
      Math.min(32767, (audio[i] ?? 0) + Math.round((state / 2147483648 - 0.5) * 2 * amplitude)),
    );
  }
  return out;
}

describe('in-band DTMF', () => {
  it('hears every key of the keypad, once each, in order', () => {
    const keys = '123A456B789C*0#D';
    expect(heard(dtmfToneAudio(keys))).toBe(keys);
  });

  it('hears keys through G.711 (both laws) and line noise, and a key pressed twice as two', () => {
    const audio = dtmfToneAudio('2255#');
    for (const codec of ['PCMU', 'PCMA'] as const) {
      const line = withNoise(decodeG711(codec, encodeG711(codec, audio)), 300);
      expect(heard(line)).toBe('2255#');
    }
  });

  it('shorter tones down to 40 ms are still heard; a 20 ms click is not a key', () => {
    expect(heard(dtmfToneAudio('19', { durationMs: 40, gapMs: 40 }))).toBe('19');
    expect(heard(dtmfToneAudio('5', { durationMs: 20, gapMs: 40 }))).toBe('');
  });

  it('speech, a voicemail beep and noise are not keys', async () => {
    const tts = await FliteTextToSpeech.start();
    try {
      for (const voice of ['kal', 'slt']) {
        const pieces: Int16Array[] = [];
        for await (const chunk of tts.synthesize(
          'For sales, press one. For support, press two. Thank you for calling.',
          { voice },
        ))
          pieces.push(chunk.samples);
        expect(heard(concatSamples(pieces))).toBe('');
      }
    } finally {
      await tts.close();
    }
    expect(heard(speechLikeTone(3_000))).toBe('');
    expect(heard(beepTone(600))).toBe('');
    expect(heard(withNoise(new Int16Array(8_000), 4_000))).toBe('');
  });

  it('refuses what is not a key', () => {
    expect(() => dtmfToneAudio('12x')).toThrow(/not DTMF digits/);
  });
});
