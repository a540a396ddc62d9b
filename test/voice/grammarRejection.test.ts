import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PocketsphinxSpeechToText } from '../../src/voice/providers/index.js';
import {
  fliteVoices,
  GrammarCorpus,
  loadTestSet,
  silentLogger,
  type Voice,
} from '../helpers/grammarCorpus.js';

/**
 * The offline recogniser in grammar mode must be able to say "I didn't catch that": answers that
 * are none of the expected phrases ("hello", "who is calling") must not come back as one, so they
 * never fill an extraction field, while the expected ones still do. Voices other than flite's (the
 * sandbox person's, the recogniser's best case): espeak-ng at several speeds, through G.711, some
 * with line noise. The rejection (a phrase must account for the utterance's speech) was tuned on
 * grammarRejection.json and is only measured on grammarRejectionHeldOut.json (other voices, other
 * answers). The figures print; docs/benchmarks.md has them.
 */

let sphinx: PocketsphinxSpeechToText;
let corpus: GrammarCorpus;

beforeAll(async () => {
  sphinx = await PocketsphinxSpeechToText.start({ processCount: 1, freeForm: false, logger: silentLogger });
  corpus = await GrammarCorpus.start();
}, 60_000);

afterAll(async () => {
  await sphinx?.close();
  await corpus?.close();
});

describe('the offline recogniser’s grammar rejects what is not in it', () => {
  it('on the tuning set: ≤ 5% of out-of-grammar answers fill a field', async () => {
    const { falseAcceptance, accuracy, unclearOut } = await corpus.measure('grammarRejection.json', sphinx);
    expect(falseAcceptance).toBeLessThanOrEqual(0.05);
    // Some were phrases the garbage path let through that the coverage rule then caught.
    expect(unclearOut).toBeGreaterThan(0);
    // Missed answers are re-asked; the recogniser's own ceiling on these voices is 92%.
    expect(accuracy).toBeGreaterThanOrEqual(0.7);
  }, 240_000);

  it('on the held-out set (other voices, other answers): ≤ 5% fill a field', async () => {
    const { falseAcceptance, accuracy } = await corpus.measure('grammarRejectionHeldOut.json', sphinx);
    expect(falseAcceptance).toBeLessThanOrEqual(0.05);
    // These voices are harder for the recogniser itself (72.5% right without any rejection).
    expect(accuracy).toBeGreaterThanOrEqual(0.5);
  }, 240_000);

  it('in flite’s voices, both sets: ≤ 5% fill a field and ≥ 80% of expected answers are heard right', async () => {
    for (const name of ['grammarRejection.json', 'grammarRejectionHeldOut.json']) {
      const { falseAcceptance, accuracy } = await corpus.measure(name, sphinx, { voices: fliteVoices });
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
      logger: silentLogger,
    });
    const testSet = loadTestSet('grammarRejection.json');
    let accepted = 0;
    try {
      for (const utterance of testSet.outOfGrammar) {
        const heard = await corpus.recognize(testSet, utterance, testSet.voices[0] as Voice, plain);
        if (heard.matchedPhrase !== undefined) accepted++;
      }
    } finally {
      await plain.close();
    }
    expect(accepted).toBeGreaterThanOrEqual(testSet.outOfGrammar.length / 3);
  }, 120_000);
});
