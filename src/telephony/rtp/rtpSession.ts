import { randomInt } from 'node:crypto';
import type { Socket } from 'node:dgram';
import { EventEmitter } from 'node:events';
import type { Logger } from '../../logger.js';
import { firstAudibleIndex } from './audibleSamples.js';
import { ConnectedSend } from './connectedSend.js';
import { type DtmfDigit, DtmfReceiver, DtmfSender, type DtmfSendOptions, isDtmfDigits } from './dtmf.js';
import { decodeG711Into, encodeG711Into, type G711Codec, samplesPerMs, silenceByteByCodec } from './g711.js';
import { dtmfToneAudio } from './inbandDtmf.js';
import { JitterBuffer, type JitterBufferOptions } from './jitterBuffer.js';
import type { ClockRegistration, MediaClock } from './mediaClock.js';
import { MediaError } from './mediaError.js';
import { OutgoingAudioQueue, type PlaybackResult } from './outgoingAudio.js';
import type { PortAllocator } from './portAllocator.js';
import { ReceiveStats } from './receiveStats.js';
import { type RemoteReport, RtcpChannel } from './rtcpChannel.js';
import { createRtpHeader, readRtpHeader, rtpHeaderBytes, writeRtpHeader } from './rtpPacket.js';
import { canSendTo, type RemoteMedia } from './sdp.js';
import { SendRing, type SendSlot } from './sendRing.js';
import { srtpMaxTagBytes } from './srtp.js';
import { SrtpStreams } from './srtpStreams.js';
import { bindUdpSocket, sameAddress } from './udpSockets.js';

export type { PlaybackResult } from './outgoingAudio.js';

export interface RtpSessionOptions {
  logger: Logger;
  clock: MediaClock;
  ports: PortAllocator;
  /** Local address the socket binds to (default 0.0.0.0). */
  bindAddress?: string;
  /** Address to advertise in SDP (default: bindAddress, or 127.0.0.1 when binding 0.0.0.0). */
  publicAddress?: string;
  /** What to send while the agent is silent: G.711 silence (default) or nothing. */
  idleAudio?: 'silence' | 'none';
  /**
   * Whom to latch on to (symmetric RTP): the first valid packet from the SDP address on any port
   * (default), from anywhere ('any', for far ends behind NAT), or never ('off': send to the SDP
   * address and accept packets from anywhere).
   */
  latching?: 'sdp-address' | 'any' | 'off';
  jitterBuffer?: JitterBufferOptions;
  /** How a lost frame is filled: repeat the previous frame once, then silence (default), or silence. */
  concealment?: 'repeat' | 'silence';
  ssrc?: number;
  /** Ports tried before giving up when some in the range are taken by other processes. */
  bindAttempts?: number;
  /** The mean interval of our RTCP reports (default 5 s, RFC 3550's minimum; shorter in tests). */
  rtcpIntervalMs?: number;
}

/** Socket errors are logged at most once per this interval (the rest are counted in the stats). */
const socketErrorLogIntervalMs = 10_000;

export type ReceivedFrameKind = 'received' | 'concealed' | 'silence';

export interface RtpSessionEvents {
  /**
   * One 20 ms frame per clock tick from start(): the far end's audio, silence before its stream
   * begins (or when it never sends any) and while it holds the call — so a listener's clock is the
   * media clock, not a count of the packets the far end chose to send.
   */
  audio: [samples: Int16Array, kind: ReceivedFrameKind];
  /** The agent audio sent this tick. The array is reused: copy it to keep it. */
  outgoingAudio: [samples: Int16Array];
  dtmf: [event: { digit: DtmfDigit; timestamp: number }];
  latched: [source: { address: string; port: number }];
  closed: [];
}

export interface RtpSessionStats {
  packetsSent: number;
  audioPacketsSent: number;
  dtmfPacketsSent: number;
  packetsReceived: number;
  /** RFC 3550 cumulative loss (expected − received) for the current far-end SSRC. */
  packetsLost: number;
  /** Arrived after their playout turn (already concealed). */
  packetsLate: number;
  duplicates: number;
  concealedFrames: number;
  jitterMs: number;
  /** Datagrams that were not RTP, or of a payload type not negotiated. */
  packetsIgnored: number;
  /** Packets from a source other than the latched one. */
  packetsFromStranger: number;
  /** SRTP packets whose tag did not verify, or replayed (dropped before anything else). */
  packetsUnauthenticated: number;
  sendErrors: number;
  dtmfReceived: number;
  /** What the far end's RTCP said it heard of our stream (null: no report yet, or no RTCP). */
  remoteReport: RemoteReport | null;
  rtcpReportsSent: number;
  rtcpReportsReceived: number;
  /** RTCP shares the RTP port (both ends said `a=rtcp-mux`). */
  rtcpMux: boolean;
}

/**
 * The media of one call: a UDP socket on an even port of the configured range, G.711 both ways
 * paced by the shared MediaClock, a receive jitter buffer, RFC 4733 DTMF, barge-in.
 *
 * Life cycle: `RtpSession.open()` binds (advertise `publicAddress`/`localPort` in SDP);
 * `start(remote)` begins sending and playout once the far end's SDP is known (call again after a
 * re-INVITE); `close()` releases everything.
 */
export class RtpSession extends EventEmitter<RtpSessionEvents> {
  readonly localPort: number;
  readonly publicAddress: string;
  readonly ssrc: number;
  private readonly socket: Socket;
  private readonly options: RtpSessionOptions;
  private readonly logger: Logger;
  private readonly jitter: JitterBuffer;
  private readonly receiveStats = new ReceiveStats(8000);
  private readonly dtmfReceiver = new DtmfReceiver();
  private readonly dtmfSender: DtmfSender;
  private readonly outgoing = new OutgoingAudioQueue();
  private readonly header = createRtpHeader();
  private readonly ring: SendRing;
  private readonly frameSamples: Int16Array;
  private readonly quietScratch: Int16Array;
  private readonly samplesPerFrame: number;
  private registration: ClockRegistration | null = null;
  private remote: RemoteMedia | null = null;
  private heldByRemote = false;
  private socketErrorLoggedAtMs = Number.NEGATIVE_INFINITY;
  private socketErrorsNotLogged = 0;
  private sendAddress = '';
  private sendPort = 0;
  private latchedSource: { address: string; port: number } | null = null;
  private readonly sender: ConnectedSend;
  private remoteSsrc: number | null = null;
  private readonly srtp = new SrtpStreams();
  private sequenceNumber: number;
  private timestamp: number;
  private talking = false;
  private lastFrame: Int16Array | null = null;
  private lostInRow = 0;
  private closed = false;
  private readonly counts = {
    packetsSent: 0,
    audioPacketsSent: 0,
    dtmfPacketsSent: 0,
    packetsIgnored: 0,
    packetsFromStranger: 0,
    sendErrors: 0,
    dtmfReceived: 0,
    concealedFrames: 0,
  };
  private readonly emptyPayload = new Uint8Array(0);

  private rtcp: RtcpChannel | null = null;
  private octetsSent = 0;

  private constructor(options: RtpSessionOptions, socket: Socket, localPort: number) {
    super();
    this.options = options;
    this.logger = options.logger;
    this.socket = socket;
    this.sender = new ConnectedSend(socket, () => this.closed);
    this.localPort = localPort;
    const bindAddress = options.bindAddress ?? '0.0.0.0';
    this.publicAddress = options.publicAddress ?? (bindAddress === '0.0.0.0' ? '127.0.0.1' : bindAddress);
    this.ssrc = (options.ssrc ?? randomInt(0, 2 ** 32 - 1)) >>> 0;
    this.sequenceNumber = randomInt(0, 0x10000);
    this.timestamp = randomInt(0, 2 ** 32 - 1);
    this.samplesPerFrame = Math.round(options.clock.frameMs * samplesPerMs);
    this.frameSamples = new Int16Array(this.samplesPerFrame);
    this.quietScratch = new Int16Array(this.samplesPerFrame);
    this.jitter = new JitterBuffer({ frameMs: options.clock.frameMs, ...options.jitterBuffer });
    this.dtmfSender = new DtmfSender(this.samplesPerFrame);
    this.ring = new SendRing(rtpHeaderBytes + this.samplesPerFrame + srtpMaxTagBytes, () => {
      this.counts.sendErrors++;
    });
    socket.on('message', (message, rinfo) => this.onMessage(message, rinfo.address, rinfo.port));
    socket.on('error', (error) => {
      this.counts.sendErrors++;
      // A far end whose port closed answers every packet (50 a second) with an error: one line per
      // interval, with how many were not logged since the last one.
      const nowMs = performance.now();
      if (nowMs - this.socketErrorLoggedAtMs < socketErrorLogIntervalMs) {
        this.socketErrorsNotLogged++;
        return;
      }
      this.logger.warn(
        { err: error, localPort, errorsNotLogged: this.socketErrorsNotLogged },
        'RTP socket error',
      );
      this.socketErrorLoggedAtMs = nowMs;
      this.socketErrorsNotLogged = 0;
    });
  }

  /** Binds a socket on the next free even port of the range. Throws MediaError ports_exhausted. */
  static async open(options: RtpSessionOptions): Promise<RtpSession> {
    const bindAddress = options.bindAddress ?? '0.0.0.0';
    const attempts = options.bindAttempts ?? 32;
    for (let attempt = 0; attempt < attempts; attempt++) {
      const port = options.ports.allocate();
      let socket: Socket;
      try {
        socket = await bindUdpSocket(bindAddress, port);
      } catch (error) {
        options.ports.release(port);
        if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
        continue;
      }
      const session = new RtpSession(options, socket, port);
      session.rtcp = await RtcpChannel.open(bindAddress, port + 1, {
        source: () => ({
          ssrc: session.ssrc,
          packetsSent: session.counts.packetsSent,
          octetsSent: session.octetsSent,
          rtpTimestamp: session.timestamp,
          remoteSsrc: session.remoteSsrc,
          receive: session.receiveStats,
        }),
        srtp: session.srtp,
        logger: options.logger,
        muxSend: (packet, port, address) => socket.send(packet, port, address),
        ...(options.rtcpIntervalMs !== undefined ? { intervalMs: options.rtcpIntervalMs } : {}),
      });
      return session;
    }
    throw new MediaError('ports_exhausted', `no bindable RTP port after ${attempts} attempts`);
  }

  /** Sets (or updates, after a re-INVITE) the far end's media and starts the clocked work. */
  start(remote: RemoteMedia): void {
    if (this.closed) throw new Error('RtpSession is closed');
    const previous = this.remote;
    this.remote = { ...remote };
    this.heldByRemote = !canSendTo(remote);
    if (!previous || previous.address !== remote.address || previous.port !== remote.port) {
      this.latchedSource = null;
      this.sender.disconnect();
      this.sendAddress = remote.address;
      this.sendPort = remote.port;
    }
    if (previous && previous.codec !== remote.codec) this.jitter.restart();
    this.srtp.apply(remote.srtp);
    this.rtcp?.setRemote(remote.address, remote.port, remote.rtcpMux === true);
    if (!this.registration) this.registration = this.options.clock.register(this);
  }

  /** Whether media is SRTP (both directions) as last negotiated. */
  get secure(): boolean {
    return this.srtp.secure;
  }

  /** The address packets go to now (the latched source once latched). */
  get sendTarget(): { address: string; port: number } | null {
    return this.remote ? { address: this.sendAddress, port: this.sendPort } : null;
  }

  get isLatched(): boolean {
    return this.latchedSource !== null;
  }

  get codec(): G711Codec | null {
    return this.remote?.codec ?? null;
  }

  /** Agent audio waiting to be sent, in ms. */
  get queuedMs(): number {
    return this.outgoing.queuedMs;
  }

  /**
   * Queues agent speech (Int16, 8 kHz, mono) behind what is already queued. Settles when its last
   * sample is sent, or with `interrupted: true` on clear()/close().
   */
  play(samples: Int16Array): Promise<PlaybackResult> {
    if (this.closed)
      return Promise.resolve({ playedMs: 0, durationMs: samples.length / 8, interrupted: true });
    return this.outgoing.enqueue(samples);
  }

  /**
   * Barge-in: drops all queued agent audio. Nothing more of it is sent (the frame being sent now
   * is already on the wire); returns the ms discarded. The play() promises report what was sent.
   */
  clear(): { discardedMs: number } {
    return { discardedMs: this.outgoing.clear() };
  }

  /** The far end negotiated RFC 4733 telephone-event (keys travel as events, not as audio). */
  get carriesDtmfEvents(): boolean {
    return this.remote !== null && this.remote.telephoneEventPayloadType !== null;
  }

  /**
   * Sends digits as RFC 4733 events when the far end negotiated telephone-event (audio is paused
   * while an event is on the wire), else — or with `inband` — as dual tones in the audio, after
   * what is queued. Resolves after the last digit's gap.
   */
  sendDtmf(digits: string, options: DtmfSendOptions & { inband?: boolean } = {}): Promise<void> {
    if (!isDtmfDigits(digits)) return Promise.reject(new RangeError(`not DTMF digits: ${digits}`));
    if (!this.remote) return Promise.reject(new Error('no far end to send DTMF to'));
    if (options.inband || !this.carriesDtmfEvents) {
      const tones = dtmfToneAudio(digits, {
        ...(options.durationMs !== undefined ? { durationMs: options.durationMs } : {}),
        ...(options.gapMs !== undefined ? { gapMs: options.gapMs } : {}),
      });
      return this.play(tones).then(() => undefined);
    }
    return this.dtmfSender.enqueue(digits, options, this.options.clock.frameMs);
  }

  stats(): RtpSessionStats {
    const jitter = this.jitter.stats();
    return {
      ...this.counts,
      packetsUnauthenticated: this.srtp.refused,
      packetsReceived: this.receiveStats.packetsReceived,
      packetsLost: this.receiveStats.lost,
      packetsLate: jitter.late,
      duplicates: jitter.duplicates,
      jitterMs: this.receiveStats.jitterMs,
      remoteReport: this.rtcp?.remoteReport ?? null,
      rtcpReportsSent: this.rtcp?.reportsSent ?? 0,
      rtcpReportsReceived: this.rtcp?.reportsReceived ?? 0,
      rtcpMux: this.remote?.rtcpMux === true,
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.registration?.unregister();
    this.registration = null;
    this.outgoing.clear();
    this.dtmfSender.cancel();
    this.rtcp?.close();
    await new Promise<void>((resolve) => this.socket.close(() => resolve()));
    this.options.ports.release(this.localPort);
    this.emit('closed');
  }

  /** Clock tick: play out one received frame, send one frame. Hot path: no logging. */
  onFrame(): void {
    const remote = this.remote;
    if (!remote || this.closed) return;
    const timestamp = this.timestamp;
    this.timestamp = (timestamp + this.samplesPerFrame) >>> 0;
    this.playOut(remote.codec);
    if (!canSendTo(remote)) return;

    const slot = this.ring.take();
    const buffer = slot.buffer;
    if (remote.telephoneEventPayloadType !== null) {
      const event = this.dtmfSender.nextFrame(timestamp, buffer, rtpHeaderBytes);
      if (event) {
        this.writeHeader(buffer, event.marker, remote.telephoneEventPayloadType, event.timestamp);
        this.talking = false;
        this.counts.dtmfPacketsSent++;
        this.send(slot, rtpHeaderBytes + 4);
        return;
      }
    }
    const taken = this.outgoing.takeFrame(this.frameSamples);
    if (taken > 0) {
      encodeG711Into(remote.codec, this.frameSamples, buffer, rtpHeaderBytes);
      if (this.listenerCount('outgoingAudio') > 0) this.emit('outgoingAudio', this.frameSamples);
    } else if (this.options.idleAudio === 'none') {
      this.talking = false;
      return;
    } else {
      buffer.fill(silenceByteByCodec[remote.codec], rtpHeaderBytes, rtpHeaderBytes + this.samplesPerFrame);
    }
    this.writeHeader(buffer, !this.talking, remote.payloadType, timestamp);
    this.talking = true;
    this.counts.audioPacketsSent++;
    this.send(slot, rtpHeaderBytes + this.samplesPerFrame);
  }

  private writeHeader(buffer: Buffer, marker: boolean, payloadType: number, timestamp: number): void {
    writeRtpHeader(buffer, {
      marker,
      payloadType,
      sequenceNumber: this.sequenceNumber,
      timestamp,
      ssrc: this.ssrc,
    });
    this.sequenceNumber = (this.sequenceNumber + 1) & 0xffff;
  }

  private send(slot: SendSlot, plainLength: number): void {
    this.octetsSent += plainLength - rtpHeaderBytes;
    const length = this.srtp.protect(slot.buffer, plainLength);
    slot.inFlight = true;
    this.counts.packetsSent++;
    this.sender.send(slot.buffer, length, this.sendPort, this.sendAddress, slot.done);
  }

  private playOut(codec: G711Codec): void {
    const frame = this.jitter.pop(performance.now(), this.isQuiet);
    if (frame === 'waiting') {
      this.emitSilence('silence');
      return;
    }
    if (frame === 'lost') {
      this.counts.concealedFrames++;
      this.lostInRow++;
      const previous = this.lastFrame;
      if (this.options.concealment !== 'silence' && previous && this.lostInRow === 1) {
        this.emitAudio(previous.slice(), 'concealed');
      } else {
        this.emitSilence('concealed');
      }
      return;
    }
    this.lostInRow = 0;
    if (frame.length === 0) {
      // A telephone-event packet held this turn: no audio in it.
      this.lastFrame = null;
      this.emitSilence('silence');
      return;
    }
    if (this.listenerCount('audio') === 0) return;
    // Held: nothing received is decoded; the tick is silence (emitSilence says so).
    if (this.held) {
      this.emitSilence('silence');
      return;
    }
    const samples = new Int16Array(frame.length);
    decodeG711Into(codec, frame, samples);
    this.lastFrame = samples;
    this.emit('audio', samples, 'received');
  }

  /** A frame the jitter buffer may skip to shrink: nothing in it is audible. Made once, not per tick. */
  private readonly isQuiet = (payload: Uint8Array): boolean => {
    const codec = this.remote?.codec;
    if (!codec || payload.length !== this.samplesPerFrame) return payload.length === 0;
    decodeG711Into(codec, payload, this.quietScratch);
    return firstAudibleIndex(this.quietScratch) < 0;
  };

  private emitAudio(samples: Int16Array, kind: ReceivedFrameKind): void {
    if (this.listenerCount('audio') === 0) return;
    // Held: what arrives (hold music) is not the callee speaking; the tick is silence.
    if (this.held && kind !== 'silence') this.emitSilence('silence');
    else this.emit('audio', samples, kind);
  }

  /** A frame of silence, made only when someone listens (every tick before the far end's stream). */
  private emitSilence(kind: ReceivedFrameKind): void {
    if (this.listenerCount('audio') === 0) return;
    this.emit('audio', new Int16Array(this.samplesPerFrame), kind);
  }

  /**
   * The far end put the call on hold (its SDP says it will not receive): nothing is sent, and what
   * arrives (hold music) is not the callee speaking, so only silence is passed up until it resumes.
   * Set by start(), the only place the remote media changes, not worked out on every frame.
   */
  get held(): boolean {
    return this.heldByRemote;
  }

  private onMessage(received: Buffer, address: string, port: number): void {
    const remote = this.remote;
    // RFC 5761 §4: on a multiplexed port, a second byte of 192–223 is RTCP, not RTP.
    if (remote?.rtcpMux && received.length >= 8 && received[1]! >= 192 && received[1]! <= 223) {
      this.rtcp?.receive(received, address, port);
      return;
    }
    const header = this.header;
    const message = this.srtp.unprotect(received);
    if (message === null) return;
    if (!remote || this.closed || !readRtpHeader(message, header)) {
      this.counts.packetsIgnored++;
      return;
    }
    const payloadType = header.payloadType;
    const isDtmf = payloadType === remote.telephoneEventPayloadType;
    if (payloadType !== remote.payloadType && !isDtmf) {
      this.counts.packetsIgnored++;
      return;
    }
    if (!this.acceptSource(address, port, remote)) {
      this.counts.packetsFromStranger++;
      return;
    }
    if (header.ssrc !== this.remoteSsrc) {
      if (this.remoteSsrc !== null) {
        this.jitter.restart();
        this.receiveStats.reset();
        this.dtmfReceiver.reset();
      }
      this.remoteSsrc = header.ssrc;
    }
    const payload = message.subarray(header.payloadOffset, header.payloadOffset + header.payloadLength);
    const pushed = this.jitter.push(
      header.sequenceNumber,
      isDtmf ? this.emptyPayload : payload,
      performance.now(),
    );
    if (pushed === 'duplicate') return;
    this.receiveStats.onPacket(header.sequenceNumber);
    if (isDtmf) {
      const digit = this.dtmfReceiver.accept(header.timestamp, payload);
      if (digit !== null) {
        this.counts.dtmfReceived++;
        this.emit('dtmf', { digit, timestamp: header.timestamp });
      }
    } else {
      this.receiveStats.onTiming(header.timestamp, performance.now());
    }
  }

  private acceptSource(address: string, port: number, remote: RemoteMedia): boolean {
    const policy = this.options.latching ?? 'sdp-address';
    if (policy === 'off') return true;
    const latched = this.latchedSource;
    if (latched) return latched.address === address && latched.port === port;
    if (policy === 'sdp-address' && !sameAddress(address, remote.address)) return false;
    this.latchedSource = { address, port };
    this.sendAddress = address;
    this.sendPort = port;
    this.sender.connect(address, port);
    this.emit('latched', { address, port });
    return true;
  }
}
