import { sampleRateHz, samplesForMs } from '../rtp/index.js';
import type { PersonaTiming } from './personas.js';

/**
 * What the sandbox's callees sound like. Until the voice pipeline can synthesise speech, the
 * person replies with a two-tone burst and the voicemail greeting is a speech-like hum; both come
 * from a `SandboxVoice`, so a TTS-backed one can replace them without touching the personas.
 * All audio is 8 kHz mono Int16.
 */

export interface SandboxVoice {
  /**
   * The person's reply number `turn` (0-based). `variables` are the call's variables, which the
   * dispatcher passes to the sandbox (and only to the sandbox) in an INVITE header.
   */
  reply(turn: number, variables: Readonly<Record<string, unknown>>): Promise<Int16Array>;
  /**
   * The voicemail greeting ("you have reached…"), played before the beep. `variables` may hold
   * `sandbox_greeting`, a text a speaking voice says instead (to try an agent on other greetings).
   */
  voicemailGreeting(variables?: Readonly<Record<string, unknown>>): Promise<Int16Array>;
  /** How a person answers: a short "Hello?" or a longer opening (`sandbox_greeting` as above). */
  personGreeting(
    length: 'brief' | 'long',
    variables?: Readonly<Record<string, unknown>>,
  ): Promise<Int16Array>;
  /** A listener's "uh huh" while the agent talks. */
  backchannel(): Promise<Int16Array>;
  /** The phone menu's prompt ("for sales press one, for support press two"), the same every time. */
  ivrMenu(): Promise<Int16Array>;
  /** What the menu says once the caller chose support, before it hangs up. */
  ivrChosen(): Promise<Int16Array>;
  /** Any line of a test scenario's callee (src/telephony/sandbox/scriptedCallee.ts). */
  say(text: string): Promise<Int16Array>;
}

/** The stand-in voice: tone bursts for replies, a modulated hum for the greeting. */
export function createToneVoice(timing: Pick<PersonaTiming, 'replyMs' | 'greetingMs'>): SandboxVoice {
  return {
    reply: async () => replyTone(timing.replyMs),
    voicemailGreeting: async () => speechLikeTone(timing.greetingMs),
    backchannel: async () => replyTone(250),
    ivrMenu: async () => speechLikeTone(timing.greetingMs),
    ivrChosen: async () => replyTone(timing.replyMs),
    personGreeting: async (length) => speechLikeTone(length === 'brief' ? 560 : 1_400),
    // About as long as the words would take to say (60 ms a character), within 0.3–6 s.
    say: async (text) => speechLikeTone(Math.min(6_000, Math.max(300, text.length * 60))),
  };
}

const fadeMs = 10;

/** Raised-cosine fade in and out, so bursts do not click. */
function applyFade(samples: Float64Array): void {
  const fadeSamples = Math.min(samplesForMs(fadeMs), Math.floor(samples.length / 2));
  for (let i = 0; i < fadeSamples; i++) {
    const gain = 0.5 - 0.5 * Math.cos((Math.PI * i) / fadeSamples);
    samples[i] = (samples[i] ?? 0) * gain;
    const tail = samples.length - 1 - i;
    samples[tail] = (samples[tail] ?? 0) * gain;
  }
}

function toInt16(samples: Float64Array): Int16Array {
  const out = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) {
    out[i] = Math.max(-32768, Math.min(32767, Math.round(samples[i] ?? 0)));
  }
  return out;
}

/** A sum of sines at a fixed amplitude each, faded in and out. */
export function toneMix(
  frequenciesHz: readonly number[],
  durationMs: number,
  amplitudeEach: number,
): Int16Array {
  const samples = new Float64Array(samplesForMs(durationMs));
  for (let i = 0; i < samples.length; i++) {
    let value = 0;
    for (const frequencyHz of frequenciesHz) {
      value += amplitudeEach * Math.sin((2 * Math.PI * frequencyHz * i) / sampleRateHz);
    }
    samples[i] = value;
  }
  applyFade(samples);
  return toInt16(samples);
}

/** The person's stand-in reply: 440 Hz + 660 Hz at about −18 dBFS each. */
export function replyTone(durationMs: number): Int16Array {
  return toneMix([440, 660], durationMs, 4_000);
}

/** The voicemail beep: 1 kHz. */
export function beepTone(durationMs: number): Int16Array {
  return toneMix([1_000], durationMs, 8_000);
}

export function silence(durationMs: number): Int16Array {
  return new Int16Array(samplesForMs(durationMs));
}

const syllableMs = 220;
const syllableGapMs = 60;

/**
 * A hum with the rhythm of speech: syllables of a 120–200 Hz voice with two overtones (nothing
 * near 1 kHz, so the beep stands apart), a gliding pitch, and a longer pause every fourth syllable.
 */
export function speechLikeTone(durationMs: number): Int16Array {
  const samples = new Float64Array(samplesForMs(durationMs));
  const syllableSamples = samplesForMs(syllableMs);
  const cycleSamples = samplesForMs(syllableMs + syllableGapMs);
  let phase = 0;
  for (let i = 0; i < samples.length; i++) {
    const seconds = i / sampleRateHz;
    const cycle = Math.floor(i / cycleSamples);
    const inCycle = i - cycle * cycleSamples;
    // Every fourth syllable is a pause between "words".
    const voiced = inCycle < syllableSamples && cycle % 4 !== 3;
    const pitchHz = 160 + 30 * Math.sin(2 * Math.PI * 0.6 * seconds) + 10 * ((cycle * 7) % 3);
    phase += (2 * Math.PI * pitchHz) / sampleRateHz;
    if (!voiced) {
      samples[i] = 0;
      continue;
    }
    const envelope = Math.sin((Math.PI * inCycle) / syllableSamples) ** 2;
    const wave = Math.sin(phase) + 0.5 * Math.sin(2 * phase) + 0.25 * Math.sin(3 * phase);
    samples[i] = 5_000 * envelope * wave;
  }
  applyFade(samples);
  return toInt16(samples);
}

/** Root mean square of a frame, in sample units (0–32768). */
export function frameRms(samples: Int16Array): number {
  if (samples.length === 0) return 0;
  let sum = 0;
  for (const sample of samples) sum += sample * sample;
  return Math.sqrt(sum / samples.length);
}
