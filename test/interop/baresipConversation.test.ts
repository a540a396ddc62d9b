import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resample } from '../../src/voice/providers/audio/resampler.js';
import { decodeWav } from '../../src/voice/providers/audio/wav.js';
import { startBaresipCallee } from '../helpers/baresip.js';
import { callThroughTrunk, startFullService } from '../helpers/fullService.js';
import { calleeChannel, loudFrames } from '../helpers/recordings.js';
import { freeUdpPort } from '../sipp/harness.js';

/**
 * A conversation with real third-party SIP software that answers as people do: baresip (Debian's
 * softphone) auto-answers and, once the example appointment agent has asked its question, says
 * "yes that works for me" — espeak-ng's voice, not the sandbox's, made 8 kHz by sox, through
 * G.711 over RTP — a listed phrase inside a longer answer. Before issue 36 the agent heard
 * `[unclear]` 5 times out of 5 and the call ended callee_hangup with nothing extracted.
 */

let service: Awaited<ReturnType<typeof startFullService>>;
const directory = mkdtempSync(join(tmpdir(), 'callwright-paraphrase-'));
const script = JSON.parse(
  readFileSync(resolve(import.meta.dirname, '../../examples/agents/appointment-confirmation.json'), 'utf8'),
);

beforeAll(async () => {
  service = await startFullService({ CALLWRIGHT_TRUNK_ALLOW_PRIVATE: 'true' });
}, 60_000);

afterAll(async () => {
  await service?.dispose();
  rmSync(directory, { recursive: true, force: true });
});

/** `text` in espeak-ng's en-us voice as 8 kHz 16-bit mono. */
function espeakSpeech(text: string): Int16Array {
  const wide = join(directory, 'wide.wav');
  execFileSync('espeak-ng', ['-v', 'en-us', '-s', '165', '-w', wide, text]);
  const pcm = decodeWav(new Uint8Array(readFileSync(wide)));
  return resample(pcm.samples, pcm.sampleRateHz, 8000);
}

/**
 * What baresip plays from its answer: silence while the agent greets and asks (its question takes
 * about 6 s in flite's voice), the answer, then silence for the agent's goodbye (baresip hangs up
 * when its file ends: the agent must hang up first).
 */
function answerAfterQuestion(answer: Int16Array): Int16Array {
  const before = 8000 * 10;
  const after = 8000 * 14;
  const samples = new Int16Array(before + answer.length + after);
  samples.set(answer, before);
  return samples;
}

describe('baresip answers in its own words', () => {
  it('"yes that works for me": the agent understands, confirms and hangs up', async () => {
    const answer = espeakSpeech('yes that works for me');
    let sipPort = 0;
    let baresip: Awaited<ReturnType<typeof startBaresipCallee>> | undefined;
    for (let attempt = 0; baresip === undefined; attempt++) {
      sipPort = await freeUdpPort();
      baresip = await startBaresipCallee({
        sipPort,
        user: '+14155550177',
        say: answerAfterQuestion(answer),
        lifetimeMs: 60_000,
      }).catch((error: Error) => {
        if (attempt >= 2 || !error.message.includes('Address already in use')) throw error;
        return undefined;
      });
    }
    try {
      const call = await callThroughTrunk(
        service,
        { uri: `sip:127.0.0.1:${sipPort}` },
        {
          script,
          variables: { customer_name: 'Ann', appointment_day: 'Tuesday' },
          maxDurationS: 40,
          timeoutMs: 50_000,
          toNumber: '+14155550177',
        },
      );
      const output = baresip.output();
      expect(call, output).toMatchObject({ status: 'completed', endReason: 'agent_hangup' });
      expect(call.extractedData, JSON.stringify(call.transcript)).toEqual({ confirmed: true });
      // Greeting, the answer heard whole, the goodbye: no "Please say yes or no".
      expect(call.transcript.map((entry) => entry.role)).toEqual(['agent', 'callee', 'agent']);
      expect(call.transcript[1]?.text).toMatch(/that works/);
      expect(call.transcript[2]?.text).toContain('confirmed for Tuesday');
      const understanding = (call.metrics as { understanding: Record<string, unknown>[] }).understanding;
      expect(understanding).toMatchObject([{ node: 'greet', option: 0 }]);
      // The answer is in the call's recording, and the agent's goodbye reached baresip.
      expect(loudFrames(calleeChannel(readFileSync(call.recordingPath as string)))).toBeGreaterThan(20);
      expect(loudFrames(baresip.heard()), output).toBeGreaterThan(100);
    } finally {
      await baresip.stop();
    }
  }, 90_000);
});
