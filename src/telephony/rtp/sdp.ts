import { isIP } from 'node:net';
import { type MediaDescription, parse, type SessionDescription, write } from 'sdp-transform';
import { type G711Codec, g711Codecs, staticPayloadTypeByCodec } from './g711.js';
import { MediaError } from './mediaError.js';
import {
  type CryptoLine,
  isSecureProfile,
  keyingForOffer,
  keyingFromAnswer,
  type SrtpKeying,
  type SrtpPolicy,
  writeCryptoAttributes,
} from './sdes.js';

/**
 * SDP offer/answer (RFC 3264) for one audio stream of G.711 with RFC 4733 telephone-events.
 * Only the first usable audio m-line is negotiated; an answer rejects every other m-line with
 * port 0, as RFC 3264 §6 requires.
 */

export type SdpDirection = 'sendrecv' | 'sendonly' | 'recvonly' | 'inactive';

export const defaultTelephoneEventPayloadType = 101;

/** What the far end said about its media: where to send, in what format, which way. */
export interface RemoteMedia {
  address: string;
  port: number;
  codec: G711Codec;
  payloadType: number;
  /** Payload type of telephone-event/8000, or null when the far end did not offer DTMF events. */
  telephoneEventPayloadType: number | null;
  /** a=ptime when given. */
  ptimeMs: number | null;
  /**
   * The far end's direction, with `c=0.0.0.0` (RFC 2543 hold) folded in as "do not send to me".
   * We may send when it is sendrecv/recvonly and should expect audio when sendrecv/sendonly.
   */
  direction: SdpDirection;
  /** SRTP keys when the stream is SRTP (SDES), null for plain RTP. */
  srtp: SrtpKeying | null;
  /** Both ends said `a=rtcp-mux` (RFC 5761): RTCP travels on the RTP ports. */
  rtcpMux?: boolean;
}

export interface OfferOptions {
  /** Advertised (public) address of our RTP socket. */
  address: string;
  port: number;
  /** In order of preference (default PCMU, PCMA). */
  codecs?: readonly G711Codec[];
  telephoneEvent?: boolean;
  telephoneEventPayloadType?: number;
  ptimeMs?: number;
  direction?: SdpDirection;
  /** o= session id (default: random) and version (default 1); bump the version on re-offers. */
  sessionId?: string;
  sessionVersion?: number;
  /**
   * SDES lines to offer; `secureProfile` offers RTP/SAVP (SRTP or nothing), else RTP/AVP with the
   * keys (best-effort SRTP, taken by devices that do SRTP and ignored by the rest).
   */
  crypto?: { lines: readonly CryptoLine[]; secureProfile: boolean };
  /** Offer `a=rtcp-mux` (RFC 5761; default true). RTCP stays on port + 1 unless the answer takes it. */
  rtcpMux?: boolean;
}

export interface AnswerOptions {
  address: string;
  port: number;
  /** Our preference order; the first of these the offer contains is chosen (default PCMU, PCMA). */
  codecs?: readonly G711Codec[];
  telephoneEvent?: boolean;
  ptimeMs?: number;
  sessionId?: string;
  sessionVersion?: number;
  /** Whether SRTP is taken from the offer (default off: an RTP/SAVP offer is then refused). */
  srtp?: SrtpPolicy;
  /** The stream's SRTP so far: our key is kept when the re-offer keeps the suite. */
  currentSrtp?: SrtpKeying | null;
}

export interface Answer {
  sdp: string;
  /** The offerer's media as negotiated: pass it to RtpSession.start(). */
  remote: RemoteMedia;
}

export function canSendTo(remote: Pick<RemoteMedia, 'direction'>): boolean {
  return remote.direction === 'sendrecv' || remote.direction === 'recvonly';
}

export function createOffer(options: OfferOptions): string {
  const codecs = options.codecs ?? g711Codecs;
  if (codecs.length === 0) throw new RangeError('createOffer needs at least one codec');
  const payloads = codecs.map((codec) => staticPayloadTypeByCodec[codec]);
  const rtp: MediaDescription['rtp'] = codecs.map((codec) => ({
    payload: staticPayloadTypeByCodec[codec],
    codec,
    rate: 8000,
  }));
  const fmtp: MediaDescription['fmtp'] = [];
  if (options.telephoneEvent ?? true) {
    const pt = options.telephoneEventPayloadType ?? defaultTelephoneEventPayloadType;
    if (pt < 96 || pt > 127) throw new RangeError('telephone-event payload type must be dynamic (96-127)');
    payloads.push(pt);
    rtp.push({ payload: pt, codec: 'telephone-event', rate: 8000 });
    fmtp.push({ payload: pt, config: '0-16' });
  }
  const crypto = options.crypto;
  return writeSdp(options, {
    rtp,
    fmtp,
    type: 'audio',
    port: options.port,
    protocol: crypto?.secureProfile ? 'RTP/SAVP' : 'RTP/AVP',
    payloads: payloads.join(' '),
    ptime: options.ptimeMs ?? 20,
    direction: options.direction ?? 'sendrecv',
    ...(options.rtcpMux === false ? {} : { rtcpMux: 'rtcp-mux' }),
    ...(crypto && crypto.lines.length > 0 ? { crypto: writeCryptoAttributes(crypto.lines) } : {}),
  });
}

/**
 * Reads the far end's answer to our offer. Throws MediaError `invalid_sdp`, `media_rejected`
 * (audio port 0), `no_common_codec` (nothing of `offeredCodecs` in the answer) or
 * `no_common_crypto` (the policy needs SRTP and the answer has no key for one of our lines).
 */
export function parseAnswer(
  sdp: string,
  options: {
    offeredCodecs?: readonly G711Codec[];
    srtp?: { offered: readonly CryptoLine[]; policy: SrtpPolicy };
  } = {},
): RemoteMedia {
  const session = parseSdp(sdp);
  const { media } = chooseAudio(session, 'answer', options.srtp?.policy ?? 'off');
  const offered = options.offeredCodecs ?? g711Codecs;
  const formats = readFormats(media);
  const chosen = formats.find((f) => f.codec !== null && offered.includes(f.codec));
  if (!chosen || chosen.codec === null) throw noCommonCodec(formats, offered, 'answer');
  const srtp = keyingFromAnswer(
    options.srtp?.offered ?? [],
    options.srtp?.policy ?? 'off',
    media.protocol,
    media.crypto,
  );
  return remoteMedia(session, media, chosen.codec, chosen.payloadType, formats, srtp);
}

/** Answers an offer (UAS side). Throws MediaError like parseAnswer when nothing can be accepted. */
export function createAnswer(offerSdp: string, options: AnswerOptions): Answer {
  const offer = parseSdp(offerSdp);
  const { media, index } = chooseAudio(offer, 'offer', options.srtp ?? 'off');
  const preferred = options.codecs ?? g711Codecs;
  const formats = readFormats(media);
  let chosen: Format | undefined;
  for (const codec of preferred) {
    chosen = formats.find((f) => f.codec === codec);
    if (chosen) break;
  }
  if (!chosen || chosen.codec === null) throw noCommonCodec(formats, preferred, 'offer');
  const srtp = keyingForOffer(
    options.srtp ?? 'off',
    media.protocol,
    media.crypto,
    options.currentSrtp ?? null,
  );
  const remote = remoteMedia(offer, media, chosen.codec, chosen.payloadType, formats, srtp?.keying ?? null);

  const payloads = [chosen.payloadType];
  const rtp: MediaDescription['rtp'] = [{ payload: chosen.payloadType, codec: chosen.codec, rate: 8000 }];
  const fmtp: MediaDescription['fmtp'] = [];
  const telephoneEvent = options.telephoneEvent ?? true;
  if (telephoneEvent && remote.telephoneEventPayloadType !== null) {
    const pt = remote.telephoneEventPayloadType;
    payloads.push(pt);
    rtp.push({ payload: pt, codec: 'telephone-event', rate: 8000 });
    fmtp.push({ payload: pt, config: '0-16' });
  } else {
    remote.telephoneEventPayloadType = null;
  }
  const audio: MediaDescription = {
    rtp,
    fmtp,
    type: 'audio',
    port: options.port,
    // RFC 3264 §6: the answer keeps the offer's transport protocol.
    protocol: media.protocol,
    payloads: payloads.join(' '),
    ptime: options.ptimeMs ?? 20,
    direction: answerDirection(declaredDirection(offer, media)),
    // RFC 5761 §5.1.1: an answerer that multiplexes says so only when the offer did.
    ...(remote.rtcpMux ? { rtcpMux: 'rtcp-mux' } : {}),
    ...(srtp
      ? {
          crypto: writeCryptoAttributes([
            { tag: srtp.tag, suite: srtp.keying.suite, key: srtp.keying.localKey },
          ]),
        }
      : {}),
  };
  const rejected = offer.media.map(
    (m, i): MediaDescription =>
      i === index
        ? audio
        : {
            rtp: [],
            fmtp: [],
            type: m.type ?? 'audio',
            port: 0,
            protocol: m.protocol ?? 'RTP/AVP',
            payloads: String(m.payloads ?? '0'),
          },
  );
  return { sdp: writeSdp(options, ...rejected), remote };
}

interface Format {
  payloadType: number;
  /** Encoding as written (e.g. "G729/8000"), for error messages. */
  label: string;
  codec: G711Codec | null;
  telephoneEvent: boolean;
}

function parseSdp(sdp: string): SessionDescription {
  if (typeof sdp !== 'string' || !/^v=0\s*$/m.test(sdp)) {
    throw new MediaError('invalid_sdp', 'SDP is missing or does not start with v=0');
  }
  try {
    return parse(sdp);
  } catch (error) {
    throw new MediaError('invalid_sdp', 'SDP could not be parsed', { cause: error });
  }
}

function chooseAudio(
  session: SessionDescription,
  role: 'offer' | 'answer',
  srtp: SrtpPolicy,
): { media: MediaDescription; index: number } {
  const audio = session.media
    .map((media, index) => ({ media, index }))
    .filter(({ media }) => media.type === 'audio');
  if (audio.length === 0) throw new MediaError('invalid_sdp', `the ${role} has no audio m-line`);
  const live = audio.filter(({ media }) => Number.isInteger(media.port) && media.port > 0);
  if (live.length === 0) throw new MediaError('media_rejected', `the ${role} rejected audio (port 0)`);
  const usable = live.filter(({ media }) => /^RTP\/S?AVPF?$/i.test(media.protocol ?? ''));
  // Several audio lines (an SBC offering SRTP and plain side by side): the one the policy prefers.
  const chosen =
    usable.find(({ media }) => isSecureProfile(media.protocol) === (srtp !== 'off')) ?? usable[0];
  if (!chosen) {
    const protocols = live.map(({ media }) => media.protocol).join(', ');
    throw new MediaError(
      'no_common_codec',
      `the ${role} offers audio only over ${protocols}; we need RTP/AVP or RTP/SAVP`,
    );
  }
  if (chosen.media.port > 65535) throw new MediaError('invalid_sdp', `the ${role} has an invalid audio port`);
  return chosen;
}

function readFormats(media: MediaDescription): Format[] {
  const numbers = String(media.payloads ?? '')
    .trim()
    .split(/\s+/)
    .filter((token) => /^\d{1,3}$/.test(token))
    .map(Number)
    .filter((pt) => pt <= 127);
  return numbers.map((payloadType): Format => {
    const map = media.rtp.find((r) => r.payload === payloadType);
    if (!map) {
      const staticCodec = g711Codecs.find((c) => staticPayloadTypeByCodec[c] === payloadType) ?? null;
      return {
        payloadType,
        label: staticCodec ?? String(payloadType),
        codec: staticCodec,
        telephoneEvent: false,
      };
    }
    const name = String(map.codec).toUpperCase();
    const rate = Number(map.rate ?? 0);
    const label = `${map.codec}/${rate}`;
    const codec = rate === 8000 && (name === 'PCMU' || name === 'PCMA') ? name : null;
    const telephoneEvent =
      rate === 8000 &&
      name === 'TELEPHONE-EVENT' &&
      coversDigits(media.fmtp.find((f) => f.payload === payloadType));
    return { payloadType, label, codec, telephoneEvent };
  });
}

/** RFC 4733: no fmtp means events 0-15; otherwise the list must cover the digits 0-15. */
function coversDigits(fmtp: { config: string | number } | undefined): boolean {
  if (!fmtp) return true;
  const covered = new Set<number>();
  for (const part of String(fmtp.config).split(',')) {
    const match = /^\s*(\d{1,3})(?:\s*-\s*(\d{1,3}))?\s*$/.exec(part);
    if (!match) continue;
    const from = Number(match[1]);
    const to = Math.min(255, Number(match[2] ?? match[1]));
    for (let e = from; e <= to; e++) covered.add(e);
  }
  for (let e = 0; e <= 15; e++) if (!covered.has(e)) return false;
  return true;
}

function remoteMedia(
  session: SessionDescription,
  media: MediaDescription,
  codec: G711Codec,
  payloadType: number,
  formats: Format[],
  srtp: SrtpKeying | null,
): RemoteMedia {
  const ip = (media.connection ?? session.connection)?.ip;
  const address = ip === undefined ? undefined : String(ip).trim();
  if (!address) throw new MediaError('invalid_sdp', 'SDP has no c= connection address for audio');
  const host = address.split('/')[0]!;
  // Only literal addresses: a host name would make the media path do DNS on the far end's say-so.
  if (isIP(host) === 0)
    throw new MediaError('invalid_sdp', `SDP connection address is not an IP address: ${host}`);
  let direction = declaredDirection(session, media);
  if (host === '0.0.0.0' || host === '::') {
    direction = direction === 'sendrecv' || direction === 'sendonly' ? 'sendonly' : 'inactive';
  }
  const ptime = Number(media.ptime);
  return {
    address: host,
    port: media.port,
    codec,
    payloadType,
    telephoneEventPayloadType: formats.find((f) => f.telephoneEvent)?.payloadType ?? null,
    ptimeMs: Number.isFinite(ptime) && ptime > 0 ? ptime : null,
    direction,
    srtp,
    rtcpMux: media.rtcpMux !== undefined,
  };
}

function declaredDirection(session: SessionDescription, media: MediaDescription): SdpDirection {
  return media.direction ?? session.direction ?? 'sendrecv';
}

function answerDirection(offered: SdpDirection): SdpDirection {
  if (offered === 'sendonly') return 'recvonly';
  if (offered === 'recvonly') return 'sendonly';
  return offered;
}

function noCommonCodec(formats: Format[], ours: readonly G711Codec[], role: 'offer' | 'answer'): MediaError {
  const theirs = formats.filter((f) => !f.telephoneEvent).map((f) => f.label);
  return new MediaError(
    'no_common_codec',
    `no common codec: the ${role} has [${theirs.join(', ')}], we accept [${ours.join(', ')}]`,
  );
}

function writeSdp(
  options: { address: string; sessionId?: string; sessionVersion?: number },
  ...media: MediaDescription[]
): string {
  const ipVer = options.address.includes(':') ? 6 : 4;
  const sessionId = options.sessionId ?? String(Math.floor(Math.random() * 2 ** 52));
  const description: SessionDescription = {
    version: 0,
    origin: {
      username: 'callwright',
      sessionId,
      sessionVersion: options.sessionVersion ?? 1,
      netType: 'IN',
      ipVer,
      address: options.address,
    },
    name: 'callwright',
    connection: { version: ipVer, ip: options.address },
    timing: { start: 0, stop: 0 },
    media,
  };
  return write(description);
}
