import type { Logger } from '../../logger.js';
import {
  type Answer,
  createAnswer,
  isMediaError,
  type MediaClock,
  type PortAllocator,
  RtpSession,
} from '../rtp/index.js';
import type { IncomingCall } from '../sip/index.js';
import { headerValue } from '../sip/index.js';

/** What every sandbox call borrows from the carrier. */
export interface SandboxCallServices {
  readonly clock: MediaClock;
  readonly ports: PortAllocator;
  readonly bindAddress: string;
}

/**
 * One call the sandbox received: its SIP side (an IncomingCall), its media once answered, and
 * every timer the persona starts. `finished` settles once all of it is released, whichever way
 * the call ended (CANCEL, BYE either way, rejection, carrier close).
 */
/** The INVITE header that carries a sandbox call's variables. */
export const sandboxVariablesHeader = 'X-Sandbox-Variables';
/** The INVITE header that carries the id of the call (a test call's scenario is found by it). */
export const sandboxCallIdHeader = 'X-Sandbox-Call-Id';

export class SandboxCall {
  readonly incoming: IncomingCall;
  readonly logger: Logger;
  readonly finished: Promise<void>;
  private readonly services: SandboxCallServices;
  private readonly timers = new Set<NodeJS.Timeout>();
  private media: { session: RtpSession; answer: Answer } | null = null;
  private mediaStarted = false;
  private done = false;
  private resolveFinished: () => void = () => {};

  constructor(incoming: IncomingCall, logger: Logger, services: SandboxCallServices) {
    this.incoming = incoming;
    this.logger = logger;
    this.services = services;
    this.finished = new Promise((resolve) => {
      this.resolveFinished = resolve;
    });
    incoming.on('canceled', () => void this.finish('canceled by the caller'));
    incoming.on(
      'ended',
      (ended) => void this.finish(`${ended.by === 'remote' ? 'caller' : 'callee'} hung up`),
    );
  }

  /**
   * The call's variables, from the `X-Sandbox-Variables` header (base64url JSON) the dispatcher
   * adds on sandbox routes; empty when absent or malformed.
   */
  get variables(): Readonly<Record<string, unknown>> {
    const raw = headerValue(this.incoming.request, sandboxVariablesHeader);
    if (!raw || raw.length > 8_192) return {};
    try {
      const parsed: unknown = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
      return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
        ? (parsed as Record<string, unknown>)
        : {};
    } catch {
      return {};
    }
  }

  get isFinished(): boolean {
    return this.done;
  }

  /** The media session once the call is answered and acknowledged; null before. */
  get rtp(): RtpSession | null {
    return this.mediaStarted ? (this.media?.session ?? null) : null;
  }

  /** A rejection handler that logs `what` with the error's message (for a persona's background steps). */
  failureLogger(what: string): (error: unknown) => void {
    return (error) =>
      this.logger.error({ err: error instanceof Error ? error.message : String(error) }, what);
  }

  /** Runs `action` after `delayMs` unless the call is over by then. */
  after(delayMs: number, action: () => void | Promise<void>): void {
    if (this.done) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (this.done) return;
      Promise.resolve()
        .then(action)
        .catch((error: unknown) =>
          this.logger.error(
            { err: error instanceof Error ? error.message : String(error) },
            'sandbox persona step failed',
          ),
        );
    }, delayMs);
    this.timers.add(timer);
  }

  ring(): void {
    if (!this.done) this.incoming.ring();
  }

  /** A final error response; the call is then over. */
  reject(status: number): void {
    this.incoming.reject(status);
    void this.finish(`rejected ${status}`);
  }

  /**
   * Opens the RTP socket and answers the offer in advance (a real callee's switch checks the SDP
   * before it rings). On failure the call is rejected: 488 for an offer we cannot accept, 503 when
   * no RTP port is free. Returns false then. `telephoneEvent: false` answers without RFC 4733
   * (a line whose keys travel only as tones in the audio).
   */
  async prepareMedia(options: { telephoneEvent?: boolean } = {}): Promise<boolean> {
    const offer = this.incoming.sdpOffer;
    if (offer === null) {
      this.logger.info('sandbox call without an SDP offer: 488');
      this.reject(488);
      return false;
    }
    let session: RtpSession;
    try {
      session = await RtpSession.open({
        logger: this.logger,
        clock: this.services.clock,
        ports: this.services.ports,
        bindAddress: this.services.bindAddress,
      });
    } catch (error) {
      this.logger.error(
        { err: error instanceof Error ? error.message : String(error) },
        'sandbox RTP open failed',
      );
      this.reject(503);
      return false;
    }
    if (this.done) {
      await session.close();
      return false;
    }
    try {
      const answer = createAnswer(offer, {
        address: session.publicAddress,
        port: session.localPort,
        telephoneEvent: options.telephoneEvent ?? true,
      });
      this.media = { session, answer };
      return true;
    } catch (error) {
      await session.close();
      if (!isMediaError(error)) throw error;
      this.logger.info({ reason: error.reason }, 'sandbox cannot accept the SDP offer: 488');
      this.reject(488);
      return false;
    }
  }

  /**
   * 200 OK with the prepared SDP answer; once the ACK arrives the media starts and the session is
   * returned. Null when the call ended first (or prepareMedia was not called or failed).
   */
  async answer(): Promise<RtpSession | null> {
    const media = this.media;
    if (media === null || this.done) return null;
    const acknowledged = await this.incoming.answer(media.answer.sdp);
    if (!acknowledged || this.done) return null;
    media.session.start(media.answer.remote);
    this.mediaStarted = true;
    this.logger.debug({ codec: media.answer.remote.codec }, 'sandbox call answered');
    return media.session;
  }

  /** Hangs up as the callee: BYE when answered, 480 while ringing. Bounded by SIP's own timers. */
  async hangUp(reason: string): Promise<void> {
    if (this.done) return;
    this.logger.debug({ reason }, 'sandbox callee hangs up');
    await this.incoming.hangUp();
    await this.finish(reason);
  }

  /** Releases everything (idempotent): timers, the RTP socket and its port. */
  async finish(reason: string): Promise<void> {
    if (this.done) return this.finished;
    this.done = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    const media = this.media;
    this.media = null;
    if (media !== null) await media.session.close();
    this.logger.debug({ reason }, 'sandbox call finished');
    this.resolveFinished();
    return this.finished;
  }
}
