/**
 * RFC 4733 telephone-events for DTMF: the 4-byte event payload, a sender that turns digits into
 * per-frame event packets, and a receiver that reports each digit once.
 *
 * Sending (RFC 4733 §2.5): every packet of one event carries the RTP timestamp of the event's
 * start; the first has the marker bit; each update grows `duration` (in 8 kHz samples) by one
 * frame; the last has the E bit and the total duration and is sent three times in all (each copy
 * a new RTP sequence number, same timestamp and duration). Digits are separated by a gap during
 * which normal audio (or silence) flows.
 */

export type DtmfDigit =
  | '0'
  | '1'
  | '2'
  | '3'
  | '4'
  | '5'
  | '6'
  | '7'
  | '8'
  | '9'
  | '*'
  | '#'
  | 'A'
  | 'B'
  | 'C'
  | 'D';

const digitsByEvent: readonly DtmfDigit[] = [
  '0',
  '1',
  '2',
  '3',
  '4',
  '5',
  '6',
  '7',
  '8',
  '9',
  '*',
  '#',
  'A',
  'B',
  'C',
  'D',
];

export const dtmfPayloadBytes = 4;
export const defaultDtmfVolume = 10;

export function eventForDigit(digit: string): number | null {
  const index = digitsByEvent.indexOf(digit.toUpperCase() as DtmfDigit);
  return index < 0 ? null : index;
}

export function digitForEvent(event: number): DtmfDigit | null {
  return digitsByEvent[event] ?? null;
}

export function isDtmfDigits(digits: string): boolean {
  return /^[0-9*#A-Da-d]+$/.test(digits);
}

export interface DtmfEventPayload {
  event: number;
  end: boolean;
  /** Power level in −dBm0 (0–63). */
  volume: number;
  /** Duration so far, in timestamp units (8 kHz samples). */
  duration: number;
}

/** Reads an event payload; null when shorter than 4 bytes. Never throws. */
export function readDtmfPayload(payload: Uint8Array): DtmfEventPayload | null {
  if (payload.length < dtmfPayloadBytes) return null;
  const flags = payload[1]!;
  return {
    event: payload[0]!,
    end: (flags & 0x80) !== 0,
    volume: flags & 0x3f,
    duration: (payload[2]! << 8) | payload[3]!,
  };
}

export function writeDtmfPayload(target: Uint8Array, offset: number, value: DtmfEventPayload): number {
  target[offset] = value.event & 0xff;
  target[offset + 1] = (value.end ? 0x80 : 0) | (value.volume & 0x3f);
  const duration = Math.min(0xffff, Math.max(0, Math.round(value.duration)));
  target[offset + 2] = duration >> 8;
  target[offset + 3] = duration & 0xff;
  return dtmfPayloadBytes;
}

export interface DtmfSendOptions {
  /** Tone length per digit (default 100 ms; clamped to 40–5000 ms). */
  durationMs?: number;
  /** Silence after each digit (default 60 ms). */
  gapMs?: number;
  volume?: number;
}

interface PlannedDigit {
  event: number;
  toneFrames: number;
  gapFrames: number;
  volume: number;
  done: (() => void) | null;
}

/** What the session sends this frame when the sender has an event packet. Reused per frame. */
export interface DtmfFrame {
  marker: boolean;
  /** RTP timestamp of the event's start. */
  timestamp: number;
}

const endCopies = 3;

/**
 * Per-session DTMF transmit state, advanced one frame per clock tick by `nextFrame`.
 */
export class DtmfSender {
  private readonly queue: PlannedDigit[] = [];
  private readonly frame: DtmfFrame = { marker: false, timestamp: 0 };
  private readonly payload: DtmfEventPayload = { event: 0, end: false, volume: 0, duration: 0 };
  /** Frames emitted for the head digit so far (tone, then end copies, then gap). */
  private position = 0;
  private eventTimestamp = 0;

  constructor(private readonly samplesPerFrame: number) {}

  get busy(): boolean {
    return this.queue.length > 0;
  }

  /** Queues digits; resolves when the last one's gap has passed (or on `cancel`). */
  enqueue(digits: string, options: DtmfSendOptions, frameMs: number): Promise<void> {
    const durationMs = Math.min(5000, Math.max(40, options.durationMs ?? 100));
    const toneFrames = Math.max(2, Math.round(durationMs / frameMs));
    const gapFrames = Math.max(0, Math.round((options.gapMs ?? 60) / frameMs));
    const volume = Math.min(63, Math.max(0, options.volume ?? defaultDtmfVolume));
    return new Promise<void>((resolve) => {
      const chars = [...digits];
      chars.forEach((digit, index) => {
        const event = eventForDigit(digit);
        if (event === null) return;
        this.queue.push({
          event,
          toneFrames,
          gapFrames,
          volume,
          done: index === chars.length - 1 ? resolve : null,
        });
      });
      if (chars.length === 0) resolve();
    });
  }

  /**
   * Advances one frame. Returns the frame description and writes the 4-byte event payload into
   * `target` at `offset` when an event packet is due; returns null when audio should be sent.
   */
  nextFrame(currentTimestamp: number, target: Uint8Array, offset: number): DtmfFrame | null {
    const digit = this.queue[0];
    if (!digit) return null;
    const position = this.position++;
    const eventFrames = digit.toneFrames + endCopies - 1;
    if (position === 0) this.eventTimestamp = currentTimestamp;
    if (position < eventFrames) {
      const toneFrame = Math.min(position + 1, digit.toneFrames);
      this.payload.event = digit.event;
      this.payload.volume = digit.volume;
      this.payload.end = position + 1 >= digit.toneFrames;
      this.payload.duration = toneFrame * this.samplesPerFrame;
      writeDtmfPayload(target, offset, this.payload);
      this.frame.marker = position === 0;
      this.frame.timestamp = this.eventTimestamp;
      if (position + 1 === eventFrames && digit.gapFrames === 0) this.finishDigit();
      return this.frame;
    }
    if (position + 1 >= eventFrames + digit.gapFrames) this.finishDigit();
    return null;
  }

  /** Drops every queued digit (their promises resolve). */
  cancel(): void {
    for (const digit of this.queue) digit.done?.();
    this.queue.length = 0;
    this.position = 0;
  }

  private finishDigit(): void {
    const digit = this.queue.shift();
    this.position = 0;
    digit?.done?.();
  }
}

/**
 * Reports each received event once: the RTP timestamp identifies an event, so its updates and
 * the three end copies are recognised as the same key press, and two presses of the same key
 * (different timestamps) are two digits.
 */
export class DtmfReceiver {
  private readonly seen = new Float64Array(16).fill(-1);
  private next = 0;

  /** The digit when this packet starts a new event; null for updates, repeats and non-digits. */
  accept(timestamp: number, payload: Uint8Array): DtmfDigit | null {
    const value = readDtmfPayload(payload);
    if (!value) return null;
    const digit = digitForEvent(value.event);
    if (digit === null) return null;
    for (let i = 0; i < this.seen.length; i++) if (this.seen[i] === timestamp) return null;
    this.seen[this.next] = timestamp;
    this.next = (this.next + 1) % this.seen.length;
    return digit;
  }

  reset(): void {
    this.seen.fill(-1);
    this.next = 0;
  }
}
