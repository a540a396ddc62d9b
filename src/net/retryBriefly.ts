/**
 * Runs `operation` up to `attempts` times, waiting `firstDelayMs`, then twice as long, between
 * tries: for a database call that a dropped connection may fail once (the pool reconnects on the
 * next try). Only for operations that are safe to repeat. The last error reaches the caller.
 */
export async function retryBriefly<T>(
  operation: () => Promise<T>,
  options: { attempts?: number; firstDelayMs?: number; retryIf?: (error: unknown) => boolean } = {},
): Promise<T> {
  const attempts = options.attempts ?? 3;
  let delayMs = options.firstDelayMs ?? 100;
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation();
    } catch (error) {
      if (attempt >= attempts || options.retryIf?.(error) === false) throw error;
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      delayMs *= 2;
    }
  }
}
