import { describe, expect, it } from 'vitest';
import { metricsTable } from './callText.js';
import { html, unsafeRaw } from './html.js';
import { answeredByText } from './pages/calls.js';
import { keyFlags } from './pages/keys.js';
import { responseLatencyMs } from './pages/overview.js';
import { hashPassword, verifyPassword } from './passwords.js';

describe('html template', () => {
  it('escapes every interpolated value, nested templates and lists pass through once', () => {
    const name = `<script>alert("x")</script>' & \``;
    const out = html`<p title="${name}">${name}${[html`<b>${'<i>'}</b>`, '<u>']}${unsafeRaw('<br>')}</p>`;
    expect(out.text).toBe(
      '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; &amp; &#96;">' +
        '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; &amp; &#96;<b>&lt;i&gt;</b>&lt;u&gt;<br></p>',
    );
    expect(html`${null}${undefined}${false}${0}`.text).toBe('0');
  });
});

describe('passwords', () => {
  it('verifies the right password only, with a fresh salt each time', async () => {
    const first = await hashPassword('correct horse battery');
    const second = await hashPassword('correct horse battery');
    expect(first).toMatch(/^scrypt\$16384\$8\$1\$/);
    expect(first).not.toBe(second);
    expect(await verifyPassword('correct horse battery', first)).toBe(true);
    expect(await verifyPassword('correct horse batterY', first)).toBe(false);
    expect(await verifyPassword('x', 'not a hash')).toBe(false);
  });
});

describe('key flags and latency figures', () => {
  const day = 86_400_000;
  const key = (createdDaysAgo: number, usedDaysAgo: number | null, revoked = false) => ({
    id: 'key_1',
    accountId: 'a',
    name: 'k',
    prefix: 'cw_live_abcd',
    last4: 'wxyz',
    createdAt: new Date(Date.now() - createdDaysAgo * day).toISOString(),
    lastUsedAt: usedDaysAgo === null ? null : new Date(Date.now() - usedDaysAgo * day).toISOString(),
    revokedAt: revoked ? new Date().toISOString() : null,
  });
  it('flags keys older than 90 days and keys unused for 30 days, never revoked ones', () => {
    expect(keyFlags(key(10, 1), Date.now())).toEqual([]);
    expect(keyFlags(key(91, 1), Date.now())).toEqual(['older than 90 days: rotate it']);
    expect(keyFlags(key(31, null), Date.now())).toEqual(['unused for 30 days']);
    expect(keyFlags(key(40, 35), Date.now())).toEqual(['unused for 30 days']);
    expect(keyFlags(key(100, 50, true), Date.now())).toEqual([]);
  });
  it('reads a latency as a number or the median of a distribution', () => {
    expect(responseLatencyMs({ response_latency_ms: 420 })).toBe(420);
    expect(responseLatencyMs({ response_latency_ms: { p50: 380, p95: 900 } })).toBe(380);
    expect(responseLatencyMs({ response_latency_ms: { p50: null } })).toBeNull();
    expect(responseLatencyMs({ barge_ins: 2 })).toBeNull();
  });
});

describe('who answered, on the call page', () => {
  it('adds the early decision: how sure, when and what was heard', () => {
    const metrics = {
      answering_machine: {
        answered_by: 'machine',
        confidence: 0.82,
        decision_ms: 2680,
        reason: 'long_greeting',
      },
    };
    expect(answeredByText('machine', metrics)).toBe(
      'machine (82 % sure, 2.7 s after the answer: a greeting that ran on without a pause)',
    );
    expect(answeredByText('unknown', { answering_machine: null })).toBe('unknown');
    expect(answeredByText(null, metrics)).toBeNull();
  });

  it('does not give a person the 50 % of a check that gave up on a silent line', () => {
    // A silent start is decided "unknown" at 3 s; the callee's first words make the call "human".
    const silent = {
      answering_machine: { answered_by: 'unknown', confidence: 0.5, decision_ms: 3000, reason: 'silence' },
    };
    expect(answeredByText('human', silent)).toBe(
      'human (spoke after the early check gave up: nothing said in the first 3.0 s)',
    );
    expect(answeredByText('unknown', silent)).toBe(
      'unknown (the early check gave up: nothing said in the first 3.0 s)',
    );
    // A later verdict overriding the early one says so.
    const person = {
      answering_machine: {
        answered_by: 'human',
        confidence: 0.9,
        decision_ms: 1200,
        reason: 'short_greeting',
      },
    };
    expect(answeredByText('machine', person)).toBe(
      'machine (the early check said human, 90 % sure, 1.2 s after the answer: a short hello, then a pause)',
    );
  });
});

describe('a call’s figures', () => {
  it('shows the echo guard, tool requests, transfers and the analysis in words, not as JSON', () => {
    const table = metricsTable({
      echo: { frames_suppressed: 40, delay_ms: 140, loss_db: 10.4 },
      tool_calls: [
        { tool: 'lookup_order', outcome: 'ok', http_status: 200, started_at: 'x', duration_ms: 41.6 },
      ],
      transfers: [
        { target: 'billing', via: 'refer', outcome: 'transferred', sip_status: 202, duration_ms: 900 },
      ],
      analysis_timing: { started_at: 'x', duration_ms: 12 },
    }).text;
    expect(table).not.toContain('{');
    expect(table).toContain('800 ms, 140 ms late, 10 dB down');
    expect(table).toContain('lookup_order: ok, 42 ms');
    expect(table).toContain('billing: transferred, 900 ms');
    expect(metricsTable({ echo: { frames_suppressed: 0, delay_ms: null, loss_db: null } }).text).toContain(
      'none',
    );
  });
});
