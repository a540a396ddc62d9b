import { describe, expect, it } from 'vitest';
import { callCompletedEvent } from './callCompletedEvent.js';
import type { CallRecord } from './records.js';
import { checkPrices, costOf, defaultPricesDate, UsageMeter } from './usage.js';

describe('a call’s usage and cost', () => {
  it('adds usage up per stage, provider, model and unit; ignores nothing-used', () => {
    const meter = new UsageMeter();
    meter.add('stt', 'deepgram', 'nova-3', 'audio_seconds', 1.5);
    meter.add('stt', 'deepgram', 'nova-3', 'audio_seconds', 2.5);
    meter.add('stt', 'deepgram', null, 'audio_seconds', 1);
    meter.add('tts', 'elevenlabs', null, 'characters', 0);
    meter.add('tts', 'elevenlabs', null, 'characters', Number.NaN);
    expect(meter.entries()).toEqual([
      { stage: 'stt', provider: 'deepgram', model: 'nova-3', unit: 'audio_seconds', quantity: 4 },
      { stage: 'stt', provider: 'deepgram', model: null, unit: 'audio_seconds', quantity: 1 },
    ]);
  });

  it('prices with the account’s exact model, then its any-model price, then the defaults; lists the unpriced', () => {
    const usage = [
      {
        stage: 'stt' as const,
        provider: 'deepgram',
        model: 'nova-3',
        unit: 'audio_seconds' as const,
        quantity: 120,
      },
      {
        stage: 'tts' as const,
        provider: 'elevenlabs',
        model: 'eleven_flash_v2_5',
        unit: 'characters' as const,
        quantity: 2000,
      },
      {
        stage: 'llm' as const,
        provider: 'openai',
        model: 'gpt-4o-mini',
        unit: 'output_tokens' as const,
        quantity: 1_000_000,
      },
      {
        stage: 'telephony' as const,
        provider: 'trunk',
        model: 'trk_1',
        unit: 'minutes' as const,
        quantity: 2,
      },
    ];
    const defaults = costOf(usage);
    expect(defaults.lines.map((line) => line.usd)).toEqual([0.0154, 0.1, 0.6, null]);
    expect(defaults).toMatchObject({ currency: 'USD', total_usd: 0.7154, prices_as_of: defaultPricesDate });
    expect(defaults.by_stage).toEqual({ stt: 0.0154, tts: 0.1, llm: 0.6 });

    const own = costOf(usage, [
      { stage: 'tts', provider: 'elevenlabs', model: null, unit: 'characters', usd: 0.03, per: 1000 },
      {
        stage: 'tts',
        provider: 'elevenlabs',
        model: 'eleven_flash_v2_5',
        unit: 'characters',
        usd: 0.02,
        per: 1000,
      },
      { stage: 'telephony', provider: 'trunk', model: null, unit: 'minutes', usd: 0.01, per: 1 },
    ]);
    expect(own.lines.map((line) => line.usd)).toEqual([0.0154, 0.04, 0.6, 0.02]);
    expect(own.total_usd).toBe(0.6754);
  });

  it('checks an account’s prices as they are saved, naming the bad entry', () => {
    expect(
      checkPrices([{ stage: 'tts', provider: 'cartesia', unit: 'characters', usd: 0.04, per: 1000 }]),
    ).toEqual([
      { stage: 'tts', provider: 'cartesia', model: null, unit: 'characters', usd: 0.04, per: 1000 },
    ]);
    for (const [prices, message] of [
      [{}, /a JSON list/],
      [[{ stage: 'tv', provider: 'x', unit: 'minutes', usd: 1 }], /prices\[0\]\.stage must be one of/],
      [[{ stage: 'tts', provider: 'x', unit: 'words', usd: 1 }], /prices\[0\]\.unit must be one of/],
      [[{ stage: 'tts', provider: 'x', unit: 'characters', usd: -1 }], /prices\[0\]\.usd/],
      [[{ stage: 'tts', provider: 'x', unit: 'characters', usd: 1, per: 0 }], /prices\[0\]\.per/],
      [[{ stage: 'tts', provider: '', unit: 'characters', usd: 1 }], /prices\[0\]\.provider/],
      [
        [{ stage: 'tts', provider: 'x', unit: 'characters', usd: 1, note: 'x' }],
        /prices\[0\]\.note is not a field/,
      ],
    ] as const) {
      expect(() => checkPrices(prices)).toThrow(message);
    }
  });

  it('the call.completed event carries the total and the stages; null without a voice', () => {
    const call = {
      id: 'call_1',
      metrics: {
        response_latency_ms: { p50: 1, p95: 2 },
        cost: {
          ...costOf([{ stage: 'tts', provider: 'openai', model: null, unit: 'characters', quantity: 1000 }]),
        },
      },
    } as unknown as CallRecord;
    const event = callCompletedEvent(call, { id: 'evt_1', createdAt: 'now', recordingUrl: null });
    expect(event.data.cost).toEqual({ currency: 'USD', total_usd: 0.015, by_stage: { tts: 0.015 } });
    const silent = callCompletedEvent({ ...call, metrics: null } as unknown as CallRecord, {
      id: 'evt_2',
      createdAt: 'now',
      recordingUrl: null,
    });
    expect(silent.data.cost).toBeNull();
  });
});
