import {
  type AgentTool,
  checkAgentTools,
  checkIvrSettings,
  checkTransferOptions,
  checkTransferTargets,
  defaultIvrMaxPromptRepeats,
  defaultTransferOptions,
  type TransferOptions,
  type TransferTargets,
} from './agentTools.js';
import { type AnalysisSettings, checkAnalysisSettings, noAnalysisSettings } from './callAnalysis.js';
import { isObject, onlyKnownFields, type RawSettings, refuse, wholeNumber } from './settingsParsing.js';
import { checkTurnTaking, defaultTurnTaking, type TurnTakingSettings } from './turnTakingSettings.js';
import { checkVendorOptions, type VendorOptionStage, type VendorOptions } from './vendorOptions.js';

/**
 * An agent's voice settings (the `settings` of the agent record): which speech recogniser, language
 * model and voice hold its calls, each with an ordered fallback list. Checked when an agent is
 * saved, so a call is never placed with an agent whose settings name a provider, voice or field
 * that does not exist (such an agent used to stay mute until the silence timeout).
 *
 * ```json
 * { "stt": { "provider": "deepgram", "model": "nova-3", "language": "en",
 *            "fallback": [{ "provider": "pocketsphinx" }] },
 *   "llm": { "provider": "openai", "model": "gpt-4o-mini" },
 *   "tts": { "provider": "elevenlabs", "voice": "21m00Tcm4TlvDq8ikWAM",
 *            "fallback": [{ "provider": "flite", "voice": "slt" }] },
 *   "voicemail": { "action": "leave_message", "message": "…" } }
 * ```
 * Every part is optional; without `provider` a stage uses the offline engine (pocketsphinx, flite).
 * Instead of the three stages an llm agent may name one speech-to-speech session, which hears,
 * thinks and speaks at once: `{ "realtime": { "provider": "openai", "model": "gpt-realtime",
 * "voice": "marin", "options": { "turn_detection": "semantic_vad" } } }`.
 */

export const sttProviders = ['pocketsphinx', 'openai', 'deepgram'] as const;
export const ttsProviders = ['flite', 'openai', 'elevenlabs', 'cartesia', 'deepgram'] as const;
/** `openai`: any OpenAI-compatible chat endpoint (OpenAI, Groq, Together, vLLM, Ollama…). */
export const llmProviders = ['openai'] as const;
/** The vendors an account can store its own key for (the offline engines need none). */
export const credentialProviders = ['deepgram', 'elevenlabs', 'cartesia', 'openai'] as const;
/** Speech-to-speech sessions (audio in, audio and transcripts out) that replace stt, llm and tts. */
export const realtimeProviders = ['openai'] as const;
/** How a speech-to-speech session decides that the callee's turn has ended. */
export const realtimeTurnDetections = ['server_vad', 'semantic_vad'] as const;
/** The voices the offline flite engine has. */
export const fliteVoiceNames = ['kal', 'kal16', 'slt', 'rms', 'awb', 'awb_time'] as const;

export type SttProvider = (typeof sttProviders)[number];
export type TtsProvider = (typeof ttsProviders)[number];
export type LlmProvider = (typeof llmProviders)[number];
export type RealtimeProvider = (typeof realtimeProviders)[number];
export type RealtimeTurnDetection = (typeof realtimeTurnDetections)[number];

/**
 * Vendor options passed through to the provider: flat, small, scalar values only, each one the
 * provider's catalog lists (src/domain/vendorOptions.ts).
 */
export type { VendorOptions } from './vendorOptions.js';

export interface SttChoice {
  provider: SttProvider;
  /** The name of one of the account's credentials for the provider (its key and base URL). */
  credential?: string;
  model?: string;
  language?: string;
  options?: VendorOptions;
}

export interface TtsChoice {
  provider: TtsProvider;
  credential?: string;
  model?: string;
  voice?: string;
  language?: string;
  options?: VendorOptions;
}

export interface LlmChoice {
  provider: LlmProvider;
  /** E.g. the account's credential whose base URL is Groq's, Together's or an Azure deployment. */
  credential?: string;
  model?: string;
  options?: VendorOptions;
}

export interface RealtimeChoice {
  provider: RealtimeProvider;
  credential?: string;
  model?: string;
  voice?: string;
  language?: string;
  turnDetection: RealtimeTurnDetection;
  options?: VendorOptions;
}

export interface VoicemailChoice {
  action?: 'leave_message' | 'hang_up';
  message?: string;
  /** The agent says nothing until it is decided who answered (a person, a machine). */
  waitForDecision?: boolean;
  /**
   * `early`: a machine decided from the greeting is acted on; `beep`: only a beep is. Default:
   * `early` with wait_for_decision, else `beep`.
   */
  detection?: 'early' | 'beep';
  /** First words that run on this long without a pause are a recording (ms). */
  machineSpeechMs?: number;
}

/** The default of settings.voicemail.machine_speech_ms (the same as Twilio's speech threshold). */
export const defaultMachineSpeechMs = 2_400;

export interface AgentVoiceSettings {
  /** The first choice, then its fallbacks, in order; never empty. */
  stt: SttChoice[];
  tts: TtsChoice[];
  llm: LlmChoice[];
  /** A speech-to-speech session in place of stt, llm and tts; null when the agent uses the stages. */
  realtime: RealtimeChoice | null;
  voicemail: VoicemailChoice;
  /** When the agent speaks and stops (settings.turn_taking); the defaults when not given. */
  turnTaking: TurnTakingSettings;
  /** Functions on the customer's server the model may call (settings.tools, src/domain/agentTools.ts). */
  tools: AgentTool[];
  /** What is worked out of the call once it is over (settings.analysis, src/domain/callAnalysis.ts). */
  analysis: AnalysisSettings;
  /** Where the agent may transfer the call (settings.transfer.targets); empty: no transfer_call. */
  transferTargets: TransferTargets;
  /** Warm or cold, the whisper, the bridge when REFER is refused (settings.transfer). */
  transferOptions: TransferOptions;
  /** How often one phone-menu prompt may be heard before the call ends `ivr_loop` (settings.ivr). */
  ivrMaxPromptRepeats: number;
  /**
   * settings.dtmf: `rfc4733` (default) sends keys as RFC 4733 events where the line negotiated
   * them and as tones otherwise; `inband` always as tones in the audio (and listens for tones).
   */
  dtmf: 'rfc4733' | 'inband';
  /** settings.recording: whether the call's audio is kept, and a disclosure said first (a template). */
  recording: RecordingSettings;
}

export interface RecordingSettings {
  enabled: boolean;
  disclosure: string | null;
}

export const defaultRecordingSettings: RecordingSettings = { enabled: true, disclosure: null };

function parseRecording(raw: unknown): RecordingSettings {
  if (raw === undefined) return defaultRecordingSettings;
  if (!isObject(raw)) refuse('settings.recording must be an object {"enabled": true, "disclosure": "…"}');
  onlyKnownFields('settings.recording', raw, ['enabled', 'disclosure']);
  const { enabled, disclosure } = raw;
  if (enabled !== undefined && typeof enabled !== 'boolean')
    refuse('settings.recording.enabled must be true or false');
  if (
    disclosure !== undefined &&
    (typeof disclosure !== 'string' || disclosure.trim() === '' || disclosure.length > 500)
  )
    refuse('settings.recording.disclosure must be a text of 1 to 500 characters');
  return { enabled: enabled !== false, disclosure: typeof disclosure === 'string' ? disclosure : null };
}

function parseDtmf(raw: unknown): 'rfc4733' | 'inband' {
  if (raw === undefined) return 'rfc4733';
  if (raw !== 'rfc4733' && raw !== 'inband') refuse('settings.dtmf must be rfc4733 or inband');
  return raw;
}

export const voiceSettingsLimits = {
  fallbacksMax: 3,
  textMaxChars: 200,
  optionsMax: 20,
  voicemailMessageMaxChars: 2_000,
} as const;

type Raw = RawSettings;

function optionalText(where: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.trim() === '' || value.length > voiceSettingsLimits.textMaxChars)
    refuse(`${where} must be a text of 1 to ${voiceSettingsLimits.textMaxChars} characters`);
  return value;
}

/** A BCP-47-like language tag (`en`, `en-US`, `pt-BR`, `multi`). */
function optionalLanguage(where: string, value: unknown): string | undefined {
  const text = optionalText(where, value);
  if (text !== undefined && !/^([a-z]{2,3}(-[A-Za-z0-9]{2,8})*|multi)$/.test(text))
    refuse(`${where} must be a language tag such as en or en-US (got "${text.slice(0, 20)}")`);
  return text;
}

/**
 * A choice's vendor options: an object of at most `optionsMax` options, each one its provider's
 * catalog lists with a value that fits. `strict` (an agent being saved) refuses the first that does
 * not, naming it (`settings.stt.options.foo`); otherwise (a stored row read for a call) such an
 * option is left out and the rest are sent.
 */
function optionalOptions(
  where: string,
  value: unknown,
  stage: VendorOptionStage,
  provider: string,
  strict: boolean,
): VendorOptions | undefined {
  if (value === undefined) return undefined;
  if (!isObject(value)) refuse(`${where} must be an object of vendor options`);
  if (Object.keys(value).length > voiceSettingsLimits.optionsMax)
    refuse(`${where} has more than ${voiceSettingsLimits.optionsMax} options`);
  const { options, problem } = checkVendorOptions(where, stage, provider, value);
  if (strict && problem !== null) refuse(problem);
  return Object.keys(options).length > 0 ? options : undefined;
}

/** The name of one of the account's credentials; offline engines take none. */
function optionalCredential(where: string, value: unknown, provider: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^[A-Za-z0-9_.-]{1,64}$/.test(value))
    refuse(`${where}.credential must be the name of one of the account's credentials`);
  if (provider === 'flite' || provider === 'pocketsphinx')
    refuse(`${where}.credential: the offline engine ${provider} takes no credential`);
  return value;
}

function providerOf<P extends string>(where: string, value: unknown, known: readonly P[], offline: P): P {
  if (value === undefined) return offline;
  if (typeof value !== 'string' || !(known as readonly string[]).includes(value))
    refuse(
      `${where}.provider must be one of ${known.join(', ')} (got ${JSON.stringify(value)?.slice(0, 40)})`,
    );
  return value as P;
}

function chain<T>(
  where: string,
  raw: unknown,
  parseOne: (where: string, value: Raw, strict: boolean) => T,
  strict = true,
): T[] {
  if (raw === undefined) return [];
  if (!isObject(raw)) refuse(`${where} must be an object`);
  const { fallback, ...first } = raw;
  const choices = [parseOne(where, first, strict)];
  if (fallback === undefined) return choices;
  if (!Array.isArray(fallback) || fallback.length > voiceSettingsLimits.fallbacksMax)
    refuse(`${where}.fallback must be a list of at most ${voiceSettingsLimits.fallbacksMax} choices`);
  fallback.forEach((entry, index) => {
    const at = `${where}.fallback[${index}]`;
    if (!isObject(entry)) refuse(`${at} must be an object`);
    if ('fallback' in entry) refuse(`${at}.fallback: a fallback has no fallbacks of its own`);
    choices.push(parseOne(at, entry, strict));
  });
  return choices;
}

function parseStt(where: string, value: Raw, strict: boolean): SttChoice {
  onlyKnownFields(where, value, ['provider', 'credential', 'model', 'language', 'options', 'fallback']);
  const choice: SttChoice = { provider: providerOf(where, value.provider, sttProviders, 'pocketsphinx') };
  const credential = optionalCredential(where, value.credential, choice.provider);
  const model = optionalText(`${where}.model`, value.model);
  const language = optionalLanguage(`${where}.language`, value.language);
  const options = optionalOptions(`${where}.options`, value.options, 'stt', choice.provider, strict);
  return {
    ...choice,
    ...(credential ? { credential } : {}),
    ...(model ? { model } : {}),
    ...(language ? { language } : {}),
    ...(options ? { options } : {}),
  };
}

function parseTts(where: string, value: Raw, strict: boolean): TtsChoice {
  onlyKnownFields(where, value, [
    'provider',
    'credential',
    'model',
    'voice',
    'language',
    'options',
    'fallback',
  ]);
  const provider = providerOf(where, value.provider, ttsProviders, 'flite');
  const credential = optionalCredential(where, value.credential, provider);
  const model = optionalText(`${where}.model`, value.model);
  const voice = optionalText(`${where}.voice`, value.voice);
  if (provider === 'flite' && voice !== undefined && !(fliteVoiceNames as readonly string[]).includes(voice))
    refuse(`${where}.voice "${voice.slice(0, 40)}" is not a flite voice (${fliteVoiceNames.join(', ')})`);
  if (voice !== undefined && !/^[A-Za-z0-9_.:-]+$/.test(voice))
    refuse(`${where}.voice "${voice.slice(0, 40)}" is not a voice name or id`);
  const language = optionalLanguage(`${where}.language`, value.language);
  const options = optionalOptions(`${where}.options`, value.options, 'tts', provider, strict);
  return {
    provider,
    ...(credential ? { credential } : {}),
    ...(model ? { model } : {}),
    ...(voice ? { voice } : {}),
    ...(language ? { language } : {}),
    ...(options ? { options } : {}),
  };
}

function parseLlm(where: string, value: Raw, strict: boolean): LlmChoice {
  onlyKnownFields(where, value, ['provider', 'credential', 'model', 'options', 'fallback']);
  const provider = providerOf(where, value.provider, llmProviders, 'openai');
  const credential = optionalCredential(where, value.credential, provider);
  const model = optionalText(`${where}.model`, value.model);
  const options = optionalOptions(`${where}.options`, value.options, 'llm', provider, strict);
  return {
    provider,
    ...(credential ? { credential } : {}),
    ...(model ? { model } : {}),
    ...(options ? { options } : {}),
  };
}

function parseRealtime(raw: unknown, strict = true): RealtimeChoice | null {
  if (raw === undefined || raw === null) return null;
  const where = 'settings.realtime';
  if (!isObject(raw)) refuse(`${where} must be an object`);
  onlyKnownFields(where, raw, ['provider', 'credential', 'model', 'voice', 'language', 'options']);
  if (raw.provider === undefined) refuse(`${where}.provider is required (${realtimeProviders.join(', ')})`);
  const provider = providerOf(where, raw.provider, realtimeProviders, 'openai');
  const credential = optionalCredential(where, raw.credential, provider);
  const model = optionalText(`${where}.model`, raw.model);
  const voice = optionalText(`${where}.voice`, raw.voice);
  if (voice !== undefined && !/^[A-Za-z0-9_.:-]+$/.test(voice))
    refuse(`${where}.voice "${voice.slice(0, 40)}" is not a voice name or id`);
  const language = optionalLanguage(`${where}.language`, raw.language);
  const { turn_detection: turnDetection = 'server_vad', ...vendorOptions } =
    optionalOptions(`${where}.options`, raw.options, 'realtime', provider, strict) ?? {};
  if (!(realtimeTurnDetections as readonly unknown[]).includes(turnDetection))
    refuse(`${where}.options.turn_detection must be one of ${realtimeTurnDetections.join(', ')}`);
  // The vendor refuses tuning of the other kind of turn detection: so do we, naming it.
  const otherKindOnly =
    turnDetection === 'semantic_vad'
      ? ['threshold', 'prefix_padding_ms', 'silence_duration_ms', 'idle_timeout_ms']
      : ['eagerness'];
  for (const name of otherKindOnly) {
    if (!(name in vendorOptions)) continue;
    if (strict)
      refuse(
        `${where}.options.${name} applies to ${turnDetection === 'semantic_vad' ? 'server_vad' : 'semantic_vad'} turn detection only`,
      );
    delete vendorOptions[name];
  }
  return {
    provider,
    turnDetection: turnDetection as RealtimeTurnDetection,
    ...(credential ? { credential } : {}),
    ...(model ? { model } : {}),
    ...(voice ? { voice } : {}),
    ...(language ? { language } : {}),
    ...(Object.keys(vendorOptions).length > 0 ? { options: vendorOptions } : {}),
  };
}

function parseVoicemail(raw: unknown): VoicemailChoice {
  if (raw === undefined) return {};
  if (!isObject(raw)) refuse('settings.voicemail must be an object');
  onlyKnownFields('settings.voicemail', raw, [
    'action',
    'message',
    'wait_for_decision',
    'detection',
    'machine_speech_ms',
  ]);
  const { action, message, wait_for_decision: waitForDecision, detection } = raw;
  const machineSpeechMs =
    raw.machine_speech_ms === undefined
      ? undefined
      : wholeNumber('settings.voicemail.machine_speech_ms', raw.machine_speech_ms, 1_000, 6_000, 0);
  if (detection !== undefined && detection !== 'early' && detection !== 'beep')
    refuse('settings.voicemail.detection must be early or beep');
  if (waitForDecision !== undefined && typeof waitForDecision !== 'boolean')
    refuse('settings.voicemail.wait_for_decision must be true or false');
  if (action !== undefined && action !== 'leave_message' && action !== 'hang_up')
    refuse('settings.voicemail.action must be leave_message or hang_up');
  if (
    message !== undefined &&
    (typeof message !== 'string' || message.length > voiceSettingsLimits.voicemailMessageMaxChars)
  )
    refuse(
      `settings.voicemail.message must be a text of at most ${voiceSettingsLimits.voicemailMessageMaxChars} characters`,
    );
  return {
    ...(action ? { action } : {}),
    ...(message !== undefined ? { message } : {}),
    ...(waitForDecision !== undefined ? { waitForDecision } : {}),
    ...(detection ? { detection } : {}),
    ...(machineSpeechMs !== undefined ? { machineSpeechMs } : {}),
  };
}

/**
 * Checks the settings an agent is saved with; throws a 400 `validation_error` naming the first
 * unknown field, provider or voice. The stored form is the one given (it already fits).
 */
export function checkAgentVoiceSettings(raw: unknown, brain?: 'script' | 'llm'): AgentVoiceSettings {
  if (!isObject(raw)) refuse('the settings are a JSON object');
  onlyKnownFields('settings', raw, [
    'stt',
    'tts',
    'llm',
    'realtime',
    'voicemail',
    'turn_taking',
    'tools',
    'analysis',
    'transfer',
    'ivr',
    'dtmf',
    'recording',
  ]);
  const stt = chain('settings.stt', raw.stt, parseStt);
  const tts = chain('settings.tts', raw.tts, parseTts);
  const llm = chain('settings.llm', raw.llm, parseLlm);
  const realtime = parseRealtime(raw.realtime);
  if (realtime && (stt.length > 0 || tts.length > 0 || llm.length > 0))
    refuse('settings.realtime hears, thinks and speaks: an agent with it has no stt, llm or tts settings');
  if (realtime && brain === 'script')
    refuse('settings.realtime needs the llm brain (its prompt is the session instructions)');
  return {
    stt: stt.length > 0 ? stt : [{ provider: 'pocketsphinx' }],
    tts: tts.length > 0 ? tts : [{ provider: 'flite' }],
    llm: llm.length > 0 ? llm : [{ provider: 'openai' }],
    realtime,
    voicemail: parseVoicemail(raw.voicemail),
    turnTaking: checkTurnTaking(raw.turn_taking),
    tools: checkAgentTools(raw.tools, brain),
    analysis: checkAnalysisSettings(raw.analysis, brain),
    transferTargets: checkTransferTargets(raw.transfer),
    transferOptions: checkTransferOptions(raw.transfer),
    ivrMaxPromptRepeats: checkIvrSettings(raw.ivr).maxPromptRepeats,
    dtmf: parseDtmf(raw.dtmf),
    recording: parseRecording(raw.recording),
  };
}

/**
 * The settings of an agent already stored, for a call: the checked form, or — for a row saved
 * before these checks that does not pass them — each part that passes, the offline default for
 * each part that does not.
 */
export function agentVoiceSettingsOf(raw: unknown): AgentVoiceSettings {
  const parts = isObject(raw) ? raw : {};
  const orElse = <T>(parse: () => T[], otherwise: T): T[] => {
    try {
      const choices = parse();
      return choices.length > 0 ? choices : [otherwise];
    } catch {
      return [otherwise];
    }
  };
  /** A part that does not pass its check falls back to what an agent without it gets. */
  const partOr = <T>(parse: () => T, otherwise: T): T => {
    try {
      return parse();
    } catch {
      return otherwise;
    }
  };
  // Unreadable: no speech-to-speech (the stages), hang up on voicemail, the default turn-taking,
  // no tools (the model is not offered what cannot be called), the extraction fields alone, no
  // transfers, the default phone-menu guard.
  const realtime = partOr<RealtimeChoice | null>(() => parseRealtime(parts.realtime, false), null);
  const voicemail = partOr<VoicemailChoice>(() => parseVoicemail(parts.voicemail), {});
  const turnTaking = partOr(() => checkTurnTaking(parts.turn_taking), { ...defaultTurnTaking });
  const tools = partOr<AgentTool[]>(() => checkAgentTools(parts.tools), []);
  const analysis = partOr(() => checkAnalysisSettings(parts.analysis), noAnalysisSettings);
  const transferTargets = partOr<TransferTargets>(() => checkTransferTargets(parts.transfer), {});
  const transferOptions = partOr(() => checkTransferOptions(parts.transfer), defaultTransferOptions);
  const ivrMaxPromptRepeats = partOr(
    () => checkIvrSettings(parts.ivr).maxPromptRepeats,
    defaultIvrMaxPromptRepeats,
  );
  return {
    // Options saved before they were checked: the ones that fit are sent, the others left out.
    stt: orElse(() => chain('settings.stt', parts.stt, parseStt, false), {
      provider: 'pocketsphinx' as const,
    }),
    tts: orElse(() => chain('settings.tts', parts.tts, parseTts, false), { provider: 'flite' as const }),
    llm: orElse(() => chain('settings.llm', parts.llm, parseLlm, false), { provider: 'openai' as const }),
    realtime,
    voicemail,
    turnTaking,
    tools,
    analysis,
    transferTargets,
    transferOptions,
    ivrMaxPromptRepeats,
    dtmf: partOr(() => parseDtmf(parts.dtmf), 'rfc4733' as const),
    recording: partOr(() => parseRecording(parts.recording), defaultRecordingSettings),
  };
}
