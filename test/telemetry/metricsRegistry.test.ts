import { expect, it } from 'vitest';
import { MetricsRegistry } from '../../src/metrics/registry.js';
import { observeCallFigures, turnMetrics } from '../../src/metrics/turnMetrics.js';

/** The registry's text format for the labelled histograms and counters of issue 41. */

it('writes a labelled histogram per label set (le last, cumulative buckets) and a counter by its labels', async () => {
  const registry = new MetricsRegistry();
  const stages = registry.histogram('x_stage_seconds', 'h', [0.1, 1]);
  const failures = registry.counter('x_failures_total', 'c');
  stages.observe(0.05, { stage: 'stt_final' });
  stages.observe(0.5, { stage: 'stt_final' });
  stages.observe(2, { stage: 'end_of_turn' });
  failures.add({ kind: 'stall' });
  failures.add({ kind: 'stall' });
  const heard: [number, Record<string, string>][] = [];
  stages.onObserve((value, labels) => heard.push([value, { ...labels }]));
  stages.observe(0.2, { stage: 'stt_final' });
  const text = await registry.render();
  expect(text).toContain('# TYPE x_failures_total counter\nx_failures_total{kind="stall"} 2\n');
  expect(text).toContain(
    [
      'x_stage_seconds_bucket{stage="stt_final",le="0.1"} 1',
      'x_stage_seconds_bucket{stage="stt_final",le="1"} 3',
      'x_stage_seconds_bucket{stage="stt_final",le="+Inf"} 3',
      'x_stage_seconds_sum{stage="stt_final"} 0.75',
      'x_stage_seconds_count{stage="stt_final"} 3',
      'x_stage_seconds_bucket{stage="end_of_turn",le="0.1"} 0',
    ].join('\n'),
  );
  // The unlabelled empty series is not shown once labelled ones exist.
  expect(text).not.toContain('x_stage_seconds_count 0');
  expect(heard).toEqual([[0.2, { stage: 'stt_final' }]]);
});

it('feeds the turn histograms and vendor failures from a call record’s figures, with no id or number in a label', async () => {
  const registry = new MetricsRegistry();
  const series = turnMetrics(registry);
  observeCallFigures(series, {
    turns: [
      {
        voice_to_voice_ms: 640,
        end_of_turn_ms: 210,
        stt_final_ms: 150,
        llm_first_token_ms: null,
        tts_first_audio_ms: 400,
      },
      {
        voice_to_voice_ms: null,
        end_of_turn_ms: 300,
        stt_final_ms: null,
        llm_first_token_ms: null,
        tts_first_audio_ms: null,
      },
    ],
    provider_failures: [
      { stage: 'tts', provider: 'elevenlabs', kind: 'stall', status: null, reason: 'x', at_ms: 10 },
      {
        stage: 'stt',
        provider: 'acct_01JF+15551234567',
        kind: 'refused',
        status: 401,
        reason: 'x',
        at_ms: 20,
      },
    ],
  });
  const text = await registry.render();
  expect(text).toContain('callwright_turn_voice_to_voice_seconds_count 1\n');
  expect(text).toContain('callwright_turn_voice_to_voice_seconds_sum 0.64\n');
  expect(text).toContain('callwright_turn_stage_latency_seconds_count{stage="end_of_turn"} 2\n');
  expect(text).toContain('callwright_turn_stage_latency_seconds_count{stage="stt_final"} 1\n');
  expect(text).not.toContain('stage="llm_first_token"');
  expect(text).toContain(
    'callwright_vendor_failures_total{stage="tts",provider="elevenlabs",kind="stall"} 1\n',
  );
  expect(text).toContain('callwright_vendor_failures_total{stage="stt",provider="other",kind="refused"} 1\n');
  expect(text).not.toContain('5551234567');
});
