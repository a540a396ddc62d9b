import type { VoiceConfig } from '../config.js';
import { AppError } from '../domain/errors.js';
import type { AgentRecord, CallRecord } from '../domain/records.js';
import { renderTemplate, type VariableValue } from '../domain/templates.js';
import type { Logger } from '../logger.js';
import { type DialogScript, parseDialogScript } from './brains/dialogScript.js';
import { LlmBrain } from './brains/llmBrain.js';
import { ScriptBrain } from './brains/scriptBrain.js';
import type { AgentBrain } from './brains/types.js';
import type { EngineHealth } from './providers/enginePool.js';
import {
  FliteTextToSpeech,
  FvadDetectorFactory,
  OpenAiChatClient,
  type OpenAiCompatibleEndpoint,
  OpenAiSpeechToText,
  OpenAiTextToSpeech,
  PocketsphinxSpeechToText,
  type SpeechToText,
  type TextToSpeech,
  type VoiceActivityDetector,
} from './providers/index.js';

/**
 * An agent's voice settings (`settings` of the agent record), all optional:
 * `{ "tts": { "provider": "flite" | "openai", "voice": "kal", "model": "tts-1" },
 *    "stt": { "provider": "pocketsphinx" | "openai", "model": "whisper-1" },
 *    "llm": { "model": "gpt-4o-mini" },
 *    "voicemail": { "action": "leave_message" | "hang_up", "message": "…" } }`.
 * The HTTP providers use the service's OpenAI-compatible server (CALLWRIGHT_OPENAI_BASE_URL).
 */
export interface AgentVoiceSettings {
  tts?: { provider?: 'flite' | 'openai'; voice?: string; model?: string };
  stt?: { provider?: 'pocketsphinx' | 'openai'; model?: string };
  llm?: { model?: string };
  voicemail?: { action?: 'leave_message' | 'hang_up'; message?: string };
}

export interface CallVoice {
  brain: AgentBrain;
  tts: TextToSpeech;
  ttsVoice?: string;
  stt: SpeechToText;
  vad: VoiceActivityDetector;
  voicemail: { action: 'leave_message' | 'hang_up'; message: string | null };
}

const listenOnlyScript: DialogScript = {
  start: 'listening',
  nodes: { listening: { listen: [{ phrases: [], next: 'listening' }] } },
};

/** The call's variables: the agent's declared defaults, overridden by what the request sent. */
export function callVariables(agent: AgentRecord, call: CallRecord): Record<string, VariableValue> {
  const values: Record<string, VariableValue> = {};
  for (const variable of agent.variables) values[variable.name] = variable.default ?? '';
  return { ...values, ...(call.variables ?? {}) };
}

/**
 * The process's speech engines, started once (the offline ones take a second to load) and
 * shared by every call; plus the per-call choice of brain and providers from the agent.
 */
export class VoiceStack {
  private readonly httpTts = new Map<string, OpenAiTextToSpeech>();
  private readonly httpStt = new Map<string, OpenAiSpeechToText>();

  private constructor(
    readonly offlineTts: FliteTextToSpeech,
    readonly offlineStt: PocketsphinxSpeechToText,
    private readonly vadFactory: FvadDetectorFactory,
    private readonly config: VoiceConfig,
    private readonly logger: Logger,
  ) {}

  static async start(config: VoiceConfig, logger: Logger): Promise<VoiceStack> {
    const [tts, stt, vad] = await Promise.all([
      FliteTextToSpeech.start({ defaultVoice: 'kal', logger }),
      PocketsphinxSpeechToText.start({ processCount: config.sttWorkers, freeForm: true, logger }),
      FvadDetectorFactory.load(),
    ]);
    return new VoiceStack(tts, stt, vad, config, logger);
  }

  /** The offline engines' processes and failures, for /healthz, /readyz and /metrics. */
  engineHealth(): EngineHealth[] {
    return [this.offlineStt.health(), this.offlineTts.health()];
  }

  /** Voice activity detectors handed to calls and not yet closed (one per live call). */
  openVoiceActivityDetectors(): number {
    return this.vadFactory.openDetectors;
  }

  private endpoint(): OpenAiCompatibleEndpoint {
    if (!this.config.openAiBaseUrl) {
      throw new AppError(
        'validation_error',
        'this agent uses an HTTP provider but CALLWRIGHT_OPENAI_BASE_URL is not set',
      );
    }
    return {
      baseUrl: this.config.openAiBaseUrl,
      ...(this.config.openAiApiKey ? { apiKey: this.config.openAiApiKey } : {}),
    };
  }

  /** Picks the brain and the providers the agent asks for; throws a clear error when it cannot. */
  forCall(agent: AgentRecord, call: CallRecord, logger: Logger): CallVoice {
    const settings = agent.settings as AgentVoiceSettings;
    const variables = callVariables(agent, call);
    const firstMessageTemplate = call.firstMessage ?? agent.firstMessage;
    const firstMessage = firstMessageTemplate
      ? renderTemplate(firstMessageTemplate, variables) || null
      : null;
    let brain: AgentBrain;
    if (agent.brain === 'llm') {
      const systemPrompt =
        renderTemplate(agent.prompt, variables) +
        (call.context ? `\n\nContext for this call:\n${call.context}` : '');
      const chat = new OpenAiChatClient({
        endpoint: this.endpoint(),
        model: settings.llm?.model ?? this.config.llmModel,
        logger,
      });
      brain = new LlmBrain(chat, { systemPrompt, firstMessage, extraction: agent.extraction, logger });
    } else {
      // A script agent without a script says its first message, then listens (free-form).
      const script = agent.script === null ? listenOnlyScript : parseDialogScript(agent.script);
      brain = new ScriptBrain(script, variables, firstMessage);
    }
    const voicemailMessage = settings.voicemail?.message
      ? renderTemplate(settings.voicemail.message, variables)
      : null;
    return {
      brain,
      tts: this.ttsFor(settings),
      ...(settings.tts?.voice ? { ttsVoice: settings.tts.voice } : {}),
      stt: this.sttFor(settings),
      vad: this.vadFactory.create({ frameDurationMs: 20, aggressiveness: 2 }),
      voicemail: {
        action: settings.voicemail?.action ?? (voicemailMessage ? 'leave_message' : 'hang_up'),
        message: voicemailMessage,
      },
    };
  }

  private ttsFor(settings: AgentVoiceSettings): TextToSpeech {
    if (settings.tts?.provider !== 'openai') return this.offlineTts;
    const model = settings.tts.model ?? 'tts-1';
    let tts = this.httpTts.get(model);
    if (!tts) {
      tts = new OpenAiTextToSpeech({ endpoint: this.endpoint(), model });
      this.httpTts.set(model, tts);
    }
    return tts;
  }

  private sttFor(settings: AgentVoiceSettings): SpeechToText {
    if (settings.stt?.provider !== 'openai') return this.offlineStt;
    const model = settings.stt.model ?? 'whisper-1';
    let stt = this.httpStt.get(model);
    if (!stt) {
      stt = new OpenAiSpeechToText({ endpoint: this.endpoint(), model });
      this.httpStt.set(model, stt);
    }
    return stt;
  }

  async close(): Promise<void> {
    await Promise.allSettled([
      this.offlineTts.close(),
      this.offlineStt.close(),
      ...[...this.httpTts.values()].map((tts) => tts.close()),
      ...[...this.httpStt.values()].map((stt) => stt.close()),
    ]);
    this.logger.debug('voice stack closed');
  }
}
