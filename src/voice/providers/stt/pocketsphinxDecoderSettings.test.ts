import { describe, expect, it } from 'vitest';
import { decoderSettingNames, PocketsphinxSpeechToText } from './pocketsphinxSpeechToText.js';

// The decoder settings reach pocketsphinx's command line: only front-end and search settings may,
// never files (-hmm, -lm, -dict, -logfn) or values that could carry another argument.
describe('PocketsphinxSpeechToText decoderSettings', () => {
  it('refuses settings that name files', async () => {
    for (const name of ['-hmm', '-lm', '-dict', '-logfn', '-jsgf']) {
      expect(decoderSettingNames.has(name)).toBe(false);
      await expect(
        PocketsphinxSpeechToText.start({ freeForm: false, decoderSettings: { [name]: 'x' } }),
      ).rejects.toThrow(/not allowed/);
    }
  });

  it('refuses values that are not a plain number or list', async () => {
    for (const value of ['', '1 -hmm /x', 'a'.repeat(41), '/etc/passwd']) {
      await expect(
        PocketsphinxSpeechToText.start({ freeForm: false, decoderSettings: { '-wip': value } }),
      ).rejects.toThrow(/bad value/);
    }
  });
});
