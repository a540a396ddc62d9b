/**
 * Reads an async sequence ahead of its consumer: each item is taken from `source` as soon as it is
 * produced (and `onItem` told at once), while the consumer still gets them one by one, in order.
 * A reply's actions are read this way so that an action that comes after the sentences — the
 * model's `end_call` or `transfer_call`, known as soon as its stream ends — protects the sentences
 * still playing, not only once they have all been synthesised. An error of the source reaches the
 * consumer after the items before it; the consumer leaving early closes the source.
 */
export async function* readAhead<T>(source: AsyncIterable<T>, onItem: (item: T) => void): AsyncGenerator<T> {
  const iterator = source[Symbol.asyncIterator]();
  const buffered: T[] = [];
  let finished = false;
  let failure: { error: unknown } | null = null;
  let wake = null as (() => void) | null;
  let stopped = false;
  const pump = (async () => {
    try {
      while (!stopped) {
        const next = await iterator.next();
        if (next.done) break;
        onItem(next.value);
        buffered.push(next.value);
        wake?.();
      }
    } catch (error) {
      failure = { error };
    } finally {
      finished = true;
      wake?.();
    }
  })();
  try {
    for (;;) {
      const item = buffered.shift();
      if (item !== undefined) {
        yield item;
        continue;
      }
      if (finished) {
        if (failure) throw (failure as { error: unknown }).error;
        return;
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      wake = null;
    }
  } finally {
    if (!finished) {
      stopped = true;
      // The source is mid-step: it is closed once that step is over.
      void pump.then(() => iterator.return?.()).catch(() => {});
    }
  }
}
