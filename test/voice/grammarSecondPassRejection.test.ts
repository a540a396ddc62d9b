import { afterAll, beforeAll, expect, it } from 'vitest';
import { PocketsphinxSpeechToText } from '../../src/voice/providers/index.js';
import { fliteVoices, GrammarCorpus, silentLogger } from '../helpers/grammarCorpus.js';

/**
 * With the free-form second pass on (the service's default), the grammar-rejection corpus's
 * out-of-grammar answers must still fill no field (≤ 5%): the second pass must not undo the
 * rejection. The tuning set here; the held-out set in grammarSecondPassHeldOut.test.ts (two files: the runner spreads their minutes over its forks). The corpus is test/helpers/grammarCorpus.ts's; figures in docs/benchmarks.md.
 */

let corpus: GrammarCorpus;

beforeAll(async () => {
  corpus = await GrammarCorpus.start();
}, 60_000);

afterAll(async () => {
  await corpus?.close();
});

it('lets ≤ 5% of the tuning set’s out-of-grammar answers fill a field, in espeak-ng’s and flite’s voices', async () => {
  const withSecondPass = await PocketsphinxSpeechToText.start({ processCount: 1, logger: silentLogger });
  try {
    for (const voices of [undefined, fliteVoices]) {
      const { falseAcceptance } = await corpus.measure('grammarRejection.json', withSecondPass, {
        ...(voices ? { voices } : {}),
        label: ' (second pass)',
      });
      expect(falseAcceptance).toBeLessThanOrEqual(0.05);
    }
  } finally {
    await withSecondPass.close();
  }
}, 600_000);
