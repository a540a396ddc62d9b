import { randomBytes } from 'node:crypto';
import type { SrtpPolicy } from '../../domain/trunkSettings.js';
import { MediaError } from './mediaError.js';
import { type SrtpSuite, srtpMasterKeySaltBytes, srtpSuites } from './srtp.js';

/**
 * SDES (RFC 4568): SRTP keys carried in SDP `a=crypto` lines. Each side sends with its own
 * master key and receives with the other's; the answer picks one of the offer's lines by tag.
 * Only what SRTP here can honour is accepted: the two AES_CM_128 suites, one `inline:` key
 * without MKI, no session parameters. A lifetime is accepted (a call never nears 2^31 packets).
 */

export type { SrtpPolicy } from '../../domain/trunkSettings.js';

/** SRTP as negotiated for a stream: we send under `localKey`, the far end under `remoteKey`. */
export interface SrtpKeying {
  suite: SrtpSuite;
  localKey: Buffer;
  remoteKey: Buffer;
}

/** One `a=crypto` line we offer (its key is ours). */
export interface CryptoLine {
  tag: number;
  suite: SrtpSuite;
  key: Buffer;
}

/** The `a=crypto` entries of a media section as sdp-transform reads them. */
export interface CryptoAttribute {
  id: number;
  suite: string;
  config: string;
  sessionConfig?: string;
}

/** Our offer's lines: every supported suite, strongest tag first, each under its own key. */
export function createCryptoLines(): CryptoLine[] {
  return srtpSuites.map((suite, index) => ({
    tag: index + 1,
    suite,
    key: randomBytes(srtpMasterKeySaltBytes),
  }));
}

export function writeCryptoAttributes(lines: readonly CryptoLine[]): CryptoAttribute[] {
  return lines.map((line) => ({
    id: line.tag,
    suite: line.suite,
    config: `inline:${line.key.toString('base64')}`,
  }));
}

/** The far end's usable lines, in its order; lines we cannot honour are left out. */
export function readCryptoLines(attributes: readonly CryptoAttribute[] | undefined): CryptoLine[] {
  const lines: CryptoLine[] = [];
  for (const attribute of attributes ?? []) {
    const suite = srtpSuites.find((s) => s === attribute.suite);
    const key = readKeyParams(attribute.config);
    if (suite === undefined || key === null || attribute.sessionConfig) continue;
    if (!Number.isInteger(attribute.id) || attribute.id < 0 || attribute.id > 999_999_999) continue;
    lines.push({ tag: attribute.id, suite, key });
  }
  return lines;
}

/** `inline:<base64 key‖salt>[|lifetime]`; null for MKI, several keys or a key of another size. */
function readKeyParams(config: string): Buffer | null {
  const match = /^inline:([A-Za-z0-9+/]+={0,2})(?:\|(2\^\d{1,2}|\d{1,20}))?$/.exec(config);
  if (!match) return null;
  const key = Buffer.from(match[1] as string, 'base64');
  return key.length === srtpMasterKeySaltBytes ? key : null;
}

/** Whether an SDP transport protocol is SRTP's (RTP/SAVP, RTP/SAVPF). */
export function isSecureProfile(protocol: string | undefined): boolean {
  return /^RTP\/SAVPF?$/i.test(protocol ?? '');
}

/**
 * Our offer's SRTP as the answer settles it (RFC 4568 §6.1): the answer's line must carry the
 * tag and suite of one we offered. Throws `no_common_crypto` when the policy needs SRTP and the
 * answer has none we can use, or when the answer insists on SRTP we did not offer.
 */
export function keyingFromAnswer(
  offered: readonly CryptoLine[],
  policy: SrtpPolicy,
  answerProtocol: string | undefined,
  answerCrypto: readonly CryptoAttribute[] | undefined,
): SrtpKeying | null {
  const theirs = readCryptoLines(answerCrypto);
  for (const line of theirs) {
    const ours = offered.find((o) => o.tag === line.tag && o.suite === line.suite);
    if (ours) return { suite: ours.suite, localKey: ours.key, remoteKey: line.key };
  }
  if (policy === 'required' || isSecureProfile(answerProtocol)) {
    throw new MediaError(
      'no_common_crypto',
      theirs.length === 0 && (answerCrypto?.length ?? 0) === 0
        ? 'the answer has no SRTP key (a=crypto) and this trunk requires SRTP'
        : 'the answer has no a=crypto line matching a suite we offered',
    );
  }
  return null;
}

/**
 * Our answer's SRTP for an offer (RFC 4568 §6.1): the first offered line of a supported suite,
 * under our key — `current` is kept when the suite stays the same, so a re-INVITE does not rekey
 * our direction. Null when the offer has no usable line and the policy allows plain RTP.
 */
export function keyingForOffer(
  policy: SrtpPolicy,
  offerProtocol: string | undefined,
  offerCrypto: readonly CryptoAttribute[] | undefined,
  current: SrtpKeying | null,
): { keying: SrtpKeying; tag: number } | null {
  const secure = isSecureProfile(offerProtocol);
  if (policy === 'off') {
    if (secure)
      throw new MediaError('no_common_crypto', 'the offer is SRTP only and SRTP is off for this trunk');
    return null;
  }
  const line = readCryptoLines(offerCrypto)[0];
  if (!line) {
    if (policy === 'required' || secure)
      throw new MediaError('no_common_crypto', 'the offer has no a=crypto line of a suite we support');
    return null;
  }
  const localKey =
    current && current.suite === line.suite ? current.localKey : randomBytes(srtpMasterKeySaltBytes);
  return { keying: { suite: line.suite, localKey, remoteKey: line.key }, tag: line.tag };
}
