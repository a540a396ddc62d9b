import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { newId } from '../domain/ids.js';
import { isE164, maskPhone } from '../domain/phone.js';
import type { AgentRecord, CallRecord, PhoneNumberRecord, TrunkRecord } from '../domain/records.js';
import type { Logger } from '../logger.js';
import { retryBriefly } from '../net/retryBriefly.js';
import type { SecretBox } from '../secrets/secretBox.js';
import type { Store } from '../store/types.js';
import type { InboundScreen, InboundSourceRule } from '../telephony/sip/inboundInvites.js';
import type { IncomingCall } from '../telephony/sip/index.js';
import { socketHost } from '../telephony/sip/transport.js';
import { callbackBrief } from './callbackContext.js';
import { InboundChallenge } from './inboundChallenge.js';

/** What inbound calls need of the dispatcher that runs them. */
export interface InboundCallRunner {
  readonly hasRoom: boolean;
  readonly callLeaseMs: number;
  runInbound(call: CallRecord, agent: AgentRecord, incoming: IncomingCall): void;
}

export interface InboundCallsOptions {
  store: Store;
  logger: Logger;
  workerId: string;
  runner: InboundCallRunner;
  screen: InboundScreen;
  /** An inbound call this soon after an outbound call from the number to the caller is its callback. */
  callbackWindowMs: number;
  /** The sandbox carrier's SIP address: its INVITEs (the sandbox caller persona) route `sandbox` numbers. */
  sandboxSource?: { host: string; port: number } | null;
  /** How often the trunks' inbound rules are read again; default 30 s. */
  ruleSyncMs?: number;
  /** Seconds a caller refused at capacity is told to wait (Retry-After). Default 30. */
  retryAfterS?: number;
  /** Opens trunk passwords, for trunks that challenge their inbound INVITEs. */
  secretBox: SecretBox;
}

/** The E.164 number in a SIP URI's user part (`sip:+15551234567@host`, or without the +). */
export function numberOfUri(uri: string): string | null {
  return numberOfUser(/^sips?:([^@;]+)@/i.exec(uri.trim())?.[1] ?? null);
}

function numberOfUser(user: string | null): string | null {
  if (user === null) return null;
  let decoded: string;
  try {
    decoded = decodeURIComponent(user);
  } catch {
    return null;
  }
  const digits = decoded.replace(/[-.() ]/g, '');
  const number = digits.startsWith('+') ? digits : `+${digits}`;
  return isE164(number) ? number : null;
}

/** A trunk's inbound rule: its allow-list, and the registrar it registers with (its own host or proxy). */
async function ruleOfTrunk(trunk: TrunkRecord): Promise<InboundSourceRule> {
  const sources = [...(trunk.settings.inboundSources ?? [])];
  if (trunk.settings.register) {
    for (const uri of [trunk.uri, trunk.settings.outboundProxy]) {
      const host = uri === undefined ? undefined : /^sips?:(?:[^@]*@)?(\[[^\]]+\]|[^:;>]+)/i.exec(uri)?.[1];
      if (host === undefined) continue;
      const bare = host.replace(/^\[|\]$/g, '');
      if (isIP(bare) !== 0) sources.push(bare);
      else sources.push(...(await lookup(bare, { all: true }).catch(() => [])).map((entry) => entry.address));
    }
  }
  return { route: trunk.id, sources };
}

/**
 * Inbound calls (issue 40): an INVITE from a trunk's address (or the sandbox carrier) to one of
 * the numbers routed through it is answered by the number's inbound agent — or, when the caller
 * is the callee of a recent outbound call from that number, by the agent that called, told about
 * that call. The call row is written live under this worker's lease with the account's and the
 * number's caps checked in the same step, then the dispatcher runs it as it runs any other call.
 */
export class InboundCalls {
  private timer: NodeJS.Timeout | null = null;
  private readonly log: Logger;
  private trunks = new Map<string, TrunkRecord>();
  private readonly challenge: InboundChallenge;

  constructor(private readonly options: InboundCallsOptions) {
    this.log = options.logger.child({ component: 'inbound' });
    this.challenge = new InboundChallenge(options.secretBox);
  }

  async start(): Promise<void> {
    await this.syncRules();
    this.timer = setInterval(() => void this.syncRules(), this.options.ruleSyncMs ?? 30_000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Reads the trunks' inbound rules again (trunks are added and removed while the service runs). */
  async syncRules(): Promise<void> {
    try {
      const trunks = await this.options.store.inboundCalls.allTrunks();
      this.trunks = new Map(trunks.map((trunk) => [trunk.id, trunk]));
      this.options.screen.setRules(await Promise.all(trunks.map(ruleOfTrunk)));
    } catch (error) {
      this.log.warn({ err: error }, 'could not read the trunks for the inbound rules; the last ones stay');
    }
  }

  /** The user agent's INVITE handler. */
  receive(incoming: IncomingCall): void {
    const routes = this.routesOf(incoming);
    if (routes.length === 0) {
      this.options.screen.refuseUnknown(incoming);
      return;
    }
    this.route(incoming, routes).catch((error: unknown) => {
      this.log.error({ err: error }, 'an inbound call could not be routed');
      if (incoming.state === 'offered' || incoming.state === 'ringing') incoming.reject(500);
    });
  }

  private routesOf(incoming: IncomingCall): string[] {
    const sandbox = this.options.sandboxSource;
    const source = incoming.source;
    if (sandbox && socketHost(source.host) === sandbox.host && source.port === sandbox.port)
      return ['sandbox'];
    return this.options.screen.routesFor(incoming);
  }

  private async route(incoming: IncomingCall, routes: string[]): Promise<void> {
    const { store, runner } = this.options;
    const called = numberOfUri(incoming.requestUri) ?? numberOfUser(incoming.to.uri.user);
    const number = called === null ? null : await this.numberOn(called, routes);
    if (!number) {
      incoming.reject(404);
      return;
    }
    const trunk = this.trunks.get(number.route);
    if (trunk && !this.challenge.admit(incoming, trunk)) return;
    const caller = numberOfUser(incoming.from.uri.user);
    const log = this.log.child({
      to: maskPhone(number.number),
      from: caller ? maskPhone(caller) : 'anonymous',
    });
    const sinceIso = new Date(Date.now() - this.options.callbackWindowMs).toISOString();
    const earlier =
      caller === null
        ? null
        : await retryBriefly(() =>
            store.inboundCalls.latestOutboundTo(number.accountId, number.number, caller, sinceIso),
          );
    const agent = await this.answeringAgent(number, earlier);
    if (!agent) {
      // No agent to answer: refused (480). `voicemail` is not built yet: it is refused the same way.
      log.info(
        { fallback: number.inboundFallback },
        'inbound call to a number without an inbound agent refused',
      );
      incoming.reject(480, { reason: 'No Inbound Agent' });
      return;
    }
    const retryAfter = [{ name: 'Retry-After', value: String(this.options.retryAfterS ?? 30) }];
    if (!runner.hasRoom) {
      incoming.reject(503, { headers: retryAfter });
      return;
    }
    const brief = earlier ? callbackBrief(earlier) : null;
    const atMs = Date.now();
    const created = await store.inboundCalls.createAnswering({
      id: newId('call'),
      accountId: number.accountId,
      agentId: agent.id,
      fromNumber: caller ?? '',
      toNumber: number.number,
      callbackOf: earlier?.id ?? null,
      context: brief?.context ?? null,
      variables: brief?.variables ?? null,
      sipCallId: incoming.callId,
      workerId: this.options.workerId,
      leaseUntilIso: new Date(atMs + runner.callLeaseMs).toISOString(),
      atIso: new Date(atMs).toISOString(),
    });
    if ('refused' in created) {
      log.info({ refused: created.refused }, 'inbound call refused at capacity');
      if (created.refused === 'number_capped') incoming.reject(486);
      else incoming.reject(503, { headers: retryAfter });
      return;
    }
    incoming.ring();
    if (earlier) {
      const marked = await store.inboundCalls
        .markContactAnswered(earlier.id, new Date().toISOString())
        .catch((error: unknown) => {
          log.warn({ err: error }, 'could not mark the campaign contact answered');
          return false;
        });
      log.info(
        { callId: created.created.id, callbackOf: earlier.id, contactAnswered: marked },
        'callback answered',
      );
    }
    runner.runInbound(created.created, agent, incoming);
  }

  /** The number as configured in the account whose trunk (or the sandbox) the INVITE came through. */
  private async numberOn(called: string, routes: string[]): Promise<PhoneNumberRecord | null> {
    const numbers = await retryBriefly(() => this.options.store.inboundCalls.numbersCalled(called));
    return numbers.find((candidate) => routes.includes(candidate.route)) ?? null;
  }

  /** The agent that called (for a callback), else the number's inbound agent; active ones only. */
  private async answeringAgent(
    number: PhoneNumberRecord,
    earlier: CallRecord | null,
  ): Promise<AgentRecord | null> {
    for (const agentId of [earlier?.agentId, number.inboundAgentId]) {
      if (!agentId) continue;
      const agent = await retryBriefly(() => this.options.store.agents.get(number.accountId, agentId));
      if (agent?.active) return agent;
    }
    return null;
  }
}
