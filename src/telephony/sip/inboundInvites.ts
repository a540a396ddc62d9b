import { BlockList, isIP } from 'node:net';
import { checkInboundSource } from '../../domain/trunkSettings.js';
import type { Logger } from '../../logger.js';
import { paramValue } from './grammar.js';
import type { IncomingCall } from './incomingCall.js';
import { socketHost } from './transport.js';

/** Where a carrier's INVITEs may come from: one trunk's inbound rule (issue 40). */
export interface InboundSourceRule {
  /** The trunk's id, or `sandbox` for the built-in carrier on loopback. */
  readonly route: string;
  /** Addresses and CIDR blocks (`203.0.113.0/24`) the carrier sends from. */
  readonly sources: readonly string[];
}

/** Why an out-of-dialog INVITE was refused before any call existed, for the counter. */
export type InboundRefusal = 'unknown_source' | 'rate_limited';

export interface InboundScreenOptions {
  readonly logger: Logger;
  /** Refusals answered per source address per second; beyond them INVITEs are dropped unanswered. Default 5. */
  readonly refusalsPerSecond?: number;
  /** How many refusals a source may burst before the rate applies. Default 20. */
  readonly refusalBurst?: number;
  readonly nowMs?: () => number;
}

interface Bucket {
  tokens: number;
  atMs: number;
}

/**
 * The gate in front of inbound calls: an out-of-dialog INVITE is only taken from an address a
 * trunk lists (its allow-list, or the registrar it registers with). Anything else is refused
 * before a dialog or a database read exists: 403 while the source stays within its refusal rate,
 * dropped unanswered beyond it, counted either way and logged at most once a minute.
 */
export class InboundScreen {
  private readonly logger: Logger;
  private readonly ratePerSecond: number;
  private readonly burst: number;
  private readonly nowMs: () => number;
  private rules: { route: string; list: BlockList }[] = [];
  private readonly buckets = new Map<string, Bucket>();
  private readonly refusals: Record<InboundRefusal, number> = { unknown_source: 0, rate_limited: 0 };
  private reportedAtMs = Number.NEGATIVE_INFINITY;
  private unreported = 0;

  constructor(options: InboundScreenOptions) {
    this.logger = options.logger;
    this.ratePerSecond = options.refusalsPerSecond ?? 5;
    this.burst = options.refusalBurst ?? 20;
    this.nowMs = options.nowMs ?? Date.now;
  }

  /** Replaces the rules (trunks change while the service runs); entries that do not parse are skipped. */
  setRules(rules: readonly InboundSourceRule[]): void {
    this.rules = rules.map((rule) => {
      const list = new BlockList();
      for (const entry of rule.sources) {
        try {
          const { address, prefix } = checkInboundSource(entry);
          const type = isIP(address) === 6 ? 'ipv6' : 'ipv4';
          if (prefix === null) list.addAddress(address, type);
          else list.addSubnet(address, prefix, type);
        } catch {
          this.logger.warn({ route: rule.route }, 'an inbound source entry is not an address; skipped');
        }
      }
      return { route: rule.route, list };
    });
  }

  /** The routes whose rules admit the INVITE's source address (usually one). */
  routesFor(call: IncomingCall): string[] {
    const host = socketHost(call.source.host);
    const type = isIP(host) === 6 ? 'ipv6' : 'ipv4';
    if (isIP(host) === 0) return [];
    return this.rules.filter((rule) => rule.list.check(host, type)).map((rule) => rule.route);
  }

  /** Refuses an INVITE from an address no rule admits: no dialog, no database read. */
  refuseUnknown(call: IncomingCall): void {
    const host = socketHost(call.source.host);
    if (this.take(host)) {
      this.refusals.unknown_source++;
      call.reject(403, { reason: 'Source Not Allowed' });
    } else {
      this.refusals.rate_limited++;
      call.drop();
    }
    this.unreported++;
    const nowMs = this.nowMs();
    if (nowMs - this.reportedAtMs >= 60_000) {
      this.logger.warn(
        {
          source: host,
          transport: call.source.transport ?? 'udp',
          fromTag: paramValue(call.from.params, 'tag') === undefined ? 'none' : 'set',
          refused: this.unreported,
        },
        'SIP INVITE from an address no trunk lists refused',
      );
      this.reportedAtMs = nowMs;
      this.unreported = 0;
    }
  }

  /** Refusals so far, by reason (a Prometheus counter). */
  refusalCounts(): Readonly<Record<InboundRefusal, number>> {
    return { ...this.refusals };
  }

  /** A token bucket per source address; buckets of quiet sources are forgotten. */
  private take(host: string): boolean {
    const nowMs = this.nowMs();
    if (this.buckets.size > 10_000) {
      for (const [key, bucket] of this.buckets)
        if (nowMs - bucket.atMs > (this.burst / this.ratePerSecond) * 1000) this.buckets.delete(key);
    }
    const bucket = this.buckets.get(host) ?? { tokens: this.burst, atMs: nowMs };
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((nowMs - bucket.atMs) / 1000) * this.ratePerSecond);
    bucket.atMs = nowMs;
    this.buckets.set(host, bucket);
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }
}
