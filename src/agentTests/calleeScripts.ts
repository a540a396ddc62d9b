import type { VoiceConfig } from '../config.js';
import type { TtsChoice } from '../domain/agentVoiceSettings.js';
import type { Scenario, ScenarioTurn } from '../domain/scenarios.js';
import type { Logger } from '../logger.js';
import type { RecordingStorage } from '../recordings/recordingStorage.js';
import type { Store } from '../store/types.js';
import type { CalleeScript, CalleeScriptTurn, CalleeSpeech } from '../telephony/sandbox/index.js';
import { concatSamples } from '../voice/providers/audio/samples.js';
import { decodeWav } from '../voice/providers/audio/wav.js';
import { credentialFor, vendorTextToSpeech } from '../voice/vendorAdapters.js';

/**
 * What the sandbox plays for a test call: the scenario stored with the call, with recorded lines
 * (replays) cut from their call's recording. Given to the sandbox carrier as its
 * `scriptedCallees`; only a call whose SIP Call-ID is the one stored on it gets its script.
 */

const samplesPerMs = 8;
/** How long a turn's backchannel waits into the agent's speech when the scenario does not say. */
const backchannelAfterMsDefault = 1_500;
/** A persona hangs up after this many lines unless its scenario says otherwise. */
const personaRepliesDefault = 8;

async function streamBytes(body: Buffer | NodeJS.ReadableStream): Promise<Buffer> {
  if (Buffer.isBuffer(body)) return body;
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks);
}

/** A call's recording, callee channel (left), 8 kHz. */
async function calleeChannel(storage: RecordingStorage, location: string): Promise<Int16Array | null> {
  const stored = await storage.open(location);
  if (!stored) return null;
  const audio = decodeWav(await streamBytes(stored.body), { channel: 0 });
  return audio.sampleRateHz === 8_000 ? audio.samples : null;
}

/** The scenario's own callee voice (a vendor's text-to-speech with the service's key), or null. */
function vendorVoice(scenario: Scenario, config: VoiceConfig, logger: Logger) {
  const choice = scenario.callee.voice;
  if (!choice || choice.provider === 'flite') return null;
  const credential = credentialFor(choice.provider, config, new Map());
  if (!credential) throw new Error(`no service-wide ${choice.provider} key for the callee's voice`);
  const tts = vendorTextToSpeech(choice as TtsChoice, credential, logger);
  return async (text: string): Promise<Int16Array> => {
    const chunks: Int16Array[] = [];
    for await (const chunk of tts.synthesize(text, choice.voice ? { voice: choice.voice } : {}))
      chunks.push(chunk.samples);
    return concatSamples(chunks);
  };
}

export function calleeScriptLoader(
  store: Store,
  storage: RecordingStorage | null,
  voiceConfig: VoiceConfig,
  logger: Logger,
) {
  return async (callId: string, sipCallId: string): Promise<CalleeScript | null> => {
    const test = await store.agentTests.forCall(callId);
    if (!test) return null;
    const call = await store.calls.get(test.accountId, callId);
    if (!call || call.sipCallId !== sipCallId) return null;
    const scenario = test.scenario as Scenario;
    const { answers } = scenario.callee;
    if (answers !== 'human' && answers !== 'voicemail') return null;
    const recordings = new Map<string, Int16Array | null>();
    const recorded = async (audio: {
      call_id: string;
      start_ms: number;
      end_ms: number;
    }): Promise<CalleeSpeech> => {
      if (!recordings.has(audio.call_id)) {
        const source = await store.calls.get(test.accountId, audio.call_id);
        recordings.set(
          audio.call_id,
          source?.recordingPath && storage ? await calleeChannel(storage, source.recordingPath) : null,
        );
      }
      const samples = recordings.get(audio.call_id);
      if (!samples) throw new Error(`the recording of ${audio.call_id} is gone`);
      return { samples: samples.slice(audio.start_ms * samplesPerMs, audio.end_ms * samplesPerMs) };
    };
    const speechOf = async (text: string | undefined, audio: ScenarioTurn['audio'], wordGapMs?: number) =>
      audio ? recorded(audio) : text !== undefined ? { text, wordGapMs: wordGapMs ?? null } : null;
    const turns: CalleeScriptTurn[] = [];
    for (const turn of scenario.callee.turns ?? []) {
      turns.push({
        speech: await speechOf(turn.say, turn.audio, turn.word_gap_ms),
        dtmf: turn.dtmf ?? null,
        pauseMs: turn.pause_ms ?? 0,
        interruptAfterMs: turn.interrupt_after_ms ?? null,
        backchannel: turn.backchannel ?? null,
        backchannelAfterMs: turn.backchannel_after_ms ?? backchannelAfterMsDefault,
        hangUp: turn.hang_up ?? null,
      });
    }
    return {
      answers,
      answerAfterMs: scenario.callee.answer_after_ms ?? 1_000,
      greeting: await speechOf(scenario.callee.greeting, scenario.callee.greeting_audio),
      beep: scenario.callee.beep ?? true,
      turns,
      afterLastTurn: scenario.callee.after_last_turn ?? 'hang_up',
      say: vendorVoice(scenario, voiceConfig, logger),
      persona: scenario.callee.persona
        ? {
            goal: scenario.callee.persona.goal,
            maxReplies: scenario.callee.persona.max_replies ?? personaRepliesDefault,
          }
        : null,
    };
  };
}
