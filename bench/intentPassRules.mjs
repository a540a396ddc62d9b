/**
 * Compares decision rules over the rows bench/intentPasses.mjs wrote (INTENT_DUMP or the first
 * argument): which option each rule understands from the grammar pass, the grammar pass without the
 * coverage rule, and the free-form pass; figures as bench:intents gives them, and the decode time.
 */
import { readFileSync } from 'node:fs';
import { understandAnswer } from '../dist/domain/intentMatching.js';

const { rules, rows } = JSON.parse(
  readFileSync(process.argv[2] ?? process.env.INTENT_DUMP ?? '/tmp/intentPasses.json', 'utf8'),
);
const intentOf = (row, heard) => {
  if (heard.unclear) return null;
  const option = understandAnswer(rules[row.rule], heard.text).option;
  return option === null ? null : rules[row.rule][option].name;
};
const decisionRules = {
  'grammar pass (the default)': (g) => g.grammar,
  'free-form pass alone': (g) => g.free,
  'grammar, else free-form': (g) => g.grammar ?? g.free,
  'grammar, else open grammar when free-form agrees': (g) =>
    g.grammar ?? (g.open !== null && g.open === g.free ? g.open : null),
  'grammar, else open grammar when free-form agrees, else free-form when the grammar heard nothing': (g) =>
    g.grammar ?? (g.open !== null && g.open === g.free ? g.open : g.openText === '' ? g.free : null),
  'open grammar (no coverage rule)': (g) => g.open,
};
const summary = {};
for (const [name, decide] of Object.entries(decisionRules)) {
  const counts = {};
  const misses = [];
  for (const row of rows) {
    const g = {
      grammar: intentOf(row, row.grammar),
      open: intentOf(row, row.grammarOpen),
      openText: row.grammarOpen.text,
      free: intentOf(row, row.free),
    };
    const intent = decide(g);
    const ok = row.set === 'offScript' ? intent === null : intent === row.intent;
    counts[row.set] = counts[row.set] ?? { good: 0, total: 0, perVoice: {} };
    counts[row.set].total++;
    counts[row.set].perVoice[row.voice] = (counts[row.set].perVoice[row.voice] ?? 0) + (ok ? 1 : 0);
    if (ok) counts[row.set].good++;
    else if (
      process.env.INTENT_MISSES === name ||
      (row.set === 'offScript' && process.env.INTENT_MISSES === 'offScript')
    )
      misses.push(
        `${row.voice} ${row.set} "${row.text}" → ${intent} (g "${row.grammar.text}", open "${row.grammarOpen.text}", free "${row.free.text}")`,
      );
  }
  const figure = (set) => {
    const c = counts[set];
    if (!c) return '—';
    const good = set === 'offScript' ? c.total - c.good : c.good;
    return `${good} / ${c.total} = ${((100 * good) / c.total).toFixed(1)}%`;
  };
  console.log(
    `${name}: paraphrases ${figure('paraphrases')}, off-script filling a field ${figure('offScript')}, exact ${figure('exact')}`,
  );
  console.log(`  per voice (paraphrases): ${JSON.stringify(counts.paraphrases?.perVoice)}`);
  if (misses.length > 0) console.log(`  ${misses.join('\n  ')}`);
  summary[name] = counts;
}
const percentile = (values, p) =>
  values.sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(p * values.length))];
for (const pass of ['grammar', 'grammarOpen', 'free']) {
  const ms = rows.map((row) => row[pass].decodeMs);
  const rtf = rows.map((row) => row[pass].decodeMs / row.audioMs);
  console.log(
    `${pass}: decode ms p50 ${percentile(ms, 0.5)} p95 ${percentile(ms, 0.95)} max ${Math.max(...ms)}; per ms of audio p50 ${percentile(rtf, 0.5).toFixed(2)} p95 ${percentile(rtf, 0.95).toFixed(2)}`,
  );
}
