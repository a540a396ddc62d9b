import { describe, expect, it } from 'vitest';
import { decodeG711, encodeG711 } from '../telephony/rtp/index.js';
import { frameLevelDb, IvrLoopGuard } from './ivrLoopGuard.js';
import { concatSamples } from './providers/audio/samples.js';
import { FliteTextToSpeech } from './providers/index.js';

describe('IvrLoopGuard', () => {
  it('trips on the same prompt heard N times, recognised with small differences', () => {
    const guard = new IvrLoopGuard(3);
    expect(guard.noteWords('For sales press one. For support press two.')).toBe(false);
    expect(guard.noteWords('Thank you for calling, please hold.')).toBe(false);
    expect(guard.noteWords('for sales press one for support press to')).toBe(false);
    expect(guard.noteWords('For sales, press one. For support, press two.')).toBe(true);
  });

  it('never counts short answers, and is off at 0', () => {
    const guard = new IvrLoopGuard(2);
    for (let i = 0; i < 5; i++) expect(guard.noteWords('yes that works')).toBe(false);
    const off = new IvrLoopGuard(0);
    for (let i = 0; i < 5; i++)
      expect(off.noteWords('for sales press one for support press two')).toBe(false);
  });
});

describe('IvrLoopGuard by ear', () => {
  /** The frame levels of `text` in the offline voice, as a line carries it (µ-law), starting `offsetSamples` late. */
  async function heardLevels(tts: FliteTextToSpeech, text: string, offsetSamples: number, noise: number) {
    const chunks: Int16Array[] = [];
    for await (const chunk of tts.synthesize(text, { voice: 'kal' })) chunks.push(chunk.samples);
    const speech = decodeG711('PCMU', encodeG711('PCMU', concatSamples(chunks)));
    // Line noise, a different onset and a different tail of silence each time.
    const line = new Int16Array(offsetSamples + speech.length + 8_000 - offsetSamples);
    line.set(speech, offsetSamples);
    let seed = offsetSamples + 1;
    for (let i = 0; i < line.length; i++) {
      seed = (seed * 1_103_515_245 + 12_345) & 0x7fffffff;
      line[i] = Math.max(-32768, Math.min(32767, (line[i] as number) + ((seed % (2 * noise + 1)) - noise)));
    }
    const levels: number[] = [];
    for (let at = 0; at + 160 <= line.length; at += 160)
      levels.push(frameLevelDb(line.subarray(at, at + 160)));
    return levels;
  }

  it('trips on the third hearing of one recording, whatever the words came out as', async () => {
    const tts = await FliteTextToSpeech.start({ defaultVoice: 'kal' });
    try {
      const menu = 'For sales, press one. For support, press two.';
      const guard = new IvrLoopGuard(3);
      expect(guard.noteAudio(await heardLevels(tts, menu, 0, 20))).toBe('noted');
      // A person says something else in between: not the menu.
      expect(
        guard.noteAudio(
          await heardLevels(tts, 'I would like to talk to somebody about my bill please', 300, 40),
        ),
      ).toBe('noted');
      expect(guard.noteAudio(await heardLevels(tts, menu, 1_300, 60))).toBe('noted');
      expect(guard.noteAudio(await heardLevels(tts, menu, 700, 30))).toBe('tripped');
    } finally {
      await tts.close();
    }
  }, 30_000);

  it('leaves short turns to their words, and different sentences of one voice apart', async () => {
    const tts = await FliteTextToSpeech.start({ defaultVoice: 'kal' });
    try {
      const guard = new IvrLoopGuard(2);
      expect(guard.noteAudio(await heardLevels(tts, 'yes', 0, 20))).toBe('words');
      const sentences = [
        'Thank you for calling Bright Smile Dental, how can I help you today?',
        'Our office hours are Monday to Friday from nine to five.',
        'Please listen carefully as our menu options have recently changed.',
        'To repeat these options, press the star key at any time.',
      ];
      for (const [index, sentence] of sentences.entries())
        expect(guard.noteAudio(await heardLevels(tts, sentence, index * 250, 30))).toBe('noted');
      // Each once: nothing repeated, nothing tripped — and the second hearing of one does trip (2).
      expect(guard.noteAudio(await heardLevels(tts, sentences[2] as string, 900, 50))).toBe('tripped');
    } finally {
      await tts.close();
    }
  }, 30_000);
});
