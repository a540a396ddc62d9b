import { trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { callTraceIds, DerivableIdGenerator, parentFromTraceparent } from '../../src/telemetry/traceIds.js';

describe("a call's trace ids", () => {
  it('are the same wherever they are derived, differ between calls, and are valid W3C ids', () => {
    const a = callTraceIds('call_01JABCDEF');
    expect(callTraceIds('call_01JABCDEF')).toEqual(a);
    expect(callTraceIds('call_01JABCDEG').traceId).not.toBe(a.traceId);
    expect(a.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(a.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(a.traceId.startsWith(a.spanId)).toBe(false);
  });

  it('are given to the one span started inside startWithIds; every other span gets random ids', () => {
    const ids = new DerivableIdGenerator();
    const fixed = callTraceIds('call_x');
    const inside = ids.startWithIds(fixed, () => [
      ids.generateSpanId(),
      ids.generateTraceId(),
      ids.generateSpanId(),
    ]);
    expect(inside.slice(0, 2)).toEqual([fixed.spanId, fixed.traceId]);
    expect(inside[2]).not.toBe(fixed.spanId);
    expect(ids.generateTraceId()).not.toBe(fixed.traceId);
    expect(ids.generateTraceId()).toMatch(/^[0-9a-f]{32}$/);
  });
});

describe('an incoming traceparent', () => {
  const spanContextOf = (header: string | undefined) => {
    const parent = parentFromTraceparent(header);
    return parent ? trace.getSpanContext(parent) : null;
  };

  it("continues the caller's trace", () => {
    expect(spanContextOf('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')).toMatchObject({
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: '00f067aa0ba902b7',
      traceFlags: 1,
      isRemote: true,
    });
    // Not sampled by the caller: the flag is kept.
    expect(spanContextOf('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00')?.traceFlags).toBe(0);
    // A later version may add fields after the flags.
    expect(spanContextOf('01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra')).not.toBeNull();
  });

  it('is ignored when absent or malformed, as the Trace Context spec says', () => {
    for (const header of [
      undefined,
      '',
      'garbage',
      'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra',
      '00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01',
    ])
      expect(spanContextOf(header), String(header)).toBeNull();
  });
});
