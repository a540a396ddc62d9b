import type { Logger } from '../../logger.js';

/**
 * A small typed event source. A listener that throws is logged and does not disturb the SIP
 * state machine or the other listeners.
 */
export class TypedEvents<EventMap extends object> {
  private readonly listeners = new Map<keyof EventMap, Array<(payload: never) => void>>();
  private readonly eventLogger: Logger;

  constructor(logger: Logger) {
    this.eventLogger = logger;
  }

  /** Adds a listener; returns a function that removes it. */
  on<Name extends keyof EventMap>(event: Name, listener: (payload: EventMap[Name]) => void): () => void {
    const list = this.listeners.get(event) ?? [];
    list.push(listener);
    this.listeners.set(event, list);
    return () => {
      const current = this.listeners.get(event);
      if (current === undefined) return;
      const index = current.indexOf(listener);
      if (index >= 0) current.splice(index, 1);
    };
  }

  protected emit<Name extends keyof EventMap>(event: Name, payload: EventMap[Name]): void {
    for (const listener of [...(this.listeners.get(event) ?? [])]) {
      try {
        (listener as (payload: EventMap[Name]) => void)(payload);
      } catch (error) {
        this.eventLogger.error(
          { event: String(event), err: error instanceof Error ? error.message : String(error) },
          'SIP event listener failed',
        );
      }
    }
  }
}
