import { describe, expect, it } from 'vitest';
import { decodeG711, encodeG711, prepareG711 } from '../telephony/rtp/g711.js';
import { EchoGuard } from './echoGuard.js';

/**
 * The echo guard on synthetic speech (noise shaped by a syllable envelope, 8 kHz, 20 ms frames):
 * an echo delayed, attenuated and G.711-coded twice is found and suppressed; speech over it and a
 * line with no echo pass; and what it costs per call-second.
 */

const frameSamples = 160;

/** Speech-like audio: noise under 4–6 syllables a second with pauses, deterministic. */
function speechLike(seconds: number, amplitude: number, seed: number): Int16Array {
  const samples = new Int16Array(seconds * 8000);
  let state = seed;
  const random = () => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state / 0x7fffffff;
  };
  let index = 0;
  while (index < samples.length) {
    const syllable = Math.floor((120 + random() * 150) * 8);
    const pause = Math.floor((20 + random() * (random() < 0.2 ? 300 : 60)) * 8);
    const loudness = 0.4 + random() * 0.6;
    for (let at = 0; at < syllable && index < samples.length; at++, index++) {
      const envelope = Math.sin((Math.PI * at) / syllable);
      samples[index] = Math.round((random() * 2 - 1) * amplitude * loudness * envelope);
    }
    index += pause;
  }
  return samples;
}

/** `samples` delayed by `delayMs`, scaled by `lossDb`, through G.711 twice (out and back). */
function echoOf(samples: Int16Array, delayMs: number, lossDb: number): Int16Array {
  prepareG711();
  const gain = 10 ** (-lossDb / 20);
  const echo = new Int16Array(samples.length);
  const offset = delayMs * 8;
  for (let index = offset; index < samples.length; index++)
    echo[index] = Math.round((samples[index - offset] as number) * gain);
  return decodeG711('PCMU', encodeG711('PCMU', decodeG711('PCMU', encodeG711('PCMU', echo))));
}

function mix(a: Int16Array, b: Int16Array): Int16Array {
  return Int16Array.from(a, (sample, index) => Math.max(-32768, Math.min(32767, sample + (b[index] ?? 0))));
}

/** Runs the guard over a call: per tick the callee's frame, then the agent's. True per frame: echo. */
function run(guard: EchoGuard, agent: Int16Array, callee: Int16Array): boolean[] {
  const verdicts: boolean[] = [];
  for (let start = 0; start + frameSamples <= callee.length; start += frameSamples) {
    verdicts.push(guard.calleeFrame(callee.subarray(start, start + frameSamples)));
    const agentFrame = agent.subarray(start, start + frameSamples);
    if (agentFrame.length === frameSamples) guard.agentFrame(agentFrame);
  }
  return verdicts;
}

function loudFrames(samples: Int16Array, minimumPeak = 500): boolean[] {
  const loud: boolean[] = [];
  for (let start = 0; start + frameSamples <= samples.length; start += frameSamples) {
    let peak = 0;
    for (let index = start; index < start + frameSamples; index++)
      peak = Math.max(peak, Math.abs(samples[index] as number));
    loud.push(peak >= minimumPeak);
  }
  return loud;
}

describe('EchoGuard', () => {
  it('finds an echo 200 ms late and 12 dB down through G.711 twice, and suppresses it', () => {
    const agent = speechLike(10, 8000, 1);
    const callee = echoOf(agent, 200, 12);
    const guard = new EchoGuard();
    const verdicts = run(guard, agent, callee);
    const loud = loudFrames(callee);
    const loudEcho = verdicts.filter((_echo, index) => loud[index]);
    const passed = loudEcho.filter((echo) => !echo).length;
    // Nearly every audible frame of the echo is silenced for the listening pipeline.
    expect(passed / loudEcho.length).toBeLessThan(0.02);
    const stats = guard.stats();
    expect(stats.echoDelayMs).toBeGreaterThanOrEqual(180);
    expect(stats.echoDelayMs).toBeLessThanOrEqual(220);
    expect(stats.echoLossDb).toBeGreaterThan(-16);
    expect(stats.echoLossDb).toBeLessThan(-8);
  });

  it('lets the callee’s speech over the echo through', () => {
    const agent = speechLike(10, 8000, 2);
    const own = new Int16Array(agent.length);
    // The callee talks from 4 s to 7 s, as loud as the agent.
    own.set(speechLike(3, 8000, 3), 4 * 8000);
    const callee = mix(echoOf(agent, 300, 10), own);
    const verdicts = run(new EchoGuard(), agent, callee);
    const ownLoud = loudFrames(own, 4000);
    const ownFrames = verdicts.filter((_echo, index) => ownLoud[index]);
    // Most of the callee's loud frames pass (enough for the VAD to hear speech and barge in).
    expect(ownFrames.filter((echo) => !echo).length / ownFrames.length).toBeGreaterThan(0.8);
  });

  it('suppresses nothing on a line with no echo, quiet speech over the agent included', () => {
    const agent = speechLike(10, 8000, 4);
    const callee = new Int16Array(agent.length);
    // Silent for 2 s, then speech 12 dB quieter than the agent, over it.
    callee.set(speechLike(6, 2000, 5), 2 * 8000);
    const guard = new EchoGuard();
    run(guard, agent, callee);
    expect(guard.stats().framesSuppressed).toBe(0);
  });

  it('costs little per call-second', () => {
    const agent = speechLike(60, 8000, 6);
    const callee = echoOf(agent, 150, 10);
    const guard = new EchoGuard();
    const startedMs = performance.now();
    run(guard, agent, callee);
    const perCallSecondMs = (performance.now() - startedMs) / 60;
    console.log(`echo guard: ${perCallSecondMs.toFixed(3)} ms CPU per call-second`);
    expect(perCallSecondMs).toBeLessThan(2);
  });
});
