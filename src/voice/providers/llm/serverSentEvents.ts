/**
 * Server-sent events (the WHATWG event-stream format) as streamed chat completions use them:
 * yields each event's `data` (multi-line data joined by newlines). Comments, `event:`, `id:` and
 * `retry:` fields are read past. Leniently, an event cut off by the end of the stream (no final
 * blank line) is still delivered.
 */
export async function* readServerSentEventData(pieces: AsyncIterable<Uint8Array>): AsyncIterable<string> {
  const decoder = new TextDecoder();
  let pending = '';
  let dataLines: string[] = [];

  function* takeCompleteLines(final: boolean): Iterable<string> {
    while (true) {
      const match = /\r\n|\r|\n/.exec(pending);
      // A lone trailing \r may be the first half of \r\n: wait for the next piece.
      if (!match || (match[0] === '\r' && match.index === pending.length - 1 && !final)) break;
      const line = pending.slice(0, match.index);
      pending = pending.slice(match.index + match[0].length);
      yield line;
    }
    if (final && pending !== '') {
      yield pending;
      pending = '';
    }
  }

  function* interpret(line: string): Iterable<string> {
    if (line === '') {
      if (dataLines.length > 0) yield dataLines.join('\n');
      dataLines = [];
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') dataLines.push(value);
  }

  for await (const piece of pieces) {
    pending += decoder.decode(piece, { stream: true });
    for (const line of takeCompleteLines(false)) yield* interpret(line);
  }
  pending += decoder.decode();
  for (const line of takeCompleteLines(true)) yield* interpret(line);
  // A stream that ends without the final blank line still delivers its last event.
  yield* interpret('');
}
