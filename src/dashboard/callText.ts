import type { CallStatus, EndReason } from '../domain/callStatus.js';
import type { CallCost } from '../domain/usage.js';
import { type Html, html } from './html.js';

/** How a call ended, in a sentence a person reads without the API reference. */
const endReasonSentences: Record<EndReason, string> = {
  agent_hangup: 'The agent ended the call',
  callee_hangup: 'The person hung up',
  max_duration: 'Reached the agent’s maximum call length',
  silence_timeout: 'Ended after a long silence',
  voicemail: 'Reached voicemail',
  rejected: 'The line refused the call',
  unreachable: 'The number could not be reached',
  carrier_error: 'The carrier failed to connect the call',
  internal_error: 'Ended by an error in callwright',
  provider_error: 'A speech or language provider failed',
  interrupted: 'Cut off when the service stopped',
  transferred: 'Handed to a person (transferred)',
  ivr_loop: 'A phone menu kept repeating itself',
  do_not_call: 'Not dialled: the number is on the do-not-call list',
  outside_calling_hours: 'Not dialled: the calling window would not open again in time',
};

const statusSentences: Partial<Record<CallStatus, string>> = {
  queued: 'Waiting to be dialled',
  dialing: 'Dialling',
  ringing: 'Ringing',
  in_progress: 'In conversation',
  busy: 'The line was busy',
  no_answer: 'Nobody answered',
  canceled: 'Cancelled before it was answered',
};

/** The end of a call in plain words: the end reason's sentence, else the status's. */
export function plainOutcome(status: CallStatus, endReason: EndReason | null): string {
  if (status === 'canceled' && endReason === 'agent_hangup') return 'Hung up from the dashboard or the API';
  if (endReason) return endReasonSentences[endReason] ?? endReason;
  return statusSentences[status] ?? status.replace('_', ' ');
}

/** Seconds as `42 s` or `3 min 05 s`. */
export function formatDuration(seconds: number | null): string | null {
  if (seconds === null) return null;
  const whole = Math.round(seconds);
  if (whole < 60) return `${whole} s`;
  return `${Math.floor(whole / 60)} min ${String(whole % 60).padStart(2, '0')} s`;
}

function numberOrNull(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function ms(value: number | null): string {
  return value === null ? '—' : `${Math.round(value)} ms`;
}

function listOfNumbers(value: unknown): number[] {
  return Array.isArray(value) ? value.filter((entry): entry is number => numberOrNull(entry) !== null) : [];
}

interface FailureFigure {
  stage?: unknown;
  provider?: unknown;
  status?: unknown;
  reason?: unknown;
}

/**
 * A call's metrics as a table a person reads: voice-to-voice (median and 95th percentile, then each
 * turn), the greeting, barge-ins and how fast the agent stopped, backchannels let pass, keys pressed
 * and provider failures.
 * Figures this page does not know are listed after, by name.
 */
export function metricsTable(metrics: Record<string, unknown>): Html {
  const known = new Set([
    'response_latency_ms',
    'response_latencies_ms',
    'barge_ins',
    'barge_in_stop_ms',
    'dtmf_received',
    'provider_failures',
    'turns_ended_by_recognizer',
    'usage',
    'cost',
    'turns',
    // Its own table: what the agent understood of each answer.
    'understanding',
    'voice_to_voice_ms',
    'greeting_first_rtp_ms',
    'greeting_audible_ms',
    'barge_in_decision_ms',
    'backchannels_ignored',
    'still_there_prompts',
    // Shown beside "Answered by" in the summary.
    'answering_machine',
    'media',
    'echo',
    'tool_calls',
    'transfers',
    'analysis_timing',
  ]);
  const latency = (metrics.response_latency_ms ?? {}) as Record<string, unknown>;
  const perTurn = listOfNumbers(metrics.response_latencies_ms);
  const stops = listOfNumbers(metrics.barge_in_stop_ms);
  const decisions = listOfNumbers(metrics.barge_in_decision_ms);
  const greeting = numberOrNull(metrics.greeting_audible_ms);
  const failures = Array.isArray(metrics.provider_failures)
    ? (metrics.provider_failures as FailureFigure[])
    : [];
  const rows: [string, string, string][] = [
    [
      'Voice-to-voice, median',
      ms(numberOrNull(latency.p50)),
      'from the moment the callee stopped speaking to the first sound of the agent’s reply they could hear',
    ],
    ['Voice-to-voice, 95th percentile', ms(numberOrNull(latency.p95)), ''],
    ['Each reply', perTurn.length ? perTurn.map((value) => `${Math.round(value)} ms`).join(', ') : '—', ''],
    [
      'Greeting',
      greeting === null ? '—' : `${greeting} ms`,
      'from the answer to the first sound of the greeting',
    ],
    [
      'Barge-ins',
      String(numberOrNull(metrics.barge_ins) ?? 0),
      stops.length
        ? `decided ${decisions.map((value) => `${value} ms`).join(', ')} after the callee began; agent audio stopped ${stops.map((value) => `${value} ms`).join(', ')} after that`
        : '',
    ],
    [
      'Backchannels let pass',
      String(numberOrNull(metrics.backchannels_ignored) ?? 0),
      'sounds over the agent too short or without words to interrupt it (“mhm”, “okay”, a cough)',
    ],
    [
      '“Are you still there?”',
      String(numberOrNull(metrics.still_there_prompts) ?? 0),
      'asked on a quiet line',
    ],
    [
      'Turns ended by the recogniser',
      String(numberOrNull(metrics.turns_ended_by_recognizer) ?? 0),
      'the speech recogniser said the speech was over, so the agent waited its shortest end-of-turn silence',
    ],
    [
      'Media',
      mediaSummary(metrics.media),
      'what the agent received, then what the far end’s RTCP said it received',
    ],
    [
      'Echo suppressed',
      echoSummary(metrics.echo),
      'the agent’s own voice coming back on the callee’s side, kept from turn-taking and the recogniser',
    ],
    ['Tool requests', timedList(metrics.tool_calls, 'tool', 'outcome'), ''],
    ['Transfer attempts', timedList(metrics.transfers, 'target', 'outcome'), ''],
    [
      'Analysis',
      ms(numberOrNull((metrics.analysis_timing as Record<string, unknown> | undefined)?.duration_ms)),
      'the post-call analysis, after the call ended',
    ],
    [
      'Keys pressed (DTMF)',
      typeof metrics.dtmf_received === 'string' && metrics.dtmf_received ? metrics.dtmf_received : '—',
      '',
    ],
  ];
  const others = Object.entries(metrics).filter(([name]) => !known.has(name));
  return html`<div class="table-wrap"><table class="figures" data-testid="call-figures">
<thead><tr><th scope="col">Figure</th><th scope="col">Value</th><th scope="col">Note</th></tr></thead>
<tbody>${rows.map(([label, value, note]) => html`<tr><th scope="row">${label}</th><td>${value}</td><td class="muted">${note}</td></tr>`)}
${others.map(([name, value]) => html`<tr><th scope="row"><code>${name}</code></th><td>${typeof value === 'number' ? String(value) : JSON.stringify(value)}</td><td></td></tr>`)}
</tbody></table></div>
${isCost(metrics.cost) ? costTable(metrics.cost) : ''}
${
  failures.length === 0
    ? ''
    : html`<h3>Provider failures</h3><ul>${failures.map(
        (failure) =>
          html`<li>${String(failure.stage ?? '?')} · ${String(failure.provider ?? '?')}${failure.status ? html` · status ${String(failure.status)}` : ''}: ${String(failure.reason ?? '')}</li>`,
      )}</ul>`
}`;
}

function isCost(value: unknown): value is CallCost {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as CallCost).total_usd === 'number' &&
    Array.isArray((value as CallCost).lines)
  );
}

const unitLabels: Record<string, string> = {
  audio_seconds: 's of audio',
  characters: 'characters',
  input_tokens: 'tokens in',
  output_tokens: 'tokens out',
  input_audio_tokens: 'audio tokens in',
  output_audio_tokens: 'audio tokens out',
  minutes: 'min',
};

/** Dollars as a person reads them: cents to four places below a dollar. */
export function usd(value: number | null): string {
  if (value === null) return 'no price';
  return value >= 1 ? `$${value.toFixed(2)}` : `$${value.toFixed(4)}`;
}

/** What the call used of each vendor and what it cost, line by line, with the total. */
export function costTable(cost: CallCost): Html {
  return html`<h3>Cost</h3>
<div class="table-wrap"><table class="figures" data-testid="call-cost">
<thead><tr><th scope="col">Stage</th><th scope="col">Provider</th><th scope="col">Used</th><th scope="col">Cost</th></tr></thead>
<tbody>${cost.lines.map(
    (line) =>
      html`<tr><td>${line.stage}</td><td>${line.provider}${line.model ? html` <span class="muted">${line.model}</span>` : ''}</td><td>${String(Math.round(line.quantity * 10) / 10)} ${unitLabels[line.unit] ?? line.unit}</td><td>${usd(line.usd)}</td></tr>`,
  )}
<tr><th scope="row" colspan="3">Total</th><td><strong>${usd(cost.total_usd)}</strong></td></tr>
</tbody></table></div>
<p class="muted">At this account's prices where it set them, otherwise the defaults of ${cost.prices_as_of} (Providers → Prices).</p>`;
}

/** `metrics.echo` in words: how much was suppressed, at what delay and loss. */
function echoSummary(value: unknown): string {
  if (typeof value !== 'object' || value === null) return '—';
  const echo = value as Record<string, unknown>;
  const frames = numberOrNull(echo.frames_suppressed) ?? 0;
  if (frames === 0) return 'none';
  const delay = numberOrNull(echo.delay_ms);
  const loss = numberOrNull(echo.loss_db);
  return `${frames * 20} ms${delay === null ? '' : `, ${delay} ms late`}${loss === null ? '' : `, ${Math.round(loss)} dB down`}`;
}

/** Timed attempts (`metrics.tool_calls`, `metrics.transfers`) as "name: outcome, n ms" each. */
function timedList(value: unknown, nameKey: string, outcomeKey: string): string {
  if (!Array.isArray(value) || value.length === 0) return '—';
  return value
    .map((entry) => {
      const item = (typeof entry === 'object' && entry !== null ? entry : {}) as Record<string, unknown>;
      const duration = numberOrNull(item.duration_ms);
      return `${String(item[nameKey] ?? '?')}: ${String(item[outcomeKey] ?? '?')}${duration === null ? '' : `, ${Math.round(duration)} ms`}`;
    })
    .join('; ');
}

/** The call's RTP in a line: encryption and codec, what we received, what the far end reported. */
function mediaSummary(value: unknown): string {
  if (typeof value !== 'object' || value === null) return '—';
  const media = value as Record<string, unknown>;
  const count = (name: string): string => String(numberOrNull(media[name]) ?? 0);
  const parts = [
    `${media.srtp === true ? 'SRTP' : 'RTP'}${typeof media.codec === 'string' ? ` ${media.codec}` : ''}`,
    `received ${count('packets_received')} packets, ${count('packets_lost')} lost, jitter ${numberOrNull(media.jitter_ms) ?? 0} ms`,
  ];
  if (Number(media.packets_unauthenticated) > 0)
    parts.push(`${count('packets_unauthenticated')} refused by SRTP`);
  const report = media.remote_report as Record<string, unknown> | null | undefined;
  if (report && typeof report === 'object') {
    const lostPercent = Math.round((numberOrNull(report.fraction_lost) ?? 0) * 1000) / 10;
    const roundTrip = numberOrNull(report.round_trip_ms);
    parts.push(
      `far end: ${lostPercent} % lost, jitter ${numberOrNull(report.jitter_ms) ?? 0} ms${roundTrip === null ? '' : `, round trip ${roundTrip} ms`}`,
    );
  } else parts.push('no RTCP report from the far end');
  return parts.join(' · ');
}
