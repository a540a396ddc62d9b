import type { Logger } from '../../logger.js';
import { createOffer, type MediaClock, type PortAllocator, parseAnswer, RtpSession } from '../rtp/index.js';
import type { SipUserAgent } from '../sip/index.js';
import { frameRms } from './sandboxAudio.js';

/** A sandbox person ringing one of the service's numbers (issue 40: the caller persona). */
export interface SandboxCallRequest {
  /** The caller's number (E.164): a persona who missed a call rings it back. */
  readonly from: string;
  /** The service's number that is called. */
  readonly to: string;
  /** The service's SIP address. */
  readonly target: { readonly host: string; readonly port: number };
  /** How long the caller stays on the line once answered before hanging up. */
  readonly talkMs: number;
  /** How long it lets the number ring. Default 10 s. */
  readonly ringTimeoutMs?: number;
}

export interface SandboxCallResult {
  readonly answered: boolean;
  /** The final SIP status when the call was refused; null when answered or it never got one. */
  readonly status: number | null;
  /** 20 ms frames heard above a whisper: the agent speaking. */
  readonly audibleFrames: number;
  /** Who hung up, once answered. */
  readonly endedBy: 'caller' | 'service' | null;
}

/**
 * Places the call from the sandbox's own user agent, over the same SIP and RTP stack as a real
 * caller: a PCMU/PCMA offer, the answer's media started, what comes back measured, a BYE after
 * `talkMs` unless the service hangs up first.
 */
export async function placeSandboxCall(
  parts: { userAgent: SipUserAgent; clock: MediaClock; ports: PortAllocator; logger: Logger },
  request: SandboxCallRequest,
): Promise<SandboxCallResult> {
  const rtp = await RtpSession.open({
    logger: parts.logger,
    clock: parts.clock,
    ports: parts.ports,
    bindAddress: '127.0.0.1',
  });
  let audibleFrames = 0;
  rtp.on('audio', (samples) => {
    if (frameRms(samples) > 200) audibleFrames++;
  });
  const uri = `sip:${request.to}@${request.target.host}:${request.target.port}`;
  const call = parts.userAgent.invite({
    requestUri: uri,
    from: { uri: `sip:${request.from}@127.0.0.1` },
    to: { uri },
    sdpOffer: createOffer({ address: '127.0.0.1', port: rtp.localPort, codecs: ['PCMU', 'PCMA'] }),
    ringTimeoutMs: request.ringTimeoutMs ?? 10_000,
  });
  let answered = false;
  let timer: NodeJS.Timeout | undefined;
  call.on('answered', ({ sdpAnswer }) => {
    answered = true;
    rtp.start(parseAnswer(sdpAnswer, { offeredCodecs: ['PCMU', 'PCMA'] }));
    timer = setTimeout(() => void call.hangUp().catch(() => undefined), request.talkMs);
  });
  try {
    const outcome = await call.outcome;
    if (outcome.kind === 'failed')
      return { answered, status: outcome.failure.status ?? null, audibleFrames, endedBy: null };
    return {
      answered,
      status: null,
      audibleFrames,
      endedBy: outcome.ended.by === 'local' ? 'caller' : 'service',
    };
  } finally {
    clearTimeout(timer);
    await rtp.close();
  }
}
