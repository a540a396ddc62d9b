import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { expect } from 'vitest';
import { decodeG711, encodeG711 } from '../../src/telephony/rtp/index.js';
import { resample } from '../../src/voice/providers/audio/resampler.js';
import { concatSamples } from '../../src/voice/providers/audio/samples.js';
import { decodeWav } from '../../src/voice/providers/audio/wav.js';
import { FliteTextToSpeech, type PocketsphinxSpeechToText } from '../../src/voice/providers/index.js';

/**
 * The grammar-rejection corpus (test/fixtures/grammarRejection*.json): answers in espeak-ng's and
 * flite's voices, through G.711 and some with line noise, recognised by a grammar per question and
 * counted as the script brain would (false acceptance, accuracy). Shared by the grammar-rejection
 * and second-pass tests (separate files, so the test runner spreads their minutes over its forks).
 */

export interface Utterance {
  grammar: string;
  text: string;
}
export interface TestSet {
  grammars: Record<string, Record<string, string[]>>;
  inGrammar: Utterance[];
  outOfGrammar: Utterance[];
  voices: { voice: string; speed: number; noise?: boolean }[];
}
/** A voice of the test set: espeak-ng's (`en-gb`, at `speed` words a minute) or flite's (`flite:kal`). */
export type Voice = TestSet['voices'][number];

export function loadTestSet(name: string): TestSet {
  return JSON.parse(readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8')) as TestSet;
}

export const silentLogger = pino({ level: 'silent' });

/** The sandbox person's engine, the recogniser's best case: the same answers in three flite voices. */
export const fliteVoices: Voice[] = [
  { voice: 'flite:kal', speed: 0 },
  { voice: 'flite:slt', speed: 0 },
  { voice: 'flite:rms', speed: 0, noise: true },
];

/** A deterministic noise source, so a run can be repeated. */
function noiseGenerator(seed: number) {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state / 0x7fffffff - 0.5;
  };
}

export function optionOf(testSet: TestSet, grammar: string, phrase: string | undefined): string | undefined {
  if (phrase === undefined) return undefined;
  return Object.entries(testSet.grammars[grammar] ?? {}).find(([, phrases]) => phrases.includes(phrase))?.[0];
}

/** The voices (flite in-process, espeak-ng by its command) and a scratch folder; `close()` when done. */
export class GrammarCorpus {
  private constructor(
    private readonly flite: FliteTextToSpeech,
    private readonly directory: string,
  ) {}

  static async start(): Promise<GrammarCorpus> {
    return new GrammarCorpus(
      await FliteTextToSpeech.start({ logger: silentLogger }),
      mkdtempSync(join(tmpdir(), 'callwright-espeak-')),
    );
  }

  async close(): Promise<void> {
    await this.flite.close();
    rmSync(this.directory, { recursive: true, force: true });
  }

  private async narrowbandSpeech(text: string, voice: Voice): Promise<Int16Array> {
    if (voice.voice.startsWith('flite:')) {
      const chunks: Int16Array[] = [];
      for await (const chunk of this.flite.synthesize(text, { voice: voice.voice.slice('flite:'.length) }))
        chunks.push(chunk.samples);
      return concatSamples(chunks);
    }
    const file = join(this.directory, 'utterance.wav');
    execFileSync('espeak-ng', ['-v', voice.voice, '-s', String(voice.speed), '-w', file, text]);
    const pcm = decodeWav(new Uint8Array(readFileSync(file)));
    return resample(pcm.samples, pcm.sampleRateHz, 8000);
  }

  /** Speech as the recogniser hears it over the phone: 8 kHz, G.711 μ-law, maybe line noise. */
  async telephoneSpeech(text: string, voice: Voice): Promise<Int16Array> {
    const narrow = await this.narrowbandSpeech(text, voice);
    if (voice.noise) {
      const next = noiseGenerator(text.length * 7919);
      for (let index = 0; index < narrow.length; index++)
        narrow[index] = Math.max(
          -32768,
          Math.min(32767, (narrow[index] as number) + Math.round(next() * 1200)),
        );
    }
    const padded = new Int16Array(narrow.length + 8000);
    padded.set(narrow, 2400);
    return decodeG711('PCMU', encodeG711('PCMU', padded));
  }

  async recognize(
    testSet: TestSet,
    utterance: Utterance,
    voice: Voice,
    recognizer: PocketsphinxSpeechToText,
  ) {
    const phrases = Object.values(testSet.grammars[utterance.grammar] ?? {}).flat();
    const session = await recognizer.startSession({ phrases });
    const samples = await this.telephoneSpeech(utterance.text, voice);
    for (let offset = 0; offset < samples.length; offset += 160)
      session.pushAudio(samples.subarray(offset, offset + 160));
    return session.finish();
  }

  /** Runs a test set through `recognizer`; prints and returns its false acceptance and accuracy. */
  async measure(
    name: string,
    recognizer: PocketsphinxSpeechToText,
    options: { voices?: Voice[]; label?: string } = {},
  ) {
    const fixture = loadTestSet(name);
    const testSet = options.voices ? { ...fixture, voices: options.voices } : fixture;
    const label = `${name}${options.voices ? ' in flite voices' : ''}${options.label ?? ''}`;
    const outCount = testSet.voices.length * testSet.outOfGrammar.length;
    const inCount = testSet.voices.length * testSet.inGrammar.length;
    const accepted: string[] = [];
    let unclearOut = 0;
    for (const voice of testSet.voices)
      for (const utterance of testSet.outOfGrammar) {
        const heard = await this.recognize(testSet, utterance, voice, recognizer);
        if (heard.unclear) {
          unclearOut++;
          // Rejected by the coverage rule: no words that a script could still match.
          expect(heard).toMatchObject({ text: '' });
        }
        if (heard.matchedPhrase !== undefined)
          accepted.push(`${voice.voice}@${voice.speed} "${utterance.text}" → "${heard.matchedPhrase}"`);
      }
    const wrong: string[] = [];
    let unclear = 0;
    for (const voice of testSet.voices)
      for (const utterance of testSet.inGrammar) {
        const heard = await this.recognize(testSet, utterance, voice, recognizer);
        if (heard.unclear) unclear++;
        const expected = optionOf(testSet, utterance.grammar, utterance.text);
        if (optionOf(testSet, utterance.grammar, heard.matchedPhrase) !== expected)
          wrong.push(
            `${voice.voice}@${voice.speed} "${utterance.text}" → "${heard.text}"${heard.unclear ? ' (unclear)' : ''}`,
          );
      }
    const falseAcceptance = accepted.length / outCount;
    const accuracy = 1 - wrong.length / inCount;
    console.log(
      `grammar rejection, ${label}: false acceptance ${accepted.length}/${outCount} (${(falseAcceptance * 100).toFixed(1)}%), in-grammar accuracy ${inCount - wrong.length}/${inCount} (${(accuracy * 100).toFixed(1)}%), ${unclear} in-grammar and ${unclearOut} out-of-grammar rejected as unclear\n  accepted: ${accepted.join('; ')}\n  wrong: ${wrong.join('; ')}`,
    );
    expect(outCount).toBeGreaterThanOrEqual(40);
    expect(inCount).toBeGreaterThanOrEqual(40);
    return { falseAcceptance, accuracy, unclearOut };
  }
}
