import { isIP } from 'node:net';
import { maskPhone } from '../../domain/phone.js';
import type { Logger } from '../../logger.js';
import type { MediaClock, PortAllocator } from '../rtp/index.js';
import {
  headerValue,
  type IncomingCall,
  parseSipUri,
  type SipTimerSettings,
  SipUserAgent,
} from '../sip/index.js';
import type { InviteLog } from './inviteLog.js';
import type { PersonaMind } from './personaCallee.js';
import { runPersona } from './personaScripts.js';
import {
  type PersonaTiming,
  resolvePersonaTiming,
  type SandboxPersonaName,
  sandboxPersonaFor,
  spamLabelledAfterCalls,
} from './personas.js';
import { createToneVoice, type SandboxVoice } from './sandboxAudio.js';
import { SandboxCall, sandboxCallIdHeader } from './sandboxCall.js';
import { placeSandboxCall, type SandboxCallRequest, type SandboxCallResult } from './sandboxCaller.js';
import { handleSandboxTransfers } from './sandboxTransfers.js';
import { type CalleeScript, runScriptedCallee } from './scriptedCallee.js';

export interface SandboxCarrierOptions {
  readonly logger: Logger;
  /** The process's shared media clock. */
  readonly clock: MediaClock;
  /** Ports for the sandbox's RTP sockets. */
  readonly ports: PortAllocator;
  /** A loopback address (127.0.0.0/8 or ::1); anything else is refused. */
  readonly bindAddress: string;
  /** UDP port for SIP; 0 picks a free one (read `sipUri`). */
  readonly sipPort: number;
  /** Receives every new INVITE before it is answered. */
  readonly inviteLog: InviteLog;
  /** Persona delays; see defaultPersonaTiming. */
  readonly timing?: Partial<PersonaTiming>;
  /** The voice of the person and the voicemail greeting. Default: tones (until TTS). */
  readonly voice?: SandboxVoice;
  /** RFC 3261 timers of the sandbox's user agent (tests pass `{ t1Ms: 10 }`). */
  readonly sipTimers?: Partial<SipTimerSettings>;
  /** How long close() waits for each live call's BYE to be answered. Default 2 s. */
  readonly closeTimeoutMs?: number;
  /**
   * The test scenario's callee of a call, by the call's id (the `X-Sandbox-Call-Id` header) and
   * its SIP Call-ID (which the owner checks against the call, so a forged INVITE gets nothing);
   * null: the number's persona answers.
   */
  readonly scriptedCallees?: (callId: string, sipCallId: string) => Promise<CalleeScript | null>;
  /** Plays scenario callees that have a goal instead of lines; without it they are refused (503). */
  readonly personaMind?: PersonaMind | null;
}

/** Call-IDs stay remembered this long after their call, so late INVITE copies are not new calls. */
const callIdMemoryMs = 5 * 60_000;

function isLoopback(address: string): boolean {
  if (isIP(address) === 4) return address.startsWith('127.');
  return address === '::1';
}

/**
 * The carrier used when no SIP trunk is configured: a SIP endpoint on loopback whose callees are
 * the personas of `sandboxPersonas`, reached over the same SIP and RTP stack as a real carrier.
 * Dial `sip:<E.164>@host:port` (see `requestUriFor`).
 */
export class SandboxCarrier {
  /** `sip:host:port` of the sandbox. */
  readonly sipUri: string;
  private readonly options: SandboxCarrierOptions;
  private readonly logger: Logger;
  private readonly userAgent: SipUserAgent;
  private readonly timing: PersonaTiming;
  private readonly voice: SandboxVoice;
  private readonly calls = new Map<string, SandboxCall>();
  /** Call-ID → when it may be forgotten (insertion order is time order). */
  private readonly recentCallIds = new Map<string, number>();
  private closing: Promise<void> | null = null;
  /** Calls received so far from each spam-labelled caller ID (personas.ts `spamLabelledAfterCalls`). */
  private readonly callsFromLabelled = new Map<string, number>();

  private constructor(options: SandboxCarrierOptions, userAgent: SipUserAgent, timing: PersonaTiming) {
    this.options = options;
    this.logger = options.logger;
    this.userAgent = userAgent;
    this.timing = timing;
    this.voice = options.voice ?? createToneVoice(timing);
    this.sipUri = `sip:${userAgent.localEndpoint.host}:${userAgent.localEndpoint.port}`;
    userAgent.onInvite((incoming) => this.receiveInvite(incoming));
  }

  static async start(options: SandboxCarrierOptions): Promise<SandboxCarrier> {
    if (!isLoopback(options.bindAddress)) {
      throw new RangeError(`the sandbox carrier binds to loopback only, not ${options.bindAddress}`);
    }
    const timing = resolvePersonaTiming(options.timing);
    const userAgent = await SipUserAgent.start({
      bindAddress: options.bindAddress,
      port: options.sipPort,
      logger: options.logger,
      userAgentName: 'callwright-sandbox',
      ...(options.sipTimers === undefined ? {} : { timers: options.sipTimers }),
    });
    const carrier = new SandboxCarrier(options, userAgent, timing);
    options.logger.info({ sipUri: carrier.sipUri }, 'sandbox carrier listening');
    return carrier;
  }

  /** The Request-URI that reaches `number` (an E.164 number) at the sandbox. */
  requestUriFor(number: string): string {
    return this.sipUri.replace(/^sip:/, `sip:${number}@`);
  }

  /** A sandbox person calls one of the service's numbers (sandboxCaller.ts; issue 40). */
  callService(request: SandboxCallRequest): Promise<SandboxCallResult> {
    return placeSandboxCall(
      {
        userAgent: this.userAgent,
        clock: this.options.clock,
        ports: this.options.ports,
        logger: this.logger,
      },
      request,
    );
  }

  /** Calls received and not yet over (ringing or answered). */
  get activeCalls(): number {
    return this.calls.size;
  }

  /** Hangs up every live call (480 while ringing, BYE once answered), then closes the socket. */
  close(): Promise<void> {
    this.closing ??= this.closeNow();
    return this.closing;
  }

  private async closeNow(): Promise<void> {
    const timeoutMs = this.options.closeTimeoutMs ?? 2_000;
    const live = [...this.calls.values()];
    await Promise.all(
      live.map(async (call) => {
        let timer: NodeJS.Timeout | undefined;
        const deadline = new Promise<void>((resolve) => {
          timer = setTimeout(resolve, timeoutMs);
        });
        await Promise.race([call.hangUp('sandbox carrier closing'), deadline]);
        clearTimeout(timer);
        await call.finish('sandbox carrier closed');
      }),
    );
    await this.userAgent.close();
    this.calls.clear();
    this.recentCallIds.clear();
    this.logger.info({ hungUp: live.length }, 'sandbox carrier closed');
  }

  private receiveInvite(incoming: IncomingCall): void {
    const callId = incoming.callId;
    const toNumber = parseSipUri(incoming.requestUri)?.user ?? '';
    this.forgetOldCallIds();
    if (this.calls.has(callId) || this.recentCallIds.has(callId)) {
      // A copy of an INVITE already handled (new branch, or outliving its transaction): not a call.
      this.logger
        .child({ sipCallId: callId, to: maskPhone(toNumber) })
        .warn('sandbox received a second INVITE for a known Call-ID: 482');
      incoming.reject(482);
      return;
    }
    const persona = this.personaOf(incoming, toNumber);
    const logger = this.logger.child({ sipCallId: callId, to: maskPhone(toNumber), persona });
    const call = new SandboxCall(incoming, logger, {
      clock: this.options.clock,
      ports: this.options.ports,
      bindAddress: this.options.bindAddress,
    });
    this.calls.set(callId, call);
    this.recentCallIds.set(callId, Number.POSITIVE_INFINITY);
    void call.finished.then(() => {
      this.calls.delete(callId);
      this.recentCallIds.delete(callId);
      this.recentCallIds.set(callId, Date.now() + callIdMemoryMs);
    });
    void this.startCall(call, toNumber, persona).catch(async (error: unknown) => {
      logger.error({ err: error instanceof Error ? error.message : String(error) }, 'sandbox call failed');
      call.reject(500);
      await call.finish('sandbox error');
    });
  }

  /**
   * The destination's persona — unless the call comes from a spam-labelled caller ID past its
   * answered calls: then every callee lets it ring out (counted per new call, not per INVITE copy).
   */
  private personaOf(incoming: IncomingCall, toNumber: string): SandboxPersonaName | null {
    const persona = sandboxPersonaFor(toNumber);
    const fromNumber = incoming.from.uri.user ?? '';
    const answeredCalls = spamLabelledAfterCalls(fromNumber);
    if (persona === null || answeredCalls === null) return persona;
    const calls = (this.callsFromLabelled.get(fromNumber) ?? 0) + 1;
    this.callsFromLabelled.set(fromNumber, calls);
    return calls > answeredCalls ? 'no_answer' : persona;
  }

  private async startCall(
    call: SandboxCall,
    toNumber: string,
    persona: ReturnType<typeof sandboxPersonaFor>,
  ): Promise<void> {
    try {
      await this.options.inviteLog.record({
        sipCallId: call.incoming.callId,
        toNumber,
        receivedAt: new Date().toISOString(),
      });
    } catch (error) {
      // Without its record the call could not be proven dialled once: refuse it rather than answer.
      call.logger.error(
        { err: error instanceof Error ? error.message : String(error) },
        'sandbox could not record the INVITE: 500',
      );
      call.reject(500);
      return;
    }
    if (call.isFinished) return;
    if (this.closing !== null) {
      call.reject(503);
      return;
    }
    if (persona === null) {
      call.logger.info('sandbox Request-URI user is not an E.164 number: 484');
      call.reject(484);
      return;
    }
    const script = await this.scriptOf(call);
    if (call.isFinished) return;
    call.logger.info({ scripted: script !== null }, 'sandbox call received');
    call.after(this.timing.maxCallMs, () => call.hangUp('sandbox maximum call length'));
    handleSandboxTransfers(call, script === null ? persona : 'person');
    const context = { timing: this.timing, voice: this.voice };
    if (script !== null) await runScriptedCallee(call, script, context, this.options.personaMind ?? null);
    else await runPersona(persona, call, context);
  }

  /** The call's test scenario callee, when it has one (a failed read fails the call: 500). */
  private async scriptOf(call: SandboxCall): Promise<CalleeScript | null> {
    const callId = headerValue(call.incoming.request, sandboxCallIdHeader);
    if (!callId || !this.options.scriptedCallees || callId.length > 100) return null;
    return this.options.scriptedCallees(callId, call.incoming.callId);
  }

  private forgetOldCallIds(): void {
    const now = Date.now();
    for (const [callId, forgetAt] of this.recentCallIds) {
      if (forgetAt > now) {
        if (forgetAt !== Number.POSITIVE_INFINITY) break;
        continue;
      }
      this.recentCallIds.delete(callId);
    }
  }
}
