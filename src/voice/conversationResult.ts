import type { CallAnalysis } from '../domain/callAnalysis.js';
import type { AnsweredBy } from '../domain/callStatus.js';
import type { TranscriptEntry } from '../domain/records.js';
import { scrubSecrets } from '../domain/secretScrubbing.js';
import type { Logger } from '../logger.js';
import type { TransferResult } from '../telephony/sip/index.js';
import type { AgentBrain } from './brains/types.js';
import { analyzeCall } from './callAnalyst.js';
import type { CallRecorder } from './callRecorder.js';
import type { ProviderFailureLog } from './providers/index.js';
import type { TurnTimeline } from './turnTimeline.js';

/**
 * What the two conversation loops (the stage pipeline and the speech-to-speech session) share:
 * how a call ends from the agent's side, the apology, and the result and figures of a call.
 */
export type AgentEnding =
  | 'agent_hangup'
  | 'silence_timeout'
  | 'voicemail'
  | 'provider_error'
  | 'transferred'
  | 'ivr_loop';

/** What the call does for either conversation loop (src/calls/callSession.ts). */
export interface CallActions {
  /** Ends the call from the agent's side. */
  hangUp: (ending: AgentEnding) => void;
  /** A transfer to one of the agent's targets, by name (settings.transfer); absent: none. */
  transfer?: (target: string, summary?: string) => Promise<TransferResult>;
  /** Puts the callee's number on the account's do-not-call list (the callee asked). */
  addToDoNotCall?: () => Promise<void>;
  /** Called with the whole transcript so far each time a line is added (for a live view). */
  onTranscriptChange?: (transcript: TranscriptEntry[]) => void;
  /** The answering party's first decision (a person, a machine, or unknown when it cannot tell). */
  onAnsweredBy?: (answeredBy: AnsweredBy) => void;
}

/** Said in the offline voice when every provider of a stage has failed, before hanging up. */
export const providerApology = 'Sorry, we are having technical difficulties. We will call you back. Goodbye.';

export interface ConversationResult {
  transcript: TranscriptEntry[];
  answeredBy: AnsweredBy;
  extractedData: Record<string, unknown>;
  analysis: CallAnalysis;
  metrics: Record<string, unknown>;
  recorder: CallRecorder;
}

export function percentile(sorted: number[], quantile: number): number | null {
  if (sorted.length === 0) return null;
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(quantile * sorted.length))] as number);
}

/** The words of `text` the callee heard when `fraction` of its audio was played. */
export function heardPart(text: string, fraction: number): string {
  if (fraction >= 0.999) return text;
  const words = text.split(/\s+/);
  return words.slice(0, Math.floor(words.length * Math.max(0, fraction))).join(' ');
}

/**
 * What a conversation produced, once it is over: the extracted data (a failed extraction is logged
 * and leaves it empty) and the call's figures. Shared by the stage pipeline and the
 * speech-to-speech loop.
 */
export async function conversationResult(parts: {
  brain: AgentBrain;
  logger: Logger;
  transcript: TranscriptEntry[];
  answeredBy: AnsweredBy;
  recorder: CallRecorder;
  /**
   * Each turn's latency waterfall (the stage pipeline); without it, `latenciesMs` (the
   * speech-to-speech loop: end of the callee's turn → first RTP).
   */
  timeline?: TurnTimeline;
  latenciesMs?: readonly number[];
  bargeIns: number;
  bargeInStopsMs: number[];
  dtmfReceived: string;
  providerFailures: ProviderFailureLog;
  /** Turns the recogniser's end-of-speech signal ended before the silence window; absent: none. */
  turnsEndedByRecognizer?: number;
  extraMetrics?: Record<string, unknown>;
}): Promise<ConversationResult> {
  const turns = parts.timeline?.timings();
  const voiceToVoice = (turns ?? [])
    .map((turn) => turn.voice_to_voice_ms)
    .filter((value): value is number => value !== null);
  const sorted = [...(parts.timeline ? voiceToVoice : (parts.latenciesMs ?? []))].sort((a, b) => a - b);
  const analysisStartedAtMs = Date.now();
  const { data: extractedData, analysis } = await analyzeCall(parts.brain, parts.transcript, parts.logger);
  // When the analysis ran and how long it took: the call's trace makes its `analysis` span of it.
  const analysisTiming = {
    started_at: new Date(analysisStartedAtMs).toISOString(),
    duration_ms: Date.now() - analysisStartedAtMs,
  };
  return {
    transcript: parts.transcript,
    answeredBy: parts.answeredBy,
    extractedData,
    analysis,
    recorder: parts.recorder,
    metrics: {
      response_latency_ms: { p50: percentile(sorted, 0.5), p95: percentile(sorted, 0.95) },
      response_latencies_ms: sorted.map((value) => Math.round(value)),
      barge_ins: parts.bargeIns,
      barge_in_stop_ms: parts.bargeInStopsMs,
      dtmf_received: parts.dtmfReceived,
      provider_failures: providerFailureMetrics(parts.providerFailures),
      turns_ended_by_recognizer: parts.turnsEndedByRecognizer ?? 0,
      analysis_timing: analysisTiming,
      ...(parts.timeline ? { ...parts.timeline.summary(), turns } : {}),
      // What each answer was understood as (rule-following brains): heard, rule matched or none, why.
      ...(parts.brain.understanding ? { understanding: parts.brain.understanding() } : {}),
      ...parts.extraMetrics,
    },
  };
}

/**
 * The call's provider failures as its metrics list them: no credentials, ever — each reason is
 * scrubbed again here, where it is stored, whatever made it.
 */
export function providerFailureMetrics(log: ProviderFailureLog): Record<string, unknown>[] {
  return log.failures.map((failure) => ({
    stage: failure.stage,
    provider: failure.provider,
    status: failure.status,
    kind: failure.kind,
    reason: scrubSecrets(failure.reason),
    at_ms: failure.atMs,
  }));
}
