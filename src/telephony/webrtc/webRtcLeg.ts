import { createSocket, type Socket } from 'node:dgram';
import { parse as parseSdp } from 'sdp-transform';
import {
  RTCPeerConnection,
  RTCRtpCodecParameters,
  type RTCRtpTransceiver,
  RtpHeader,
  RtpPacket,
} from 'werift';
import type { Logger } from '../../logger.js';
import type { RemoteMedia, RtpSession } from '../rtp/index.js';
import { createRtpHeader, readRtpHeader } from '../rtp/rtpPacket.js';
import { opusRtpClockRateHz } from './opusCodec.js';
import { OpusTranscoder } from './opusTranscoder.js';

export interface WebRtcLegOptions {
  logger: Logger;
  /** STUN/TURN servers for ICE (none: host candidates only, enough on one machine or a LAN). */
  iceServers?: { urls: string; username?: string; credential?: string }[];
  /** How long the browser has to complete ICE and DTLS after the answer (default 15 s). */
  connectTimeoutMs?: number;
  /** Answer Opus when the offer has it (default false: PCMU always, as before issue 39's Opus). */
  opus?: boolean;
  /** How long a `disconnected` connection may last before the call ends (default 5 s). */
  disconnectedGraceMs?: number;
}

/** Why the browser's side of a web call ended. */
export type WebRtcLegEnd = 'remote' | 'local';

/** The codec on the browser's side: Opus whenever the offer has it, PCMU otherwise. */
export type WebRtcLegCodec = 'opus' | 'PCMU';

/** Which codec to answer an offer with: Opus if its first audio section offers it, else PCMU. */
export function chooseBrowserCodec(offerSdp: string, opusAllowed = true): WebRtcLegCodec {
  if (!opusAllowed) return 'PCMU';
  const audio = parseSdp(offerSdp).media.find((media) => media.type === 'audio');
  // Only the formats on the m= line count (an rtpmap may name one the line does not offer).
  const offered = new Set(
    String(audio?.payloads ?? '')
      .split(' ')
      .map(Number),
  );
  const offersOpus = audio?.rtp.some(
    (format) =>
      offered.has(format.payload) &&
      format.codec.toLowerCase() === 'opus' &&
      format.rate === opusRtpClockRateHz,
  );
  return offersOpus ? 'opus' : 'PCMU';
}

/**
 * Our side of Opus in the answer (RFC 7587 §7): the call's audio is telephone-band both ways, so
 * the browser may encode narrowband (cheaper for it to send and for us to decode: 0.6 against
 * 1.6–2.5 ms of CPU per second of audio, measured) and we send narrowband. No `useinbandfec`:
 * our decoder does not use the browser's FEC (the session conceals a loss as on a phone call),
 * so the browser need not spend bits on it; ours to the browser is on.
 */
const opusAnswerParameters = 'maxplaybackrate=8000;sprop-maxcapturerate=8000';

const codecParameters: Record<WebRtcLegCodec, () => RTCRtpCodecParameters> = {
  // Browsers offer opus/48000/2 (RFC 7587: always two channels in SDP; we send and expect mono).
  opus: () => new RTCRtpCodecParameters({ mimeType: 'audio/opus', clockRate: 48_000, channels: 2 }),
  PCMU: () =>
    new RTCRtpCodecParameters({ mimeType: 'audio/PCMU', clockRate: 8000, channels: 1, payloadType: 0 }),
};

/** RTCP packet types (RFC 3550, 4585: 200–206) in a datagram's second byte. */
function isRtcp(datagram: Buffer): boolean {
  const type = datagram[1] ?? 0;
  return type >= 200 && type <= 206;
}

/**
 * The browser's side of a web call: a WebRTC peer connection (werift, pure TypeScript: ICE,
 * DTLS-SRTP) answering the browser's offer without trickle ICE, in Opus when offered (PCMU
 * otherwise), bridged to an ordinary RtpSession over loopback UDP. The RtpSession stays the
 * call's media object — 8 kHz PCMU, clock, jitter buffer, playout, barge-in clearing, stats — so
 * the conversation runs exactly as on a phone call; this class moves decrypted RTP between the
 * two, through an OpusTranscoder when the browser speaks Opus.
 */
export class WebRtcLeg {
  readonly ended: Promise<WebRtcLegEnd>;
  private endedAs: ((end: WebRtcLegEnd) => void) | null = null;
  private bridgeSocket: Socket | null = null;
  private closed = false;
  private disconnectedTimer: NodeJS.Timeout | null = null;
  private transcoder: OpusTranscoder | null = null;
  private readonly log: Logger;

  private constructor(
    private readonly pc: RTCPeerConnection,
    private readonly transceiver: RTCRtpTransceiver,
    readonly answerSdp: string,
    readonly codec: WebRtcLegCodec,
    private readonly options: WebRtcLegOptions,
  ) {
    this.log = options.logger;
    this.ended = new Promise((resolve) => {
      this.endedAs = resolve;
    });
    pc.connectionStateChange.subscribe((state) => {
      if (state === 'closed' || state === 'failed') this.end('remote');
      if (state === 'disconnected') {
        this.disconnectedTimer ??= setTimeout(() => this.end('remote'), options.disconnectedGraceMs ?? 5_000);
      } else if (this.disconnectedTimer) {
        clearTimeout(this.disconnectedTimer);
        this.disconnectedTimer = null;
      }
    });
  }

  /**
   * Answers the browser's SDP offer: audio sendrecv in one codec (Opus if offered, else PCMU),
   * every ICE candidate in the answer (gathering completes before it is returned, so the browser
   * needs no trickle channel). Throws when the offer has neither codec.
   */
  static async answer(offerSdp: string, options: WebRtcLegOptions): Promise<WebRtcLeg> {
    const codec = chooseBrowserCodec(offerSdp, options.opus ?? false);
    const pc = new RTCPeerConnection({
      // Only the chosen codec: the answer lists one, so the browser cannot send another.
      codecs: { audio: [codecParameters[codec]()] },
      headerExtensions: { audio: [] },
      iceServers: options.iceServers ?? [],
      // Loopback is left out of host candidates by default; a browser on the same machine needs it.
      iceAdditionalHostAddresses: ['127.0.0.1'],
      iceUseIpv6: false,
    });
    try {
      await pc.setRemoteDescription({ type: 'offer', sdp: offerSdp });
      const transceiver = pc.getTransceivers().find((candidate) => candidate.kind === 'audio');
      if (!transceiver) throw new Error('the offer has no audio');
      transceiver.setDirection('sendrecv');
      // werift answers with the browser's own format parameters; ours say what we do with Opus.
      for (const negotiated of transceiver.codecs) {
        if (negotiated.mimeType.toLowerCase() === 'audio/opus') negotiated.parameters = opusAnswerParameters;
      }
      await pc.setLocalDescription(await pc.createAnswer());
      const answer = pc.localDescription?.sdp;
      if (!answer || !/^m=audio [1-9]/m.test(answer)) throw new Error('the offer has no Opus or PCMU audio');
      options.logger.info({ codec }, 'web call answered');
      return new WebRtcLeg(pc, transceiver, answer, codec, options);
    } catch (error) {
      await pc.close().catch(() => undefined);
      throw error;
    }
  }

  /**
   * Waits for the browser to connect (ICE, DTLS), then carries RTP between it and `rtp` on
   * loopback. Resolves to the media `rtp.start` takes; null when the browser never connected.
   */
  async bridge(rtp: RtpSession): Promise<RemoteMedia | null> {
    if (!(await this.connected())) {
      this.hangUp();
      return null;
    }
    const socket = createSocket('udp4');
    this.bridgeSocket = socket;
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(0, '127.0.0.1', () => resolve());
    });
    socket.on('error', (error) => this.log.warn({ err: error }, 'web call bridge socket error'));
    // Not made for a leg that ended while the socket bound (end() frees it: nothing would).
    const transcoder = this.codec === 'opus' && !this.closed ? new OpusTranscoder() : null;
    this.transcoder = transcoder;
    // The agent's audio: plain RTP from the session, re-sent inside the browser's SRTP (werift
    // rewrites SSRC and payload type for its own stream), in Opus through the transcoder. RTCP
    // stays on our side: werift has its own.
    const sessionHeader = createRtpHeader();
    socket.on('message', (datagram) => {
      if (this.closed || isRtcp(datagram)) return;
      if (!transcoder) {
        this.transceiver.sender.sendRtp(datagram).catch(() => undefined);
        return;
      }
      if (!readRtpHeader(datagram, sessionHeader)) return;
      const start = sessionHeader.payloadOffset;
      const opus = transcoder.toBrowser(
        sessionHeader,
        datagram.subarray(start, start + sessionHeader.payloadLength),
      );
      if (!opus) return;
      const packet = new RtpPacket(new RtpHeader(opus.header), Buffer.from(opus.payload));
      this.transceiver.sender.sendRtp(packet).catch(() => undefined);
    });
    // The browser's audio, decrypted: forwarded without header extensions (the session reads
    // the fixed header and the payload), decoded to PCMU by the transcoder when it is Opus.
    const receiver = this.transceiver.receiver;
    // A browser's pc.close() sends a DTLS alert (close_notify): the hang-up, seconds before ICE
    // consent would fail.
    receiver.dtlsTransport.onStateChange.subscribe((state) => {
      if (state === 'closed' || state === 'failed') this.end('remote');
    });
    receiver.track.onReceiveRtp.subscribe((packet) => {
      if (this.closed) return;
      const header = packet.header;
      if (transcoder) {
        for (const pcmu of transcoder.fromBrowser(header.sequenceNumber, packet.payload)) {
          socket.send(pcmu, rtp.localPort, '127.0.0.1');
        }
        return;
      }
      const plain = new RtpPacket(
        new RtpHeader({
          payloadType: header.payloadType,
          sequenceNumber: header.sequenceNumber,
          timestamp: header.timestamp,
          ssrc: header.ssrc,
          marker: header.marker,
        }),
        packet.payload,
      ).serialize();
      socket.send(plain, rtp.localPort, '127.0.0.1');
    });
    return {
      address: '127.0.0.1',
      port: socket.address().port,
      codec: 'PCMU',
      payloadType: 0,
      telephoneEventPayloadType: null,
      ptimeMs: 20,
      direction: 'sendrecv',
      srtp: null,
      rtcpMux: true,
    };
  }

  /** Ends the browser's side from ours (agent hang-up, max duration, shutdown). */
  hangUp(): void {
    this.end('local');
  }

  private connected(): Promise<boolean> {
    if (this.pc.connectionState === 'connected') return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => settle(false), this.options.connectTimeoutMs ?? 15_000);
      const subscription = this.pc.connectionStateChange.subscribe((state) => {
        if (state === 'connected') settle(true);
        if (state === 'closed' || state === 'failed') settle(false);
      });
      void this.ended.then(() => settle(false));
      function settle(connected: boolean): void {
        clearTimeout(timer);
        subscription.unSubscribe();
        resolve(connected);
      }
    });
  }

  private end(as: WebRtcLegEnd): void {
    if (this.closed) return;
    this.closed = true;
    if (this.disconnectedTimer) clearTimeout(this.disconnectedTimer);
    this.bridgeSocket?.close();
    this.bridgeSocket = null;
    if (this.transcoder) {
      this.log.info({ codec: this.codec, ...this.transcoder.counts }, 'web call media');
      this.transcoder.close();
      this.transcoder = null;
    }
    this.endedAs?.(as);
    void this.pc
      .close()
      .catch((error: unknown) => this.log.warn({ err: error }, 'closing the web call failed'));
  }
}
