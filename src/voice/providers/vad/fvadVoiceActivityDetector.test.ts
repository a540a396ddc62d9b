import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { concatSamples } from '../audio/samples.js';
import { FliteTextToSpeech } from '../tts/fliteTextToSpeech.js';
import { telephoneSampleRateHz } from '../types.js';
import { AudioTurnDetector, type TurnEvent } from './endOfTurnDetector.js';
import { FvadDetectorFactory } from './fvadVoiceActivityDetector.js';

const samplesPerMs = telephoneSampleRateHz / 1000;

/** Deterministic low-level white noise, like a quiet phone line. */
function lineNoise(durationMs: number, amplitude = 150, seed = 7): Int16Array {
  const samples = new Int16Array(durationMs * samplesPerMs);
  let state = seed;
  for (let i = 0; i < samples.length; i += 1) {
    state = (state * 1103515245 + 12345) % 2147483648;
    samples[i] = Math.round((state / 2147483648 - 0.5) * 2 * amplitude);
  }
  return samples;
}

function concatenate(parts: Int16Array[]): Int16Array {
  return Int16Array.from(concatSamples(parts));
}

/** First and last 10 ms block louder than the threshold, in ms from the start of `samples`. */
function loudExtentMs(samples: Int16Array, threshold = 400): { startMs: number; endMs: number } {
  const block = 10 * samplesPerMs;
  let startMs = -1;
  let endMs = -1;
  for (let offset = 0; offset + block <= samples.length; offset += block) {
    let sum = 0;
    for (let i = offset; i < offset + block; i += 1) sum += (samples[i] ?? 0) ** 2;
    if (Math.sqrt(sum / block) > threshold) {
      if (startMs < 0) startMs = offset / samplesPerMs;
      endMs = (offset + block) / samplesPerMs;
    }
  }
  return { startMs, endMs };
}

describe('fvad with the end-of-turn detector on flite speech', () => {
  let factory: FvadDetectorFactory;
  let tts: FliteTextToSpeech;
  beforeAll(async () => {
    [factory, tts] = await Promise.all([FvadDetectorFactory.load(), FliteTextToSpeech.start()]);
  });
  afterAll(async () => {
    await tts?.close();
  });

  async function speak(text: string): Promise<Int16Array> {
    const pieces: Int16Array[] = [];
    for await (const chunk of tts.synthesize(text)) pieces.push(chunk.samples);
    return concatenate(pieces);
  }

  it('finds both utterances and ends each turn one silence window after the speech', async () => {
    const first = await speak('Hello, this is the clinic.');
    const second = await speak('Please call me back tomorrow.');
    const firstOffsetMs = 500;
    const secondOffsetMs = firstOffsetMs + first.length / samplesPerMs + 1500;
    const line = lineNoise(secondOffsetMs + second.length / samplesPerMs + 1500);
    line.set(
      first.map((sample, i) => sample + (line[firstOffsetMs * samplesPerMs + i] ?? 0)),
      firstOffsetMs * samplesPerMs,
    );
    line.set(
      second.map((sample, i) => sample + (line[secondOffsetMs * samplesPerMs + i] ?? 0)),
      secondOffsetMs * samplesPerMs,
    );
    const expected = [first, second].map((speech, index) => {
      const extent = loudExtentMs(speech);
      const offsetMs = index === 0 ? firstOffsetMs : secondOffsetMs;
      return { startMs: offsetMs + extent.startMs, endMs: offsetMs + extent.endMs };
    });

    const vad = factory.create({ frameDurationMs: 20, aggressiveness: 2 });
    const turns = new AudioTurnDetector(vad, { silenceWindowMs: 600, minSpeechDurationMs: 100 });
    const events: TurnEvent[] = [];
    const startedAt = performance.now();
    for (let offset = 0; offset < line.length; offset += 160) {
      events.push(...turns.pushAudio(line.subarray(offset, offset + 160)));
    }
    const elapsedMs = performance.now() - startedAt;
    vad.close();

    expect(events.map((event) => event.type)).toEqual([
      'speech_start',
      'speech_end',
      'speech_start',
      'speech_end',
    ]);
    for (const [index, turn] of expected.entries()) {
      const start = events[index * 2];
      const end = events[index * 2 + 1];
      if (start?.type !== 'speech_start' || end?.type !== 'speech_end')
        throw new Error('events out of order');
      expect(Math.abs(start.speechStartMs - turn.startMs)).toBeLessThanOrEqual(120);
      expect(start.detectedAtMs - start.speechStartMs).toBeLessThanOrEqual(200);
      expect(Math.abs(end.speechEndMs - turn.endMs)).toBeLessThanOrEqual(200);
      expect(end.detectedAtMs - end.speechEndMs).toBe(600);
    }
    const audioMs = line.length / samplesPerMs;
    console.info(`fvad + turns: ${audioMs.toFixed(0)} ms of audio in ${elapsedMs.toFixed(1)} ms`);
    expect(elapsedMs).toBeLessThan(audioMs / 20);
  });

  it('hears no speech in line noise alone', () => {
    const vad = factory.create();
    const turns = new AudioTurnDetector(vad);
    expect(turns.pushAudio(lineNoise(3000))).toEqual([]);
    vad.close();
  });

  it('rejects frames of the wrong length and use after close', () => {
    const vad = factory.create({ frameDurationMs: 30 });
    expect(vad.frameDurationMs).toBe(30);
    expect(() => vad.isSpeech(new Int16Array(160))).toThrow(/expected 240 samples/);
    expect(vad.isSpeech(new Int16Array(240))).toBe(false);
    vad.close();
    expect(() => vad.isSpeech(new Int16Array(240))).toThrow(/closed/);
  });
});
