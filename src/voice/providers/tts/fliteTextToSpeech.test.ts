import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { telephoneSampleRateHz } from '../types.js';
import { FliteTextToSpeech } from './fliteTextToSpeech.js';
import { splitIntoSpeakablePieces } from './sentences.js';

function rootMeanSquare(samples: Int16Array): number {
  let sum = 0;
  for (const sample of samples) sum += sample * sample;
  return Math.sqrt(sum / Math.max(1, samples.length));
}

async function collect(chunks: AsyncIterable<{ samples: Int16Array; sampleRateHz: number }>) {
  const pieces: Int16Array[] = [];
  for await (const chunk of chunks) {
    expect(chunk.sampleRateHz).toBe(telephoneSampleRateHz);
    pieces.push(chunk.samples);
  }
  return pieces;
}

describe('FliteTextToSpeech', () => {
  let tts: FliteTextToSpeech;
  beforeAll(async () => {
    tts = await FliteTextToSpeech.start();
  });
  afterAll(async () => {
    await tts.close();
  });

  it('speaks a short sentence as non-silent 8 kHz audio of a plausible length, quickly', async () => {
    const startedAt = performance.now();
    const pieces = await collect(tts.synthesize('Yes, that works for me.'));
    const elapsedMs = performance.now() - startedAt;
    expect(pieces).toHaveLength(1);
    const samples = pieces[0] ?? new Int16Array(0);
    const durationMs = (samples.length / telephoneSampleRateHz) * 1000;
    expect(durationMs).toBeGreaterThan(900);
    expect(durationMs).toBeLessThan(3000);
    expect(rootMeanSquare(samples)).toBeGreaterThan(500);
    console.info(`flite kal: ${durationMs.toFixed(0)} ms of speech in ${elapsedMs.toFixed(0)} ms`);
    expect(elapsedMs).toBeLessThan(2000);
  });

  it('yields one chunk per sentence, so playback can start before the rest is ready', async () => {
    const pieces = await collect(
      tts.synthesize('Hello, this is the clinic calling. Can you come on Tuesday? Please say yes or no.'),
    );
    expect(pieces).toHaveLength(3);
    for (const piece of pieces) expect(rootMeanSquare(piece)).toBeGreaterThan(500);
  });

  it('resamples a 16 kHz voice to 8 kHz', async () => {
    const pieces = await collect(tts.synthesize('Good morning.', { voice: 'slt' }));
    const samples = pieces[0] ?? new Int16Array(0);
    const durationMs = (samples.length / telephoneSampleRateHz) * 1000;
    expect(durationMs).toBeGreaterThan(500);
    expect(durationMs).toBeLessThan(2500);
    expect(rootMeanSquare(samples)).toBeGreaterThan(300);
  });

  it('refuses an unknown voice', async () => {
    await expect(collect(tts.synthesize('hello', { voice: 'nobody' }))).rejects.toThrow(
      /unknown voice "nobody"/,
    );
  });

  it('stops when aborted', async () => {
    const controller = new AbortController();
    const received: Int16Array[] = [];
    const consume = async (): Promise<void> => {
      for await (const chunk of tts.synthesize('First sentence. Second sentence. Third sentence.', {
        signal: controller.signal,
      })) {
        received.push(chunk.samples);
        controller.abort(new Error('callee started talking'));
      }
    };
    await expect(consume()).rejects.toThrow('callee started talking');
    expect(received).toHaveLength(1);
  });

  it('says nothing for empty text', async () => {
    expect(await collect(tts.synthesize('   '))).toEqual([]);
  });
});

describe('splitIntoSpeakablePieces', () => {
  it('splits after sentence punctuation and keeps short sentences whole', () => {
    expect(splitIntoSpeakablePieces('Hi there. How are you?  Fine!')).toEqual([
      'Hi there.',
      'How are you?',
      'Fine!',
    ]);
  });

  it('splits a long sentence into pieces no longer than the limit', () => {
    const long = `${'word '.repeat(30)}end, ${'more '.repeat(30)}done`;
    const pieces = splitIntoSpeakablePieces(long, 60);
    expect(pieces.length).toBeGreaterThan(3);
    for (const piece of pieces) expect(piece.length).toBeLessThanOrEqual(60);
    expect(pieces.join(' ')).toBe(long);
  });
});
