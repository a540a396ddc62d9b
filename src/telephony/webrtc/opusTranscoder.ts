import { randomInt } from 'node:crypto';
import { decodeG711, encodeG711, sampleRateHz } from '../rtp/g711.js';
import { encodeRtpPacket, type RtpHeaderFields, sequenceDelta } from '../rtp/rtpPacket.js';
import { OpusVoiceCodec, opusRtpClockRateHz } from './opusCodec.js';

/** The call's media frame: 20 ms of 8 kHz audio, one PCMU packet a tick for the RtpSession. */
const frameSamples = 160;
/** 48 kHz RTP clock ticks per 8 kHz sample. */
const clockTicksPerSample = opusRtpClockRateHz / sampleRateHz;
/** Opus frame sizes at 8 kHz (2.5–60 ms); anything else from the session is not encodable. */
const encodableFrameSamples = new Set([20, 40, 80, 160, 320, 480]);
/** A jump in the browser's sequence numbers beyond this is a new stream, not a loss. */
const maxLossPackets = 50;

/** An Opus RTP packet for werift's sender (it sets SSRC and payload type, and adds SRTP). */
export interface OpusRtpPacket {
  header: RtpHeaderFields;
  payload: Uint8Array;
}

export interface TranscoderCounts {
  /** Browser packets decoded into the call's PCMU. */
  packetsDecoded: number;
  /** Browser packets dropped: late, duplicated, or not decodable. */
  packetsDropped: number;
  /** Browser packets found missing (sequence gaps), left to the RtpSession's concealment. */
  packetsLost: number;
  /** Session frames encoded to Opus for the browser. */
  framesEncoded: number;
}

/**
 * Transcodes between a web call's two legs: Opus on the browser's side (48 kHz RTP clock), PCMU
 * on the RtpSession's (the call's 8 kHz pipeline, unchanged). libopus converts the sampling rate
 * itself: its decoder gives 8 kHz from the browser's wideband stream, its encoder takes 8 kHz and
 * sends narrowband Opus — the agent's audio is telephone-band whatever the codec.
 *
 * Toward the session, the decoded audio is cut into 20 ms PCMU packets with their own sequence
 * numbers and timestamps (one packet per tick, as the session's jitter buffer plays them); a gap
 * in the browser's sequence numbers becomes the same gap here, so the session conceals it as on a
 * phone call. Toward the browser, each 20 ms PCMU frame becomes one Opus packet with the session's
 * sequence number, marker, and timestamp on the 48 kHz clock, in-band FEC on.
 */
export class OpusTranscoder {
  readonly counts: TranscoderCounts = {
    packetsDecoded: 0,
    packetsDropped: 0,
    packetsLost: 0,
    framesEncoded: 0,
  };
  private readonly codec: OpusVoiceCodec;
  private pending = new Int16Array(0);
  private lastBrowserSequence: number | null = null;
  private lastBrowserPacketSamples = frameSamples;
  private sessionSequence = randomInt(0, 0x10000);
  private sessionTimestamp = randomInt(0, 2 ** 32 - 1);
  /** One SSRC toward the session for the whole call (a new one would restart its jitter buffer). */
  private readonly ssrc = randomInt(0, 2 ** 32 - 1);

  constructor(options: { complexity?: number; expectedLossPercent?: number } = {}) {
    this.codec = new OpusVoiceCodec({
      sampleRateHz: sampleRateHz,
      complexity: options.complexity,
      expectedLossPercent: options.expectedLossPercent,
    });
  }

  /**
   * The browser's Opus packet → PCMU RTP datagrams for the session (usually one; none while a
   * packet shorter than 20 ms waits for the next, or when the packet is dropped).
   */
  fromBrowser(sequenceNumber: number, opusPayload: Uint8Array): Buffer[] {
    const previous = this.lastBrowserSequence;
    if (previous !== null) {
      const step = sequenceDelta(sequenceNumber, previous);
      if (step <= 0 && step > -maxLossPackets) {
        // Late or repeated: its time has passed (the decoder's state is already beyond it).
        this.counts.packetsDropped++;
        return [];
      }
      if (step > 1 && step <= maxLossPackets) {
        // Lost packets: skip their sequence numbers and time so the session conceals the gap.
        this.counts.packetsLost += step - 1;
        const lostFrames = Math.round(((step - 1) * this.lastBrowserPacketSamples) / frameSamples);
        this.sessionSequence = (this.sessionSequence + lostFrames) & 0xffff;
        this.sessionTimestamp = (this.sessionTimestamp + lostFrames * frameSamples) >>> 0;
      }
    }
    this.lastBrowserSequence = sequenceNumber;
    let samples: Int16Array;
    try {
      samples = this.codec.decode(opusPayload);
    } catch {
      this.counts.packetsDropped++;
      return [];
    }
    this.counts.packetsDecoded++;
    this.lastBrowserPacketSamples = samples.length;
    const audio = this.pending.length === 0 ? samples : concat(this.pending, samples);
    const datagrams: Buffer[] = [];
    let offset = 0;
    for (; offset + frameSamples <= audio.length; offset += frameSamples) {
      datagrams.push(
        encodeRtpPacket({
          marker: false,
          payloadType: 0,
          sequenceNumber: this.sessionSequence,
          timestamp: this.sessionTimestamp,
          ssrc: this.ssrc,
          payload: encodeG711('PCMU', audio.subarray(offset, offset + frameSamples)),
        }),
      );
      this.sessionSequence = (this.sessionSequence + 1) & 0xffff;
      this.sessionTimestamp = (this.sessionTimestamp + frameSamples) >>> 0;
    }
    this.pending = audio.slice(offset);
    return datagrams;
  }

  /** The session's PCMU packet (header read by the caller) → one Opus packet for the browser. */
  toBrowser(
    header: Omit<RtpHeaderFields, 'payloadType' | 'ssrc'>,
    pcmuPayload: Uint8Array,
  ): OpusRtpPacket | null {
    if (!encodableFrameSamples.has(pcmuPayload.length)) return null;
    const payload = this.codec.encode(decodeG711('PCMU', pcmuPayload));
    this.counts.framesEncoded++;
    return {
      header: {
        marker: header.marker,
        payloadType: 0,
        sequenceNumber: header.sequenceNumber,
        // The same instant on the 48 kHz clock (a wrap of the 8 kHz one is a wrap of this one).
        timestamp: (header.timestamp * clockTicksPerSample) >>> 0,
        ssrc: 0,
      },
      payload,
    };
  }

  close(): void {
    this.codec.close();
  }
}

function concat(a: Int16Array, b: Int16Array): Int16Array {
  const joined = new Int16Array(a.length + b.length);
  joined.set(a, 0);
  joined.set(b, a.length);
  return joined;
}
