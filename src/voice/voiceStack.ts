import type { VendorCredential, VoiceConfig } from '../config.js';
import type { TransferOptions } from '../domain/agentTools.js';
import {
  type AgentVoiceSettings,
  agentVoiceSettingsOf,
  defaultMachineSpeechMs,
  type LlmChoice,
  type SttChoice,
  type TtsChoice,
} from '../domain/agentVoiceSettings.js';
import type { AgentRecord, CallRecord } from '../domain/records.js';
import { renderTemplate, type VariableValue } from '../domain/templates.js';
import type { TurnTakingSettings } from '../domain/turnTakingSettings.js';
import { UsageMeter } from '../domain/usage.js';
import type { Logger } from '../logger.js';
import type { HostnameLookup } from '../net/hostGuard.js';
import { ToolCaller, type ToolCallTiming } from '../tools/toolCaller.js';
import type { VoicemailPolicy } from './answeringMachine.js';
import { type DialogScript, parseDialogScript } from './brains/dialogScript.js';
import { DisclosedBrain } from './brains/disclosedBrain.js';
import { LlmBrain } from './brains/llmBrain.js';
import { ScriptBrain } from './brains/scriptBrain.js';
import type { AgentBrain, CallAnalysisResult, CallbackScheduler } from './brains/types.js';
import { analyzeCall, failedAnalysis, scriptAnalysis } from './callAnalyst.js';
import { providerApology } from './conversationResult.js';
import type { EngineHealth } from './providers/enginePool.js';
import {
  FallbackSpeechToText,
  FallbackTextToSpeech,
  FliteTextToSpeech,
  FvadDetectorFactory,
  OpenAiChatClient,
  PocketsphinxSpeechToText,
  ProviderError,
  ProviderFailureLog,
  type SpeechToText,
  type TextToSpeech,
  type VoiceActivityDetector,
  type VoiceStage,
} from './providers/index.js';
import type { RealtimeSessionPlan } from './realtimeConversation.js';
import { realtimeBuiltInTools } from './realtimeTools.js';
import { RememberedSpeech } from './rememberedSpeech.js';
import {
  type AccountVendorKeys,
  connectionsFor,
  credentialFor,
  missingCredential,
  openAiEndpoint,
  refusedBaseUrl,
  type VendorConnectionPolicy,
  vendorSpeechToSpeech,
  vendorSpeechToText,
  vendorTextToSpeech,
} from './vendorAdapters.js';

export interface VoiceStackOptions {
  /** How vendor hosts are resolved at each connection (tests inject their own resolver). */
  vendorHostLookup?: HostnameLookup;
}

const voiceStageOf: Record<string, VoiceStage> = {
  'text-to-speech': 'tts',
  'speech-to-text': 'stt',
  'language-model': 'llm',
  'speech-to-speech': 'realtime',
};

/**
 * A stage of the agent has no provider this call can use (no credential for any choice): the call
 * is not dialled, and the reason goes into its metrics as a provider failure of kind `unusable`.
 */
export class StageUnusableError extends ProviderError {
  constructor(
    readonly stage: VoiceStage,
    provider: string,
    message: string,
  ) {
    super(provider, message, { kind: 'unusable' });
    this.name = 'StageUnusableError';
  }
}

/** A speech-to-speech session that holds the whole conversation in place of stt, llm and tts. */
export type CallRealtimeVoice = RealtimeSessionPlan;

export interface CallVoice {
  brain: AgentBrain;
  /** The agent's text-to-speech choices this process can use, each tried after the one before fails. */
  tts: TextToSpeech;
  ttsVoice?: string;
  /** Likewise for speech-to-text. */
  stt: SpeechToText;
  /** The offline voice, for the apology when every provider of a stage has failed. */
  apologyTts: TextToSpeech;
  /** Which vendor failed at which stage during the call (no credentials), for its record. */
  providerFailures: ProviderFailureLog;
  vad: VoiceActivityDetector;
  voicemail: VoicemailPolicy;
  /** How the agent takes turns (settings.turn_taking, or the defaults). */
  turnTaking: TurnTakingSettings;
  /** Where the agent may transfer the call: target name → E.164 number or SIP URI. */
  transferTargets: Readonly<Record<string, string>>;
  transferOptions: TransferOptions;
  ivrMaxPromptRepeats: number;
  /** Keys as RFC 4733 events where negotiated (else tones), or always as tones (settings.dtmf). */
  dtmf: 'rfc4733' | 'inband';
  /** settings.recording.enabled: false keeps no audio of the call (the transcript is kept). */
  recordingEnabled: boolean;
  /** Set when the agent talks through a speech-to-speech session (its brain then only extracts). */
  realtime?: CallRealtimeVoice;
  /** What the call used of each vendor, for its cost. */
  usage: UsageMeter;
  /** The variables the agent's tools' answers set (`response_variables`), for the call's record. */
  toolVariables?: () => Readonly<Record<string, VariableValue>>;
  /** Each tool call the call made so far, timed (src/tools/toolCaller.ts). */
  toolCalls?: () => readonly ToolCallTiming[];
  /** Closes what was made for this call alone (vendor adapters and their spare sockets). */
  release(): void;
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
  /** The offline voice of the apology, its audio kept once made: it plays at once, however busy flite is. */
  private readonly apologyTts: RememberedSpeech;

  private constructor(
    readonly offlineTts: FliteTextToSpeech,
    readonly offlineStt: PocketsphinxSpeechToText,
    private readonly vadFactory: FvadDetectorFactory,
    private readonly config: VoiceConfig,
    private readonly logger: Logger,
    private readonly vendorHostLookup: HostnameLookup | undefined,
  ) {
    this.apologyTts = new RememberedSpeech(offlineTts, logger);
    this.apologyTts.remember(providerApology, 'kal');
  }

  static async start(
    config: VoiceConfig,
    logger: Logger,
    options: VoiceStackOptions = {},
  ): Promise<VoiceStack> {
    const [tts, stt, vad] = await Promise.all([
      FliteTextToSpeech.start({ defaultVoice: 'kal', logger }),
      PocketsphinxSpeechToText.start({ processCount: config.sttWorkers, freeForm: true, logger }),
      FvadDetectorFactory.load(),
    ]);
    return new VoiceStack(tts, stt, vad, config, logger, options.vendorHostLookup);
  }

  /** The offline engines' processes and failures, for /healthz, /readyz and /metrics. */
  engineHealth(): EngineHealth[] {
    return [this.offlineStt.health(), this.offlineTts.health()];
  }

  /** Voice activity detectors handed to calls and not yet closed (one per live call). */
  openVoiceActivityDetectors(): number {
    return this.vadFactory.openDetectors;
  }

  /** How this call's credentials are guarded: the private-address setting as it is now. */
  private connectionPolicy(): VendorConnectionPolicy {
    return { allowPrivate: this.config.providerAllowPrivate, lookup: this.vendorHostLookup };
  }

  /** The choices of a stage this call can use, in order; a ProviderError naming what is missing. */
  private usable<T extends { provider: string; credential?: string }>(
    stage: string,
    choices: T[],
    keys: AccountVendorKeys,
  ): [T, ...T[]] {
    const missing: string[] = [];
    const usable = choices.filter((choice) => {
      const credential = credentialFor(choice.provider, this.config, keys, choice.credential);
      // A stored base URL is judged against the setting as it is now, not as it was when saved.
      const why =
        missingCredential(choice.provider, this.config, keys, choice.credential) ??
        (credential ? refusedBaseUrl(credential, this.connectionPolicy()) : null);
      if (why !== null) missing.push(`${choice.provider}: ${why}`);
      return why === null;
    });
    if (usable.length === 0)
      throw new StageUnusableError(
        voiceStageOf[stage] ?? 'tts',
        choices[0]?.provider ?? stage,
        `no ${stage} provider of this agent can be used (${missing.join('; ')})`,
      );
    return usable as [T, ...T[]];
  }

  /** The agent's language model (its first usable choice), metered into `usage`. */
  private chatFor(
    settings: AgentVoiceSettings,
    accountKeys: AccountVendorKeys,
    logger: Logger,
    usage: UsageMeter,
  ): OpenAiChatClient {
    const [llmChoice]: LlmChoice[] = this.usable('language-model', settings.llm, accountKeys);
    const llmCredential = credentialFor(
      'openai',
      this.config,
      accountKeys,
      llmChoice?.credential,
    ) as VendorCredential;
    return new OpenAiChatClient({
      endpoint: openAiEndpoint(llmCredential, connectionsFor(llmCredential, this.connectionPolicy())),
      model: llmChoice?.model ?? this.config.llmModel,
      logger,
      usage,
      ...(llmChoice?.options ? { vendorOptions: llmChoice.options } : {}),
      firstTokenTimeoutMs: this.config.llmFirstTokenTimeoutMs,
      chunkGapTimeoutMs: this.config.llmChunkGapTimeoutMs,
    });
  }

  /**
   * The post-call analysis of an ended call again, with the agent's settings as they are now
   * (POST /v1/calls/{id}/analysis): an llm agent's model reads the stored transcript; a script
   * agent's stored data is checked against its current schema. Never throws: a failure is an
   * analysis with `status: failed` and its reason (a missing credential included).
   */
  async reanalyze(
    agent: AgentRecord,
    call: CallRecord,
    logger: Logger,
    accountKeys: AccountVendorKeys = new Map(),
  ): Promise<CallAnalysisResult> {
    const settings = agentVoiceSettingsOf(agent.settings);
    let brain: Pick<AgentBrain, 'analyze'>;
    if (agent.brain === 'llm') {
      try {
        const chat = this.chatFor(settings, accountKeys, logger, new UsageMeter());
        brain = new LlmBrain(chat, {
          systemPrompt: '',
          firstMessage: null,
          extraction: agent.extraction,
          analysis: settings.analysis,
          logger,
          tools: null,
          transferTargets: [],
          analysisTimeoutMs: this.config.analysisTimeoutMs,
        });
      } catch (error) {
        return failedAnalysis(`the analysis failed: ${String((error as Error)?.message ?? error)}`);
      }
    } else
      brain = { analyze: async () => scriptAnalysis({ ...(call.extractedData ?? {}) }, settings.analysis) };
    return analyzeCall(brain, call.transcript, logger);
  }

  /**
   * Picks the brain and the providers the agent asks for — the first of each stage's choices whose
   * credentials this process has — before anything is dialled; throws a ProviderError when a stage
   * has none, so the call ends failed/provider_error instead of ringing a person it cannot speak to.
   */
  forCall(
    agent: AgentRecord,
    call: CallRecord,
    logger: Logger,
    accountKeys: AccountVendorKeys = new Map(),
    /** How the agent's own tools are called: the account's signing secrets and the address guard. */
    toolAccess: {
      signingSecrets: readonly string[] | null;
      allowPrivate: boolean;
      /** Opens the sealed secrets of the agent's tools (headers, auth). */
      openSecret?: (sealed: string) => string;
      /** Schedules a callback the callee asks for (the call's campaign contact); absent: not offered. */
      scheduleCallback?: CallbackScheduler;
    } = {
      signingSecrets: null,
      allowPrivate: false,
    },
  ): CallVoice {
    const settings: AgentVoiceSettings = agentVoiceSettingsOf(agent.settings);
    const usage = new UsageMeter();
    const variables = callVariables(agent, call);
    const firstMessageTemplate = call.firstMessage ?? agent.firstMessage;
    const firstMessage = firstMessageTemplate
      ? renderTemplate(firstMessageTemplate, variables) || null
      : null;
    const disclosure = settings.recording.disclosure
      ? renderTemplate(settings.recording.disclosure, variables) || null
      : null;
    const ttsChoices = this.usable('text-to-speech', settings.tts, accountKeys);
    const sttChoices = this.usable('speech-to-text', settings.stt, accountKeys);
    let brain: AgentBrain;
    let realtime: CallRealtimeVoice | undefined;
    let toolCaller: ToolCaller | null = null;
    if (agent.brain === 'llm') {
      const systemPrompt =
        renderTemplate(agent.prompt, variables) +
        (call.context ? `\n\nContext for this call:\n${call.context}` : '');
      const chat = this.chatFor(settings, accountKeys, logger, usage);
      const tools =
        settings.tools.length === 0
          ? null
          : new ToolCaller({
              callId: call.id,
              variables,
              tools: settings.tools,
              signingSecrets: toolAccess.signingSecrets,
              allowPrivate: toolAccess.allowPrivate,
              logger,
              openSecret: toolAccess.openSecret ?? null,
            });
      toolCaller = tools;
      brain = new LlmBrain(chat, {
        systemPrompt,
        firstMessage,
        extraction: agent.extraction,
        analysis: settings.analysis,
        logger,
        tools,
        transferTargets: Object.keys(settings.transferTargets),
        analysisTimeoutMs: this.config.analysisTimeoutMs,
        ...(toolAccess.scheduleCallback ? { scheduleCallback: toolAccess.scheduleCallback } : {}),
      });
      if (settings.realtime) {
        const [choice] = this.usable('speech-to-speech', [settings.realtime], accountKeys);
        const realtimeCredential = credentialFor(
          choice.provider,
          this.config,
          accountKeys,
          choice.credential,
        ) as VendorCredential;
        realtime = {
          speechToSpeech: vendorSpeechToSpeech(
            choice,
            realtimeCredential,
            logger,
            connectionsFor(realtimeCredential, this.connectionPolicy()),
            this.config.realtimePongTimeoutMs,
          ),
          session: {
            instructions: systemPrompt,
            tools: [
              ...realtimeBuiltInTools(Object.keys(settings.transferTargets)),
              ...settings.tools.map(({ name, description, parameters }) => ({
                name,
                description,
                parameters,
              })),
            ],
            ...(choice.voice ? { voice: choice.voice } : {}),
            ...(choice.language ? { language: choice.language } : {}),
          },
          provider: `${choice.provider}-realtime`,
          model: choice.model ?? 'gpt-realtime',
          // The session says the disclosure as the first words of its greeting.
          firstMessage: disclosure ? [disclosure, firstMessage].filter(Boolean).join(' ') : firstMessage,
          firstAudioTimeoutMs: this.config.vendorFirstAudioTimeoutMs,
          chunkGapTimeoutMs: this.config.vendorChunkGapTimeoutMs,
          tools,
        };
      }
    } else {
      // A script agent without a script says its first message, then listens (free-form).
      const script = agent.script === null ? listenOnlyScript : parseDialogScript(agent.script);
      brain = new ScriptBrain(
        script,
        variables,
        firstMessage,
        settings.analysis,
        toolAccess.scheduleCallback ?? null,
      );
    }
    if (disclosure) brain = new DisclosedBrain(brain, disclosure);
    const voicemailMessage = settings.voicemail.message
      ? renderTemplate(settings.voicemail.message, variables)
      : null;
    const providerFailures = new ProviderFailureLog();
    const ownAdapters: TextToSpeech[] = [];
    return {
      brain,
      tts: new FallbackTextToSpeech(
        ttsChoices.map((choice) => ({
          provider: choice.provider,
          tts: this.ttsFor(choice, accountKeys, logger, ownAdapters),
          ...(choice.voice ? { voice: choice.voice } : {}),
          ...(choice.model ? { model: choice.model } : {}),
          ...(choice.provider === 'flite'
            ? {}
            : {
                firstAudioTimeoutMs: this.config.vendorFirstAudioTimeoutMs,
                chunkGapTimeoutMs: this.config.vendorChunkGapTimeoutMs,
              }),
        })),
        providerFailures,
        usage,
      ),
      stt: new FallbackSpeechToText(
        sttChoices.map((choice) => ({
          provider: choice.provider,
          stt: this.sttFor(choice, accountKeys, logger),
          ...(choice.model ? { model: choice.model } : {}),
          ...(choice.provider === 'pocketsphinx'
            ? {}
            : { finalTimeoutMs: this.config.vendorFinalTranscriptTimeoutMs }),
        })),
        providerFailures,
        usage,
      ),
      apologyTts: this.apologyTts,
      providerFailures,
      usage,
      vad: this.vadFactory.create({ frameDurationMs: 20, aggressiveness: 2 }),
      voicemail: {
        action: settings.voicemail.action ?? (voicemailMessage ? 'leave_message' : 'hang_up'),
        message: voicemailMessage,
        waitForDecision: settings.voicemail.waitForDecision === true,
        // Speaking first, the callee's words may be replies to the agent (crosstalk reads as a long
        // greeting): by default only a beep acts then; waiting for the decision, the greeting does.
        detection: settings.voicemail.detection ?? (settings.voicemail.waitForDecision ? 'early' : 'beep'),
        machineSpeechMs: settings.voicemail.machineSpeechMs ?? defaultMachineSpeechMs,
      },
      turnTaking: settings.turnTaking,
      transferTargets: settings.transferTargets,
      transferOptions: settings.transferOptions,
      ivrMaxPromptRepeats: settings.ivrMaxPromptRepeats,
      dtmf: settings.dtmf,
      recordingEnabled: settings.recording.enabled,
      toolVariables: () => toolCaller?.mappedVariables() ?? {},
      toolCalls: () => toolCaller?.timings() ?? [],
      ...(realtime ? { realtime } : {}),
      release: () => {
        for (const adapter of ownAdapters.splice(0))
          adapter
            .close()
            .catch((error: unknown) => logger.debug({ err: error }, 'a voice adapter did not close'));
      },
    };
  }

  private ttsFor(
    choice: TtsChoice,
    keys: AccountVendorKeys,
    logger: Logger,
    ownAdapters: TextToSpeech[],
  ): TextToSpeech {
    if (choice.provider === 'flite') return this.offlineTts;
    const credential = credentialFor(
      choice.provider,
      this.config,
      keys,
      choice.credential,
    ) as VendorCredential;
    const adapter = vendorTextToSpeech(
      choice,
      credential,
      logger,
      connectionsFor(credential, this.connectionPolicy()),
    );
    ownAdapters.push(adapter);
    return adapter;
  }

  private sttFor(choice: SttChoice, keys: AccountVendorKeys, logger: Logger): SpeechToText {
    if (choice.provider === 'pocketsphinx') return this.offlineStt;
    const credential = credentialFor(
      choice.provider,
      this.config,
      keys,
      choice.credential,
    ) as VendorCredential;
    return vendorSpeechToText(
      choice,
      credential,
      logger,
      connectionsFor(credential, this.connectionPolicy()),
    );
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.offlineTts.close(), this.offlineStt.close()]);
    this.logger.debug('voice stack closed');
  }
}
