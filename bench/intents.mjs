/**
 * bench:intents — does the offline agent understand what people actually say? The corpus
 * (bench/fixtures/intentCorpus.json) is answers to the example appointment agent that are NOT its
 * listed phrases (paraphrases with words before and after, variants such as "yeah" and "nope") and
 * off-script answers that must fill no field, plus the listed phrases themselves. Each is
 * synthesised in several espeak-ng and flite voices, passed through G.711 μ-law (some with line
 * noise), recognised by pocketsphinx with the rule's grammar and understood as the script brain
 * does (domain/intentMatching.ts). CPU-heavy (one core for a few minutes per setting): a bench,
 * not a test.
 *
 * Settings: INTENT_FILLER_LOGP (comma list, "none" for no fillers), INTENT_REJECTION_LOGP,
 * INTENT_COVERAGE ("none" or 0..1), INTENT_VARIANTS=0 (no variants in the grammar),
 * INTENT_SECOND_PASS=0 (no free-form second pass when the grammar hears no phrase; on by default),
 * INTENT_VOICES (comma list of voice names to keep), INTENT_SETS (paraphrases,offScript,exact),
 * INTENT_CORPUS (another corpus file of the same shape), INTENT_DECODER (decoder settings,
 * "-beam=1e-60;-wip=0.2"), INTENT_FEATURES (the acoustic model's feat.params lines, "-upperf=3800").
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { understandAnswer } from '../dist/domain/intentMatching.js';
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

const numberOrNull = (value, fallback) =>
  value === undefined || value === 'default' ? fallback : value === 'none' ? null : Number(value);
const fillerSettings = (process.env.INTENT_FILLER_LOGP ?? 'default')
  .split(',')
  .map((v) => numberOrNull(v, undefined));
const rejectionLogp = numberOrNull(process.env.INTENT_REJECTION_LOGP, undefined);
const coverage = numberOrNull(process.env.INTENT_COVERAGE, undefined);
const phraseVariants = process.env.INTENT_VARIANTS !== '0';
const secondPass = process.env.INTENT_SECOND_PASS !== '0';
const keptVoices = process.env.INTENT_VOICES?.split(',');
const voices = corpus.voices.filter((voice) => !keptVoices || keptVoices.includes(voice.voice));
// INTENT_DECODER: decoder settings, e.g. "-cmninit=40,3,-1;-wip=0.2" (PocketsphinxSpeechToText decoderSettings).
const decoderSettings = Object.fromEntries(
  (process.env.INTENT_DECODER ?? '')
    .split(';')
    .filter(Boolean)
    .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
);
// INTENT_FEATURES: the acoustic model's feat.params overrides, e.g. "-upperf=3800;-lowerf=200".
const featureParams = Object.fromEntries(
  (process.env.INTENT_FEATURES ?? '')
    .split(';')
    .filter(Boolean)
    .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
);
const sets = (process.env.INTENT_SETS ?? 'paraphrases,offScript,exact').split(',');

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

const audioCache = new Map();
async function telephoneSpeech(text, voice) {
  const key = `${voice.voice}@${voice.speed}:${text}`;
  const cached = audioCache.get(key);
  if (cached) return cached;
  const narrow = await narrowband(text, voice);
  if (voice.noise) {
    const next = noiseGenerator(text.length * 7919);
    for (let i = 0; i < narrow.length; i++)
      narrow[i] = Math.max(-32768, Math.min(32767, narrow[i] + Math.round(next() * 1200)));
  }
  const padded = new Int16Array(narrow.length + 8000);
  padded.set(narrow, 2400);
  const heard = decodeG711('PCMU', encodeG711('PCMU', padded));
  audioCache.set(key, heard);
  return heard;
}

/** Per utterance: the time from its first audio to its transcript (the audio arrives at once). */
const decodeMs = [];
async function hear(recognizer, utterance, voice) {
  const rule = corpus.rules[utterance.rule];
  const samples = await telephoneSpeech(utterance.text, voice);
  const session = await recognizer.startSession({ phrases: rule.flatMap((option) => option.phrases) });
  const started = performance.now();
  for (let offset = 0; offset < samples.length; offset += 160)
    session.pushAudio(samples.subarray(offset, offset + 160));
  const heard = await session.finish();
  decodeMs.push(performance.now() - started);
  const understood = understandAnswer(rule, heard.text);
  return {
    heard,
    intent: understood.option === null ? null : rule[understood.option].name,
  };
}

const percent = (count, total) => `${count} / ${total} = ${((100 * count) / total).toFixed(1)}%`;

for (const fillerLogp of fillerSettings) {
  const recognizer = await PocketsphinxSpeechToText.start({
    processCount: 1,
    freeForm: secondPass,
    freeFormSecondPass: secondPass,
    logger,
    phraseVariants,
    decoderSettings,
    featureParams,
    ...(fillerLogp !== undefined ? { fillerLogp } : {}),
    ...(rejectionLogp !== undefined ? { rejectionLogp } : {}),
    ...(coverage !== undefined ? { minimumSpeechCoverage: coverage } : {}),
  });
  const started = performance.now();
  decodeMs.length = 0;
  const totals = {};
  const misses = {};
  const perVoice = {};
  try {
    for (const voice of voices) {
      const label = `${voice.voice}${voice.speed ? `@${voice.speed}` : ''}${voice.noise ? '+noise' : ''}`;
      perVoice[label] = {};
      for (const set of sets) {
        let good = 0;
        for (const utterance of corpus[set]) {
          const { heard, intent } = await hear(recognizer, utterance, voice);
          const ok = set === 'offScript' ? intent === null : intent === utterance.intent;
          if (ok) good++;
          else {
            misses[set] = misses[set] ?? [];
            misses[set].push(
              `${label} "${utterance.text}" → ${heard.unclear ? '[unclear]' : `"${heard.text}"`}${intent ? ` (${intent})` : ''}`,
            );
          }
        }
        perVoice[label][set] = `${good}/${corpus[set].length}`;
        totals[set] = (totals[set] ?? 0) + good;
      }
    }
  } finally {
    await recognizer.close();
  }
  const seconds = ((performance.now() - started) / 1000).toFixed(0);
  console.log(
    `\n== fillerLogp ${fillerLogp ?? 'default'}, rejectionLogp ${rejectionLogp ?? 'default'}, coverage ${coverage ?? 'default'}, variants ${phraseVariants}, second pass ${secondPass}, decoder ${JSON.stringify(decoderSettings)}, features ${JSON.stringify(featureParams)} (${seconds} s)`,
  );
  const sorted = [...decodeMs].sort((a, b) => a - b);
  const at = (share) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))]);
  console.log(`decode ms per utterance: p50 ${at(0.5)}, p95 ${at(0.95)}, max ${at(1)}`);
  for (const set of sets) {
    const total = corpus[set].length * voices.length;
    const good = totals[set] ?? 0;
    const figure =
      set === 'offScript'
        ? `filled a field: ${percent(total - good, total)}`
        : `understood: ${percent(good, total)}`;
    console.log(`${set}: ${figure}`);
  }
  console.log('per voice:', JSON.stringify(perVoice));
  for (const [set, list] of Object.entries(misses)) console.log(`misses (${set}):\n  ${list.join('\n  ')}`);
}

await flite.close();
rmSync(directory, { recursive: true, force: true });
