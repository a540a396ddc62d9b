import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeWav } from '../../src/voice/providers/audio/wav.js';
import { wavSamples } from './recordings.js';

/**
 * A WAV for Chromium's `--use-file-for-fake-audio-capture`: silence for `answerAtS` seconds (the
 * agent's greeting), espeak-ng saying `words`, then silence to `totalS` seconds (the agent's
 * goodbye; the browser loops the file after it).
 */
export function fakeMicrophoneWav(
  dir: string,
  words: string,
  options: { answerAtS: number; totalS: number; espeakArgs?: string[] },
): string {
  const spoken = execFileSync('espeak-ng', [...(options.espeakArgs ?? []), '--stdout', words]);
  const sampleRateHz = spoken.readUInt32LE(24);
  const speech = wavSamples(spoken);
  const samples = new Int16Array(sampleRateHz * options.totalS + speech.length);
  samples.set(speech, sampleRateHz * options.answerAtS);
  const file = join(dir, 'microphone.wav');
  writeFileSync(file, encodeWav(samples, sampleRateHz));
  return file;
}
