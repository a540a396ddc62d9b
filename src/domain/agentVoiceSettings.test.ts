import { describe, expect, it } from 'vitest';
import { agentVoiceSettingsOf, checkAgentVoiceSettings } from './agentVoiceSettings.js';

describe('checkAgentVoiceSettings', () => {
  it('reads each stage with its fallbacks, offline defaults where a stage is left out', () => {
    expect(
      checkAgentVoiceSettings({
        stt: {
          provider: 'deepgram',
          model: 'nova-3',
          language: 'en-US',
          fallback: [{ provider: 'pocketsphinx' }],
        },
        tts: { provider: 'elevenlabs', voice: '21m00Tcm4TlvDq8ikWAM', options: { stability: 0.5 } },
      }),
    ).toEqual({
      stt: [{ provider: 'deepgram', model: 'nova-3', language: 'en-US' }, { provider: 'pocketsphinx' }],
      tts: [{ provider: 'elevenlabs', voice: '21m00Tcm4TlvDq8ikWAM', options: { stability: 0.5 } }],
      llm: [{ provider: 'openai' }],
      voicemail: {},
    });
    expect(checkAgentVoiceSettings({})).toEqual({
      stt: [{ provider: 'pocketsphinx' }],
      tts: [{ provider: 'flite' }],
      llm: [{ provider: 'openai' }],
      voicemail: {},
    });
  });

  it.each([
    [
      { tts: { provider: 'polly' } },
      /settings\.tts\.provider must be one of flite, openai, elevenlabs, cartesia/,
    ],
    [{ stt: { provider: 'whisperx' } }, /settings\.stt\.provider must be one of/],
    [{ tts: { voice: 'nobody' } }, /settings\.tts\.voice "nobody" is not a flite voice/],
    [{ tts: { provider: 'flite', speed: 2 } }, /settings\.tts\.speed is not a setting/],
    [{ voice: 'kal' }, /settings\.voice is not a setting/],
    [{ stt: { language: 'English!' } }, /settings\.stt\.language must be a language tag/],
    [{ tts: { fallback: [{ provider: 'flite', fallback: [] }] } }, /a fallback has no fallbacks/],
    [{ tts: { fallback: [{}, {}, {}, {}] } }, /at most 3 choices/],
    [{ tts: { fallback: [{ provider: 'nope' }] } }, /settings\.tts\.fallback\[0\]\.provider must be one of/],
    [{ llm: { model: '' } }, /settings\.llm\.model must be a text/],
    [{ tts: { options: { nested: { a: 1 } } } }, /settings\.tts\.options\.nested must be/],
    [{ voicemail: { action: 'sing' } }, /settings\.voicemail\.action/],
    [[], /the settings are a JSON object/],
  ])('refuses %j with a message naming the field', (settings, message) => {
    expect(() => checkAgentVoiceSettings(settings)).toThrow(message);
    try {
      checkAgentVoiceSettings(settings);
    } catch (error) {
      expect((error as { code?: string }).code).toBe('validation_error');
    }
  });
});

describe('agentVoiceSettingsOf (rows saved before the checks)', () => {
  it('keeps the parts that pass and uses the offline engine for the others', () => {
    expect(
      agentVoiceSettingsOf({
        tts: { voice: 'nobody' },
        stt: { provider: 'openai' },
        voicemail: { action: 'x' },
      }),
    ).toEqual({
      stt: [{ provider: 'openai' }],
      tts: [{ provider: 'flite' }],
      llm: [{ provider: 'openai' }],
      voicemail: {},
    });
    expect(agentVoiceSettingsOf(null).tts).toEqual([{ provider: 'flite' }]);
  });
});
