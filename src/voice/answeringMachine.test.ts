import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../logger.js';
import { beepTone, silence } from '../telephony/sandbox/sandboxAudio.js';
import { AnsweringMachineHandling, type VoicemailPolicy } from './answeringMachine.js';
import {
  type AnsweringDecision,
  AnsweringMachineDetector,
  soundsLikeRecordedGreeting,
} from './answeringMachineDetector.js';
import { concatSamples } from './providers/audio/samples.js';
import { FliteTextToSpeech } from './providers/tts/fliteTextToSpeech.js';
import type { VoiceActivityDetector } from './providers/types.js';
import { FvadDetectorFactory } from './providers/vad/fvadVoiceActivityDetector.js';

const logger = createLogger('silent');

/** Feeds `pattern` (one character per 20 ms frame: `s` speech, `.` silence) to a detector. */
function decide(pattern: string, detector = new AnsweringMachineDetector()): AnsweringDecision | null {
  for (let frame = 0; frame < pattern.length; frame++) {
    const decision = detector.pushFrame(pattern[frame] === 's', (frame + 1) * 20);
    if (decision) return decision;
  }
  return detector.decision;
}

const frames = (ms: number, what: 's' | '.') => what.repeat(ms / 20);

describe('the answering-machine detector on voice decisions', () => {
  it('a short "hello?" then a pause is a person, decided one pause after it', () => {
    const decision = decide(frames(400, '.') + frames(600, 's') + frames(2_000, '.'));
    expect(decision).toMatchObject({ answeredBy: 'human', reason: 'short_greeting', confidence: 0.9 });
    expect(decision?.decisionMs).toBe(400 + 600 + 700);
  });

  it('a longer opening is a person with less confidence', () => {
    const opening = frames(700, 's') + frames(300, '.') + frames(700, 's');
    const decision = decide(frames(200, '.') + opening + frames(1_000, '.'));
    expect(decision).toMatchObject({ answeredBy: 'human', confidence: 0.65 });
  });

  it('words that run on through short pauses are a machine once they have lasted 2.4 s (or as set)', () => {
    const greeting = (frames(700, 's') + frames(300, '.')).repeat(6);
    const decision = decide(frames(300, '.') + greeting);
    expect(decision).toMatchObject({ answeredBy: 'machine', reason: 'long_greeting' });
    expect(decision?.decisionMs).toBe(300 + 2_400);
    const quicker = decide(
      frames(300, '.') + greeting,
      new AnsweringMachineDetector({ greetingMachineMs: 1_500 }),
    );
    expect(quicker?.decisionMs).toBe(300 + 1_500);
  });

  it('nothing said for 3 s is unknown', () => {
    expect(decide(frames(5_000, '.'))).toMatchObject({
      answeredBy: 'unknown',
      reason: 'silence',
      decisionMs: 3_000,
    });
  });

  it('a beep corrects a person; words of a recorded greeting decide a machine', () => {
    const detector = new AnsweringMachineDetector();
    expect(decide(frames(600, 's') + frames(800, '.'), detector)?.answeredBy).toBe('human');
    expect(detector.noteBeep(4_000)).toMatchObject({
      answeredBy: 'machine',
      reason: 'beep',
      decisionMs: 4_000,
    });
    const listening = new AnsweringMachineDetector();
    expect(listening.noteWords('hi this is sam', 900)).toBeNull();
    expect(listening.noteWords("hi you've reached sam please leave a message", 1_200)).toMatchObject({
      answeredBy: 'machine',
      reason: 'greeting_words',
    });
  });

  it('knows the phrases of recorded greetings as whole words', () => {
    expect(soundsLikeRecordedGreeting('Sorry, I am not available right now.')).toBe(true);
    expect(soundsLikeRecordedGreeting('Please leave a message after the tone')).toBe(true);
    expect(soundsLikeRecordedGreeting('Hello, who is this?')).toBe(false);
    expect(soundsLikeRecordedGreeting('the mailboxes are full')).toBe(false);
  });
});

describe('answering machines on spoken greetings (flite voice, WebRTC VAD)', () => {
  let tts: FliteTextToSpeech;
  let vadFactory: FvadDetectorFactory;
  beforeAll(async () => {
    [vadFactory, tts] = await Promise.all([FvadDetectorFactory.load(), FliteTextToSpeech.start()]);
  });
  afterAll(async () => {
    await tts?.close();
  });

  async function speak(text: string): Promise<Int16Array> {
    const pieces: Int16Array[] = [];
    for await (const chunk of tts.synthesize(text)) pieces.push(chunk.samples);
    return concatSamples(pieces);
  }

  /** Plays `audio` (with quiet line noise under it) into a handling, 20 ms at a time. */
  function play(audio: Int16Array, policy: VoicemailPolicy) {
    const vad: VoiceActivityDetector = vadFactory.create({ frameDurationMs: 20, aggressiveness: 2 });
    const seen: {
      decision: AnsweringDecision | null;
      silencedAtMs: number;
      leftAtMs: number;
      hungUpAtMs: number;
    } = {
      decision: null,
      silencedAtMs: -1,
      leftAtMs: -1,
      hungUpAtMs: -1,
    };
    let nowMs = 0;
    const handling = new AnsweringMachineHandling({
      policy,
      logger,
      onDecision: (decision) => {
        seen.decision = decision;
      },
      silenceAgent: () => {
        seen.silencedAtMs = nowMs;
      },
      leaveMessage: () => {
        seen.leftAtMs = nowMs;
      },
      hangUp: () => {
        seen.hungUpAtMs = nowMs;
      },
    });
    let noise = 17;
    for (let offset = 0; offset + 160 <= audio.length; offset += 160) {
      const frame = audio.slice(offset, offset + 160);
      for (let i = 0; i < frame.length; i++) {
        noise = (noise * 1103515245 + 12345) % 2147483648;
        frame[i] = (frame[i] ?? 0) + Math.round((noise / 2147483648 - 0.5) * 200);
      }
      nowMs = (offset + 160) / 8;
      handling.pushFrame(frame, () => vad.isSpeech(frame), nowMs);
    }
    vad.close();
    return seen;
  }

  const leave: VoicemailPolicy = {
    action: 'leave_message',
    message: 'Call us back.',
    waitForDecision: true,
    detection: 'early',
    machineSpeechMs: 2_400,
  };

  it('a person saying "Hello?" is decided a person within 2 s, and nothing is left', async () => {
    const audio = concatSamples([silence(400), await speak('Hello?'), silence(3_000)]);
    const seen = play(audio, leave);
    expect(seen.decision).toMatchObject({ answeredBy: 'human' });
    expect(seen.decision?.decisionMs).toBeLessThanOrEqual(2_000);
    expect(seen.leftAtMs).toBe(-1);
    expect(seen.silencedAtMs).toBe(-1);
  });

  it('a recorded greeting is decided a machine within 3 s; the message starts after the beep', async () => {
    const greeting = await speak(
      'Hi, you have reached Sam. I cannot take your call right now. Please leave a message after the tone.',
    );
    const beepStartMs = 300 + greeting.length / 8 + 300;
    const audio = concatSamples([silence(300), greeting, silence(300), beepTone(500), silence(3_000)]);
    const seen = play(audio, leave);
    expect(seen.decision).toMatchObject({ answeredBy: 'machine', reason: 'long_greeting' });
    expect(seen.decision?.decisionMs).toBeLessThanOrEqual(3_000);
    expect(seen.silencedAtMs).toBe(seen.decision?.decisionMs);
    expect(seen.leftAtMs).toBeGreaterThanOrEqual(beepStartMs + 500);
    expect(seen.leftAtMs).toBeLessThanOrEqual(beepStartMs + 600);
    expect(seen.hungUpAtMs).toBe(-1);
  });

  it('with no beep, the message starts once the greeting has been quiet 1.5 s', async () => {
    const greeting = await speak(
      'Hello, you have reached the front desk. Nobody can answer your call just now.',
    );
    const endMs = 200 + greeting.length / 8;
    const seen = play(concatSamples([silence(200), greeting, silence(4_000)]), leave);
    expect(seen.decision?.answeredBy).toBe('machine');
    expect(seen.leftAtMs).toBeGreaterThanOrEqual(endMs + 1_500);
    expect(seen.leftAtMs).toBeLessThanOrEqual(endMs + 2_000);
  });

  it('detection beep: a long recorded prompt is reported, only the beep is acted on', async () => {
    const prompt = await speak('Thank you for calling. For sales, press one. For support, press two.');
    const beepStartMs = 200 + prompt.length / 8 + 1_000;
    const audio = concatSamples([silence(200), prompt, silence(1_000), beepTone(500), silence(1_000)]);
    const seen = play(audio, { ...leave, detection: 'beep' });
    expect(seen.decision).toMatchObject({ answeredBy: 'machine', reason: 'long_greeting' });
    expect(seen.decision?.decisionMs).toBeLessThan(beepStartMs);
    expect(seen.silencedAtMs).toBeGreaterThanOrEqual(beepStartMs);
    expect(seen.leftAtMs).toBeGreaterThanOrEqual(beepStartMs + 500);
  });

  it('machine_speech_ms 2000: the same greeting is decided within 2.5 s', async () => {
    const greeting = await speak(
      'Hi, you have reached Sam. I cannot take your call right now. Please leave a message after the tone.',
    );
    const seen = play(concatSamples([silence(300), greeting]), { ...leave, machineSpeechMs: 2_000 });
    expect(seen.decision).toMatchObject({ answeredBy: 'machine', reason: 'long_greeting' });
    expect(seen.decision?.decisionMs).toBeLessThanOrEqual(2_500);
  });

  it('hang_up: the agent hangs up at the decision', async () => {
    const greeting = await speak('You have reached the voicemail of Alex Morgan. Please leave your message.');
    const seen = play(concatSamples([silence(200), greeting, beepTone(500), silence(500)]), {
      action: 'hang_up',
      message: null,
      waitForDecision: false,
      detection: 'early',
      machineSpeechMs: 2_400,
    });
    expect(seen.decision?.answeredBy).toBe('machine');
    expect(seen.hungUpAtMs).toBe(seen.decision?.decisionMs);
    expect(seen.leftAtMs).toBe(-1);
  });
});
