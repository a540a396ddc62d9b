const abbreviation = /^(mr|mrs|ms|dr|st|vs|etc|e\.g|i\.e|no)$/i;

/**
 * Cuts streamed text into sentences, so speech can start with the first one while the model is
 * still writing the rest. A sentence ends at . ! ? or a newline followed by space; abbreviations
 * such as "Dr." and numbers such as "3.5" do not end one. A sentence whose end is the last thing
 * received is given at once, without waiting for the next token's space (one token's time, 20 ms
 * at 50 tokens/s, on every reply): after ! ? … always, after . when it follows a word of two or
 * more letters that is not an abbreviation (so not "3." of "3.5", nor "J." of "J. Smith").
 */
export class SentenceSplitter {
  private buffer = '';

  push(delta: string): string[] {
    this.buffer += delta;
    const sentences: string[] = [];
    for (;;) {
      const end = this.findSentenceEnd();
      if (end === -1) break;
      const sentence = this.buffer.slice(0, end).trim();
      this.buffer = this.buffer.slice(end);
      // Punctuation alone (the rest of an ellipsis "..") has nothing to say.
      if (/[\p{L}\p{N}]/u.test(sentence)) sentences.push(sentence);
    }
    return sentences;
  }

  /**
   * The first clause of the sentence being written, taken out of the buffer, when what was received
   * ends with one ("Okay," "Sure;" "Right:" after a word, not the "1," of "1,000") and no sentence
   * end came before it; null otherwise. A reply's first clause is voiced while the model still
   * writes the rest of its sentence (docs/decisions.md, "A reply's first clause").
   */
  clause(): string | null {
    const match = /^(\s*[^.!?…\n]*\p{L}[,;:])\s*$/u.exec(this.buffer);
    if (!match || this.findSentenceEnd() !== -1) return null;
    this.buffer = '';
    return match[1]!.trim();
  }

  /** What remains once the stream is over. */
  flush(): string[] {
    const rest = this.buffer.trim();
    this.buffer = '';
    return rest ? [rest] : [];
  }

  private findSentenceEnd(): number {
    const pattern = /([.!?…]+["')\]]*|\n)(\s)/g;
    for (let match = pattern.exec(this.buffer); match; match = pattern.exec(this.buffer)) {
      const before = this.buffer.slice(0, match.index);
      const lastWord = /(\S+)$/.exec(before)?.[1] ?? '';
      if (match[1] === '.' && abbreviation.test(lastWord)) continue;
      return match.index + match[1]!.length;
    }
    return this.endsWithSentence() ? this.buffer.length : -1;
  }

  /** True when what was received so far ends a sentence beyond doubt. */
  private endsWithSentence(): boolean {
    const end = /(\S*?)([.!?…]+)["')\]]*$/.exec(this.buffer);
    if (!end) return false;
    const [, word = '', punctuation = ''] = end;
    if (punctuation !== '.') return true;
    return /^\p{L}{2,}$/u.test(word) && !abbreviation.test(word);
  }
}
