/**
 * A value read from the store and kept for `ttlMs`, then read again on the next ask: for rules the
 * dispatcher consults on every call (dial rates, quiet hours) and an operator changes rarely — a
 * change takes effect within `ttlMs`. Concurrent asks while a read is under way share it.
 */
export class RefreshingSnapshot<T> {
  private value: T | null = null;
  private readAtMs = 0;
  private reading: Promise<T> | null = null;

  constructor(
    private readonly ttlMs: number,
    private readonly read: () => Promise<T>,
  ) {}

  async get(nowMs: number): Promise<T> {
    if (this.value !== null && nowMs - this.readAtMs <= this.ttlMs) return this.value;
    this.reading ??= this.read()
      .then((value) => {
        this.value = value;
        this.readAtMs = nowMs;
        return value;
      })
      .finally(() => {
        this.reading = null;
      });
    return this.reading;
  }
}
