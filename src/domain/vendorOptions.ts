/**
 * The vendor options an agent may set per stage and provider (`settings.stt|tts|llm|realtime.options`),
 * with their types and ranges, taken from each vendor's API reference and official SDK types
 * (`@deepgram/sdk` ListenV1/SpeakV1 connect arguments, `openai` chat completion and Realtime
 * session types). An option not listed is refused when the agent is saved; one that is listed is
 * sent to the vendor on every connection (src/voice/providers/*; docs/voice-providers.md). Options
 * that the adapter itself must control (audio format, sample rate, interim results, streaming) are
 * deliberately absent. Pure data and checks, no I/O.
 */

export type VendorOptionValue = string | number | boolean;
export type VendorOptions = Record<string, VendorOptionValue>;

export type VendorOptionType =
  | { type: 'boolean' }
  /** A whole number in [min, max]; `orFalse`: `false` is accepted too (Deepgram `endpointing`). */
  | { type: 'integer'; min: number; max: number; orFalse?: boolean }
  | { type: 'number'; min: number; max: number }
  | { type: 'choice'; values: readonly string[] }
  /** A text of 1 to `maxChars` characters matching `pattern` when one is given. */
  | { type: 'text'; maxChars: number; pattern?: RegExp; patternHint?: string };

export type VendorOptionCatalog = Readonly<Record<string, VendorOptionType>>;

const bool = { type: 'boolean' } as const;
const integer = (min: number, max: number) => ({ type: 'integer', min, max }) as const;
const number = (min: number, max: number) => ({ type: 'number', min, max }) as const;
const choice = (...values: string[]) => ({ type: 'choice', values }) as const;
const text = (maxChars: number) => ({ type: 'text', maxChars }) as const;

/** Deepgram live transcription (`/v1/listen`): query parameters. */
const deepgramListen: VendorOptionCatalog = {
  endpointing: { type: 'integer', min: 10, max: 10_000, orFalse: true },
  utterance_end_ms: integer(1_000, 5_000),
  vad_events: bool,
  smart_format: bool,
  punctuate: bool,
  profanity_filter: bool,
  diarize: bool,
  dictation: bool,
  numerals: bool,
  filler_words: bool,
  detect_entities: bool,
  mip_opt_out: bool,
  redact: choice('pci', 'numbers', 'aggressive_numbers', 'ssn'),
  tag: text(128),
  extra: {
    type: 'text',
    maxChars: 128,
    pattern: /^[^:\s]{1,64}:[^\s]{1,63}$/,
    patternHint: 'key:value',
  },
  replace: {
    type: 'text',
    maxChars: 128,
    pattern: /^[^:]{1,64}:[^:]{0,63}$/,
    patternHint: 'term:replacement',
  },
  search: text(128),
  version: text(40),
};

/** OpenAI-compatible transcription (`/audio/transcriptions`): form fields. */
const openAiTranscription: VendorOptionCatalog = {
  prompt: text(200),
  temperature: number(0, 1),
};

/** ElevenLabs `stream-input`: query parameters, `voice_settings` and `generation_config` of the first message. */
const elevenLabs: VendorOptionCatalog = {
  // query
  enable_logging: bool,
  enable_ssml_parsing: bool,
  inactivity_timeout: integer(1, 180),
  auto_mode: bool,
  apply_text_normalization: choice('auto', 'on', 'off'),
  seed: integer(0, 4_294_967_295),
  // voice_settings
  stability: number(0, 1),
  similarity_boost: number(0, 1),
  style: number(0, 1),
  use_speaker_boost: bool,
  speed: number(0.7, 1.2),
  // generation_config: comma-separated whole numbers, e.g. "120,160,250,290"
  chunk_length_schedule: {
    type: 'text',
    maxChars: 40,
    pattern: /^(?:[5-9][0-9]|[1-4][0-9]{2}|500)(?:,(?:[5-9][0-9]|[1-4][0-9]{2}|500)){0,3}$/,
    patternHint: '1 to 4 comma-separated whole numbers from 50 to 500, e.g. 120,160,250,290',
  },
};

/** Cartesia `/tts/websocket` generation request: `generation_config` and top-level fields. */
const cartesia: VendorOptionCatalog = {
  speed: number(0.6, 1.5),
  volume: number(0.5, 2),
  emotion: {
    type: 'text',
    maxChars: 40,
    pattern: /^[a-z_]+(:[a-z_]+)?$/,
    patternHint: 'e.g. content or positivity:high',
  },
  max_buffer_delay_ms: integer(0, 5_000),
  pronunciation_dict_id: { type: 'text', maxChars: 100, pattern: /^[A-Za-z0-9_-]+$/, patternHint: 'an id' },
};

/** Deepgram Aura (`/v1/speak`): query parameters. */
const deepgramSpeak: VendorOptionCatalog = {
  speed: number(0.7, 1.5),
  mip_opt_out: bool,
};

/** OpenAI-compatible speech (`/audio/speech`): body fields. */
const openAiSpeech: VendorOptionCatalog = {
  speed: number(0.25, 4),
  instructions: text(200),
};

/** OpenAI-compatible chat completions: body fields of the conversation's requests. */
const openAiChat: VendorOptionCatalog = {
  temperature: number(0, 2),
  top_p: number(0, 1),
  max_tokens: integer(1, 100_000),
  max_completion_tokens: integer(1, 100_000),
  frequency_penalty: number(-2, 2),
  presence_penalty: number(-2, 2),
  seed: integer(-2_147_483_648, 2_147_483_647),
  service_tier: choice('auto', 'default', 'flex', 'priority'),
  reasoning_effort: choice('minimal', 'low', 'medium', 'high'),
  verbosity: choice('low', 'medium', 'high'),
  parallel_tool_calls: bool,
  store: bool,
  user: text(128),
  stop: text(64),
};

/** OpenAI Realtime `session.update` (GA interface): where each lands is in the adapter. */
const openAiRealtime: VendorOptionCatalog = {
  turn_detection: choice('server_vad', 'semantic_vad'),
  speed: number(0.25, 1.5),
  max_output_tokens: integer(1, 4_096),
  threshold: number(0, 1),
  prefix_padding_ms: integer(0, 2_000),
  silence_duration_ms: integer(100, 5_000),
  eagerness: choice('low', 'medium', 'high', 'auto'),
  idle_timeout_ms: integer(5_000, 30_000),
  noise_reduction: choice('near_field', 'far_field'),
  transcription_model: text(64),
};

const none: VendorOptionCatalog = {};

/** The options each stage's providers accept; the offline engines take none. */
export const vendorOptionCatalogs = {
  stt: { deepgram: deepgramListen, openai: openAiTranscription, pocketsphinx: none },
  tts: {
    elevenlabs: elevenLabs,
    cartesia,
    deepgram: deepgramSpeak,
    openai: openAiSpeech,
    flite: none,
  },
  llm: { openai: openAiChat },
  realtime: { openai: openAiRealtime },
} as const satisfies Record<string, Record<string, VendorOptionCatalog>>;

export type VendorOptionStage = keyof typeof vendorOptionCatalogs;

export function vendorOptionCatalog(stage: VendorOptionStage, provider: string): VendorOptionCatalog {
  return (vendorOptionCatalogs[stage] as Record<string, VendorOptionCatalog>)[provider] ?? none;
}

function describeType(option: VendorOptionType): string {
  switch (option.type) {
    case 'boolean':
      return 'true or false';
    case 'integer':
      return `a whole number from ${option.min} to ${option.max}${option.orFalse ? ', or false' : ''}`;
    case 'number':
      return `a number from ${option.min} to ${option.max}`;
    case 'choice':
      return `one of ${option.values.join(', ')}`;
    case 'text':
      return option.patternHint ?? `a text of 1 to ${option.maxChars} characters`;
  }
}

/** Why `value` does not fit `option`, or null when it does. */
export function vendorOptionProblem(option: VendorOptionType, value: unknown): string | null {
  const fits = (() => {
    switch (option.type) {
      case 'boolean':
        return typeof value === 'boolean';
      case 'integer':
        return (
          (option.orFalse === true && value === false) ||
          (typeof value === 'number' && Number.isInteger(value) && value >= option.min && value <= option.max)
        );
      case 'number':
        return (
          typeof value === 'number' && Number.isFinite(value) && value >= option.min && value <= option.max
        );
      case 'choice':
        return typeof value === 'string' && option.values.includes(value);
      case 'text':
        return (
          typeof value === 'string' &&
          value.trim() !== '' &&
          value.length <= option.maxChars &&
          (option.pattern === undefined || option.pattern.test(value))
        );
    }
  })();
  return fits ? null : `must be ${describeType(option)}`;
}

/**
 * The options of one stage's choice, checked against its provider's catalog: the first option that
 * is unknown or does not fit is named in `problem` (strict callers refuse the agent with it);
 * `options` holds the ones that fit (what a stored agent saved before these checks still sends).
 */
export function checkVendorOptions(
  where: string,
  stage: VendorOptionStage,
  provider: string,
  raw: Record<string, unknown>,
): { options: VendorOptions; problem: string | null } {
  const catalog = vendorOptionCatalog(stage, provider);
  const known = Object.keys(catalog);
  const options: VendorOptions = {};
  let problem: string | null = null;
  for (const [name, value] of Object.entries(raw)) {
    const option = Object.hasOwn(catalog, name) ? catalog[name] : undefined;
    const at = `${where}.${name.slice(0, 64)}`;
    if (option === undefined) {
      problem ??=
        known.length === 0
          ? `${at} is not an option: ${provider} takes no options`
          : `${at} is not an option of ${provider} (known: ${known.join(', ')})`;
      continue;
    }
    const why = vendorOptionProblem(option, value);
    if (why !== null) {
      problem ??= `${at} ${why}`;
      continue;
    }
    options[name] = value as VendorOptionValue;
  }
  return { options, problem };
}
