import { describe, expect, it } from 'vitest';
import { defaultTransferOptions } from './agentTools.js';
import {
  agentVoiceSettingsOf,
  checkAgentVoiceSettings,
  defaultRecordingSettings,
} from './agentVoiceSettings.js';
import { noAnalysisSettings } from './callAnalysis.js';
import { checkTurnTaking, defaultTurnTaking } from './turnTakingSettings.js';

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
      realtime: null,
      voicemail: {},
      turnTaking: defaultTurnTaking,
      tools: [],
      analysis: noAnalysisSettings,
      transferTargets: {},
      transferOptions: defaultTransferOptions,
      ivrMaxPromptRepeats: 3,
      dtmf: 'rfc4733',
      recording: defaultRecordingSettings,
    });
    expect(checkAgentVoiceSettings({})).toEqual({
      stt: [{ provider: 'pocketsphinx' }],
      tts: [{ provider: 'flite' }],
      llm: [{ provider: 'openai' }],
      realtime: null,
      voicemail: {},
      turnTaking: defaultTurnTaking,
      tools: [],
      analysis: noAnalysisSettings,
      transferTargets: {},
      transferOptions: defaultTransferOptions,
      ivrMaxPromptRepeats: 3,
      dtmf: 'rfc4733',
      recording: defaultRecordingSettings,
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
    [
      { tts: { provider: 'elevenlabs', options: { stability: { a: 1 } } } },
      /settings\.tts\.options\.stability must be a number from 0 to 1/,
    ],
    [
      { stt: { provider: 'deepgram', options: { foo: 1 } } },
      /settings\.stt\.options\.foo is not an option of deepgram \(known: endpointing,/,
    ],
    [
      { stt: { provider: 'deepgram', options: { endpointing: 'soon' } } },
      /settings\.stt\.options\.endpointing must be a whole number from 10 to 10000, or false/,
    ],
    [
      { tts: { fallback: [{ provider: 'cartesia', options: { stability: 0.5 } }] } },
      /settings\.tts\.fallback\[0\]\.options\.stability is not an option of cartesia/,
    ],
    [
      { tts: { options: { speed: 1 } } },
      /settings\.tts\.options\.speed is not an option: flite takes no options/,
    ],
    [
      { llm: { options: { temperature: 3 } } },
      /settings\.llm\.options\.temperature must be a number from 0 to 2/,
    ],
    [
      { realtime: { provider: 'openai', options: { voice_speed: 1 } } },
      /settings\.realtime\.options\.voice_speed is not an option of openai/,
    ],
    [{ voicemail: { action: 'sing' } }, /settings\.voicemail\.action/],
    [
      { voicemail: { wait_for_decision: 'yes' } },
      /settings\.voicemail\.wait_for_decision must be true or false/,
    ],
    [{ voicemail: { detection: 'never' } }, /settings\.voicemail\.detection must be early or beep/],
    [{ dtmf: 'tones' }, /settings\.dtmf must be rfc4733 or inband/],
    [{ recording: { enabled: 'no' } }, /settings\.recording\.enabled must be true or false/],
    [{ recording: { disclosure: '' } }, /settings\.recording\.disclosure must be a text of 1 to 500/],
    [{ recording: { keep_days: 3 } }, /settings\.recording\.keep_days is not a setting/],
    [
      { transfer: { targets: { a: '+15550100001' }, warm: 'yes' } },
      /settings\.transfer\.warm must be true or false/,
    ],
    [
      { transfer: { targets: { a: '+15550100001' }, whisper: '' } },
      /settings\.transfer\.whisper must be a text/,
    ],
    [
      { transfer: { targets: { a: '+15550100001' }, bridge_when_refused: 1 } },
      /settings\.transfer\.bridge_when_refused must be true or false/,
    ],
    [{ voicemail: { machine_speech_ms: 500 } }, /machine_speech_ms must be a whole number from 1000 to 6000/],
    [[], /the settings are a JSON object/],
    [{ realtime: {} }, /settings\.realtime\.provider is required/],
    [{ llm: { credential: 'has space' } }, /settings\.llm\.credential must be the name/],
    [{ tts: { provider: 'flite', credential: 'x' } }, /the offline engine flite takes no credential/],
    [{ realtime: { provider: 'gemini' } }, /settings\.realtime\.provider must be one of openai/],
    [
      { realtime: { provider: 'openai', options: { turn_detection: 'push' } } },
      /turn_detection must be one of/,
    ],
    [{ realtime: { provider: 'openai', fallback: [] } }, /settings\.realtime\.fallback is not a setting/],
    [{ realtime: { provider: 'openai' }, tts: { provider: 'flite' } }, /has no stt, llm or tts settings/],
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
  it('sends the options of a stored row that fit and leaves out the others', () => {
    const settings = agentVoiceSettingsOf({
      stt: { provider: 'deepgram', options: { endpointing: 300, foo: 'bar', smart_format: 'yes' } },
    });
    expect(settings.stt).toEqual([{ provider: 'deepgram', options: { endpointing: 300 } }]);
  });

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
      realtime: null,
      voicemail: {},
      turnTaking: defaultTurnTaking,
      tools: [],
      analysis: noAnalysisSettings,
      transferTargets: {},
      transferOptions: defaultTransferOptions,
      ivrMaxPromptRepeats: 3,
      dtmf: 'rfc4733',
      recording: defaultRecordingSettings,
    });
    expect(agentVoiceSettingsOf(null).tts).toEqual([{ provider: 'flite' }]);
  });
});

describe('a speech-to-speech agent', () => {
  it('names one session in place of the three stages, with the vendor turn detection', () => {
    expect(
      checkAgentVoiceSettings(
        {
          realtime: {
            provider: 'openai',
            model: 'gpt-realtime',
            voice: 'marin',
            options: { turn_detection: 'semantic_vad', speed: 1.1 },
          },
        },
        'llm',
      ).realtime,
    ).toEqual({
      provider: 'openai',
      model: 'gpt-realtime',
      voice: 'marin',
      turnDetection: 'semantic_vad',
      options: { speed: 1.1 },
    });
    expect(checkAgentVoiceSettings({ realtime: { provider: 'openai' } }, 'llm').realtime?.turnDetection).toBe(
      'server_vad',
    );
  });

  it('needs the llm brain, whose prompt becomes the instructions', () => {
    expect(() => checkAgentVoiceSettings({ realtime: { provider: 'openai' } }, 'script')).toThrow(
      /settings\.realtime needs the llm brain/,
    );
  });
});

describe('a stage that names the account credential it uses', () => {
  it('keeps the name, for every stage and fallback', () => {
    const settings = checkAgentVoiceSettings(
      {
        llm: { provider: 'openai', credential: 'groq', model: 'llama-3.3-70b-versatile' },
        tts: {
          provider: 'elevenlabs',
          credential: 'eleven-eu',
          fallback: [{ provider: 'cartesia', credential: 'car' }],
        },
      },
      'llm',
    );
    expect(settings.llm).toEqual([
      { provider: 'openai', credential: 'groq', model: 'llama-3.3-70b-versatile' },
    ]);
    expect(settings.tts.map((choice) => choice.credential)).toEqual(['eleven-eu', 'car']);
  });
});

describe('settings.turn_taking', () => {
  it('takes per-agent waits, interruption thresholds and the quiet-line prompt, with defaults', () => {
    expect(checkTurnTaking(undefined)).toEqual(defaultTurnTaking);
    expect(
      checkTurnTaking({
        end_of_turn: { min_wait_ms: 200, max_wait_ms: 2000 },
        interruptions: { enabled: false, min_speech_ms: 800, min_words: 0 },
        max_utterance_ms: 20_000,
        wait_for_callee: true,
        still_there: { text: 'Hello?', count: 2 },
      }),
    ).toEqual({
      minWaitMs: 200,
      waitMs: 600,
      maxWaitMs: 2000,
      interruptionsEnabled: false,
      interruptionMinSpeechMs: 800,
      interruptionMinWords: 0,
      maxUtteranceMs: 20_000,
      waitForCallee: true,
      stillThereText: 'Hello?',
      stillThereCount: 2,
    });
    expect(
      checkAgentVoiceSettings({ turn_taking: { end_of_turn: { wait_ms: 900 } } }).turnTaking.waitMs,
    ).toBe(900);
  });

  it.each([
    [{ end_of_turn: { min_wait_ms: 50 } }, /min_wait_ms must be a whole number from 100/],
    [
      { end_of_turn: { min_wait_ms: 900, max_wait_ms: 400 } },
      /max_wait_ms must not be less than min_wait_ms/,
    ],
    [{ end_of_turn: { min_wait_ms: 300, wait_ms: 200 } }, /wait_ms must be a whole number from 300/],
    [{ interruptions: { enabled: 'no' } }, /interruptions\.enabled must be true or false/],
    [{ interruptions: { min_words: 9 } }, /min_words must be a whole number from 0 to 5/],
    [{ still_there: { text: '' } }, /still_there\.text must be a text/],
    [{ pause: 1 }, /settings\.turn_taking\.pause is not a setting/],
    ['fast', /settings\.turn_taking must be an object/],
  ])('refuses %j', (raw, message) => {
    expect(() => checkAgentVoiceSettings({ turn_taking: raw })).toThrow(message);
  });
});
