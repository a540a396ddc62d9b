/**
 * bench:intents, exploration of second passes (issue 36): for each utterance of the corpus, the
 * grammar pass at the default, the grammar pass without the coverage rule (what the grammar heard
 * before rejection), and a free-form pass with the language model, with each decode's time; the
 * rows are written as JSON (INTENT_DUMP, default /tmp/intentPasses.json) so that decision rules can
 * be compared without decoding again (bench/intentPassRules.mjs). Settings as bench/intents.mjs:
 * INTENT_VOICES, INTENT_SETS, INTENT_CORPUS.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { decodeG711, encodeG711 } from '../dist/telephony/rtp/index.js';
import {
  decodeWav,
  FliteTextToSpeech,
  PocketsphinxSpeechToText,
  resample,
} from '../dist/voice/providers/index.js';

const corpus = JSON.parse(
  readFileSync(process.env.INTENT_CORPUS ?? new URL('./fixtures/intentCorpus.json', import.meta.url), 'utf8'),
);
const logger = pino({ level: 'silent' });
const directory = mkdtempSync(join(tmpdir(), 'callwright-intents-'));
const keptVoices = process.env.INTENT_VOICES?.split(',');
const voices = corpus.voices.filter((voice) => !keptVoices || keptVoices.includes(voice.voice));
const sets = (process.env.INTENT_SETS ?? 'paraphrases,offScript,exact').split(',');
const dumpPath = process.env.INTENT_DUMP ?? '/tmp/intentPasses.json';

const flite = await FliteTextToSpeech.start({ logger });

function noiseGenerator(seed) {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state / 0x7fffffff - 0.5;
  };
}

async function narrowband(text, voice) {
  if (voice.voice.startsWith('flite:')) {
    const chunks = [];
    for await (const chunk of flite.synthesize(text, { voice: voice.voice.slice('flite:'.length) }))
      chunks.push(chunk.samples);
    const total = chunks.reduce((sum, chunk) => sum + chunk.length, 0);
    const joined = new Int16Array(total);
    let at = 0;
    for (const chunk of chunks) {
      joined.set(chunk, at);
      at += chunk.length;
    }
    return joined;
  }
  const file = join(directory, 'utterance.wav');
  execFileSync('espeak-ng', ['-v', voice.voice, '-s', String(voice.speed), '-w', file, text]);
  const pcm = decodeWav(new Uint8Array(readFileSync(file)));
  return resample(pcm.samples, pcm.sampleRateHz, 8000);
}

async function telephoneSpeech(text, voice) {
  const narrow = await narrowband(text, voice);
  if (voice.noise) {
    const next = noiseGenerator(text.length * 7919);
    for (let i = 0; i < narrow.length; i++)
      narrow[i] = Math.max(-32768, Math.min(32767, narrow[i] + Math.round(next() * 1200)));
  }
  const padded = new Int16Array(narrow.length + 8000);
  padded.set(narrow, 2400);
  return decodeG711('PCMU', encodeG711('PCMU', padded));
}

async function decode(recognizer, samples, phrases) {
  const session = await recognizer.startSession({ phrases });
  const started = performance.now();
  for (let offset = 0; offset < samples.length; offset += 160)
    session.pushAudio(samples.subarray(offset, offset + 160));
  const heard = await session.finish();
  return { ...heard, decodeMs: Math.round(performance.now() - started) };
}

const grammar = await PocketsphinxSpeechToText.start({ processCount: 1, freeForm: false, logger });
const grammarOpen = await PocketsphinxSpeechToText.start({
  processCount: 1,
  freeForm: false,
  logger,
  minimumSpeechCoverage: null,
});
const free = await PocketsphinxSpeechToText.start({ processCount: 1, freeForm: true, logger });
const rows = [];
try {
  for (const voice of voices) {
    for (const set of sets) {
      for (const utterance of corpus[set]) {
        const phrases = corpus.rules[utterance.rule].flatMap((option) => option.phrases);
        const samples = await telephoneSpeech(utterance.text, voice);
        const row = {
          voice: voice.voice,
          set,
          rule: utterance.rule,
          text: utterance.text,
          intent: utterance.intent ?? null,
          audioMs: Math.round(samples.length / 8),
          grammar: await decode(grammar, samples, phrases),
          grammarOpen: await decode(grammarOpen, samples, phrases),
          free: await decode(free, samples, []),
        };
        rows.push(row);
        process.stdout.write(
          `${voice.voice} ${set} "${row.text}" → "${row.grammar.text}" | "${row.grammarOpen.text}" | "${row.free.text}"\n`,
        );
      }
    }
  }
} finally {
  await Promise.all([grammar.close(), grammarOpen.close(), free.close()]);
  await flite.close();
  rmSync(directory, { recursive: true, force: true });
}
writeFileSync(dumpPath, JSON.stringify({ rules: corpus.rules, rows }, null, 1));
console.log(`${rows.length} rows → ${dumpPath}`);
