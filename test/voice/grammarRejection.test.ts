import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeG711, encodeG711 } from '../../src/telephony/rtp/index.js';
import { resample } from '../../src/voice/providers/audio/resampler.js';
import { concatSamples } from '../../src/voice/providers/audio/samples.js';
import { decodeWav } from '../../src/voice/providers/audio/wav.js';
import { FliteTextToSpeech, PocketsphinxSpeechToText } from '../../src/voice/providers/index.js';

/**
 * The offline recogniser in grammar mode must be able to say "I didn't catch that": answers that
 * are none of the expected phrases ("hello", "who is calling") must not come back as one, so they
 * never fill an extraction field, while the expected ones still do. Voices other than flite's (the
 * sandbox person's, the recogniser's best case): espeak-ng at several speeds, through G.711, some
 * with line noise. The rejection (a phrase must account for the utterance's speech) was tuned on
 * grammarRejection.json and is only measured on grammarRejectionHeldOut.json (other voices, other
 * answers). The figures print; docs/benchmarks.md has them.
 */

interface Utterance {
  grammar: string;
  text: string;
}
interface TestSet {
  grammars: Record<string, Record<string, string[]>>;
  inGrammar: Utterance[];
  outOfGrammar: Utterance[];
  voices: { voice: string; speed: number; noise?: boolean }[];
}

function loadTestSet(name: string): TestSet {
  return JSON.parse(readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8')) as TestSet;
}
const logger = pino({ level: 'silent' });
let sphinx: PocketsphinxSpeechToText;
const directory = mkdtempSync(join(tmpdir(), 'callwright-espeak-'));

/** A deterministic noise source, so a run can be repeated. */
function noiseGenerator(seed: number) {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state / 0x7fffffff - 0.5;
  };
}

/** espeak-ng speech as the recogniser hears it over the phone: 8 kHz, G.711 μ-law, maybe noise. */
/** A voice of the test set: espeak-ng's (`en-gb`, at `speed` words a minute) or flite's (`flite:kal`). */
type Voice = TestSet['voices'][number];

/** The sandbox person's engine, the recogniser's best case: the same answers in three flite voices. */
const fliteVoices: Voice[] = [
  { voice: 'flite:kal', speed: 0 },
  { voice: 'flite:slt', speed: 0 },
  { voice: 'flite:rms', speed: 0, noise: true },
];
let flite: FliteTextToSpeech;

async function narrowbandSpeech(text: string, voice: Voice): Promise<Int16Array> {
  if (voice.voice.startsWith('flite:')) {
    const chunks: Int16Array[] = [];
    for await (const chunk of flite.synthesize(text, { voice: voice.voice.slice('flite:'.length) }))
      chunks.push(chunk.samples);
    return concatSamples(chunks);
  }
  const file = join(directory, 'utterance.wav');
  execFileSync('espeak-ng', ['-v', voice.voice, '-s', String(voice.speed), '-w', file, text]);
  const pcm = decodeWav(new Uint8Array(readFileSync(file)));
  return resample(pcm.samples, pcm.sampleRateHz, 8000);
}

/** Speech as the recogniser hears it over the phone: 8 kHz, G.711 μ-law, maybe line noise. */
async function telephoneSpeech(text: string, voice: Voice): Promise<Int16Array> {
  const narrow = await narrowbandSpeech(text, voice);
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

function optionOf(testSet: TestSet, grammar: string, phrase: string | undefined): string | undefined {
  if (phrase === undefined) return undefined;
  return Object.entries(testSet.grammars[grammar] ?? {}).find(([, phrases]) => phrases.includes(phrase))?.[0];
}

async function recognize(testSet: TestSet, utterance: Utterance, voice: Voice, recognizer = sphinx) {
  const phrases = Object.values(testSet.grammars[utterance.grammar] ?? {}).flat();
  const session = await recognizer.startSession({ phrases });
  const samples = await telephoneSpeech(utterance.text, voice);
  for (let offset = 0; offset < samples.length; offset += 160)
    session.pushAudio(samples.subarray(offset, offset + 160));
  const heard = await session.finish();
  return heard;
}

beforeAll(async () => {
  sphinx = await PocketsphinxSpeechToText.start({ processCount: 1, freeForm: false, logger });
  flite = await FliteTextToSpeech.start({ logger });
}, 60_000);

afterAll(async () => {
  await sphinx?.close();
  await flite?.close();
  rmSync(directory, { recursive: true, force: true });
});

/** Runs a test set through the recogniser; prints and returns its false acceptance and accuracy. */
async function measure(name: string, voices?: Voice[], recognizer = sphinx) {
  const fixture = loadTestSet(name);
  const testSet = voices ? { ...fixture, voices } : fixture;
  const label = `${name}${voices ? ' in flite voices' : ''}${recognizer === sphinx ? '' : ' (second pass)'}`;
  const outCount = testSet.voices.length * testSet.outOfGrammar.length;
  const inCount = testSet.voices.length * testSet.inGrammar.length;
  const accepted: string[] = [];
  let unclearOut = 0;
  for (const voice of testSet.voices)
    for (const utterance of testSet.outOfGrammar) {
      const heard = await recognize(testSet, utterance, voice, recognizer);
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
      const heard = await recognize(testSet, utterance, voice, recognizer);
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

describe('the offline recogniser’s grammar rejects what is not in it', () => {
  it('on the tuning set: ≤ 5% of out-of-grammar answers fill a field', async () => {
    const { falseAcceptance, accuracy, unclearOut } = await measure('grammarRejection.json');
    expect(falseAcceptance).toBeLessThanOrEqual(0.05);
    // Some were phrases the garbage path let through that the coverage rule then caught.
    expect(unclearOut).toBeGreaterThan(0);
    // Missed answers are re-asked; the recogniser's own ceiling on these voices is 92%.
    expect(accuracy).toBeGreaterThanOrEqual(0.7);
  }, 240_000);

  it('on the held-out set (other voices, other answers): ≤ 5% fill a field', async () => {
    const { falseAcceptance, accuracy } = await measure('grammarRejectionHeldOut.json');
    expect(falseAcceptance).toBeLessThanOrEqual(0.05);
    // These voices are harder for the recogniser itself (72.5% right without any rejection).
    expect(accuracy).toBeGreaterThanOrEqual(0.5);
  }, 240_000);

  it('in flite’s voices, both sets: ≤ 5% fill a field and ≥ 80% of expected answers are heard right', async () => {
    for (const name of ['grammarRejection.json', 'grammarRejectionHeldOut.json']) {
      const { falseAcceptance, accuracy } = await measure(name, fliteVoices);
      expect(falseAcceptance).toBeLessThanOrEqual(0.05);
      expect(accuracy).toBeGreaterThanOrEqual(0.8);
    }
  }, 300_000);

  it('without the rejection the same recogniser would fill fields with most out-of-grammar answers', async () => {
    const plain = await PocketsphinxSpeechToText.start({
      processCount: 1,
      freeForm: false,
      rejectionLogp: null,
      minimumSpeechCoverage: null,
      logger,
    });
    const testSet = loadTestSet('grammarRejection.json');
    let accepted = 0;
    try {
      for (const utterance of testSet.outOfGrammar) {
        const heard = await recognize(testSet, utterance, testSet.voices[0] as Voice, plain);
        if (heard.matchedPhrase !== undefined) accepted++;
      }
    } finally {
      await plain.close();
    }
    expect(accepted).toBeGreaterThanOrEqual(testSet.outOfGrammar.length / 3);
  }, 120_000);
});

describe('the free-form second pass when the grammar hears no phrase', () => {
  const testSet = loadTestSet('grammarRejection.json');
  // Paraphrases the grammar pass misses (no hypothesis, the garbage path, or the coverage rule) and
  // the language model hears well enough for their phrase (bench:intents, issue 36).
  const paraphrases: Array<{ text: string; voice: Voice; option: string }> = [
    { text: 'no i have to reschedule', voice: { voice: 'flite:kal', speed: 0 }, option: 'reschedule' },
    { text: 'uh no i need to reschedule', voice: { voice: 'flite:kal', speed: 0 }, option: 'reschedule' },
    { text: 'yes i can thanks', voice: { voice: 'en-us', speed: 165 }, option: 'confirm' },
    { text: 'um yes', voice: { voice: 'flite:kal', speed: 0 }, option: 'confirm' },
    { text: 'um yes', voice: { voice: 'en-us', speed: 165 }, option: 'confirm' },
  ];
  async function understood(recognizer: PocketsphinxSpeechToText): Promise<string[]> {
    const options: string[] = [];
    for (const { text, voice } of paraphrases) {
      const heard = await recognize(testSet, { grammar: 'greet', text }, voice, recognizer);
      options.push(optionOf(testSet, 'greet', heard.matchedPhrase) ?? `[${heard.text}]`);
    }
    return options;
  }

  it('understands paraphrases the grammar alone misses', async () => {
    const withSecondPass = await PocketsphinxSpeechToText.start({ processCount: 1, logger });
    const grammarOnly = await PocketsphinxSpeechToText.start({
      processCount: 1,
      freeFormSecondPass: false,
      logger,
    });
    try {
      const [after, before] = [await understood(withSecondPass), await understood(grammarOnly)];
      console.log(`second pass: ${after.join(', ')}; grammar alone: ${before.join(', ')}`);
      const right = (options: string[]) => options.filter((option, i) => option === paraphrases[i]?.option);
      // One or two may slip with the order of a run (live mean normalisation carries over).
      expect(right(after).length).toBeGreaterThanOrEqual(3);
      expect(right(before).length).toBeLessThanOrEqual(1);
    } finally {
      await Promise.all([withSecondPass.close(), grammarOnly.close()]);
    }
  }, 120_000);

  it('is skipped while another turn waits for the recogniser, which then gets it at once', async () => {
    const recognizer = await PocketsphinxSpeechToText.start({ processCount: 1, logger });
    try {
      const phrases = Object.values(testSet.grammars.greet ?? {}).flat();
      const kal: Voice = { voice: 'flite:kal', speed: 0 };
      const samples = await telephoneSpeech('no i have to reschedule', kal);
      const hearAlone = async () => {
        const session = await recognizer.startSession({ phrases });
        session.pushAudio(samples);
        return session.finish();
      };
      expect((await hearAlone()).matchedPhrase).toBeDefined();
      const session = await recognizer.startSession({ phrases });
      session.pushAudio(samples);
      const waiting = recognizer.startSession({ phrases });
      const heard = await session.finish();
      expect(heard.matchedPhrase).toBeUndefined();
      (await waiting).close();
      expect((await hearAlone()).matchedPhrase).toBeDefined();
    } finally {
      await recognizer.close();
    }
  }, 120_000);

  it('lets ≤ 5% of out-of-grammar answers fill a field, on all four sets', async () => {
    const withSecondPass = await PocketsphinxSpeechToText.start({ processCount: 1, logger });
    try {
      for (const name of ['grammarRejection.json', 'grammarRejectionHeldOut.json']) {
        for (const voices of [undefined, fliteVoices]) {
          const { falseAcceptance } = await measure(name, voices, withSecondPass);
          expect(falseAcceptance).toBeLessThanOrEqual(0.05);
        }
      }
    } finally {
      await withSecondPass.close();
    }
  }, 900_000);
});
