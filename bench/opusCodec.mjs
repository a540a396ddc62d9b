// npm run bench:opus — the CPU an Opus web call costs at its bridge (src/telephony/webrtc), per
// second of audio each way, on one core: the browser's packets decoded to 8 kHz and the call's
// 8 kHz frames encoded, as OpusTranscoder does them (20 ms frames). For comparison, the same work
// done at 48 kHz with our own windowed-sinc resampler (what libopus's internal rate conversion
// replaced). The "browser" is a second libopus encoder at 48 kHz: wideband at 32 kb/s (what
// Chromium sends unless told otherwise) and narrowband (what it sends after our answer's
// maxplaybackrate=8000).
//
// Settings: BENCH_SECONDS (audio per measurement, default 30).

import { encodeG711 } from '../dist/telephony/rtp/g711.js';
import { OpusVoiceCodec } from '../dist/telephony/webrtc/opusCodec.js';
import { OpusTranscoder } from '../dist/telephony/webrtc/opusTranscoder.js';
import { createResampler } from '../dist/voice/providers/audio/resampler.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 30);
const frames = seconds * 50;

/** Speech-like test signal: three partials under a 3 Hz envelope. */
function voice(rateHz, count, from) {
  const samples = new Int16Array(count);
  for (let i = 0; i < count; i++) {
    const t = (from + i) / rateHz;
    const envelope = 1 + Math.sin(2 * Math.PI * 3 * t);
    const partials =
      Math.sin(2 * Math.PI * 220 * t) +
      0.5 * Math.sin(2 * Math.PI * 1100 * t) +
      0.3 * Math.sin(2 * Math.PI * 2700 * t);
    samples[i] = Math.round(3000 * envelope * partials);
  }
  return samples;
}

function browserStream(sampleRateHz, bitrateBps) {
  const browser = new OpusVoiceCodec({ sampleRateHz, bitrateBps, complexity: 10, expectedLossPercent: 10 });
  const step = sampleRateHz / 50;
  const packets = Array.from({ length: frames }, (_, k) =>
    browser.encode(voice(sampleRateHz, step, k * step)),
  );
  browser.close();
  return packets;
}

/** CPU milliseconds per second of audio (process CPU time, user + system). */
function cpuMsPerSecond(work) {
  const before = process.cpuUsage();
  work();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000 / seconds;
}

const wideband = browserStream(48_000, 32_000);
const narrowband = browserStream(8_000, 12_000);
const sessionFrames = Array.from({ length: frames }, (_, k) =>
  encodeG711('PCMU', voice(8_000, 160, k * 160)),
);
const rows = [];

for (const [name, packets] of [
  ['wideband 32 kb/s', wideband],
  ['narrowband', narrowband],
]) {
  const transcoder = new OpusTranscoder();
  const decodeMs = cpuMsPerSecond(() => {
    for (let k = 0; k < frames; k++) transcoder.fromBrowser(k & 0xffff, packets[k]);
  });
  const encodeMs = cpuMsPerSecond(() => {
    for (let k = 0; k < frames; k++) {
      transcoder.toBrowser(
        { marker: false, sequenceNumber: k & 0xffff, timestamp: k * 160 },
        sessionFrames[k],
      );
    }
  });
  transcoder.close();
  rows.push({ path: `OpusTranscoder, browser ${name}`, decodeMs, encodeMs });
}

for (const complexity of [1, 5]) {
  const codec = new OpusVoiceCodec({ sampleRateHz: 48_000, complexity });
  const down = createResampler({ inputSampleRateHz: 48_000, outputSampleRateHz: 8_000 });
  const up = createResampler({ inputSampleRateHz: 8_000, outputSampleRateHz: 48_000 });
  const decodeMs = cpuMsPerSecond(() => {
    for (const packet of wideband) down.push(codec.decode(packet));
  });
  let pending = new Int16Array(0);
  const encodeMs = cpuMsPerSecond(() => {
    for (let k = 0; k < frames; k++) {
      const upsampled = up.push(voice(8_000, 160, k * 160));
      const joined = new Int16Array(pending.length + upsampled.length);
      joined.set(pending);
      joined.set(upsampled, pending.length);
      let offset = 0;
      for (; offset + 960 <= joined.length; offset += 960)
        codec.encode(joined.subarray(offset, offset + 960));
      pending = joined.slice(offset);
    }
  });
  codec.close();
  rows.push({ path: `48 kHz codec + our resampler, complexity ${complexity}`, decodeMs, encodeMs });
}

console.log(`Opus at the web call bridge: CPU ms per second of audio (${seconds} s each, one core)`);
for (const row of rows) {
  const total = row.decodeMs + row.encodeMs;
  console.log(
    `${row.path.padEnd(48)} decode ${row.decodeMs.toFixed(2).padStart(6)}  encode ${row.encodeMs.toFixed(2).padStart(6)}  total ${total.toFixed(2).padStart(6)} ms/s (${(total / 10).toFixed(2)}% of a core per call)`,
  );
}
