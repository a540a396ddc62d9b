import { describe, expect, it } from 'vitest';
import {
  decoderSettingNames,
  featureParamNames,
  PocketsphinxSpeechToText,
} from './pocketsphinxSpeechToText.js';

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

  // This build reads the acoustic model's feat.params after the command line: a filterbank setting
  // given as a decoder setting is overridden by the file, one given as a feature parameter is
  // written into the engine's copy of the file. An impossible filterbank (lower edge above the
  // upper) shows which of the two the engine read.
  it('writes feature parameters into the model copy, where the command line cannot reach', async () => {
    const impossible = { '-lowerf': '5000', '-upperf': '4000' };
    const ignored = await PocketsphinxSpeechToText.start({ freeForm: false, decoderSettings: impossible });
    await ignored.close();
    await expect(
      PocketsphinxSpeechToText.start({ freeForm: false, featureParams: impossible }),
    ).rejects.toThrow(/failed to start/);
  }, 120_000);

  it('refuses feature parameters other than the filterbank and normalisation', async () => {
    for (const name of ['-hmm', '-feat', '-svspec', '-model', '-wip']) {
      expect(featureParamNames.has(name)).toBe(false);
      await expect(
        PocketsphinxSpeechToText.start({ freeForm: false, featureParams: { [name]: '1' } }),
      ).rejects.toThrow(/not allowed/);
    }
  });
});
