import { AppError } from './errors.js';
import type { CallRecord, TranscriptEntry } from './records.js';
import { turnLatenciesMs } from './scenarioChecks.js';
import type { RecordedAudio, Scenario, ScenarioTurn } from './scenarios.js';
import type { TurnTiming } from './turnTiming.js';

/**
 * Replays (docs/testing.md): a completed call becomes a scenario whose callee plays its own
 * recorded words back (the recording's callee channel, cut at the transcript's callee turns), and
 * two runs of a conversation are compared turn by turn. Pure: call records in, JSON out.
 */

/** Recorded words are cut this much wider than the recogniser's timestamps, so no syllable is lost. */
const leadInMs = 150;
const tailMs = 250;
/** Silence this long between anyone's speech is dead air. */
export const deadAirMs = 2_000;
/** A reply that changed by less than this is "the same" in a diff. */
const latencyChangeMs = 150;

function speech(transcript: readonly TranscriptEntry[], role: 'agent' | 'callee'): TranscriptEntry[] {
  return transcript
    .filter((entry) => entry.role === role && entry.event === undefined && entry.text.trim() !== '')
    .sort((a, b) => a.start_ms - b.start_ms);
}

function audioOf(call: CallRecord, entry: TranscriptEntry, notBeforeMs: number): RecordedAudio {
  const start = Math.max(notBeforeMs, entry.start_ms - leadInMs, 0);
  return {
    call_id: call.id,
    start_ms: Math.round(start),
    end_ms: Math.round(Math.max(entry.end_ms + tailMs, start + 1)),
  };
}

/**
 * The scenario that replays `call`'s callee: its words before the agent's first as the greeting,
 * then each later callee utterance as a turn — played over the agent when it was said over the
 * agent (`interrupt_after_ms`), else once the agent pauses. A 400 when the call cannot be replayed.
 */
export function scenarioFromCall(call: CallRecord): Scenario {
  if (call.status !== 'completed' || call.answeredBy === 'machine')
    throw new AppError('validation_error', `call ${call.id} is not a completed call answered by a person`);
  if (!call.recordingPath)
    throw new AppError(
      'validation_error',
      `call ${call.id} has no recording to replay (recording off, or erased)`,
    );
  const callee = speech(call.transcript, 'callee');
  const agent = speech(call.transcript, 'agent');
  if (callee.length === 0)
    throw new AppError('validation_error', `call ${call.id}: the callee said nothing to replay`);
  const firstAgentMs = agent[0]?.start_ms ?? Number.POSITIVE_INFINITY;
  const greeting = callee.filter((entry) => entry.start_ms < firstAgentMs);
  const turns: ScenarioTurn[] = [];
  let previousEndMs = 0;
  for (const entry of callee.slice(greeting.length)) {
    const over = agent.find((line) => line.start_ms <= entry.start_ms && entry.start_ms < line.end_ms);
    const turn: ScenarioTurn = { audio: audioOf(call, entry, previousEndMs) };
    if (over) turn.interrupt_after_ms = Math.max(100, Math.round(entry.start_ms - over.start_ms));
    turns.push(turn);
    previousEndMs = entry.end_ms;
  }
  const scenario: Scenario = {
    name: `replay of ${call.id}`,
    description: `The callee of ${call.id} (${call.endedAt ?? ''}), replayed from its recording.`,
    call: {
      ...(call.variables ? { variables: call.variables } : {}),
      ...(call.firstMessage !== null ? { first_message: call.firstMessage } : {}),
      ...(call.context !== null ? { context: call.context } : {}),
    },
    callee: {
      answers: 'human',
      ...(greeting.length > 0
        ? {
            greeting_audio: {
              call_id: call.id,
              start_ms: Math.max(0, Math.round((greeting[0] as TranscriptEntry).start_ms - leadInMs)),
              end_ms: Math.round(
                Math.min(firstAgentMs, (greeting.at(-1) as TranscriptEntry).end_ms + tailMs),
              ),
            },
          }
        : {}),
      turns,
      after_last_turn: call.endReason === 'callee_hangup' ? 'hang_up' : 'stay',
    },
    expect: { status: 'completed' },
  };
  return scenario;
}

export interface TurnSide {
  /** What the callee's words were heard as. */
  callee_text: string;
  /** End of the callee's speech to the agent's first audible sound; null: no reply timed. */
  latency_ms: number | null;
  /** The silence the agent waited for before it took the turn (its end-of-turn wait); null: unknown. */
  wait_ms: number | null;
  /** What the agent said before the callee's next turn. */
  agent_text: string;
  /** The agent started talking while the callee was still speaking this turn. */
  agent_interrupted: boolean;
  /** Silence after the callee's turn before anyone spoke, when longer than `deadAirMs`. */
  dead_air_ms: number;
  /**
   * What the agent understood of the turn (a script agent's rules): the option that matched and
   * why, or why none; null when the call recorded no understanding for it.
   */
  understood: string | null;
}

export interface TurnDiff {
  turn: number;
  before: TurnSide | null;
  after: TurnSide | null;
  /** What changed, in words ("waits 1550 ms longer for the end of the turn"); empty when nothing did. */
  changes: string[];
}

export interface RunDiff {
  before_call_id: string;
  after_call_id: string;
  turns: TurnDiff[];
  data: { field: string; before: unknown; after: unknown }[];
  summary: string[];
}

interface RecordedUnderstanding {
  node: string;
  heard: string;
  option: number | null;
  phrase: string | null;
  reason: string;
}

function understandingsOf(call: CallRecord): RecordedUnderstanding[] {
  const entries = call.metrics?.understanding;
  if (!Array.isArray(entries)) return [];
  return entries.filter(
    (entry): entry is RecordedUnderstanding =>
      typeof entry === 'object' &&
      entry !== null &&
      typeof (entry as RecordedUnderstanding).heard === 'string' &&
      typeof (entry as RecordedUnderstanding).reason === 'string',
  );
}

/** "greet: option 1 ("yes that works") — it contains the listed phrase…" or "greet: none — …". */
function understoodText(entry: RecordedUnderstanding): string {
  const matched = entry.option === null ? 'none' : `option ${entry.option + 1} ("${entry.phrase ?? ''}")`;
  return `${entry.node}: ${matched} — ${entry.reason}`;
}

const wordsOf = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9' ]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();

/**
 * Pairs callee turns with the understanding recorded for them, in order: an entry belongs to the
 * first turn from the current one whose words it heard (an unclear turn heard none).
 */
function understoodPerTurn(turns: readonly TranscriptEntry[], call: CallRecord): (string | null)[] {
  const entries = understandingsOf(call);
  const result: (string | null)[] = turns.map(() => null);
  let turnIndex = 0;
  for (const entry of entries) {
    const heard = wordsOf(entry.heard);
    while (turnIndex < turns.length) {
      const text = (turns[turnIndex] as TranscriptEntry).text;
      const said = text === '[unclear]' ? '' : wordsOf(text);
      turnIndex++;
      if (said === heard) {
        result[turnIndex - 1] = understoodText(entry);
        break;
      }
    }
  }
  return result;
}

function sidesOf(call: CallRecord): TurnSide[] {
  const callee = speech(call.transcript, 'callee');
  const agent = speech(call.transcript, 'agent');
  const firstAgentMs = agent[0]?.start_ms ?? Number.POSITIVE_INFINITY;
  const turns = callee.filter((entry) => entry.start_ms >= firstAgentMs);
  const latencies = turnLatenciesMs(call);
  const timings = Array.isArray(call.metrics?.turns) ? (call.metrics.turns as Partial<TurnTiming>[]) : [];
  const understood = understoodPerTurn(turns, call);
  return turns.map((entry, index) => {
    const nextStart = turns[index + 1]?.start_ms ?? Number.POSITIVE_INFINITY;
    const replies = agent.filter((line) => line.start_ms >= entry.start_ms && line.start_ms < nextStart);
    const firstReplyMs = replies[0]?.start_ms;
    const gapMs =
      firstReplyMs === undefined
        ? Math.max(0, Math.min(nextStart, entry.end_ms) - entry.end_ms)
        : firstReplyMs - entry.end_ms;
    return {
      callee_text: entry.text,
      latency_ms: latencies[index] === undefined ? null : Math.round(latencies[index] as number),
      wait_ms:
        typeof timings[index]?.end_of_turn_ms === 'number' ? Math.round(timings[index].end_of_turn_ms) : null,
      agent_text: replies.map((line) => line.text).join(' '),
      agent_interrupted: replies.some((line) => line.start_ms < entry.end_ms),
      dead_air_ms: gapMs > deadAirMs ? Math.round(gapMs) : 0,
      understood: understood[index] ?? null,
    };
  });
}

function changesOf(before: TurnSide | null, after: TurnSide | null): string[] {
  if (before === null) return ['a turn the first run did not have'];
  if (after === null) return ['a turn the second run did not reach'];
  // What was said and understood first: a table that cuts the list short keeps the words' changes.
  const changes: string[] = [];
  if (before.understood !== after.understood && (before.understood !== null || after.understood !== null))
    changes.push(
      `understood differently: ${before.understood ?? 'nothing recorded'} → ${after.understood ?? 'nothing recorded'}`,
    );
  if (before.agent_text.trim().toLowerCase() !== after.agent_text.trim().toLowerCase())
    changes.push('the agent says something else');
  if (!before.agent_interrupted && after.agent_interrupted)
    changes.push('the agent now talks over the callee');
  if (before.agent_interrupted && !after.agent_interrupted)
    changes.push('the agent no longer talks over the callee');
  const change = (label: string, from: number | null, to: number | null, more: string, less: string) => {
    if (from === null || to === null || Math.abs(to - from) < latencyChangeMs) return;
    changes.push(`${label} ${Math.abs(to - from)} ms ${to > from ? more : less} (${from} → ${to} ms)`);
  };
  change(
    'waits',
    before.wait_ms,
    after.wait_ms,
    'longer for the end of the turn',
    'less for the end of the turn',
  );
  change('answers', before.latency_ms, after.latency_ms, 'later', 'sooner');
  if (after.dead_air_ms > 0 && before.dead_air_ms === 0) changes.push(`${after.dead_air_ms} ms of dead air`);
  if (before.dead_air_ms > 0 && after.dead_air_ms === 0) changes.push('no more dead air');
  return changes;
}

/** Turn by turn, what differs between two runs of one conversation (a call and its replay). */
export function diffRuns(before: CallRecord, after: CallRecord): RunDiff {
  const beforeSides = sidesOf(before);
  const afterSides = sidesOf(after);
  const turns: TurnDiff[] = [];
  for (let index = 0; index < Math.max(beforeSides.length, afterSides.length); index++) {
    const beforeSide = beforeSides[index] ?? null;
    const afterSide = afterSides[index] ?? null;
    turns.push({
      turn: index + 1,
      before: beforeSide,
      after: afterSide,
      changes: changesOf(beforeSide, afterSide),
    });
  }
  const fields = new Set([
    ...Object.keys(before.extractedData ?? {}),
    ...Object.keys(after.extractedData ?? {}),
  ]);
  const data = [...fields]
    .filter(
      (field) =>
        JSON.stringify(before.extractedData?.[field]) !== JSON.stringify(after.extractedData?.[field]),
    )
    .map((field) => ({
      field,
      before: before.extractedData?.[field] ?? null,
      after: after.extractedData?.[field] ?? null,
    }));
  const summary: string[] = [];
  const changedTurns = turns.filter((turn) => turn.changes.length > 0);
  summary.push(
    changedTurns.length === 0 ? 'no turn changed' : `${changedTurns.length} of ${turns.length} turns changed`,
  );
  const latencyDeltas = turns
    .map((turn) =>
      turn.before?.latency_ms != null && turn.after?.latency_ms != null
        ? turn.after.latency_ms - turn.before.latency_ms
        : null,
    )
    .filter((value): value is number => value !== null);
  if (latencyDeltas.length > 0) {
    const mean = Math.round(latencyDeltas.reduce((sum, value) => sum + value, 0) / latencyDeltas.length);
    summary.push(`replies ${mean >= 0 ? 'slower' : 'faster'} by ${Math.abs(mean)} ms on average`);
  }
  if (before.endReason !== after.endReason || before.status !== after.status)
    summary.push(
      `ended ${after.status}/${after.endReason ?? 'none'} instead of ${before.status}/${before.endReason ?? 'none'}`,
    );
  if (data.length > 0)
    summary.push(`extracted data differs in ${data.map((entry) => entry.field).join(', ')}`);
  return { before_call_id: before.id, after_call_id: after.id, turns, data, summary };
}
