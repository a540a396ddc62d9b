/** One send buffer and whether the kernel still holds it (a datagram send in flight). */
export interface SendSlot {
  buffer: Buffer;
  inFlight: boolean;
  done: (error: Error | null) => void;
}

/**
 * A small ring of reusable packet buffers for a session's sends: a buffer is handed out again only
 * once its send has completed; a fresh one is made when the whole ring is still in flight.
 */
export class SendRing {
  private readonly slots: SendSlot[];
  private next = 0;

  constructor(
    private readonly bufferBytes: number,
    private readonly onSendError: () => void,
    size = 8,
  ) {
    this.slots = Array.from({ length: size }, () => this.createSlot());
  }

  take(): SendSlot {
    const slot = this.slots[this.next]!;
    this.next = (this.next + 1) % this.slots.length;
    return slot.inFlight ? this.createSlot() : slot;
  }

  private createSlot(): SendSlot {
    const slot: SendSlot = {
      buffer: Buffer.alloc(this.bufferBytes),
      inFlight: false,
      done: (error) => {
        slot.inFlight = false;
        if (error) this.onSendError();
      },
    };
    return slot;
  }
}
