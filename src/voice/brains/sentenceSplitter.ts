/**
 * Cuts streamed text into sentences, so speech can start with the first one while the model is
 * still writing the rest. A sentence ends at . ! ? or a newline followed by space; abbreviations
 * such as "Dr." and numbers such as "3.5" do not end one.
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
      if (sentence) sentences.push(sentence);
    }
    return sentences;
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
      if (match[1] === '.' && /^(mr|mrs|ms|dr|st|vs|etc|e\.g|i\.e|no)$/i.test(lastWord)) continue;
      return match.index + match[1]!.length;
    }
    return -1;
  }
}
