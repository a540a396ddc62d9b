/**
 * Splits text into pieces a synthesizer can voice one at a time, so that the first piece plays
 * while the rest is synthesized. Splits after sentence punctuation; a piece longer than
 * `maxPieceLength` is split again after commas, then between words.
 */
export function splitIntoSpeakablePieces(text: string, maxPieceLength = 200): string[] {
  const normalized = text.replace(/\s+/g, ' ').trim();
  if (normalized === '') return [];
  const sentences = normalized.split(/(?<=[.!?;])\s+/);
  const pieces: string[] = [];
  for (const sentence of sentences) {
    if (sentence.length <= maxPieceLength) {
      pieces.push(sentence);
      continue;
    }
    let current = '';
    for (const clause of sentence.split(/(?<=,)\s+/)) {
      for (const word of clause.split(' ')) {
        const candidate = current === '' ? word : `${current} ${word}`;
        if (candidate.length > maxPieceLength && current !== '') {
          pieces.push(current);
          current = word;
        } else {
          current = candidate;
        }
      }
      if (current.endsWith(',') && current.length > maxPieceLength / 2) {
        pieces.push(current);
        current = '';
      }
    }
    if (current !== '') pieces.push(current);
  }
  return pieces;
}
