import type { TurnTiming } from '../domain/turnTiming.js';
import type { Counter, Histogram, MetricsRegistry } from './registry.js';

/** Live calls of one kind held by a worker (the `callwright_live_calls` gauge sums them). */
export interface LiveCallCount {
  direction: 'outbound' | 'inbound';
  channel: 'phone' | 'web';
  live: number;
}

/** The series fed from a finished call's figures. */
export interface CallFigures {
  voiceToVoice: Histogram;
  stages: Histogram;
  vendorFailures: Counter;
}

/**
 * The turn waterfall's stages (TurnTiming, ms after the callee stopped speaking) that get a
 * histogram series each, by their `stage` label.
 */
const stageFields = {
  end_of_turn: 'end_of_turn_ms',
  stt_final: 'stt_final_ms',
  llm_first_token: 'llm_first_token_ms',
  tts_first_audio: 'tts_first_audio_ms',
} as const satisfies Record<string, keyof TurnTiming>;

export const turnStages = Object.keys(stageFields) as (keyof typeof stageFields)[];

/** The values a failure's `stage` may take (fallbackProviders.ts VoiceStage). */
const vendorStages = new Set(['stt', 'llm', 'tts', 'realtime']);

/**
 * A label value we can show: a provider or failure kind is one of our own short names (`elevenlabs`,
 * `stall`); anything else (never expected) becomes `other`, so no label can carry an id or a number.
 */
function labelValue(value: unknown): string {
  return typeof value === 'string' && /^[a-z][a-z0-9_-]{0,39}$/.test(value) ? value : 'other';
}

export function turnMetrics(registry: MetricsRegistry): CallFigures {
  return {
    voiceToVoice: registry.histogram(
      'callwright_turn_voice_to_voice_seconds',
      "Each callee turn of a finished call: from the end of the callee's speech to the first agent sample they can hear.",
      [0.25, 0.5, 0.75, 1, 1.25, 1.5, 2, 2.5, 3, 4, 5, 7.5, 10],
    ),
    stages: registry.histogram(
      'callwright_turn_stage_latency_seconds',
      "Each callee turn of a finished call: when each stage of the reply happened, after the end of the callee's speech (stage: end_of_turn, stt_final, llm_first_token, tts_first_audio).",
      [0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5],
    ),
    vendorFailures: registry.counter(
      'callwright_vendor_failures_total',
      'Failures of a voice vendor (stage: stt, llm, tts, realtime; provider; kind: refused, unreachable, timeout, stall, garbage, error_frame, closed, unusable, error), counted when the call ends.',
    ),
  };
}

/** Feeds the turn histograms and the vendor failure counter from a call's stored figures. */
export function observeCallFigures(series: CallFigures, figures: Readonly<Record<string, unknown>>): void {
  const turns = Array.isArray(figures.turns) ? (figures.turns as Partial<TurnTiming>[]) : [];
  for (const turn of turns) {
    if (typeof turn.voice_to_voice_ms === 'number')
      series.voiceToVoice.observe(turn.voice_to_voice_ms / 1000);
    for (const stage of turnStages) {
      const ms = turn[stageFields[stage]];
      if (typeof ms === 'number' && ms >= 0) series.stages.observe(ms / 1000, { stage });
    }
  }
  const failures = Array.isArray(figures.provider_failures)
    ? (figures.provider_failures as Record<string, unknown>[])
    : [];
  for (const failure of failures) {
    series.vendorFailures.add({
      stage: vendorStages.has(failure.stage as string) ? (failure.stage as string) : 'other',
      provider: labelValue(failure.provider),
      kind: labelValue(failure.kind),
    });
  }
}
