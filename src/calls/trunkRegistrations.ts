import { parsedTrunkUri, trunkNaming, trunkNextHopUri } from '../admin/trunks.js';
import type { TrunkRecord } from '../domain/records.js';
import type { Logger } from '../logger.js';
import type { HostnameLookup } from '../net/hostGuard.js';
import type { SecretBox } from '../secrets/secretBox.js';
import type { Store } from '../store/types.js';
import type {
  NetworkTarget,
  RegistrationOptions,
  RegistrationState,
  SipRegistration,
  SipUserAgent,
} from '../telephony/sip/index.js';
import { trunkServerTargets } from './callRoute.js';
import type { TrunkDns } from './trunkServers.js';

export interface TrunkRegistrationsOptions {
  store: Store;
  ua: SipUserAgent;
  secretBox: SecretBox;
  logger: Logger;
  trunkAllowPrivate: boolean;
  /** How often the list of registering trunks is read again. Default 30 s. */
  syncIntervalMs?: number;
  lookup?: HostnameLookup;
  /** NAPTR and SRV of trunk domains (the system's resolver by default). */
  dns?: TrunkDns;
  /** The refresh floor and the attempts per minute (CALLWRIGHT_REGISTRATION_*); SipRegistration's defaults otherwise. */
  limits?: Pick<RegistrationOptions, 'minRefreshMs' | 'maxAttemptsPerMinute'>;
}

/** What a registration depends on: a change (new URI, password, transport) starts it afresh. */
function fingerprint(trunk: TrunkRecord): string {
  return JSON.stringify([
    trunk.uri,
    trunk.username,
    trunk.passwordCiphertext,
    trunk.fromDomain,
    trunk.settings,
  ]);
}

/**
 * Keeps every trunk that asks for it registered from this worker's SIP user agent (each worker
 * registers its own contact), and writes each state change to the trunk's row for the CLI and
 * the dashboard. The registrar's host is resolved and vetted like a dial's.
 */
export class TrunkRegistrations {
  private readonly running = new Map<string, { registration: SipRegistration; fingerprint: string }>();
  private timer: NodeJS.Timeout | null = null;
  private syncing: Promise<void> | null = null;
  private stopped = false;

  constructor(private readonly options: TrunkRegistrationsOptions) {}

  start(): void {
    void this.sync();
    this.timer = setInterval(() => void this.sync(), this.options.syncIntervalMs ?? 30_000);
    this.timer.unref();
  }

  /** Reads the registering trunks again: starts new ones, restarts changed ones, stops removed ones. */
  sync(): Promise<void> {
    this.syncing ??= this.syncOnce().finally(() => {
      this.syncing = null;
    });
    return this.syncing;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.syncing;
    // Removing the registrations is a courtesy: a registrar that does not answer may not hold up shutdown.
    const removals = Promise.all([...this.running.values()].map(({ registration }) => registration.stop()));
    this.running.clear();
    await Promise.race([removals, new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
  }

  private async syncOnce(): Promise<void> {
    let trunks: TrunkRecord[];
    try {
      trunks = await this.options.store.trunks.listRegistering();
    } catch (error) {
      this.options.logger.warn({ err: error }, 'could not read the trunks to register');
      return;
    }
    const wanted = new Map(trunks.map((trunk) => [trunk.id, trunk]));
    for (const [id, entry] of this.running) {
      const trunk = wanted.get(id);
      if (trunk && fingerprint(trunk) === entry.fingerprint) continue;
      this.running.delete(id);
      await entry.registration.stop();
    }
    for (const trunk of trunks) {
      if (this.stopped || this.running.has(trunk.id)) continue;
      await this.begin(trunk);
    }
  }

  private async begin(trunk: TrunkRecord): Promise<void> {
    const log = this.options.logger.child({ trunkId: trunk.id });
    const naming = trunkNaming(trunk);
    if (!parsedTrunkUri(trunkNextHopUri(trunk)) || !naming || !trunk.username || !trunk.passwordCiphertext)
      return;
    let registrars: NetworkTarget[];
    try {
      // The registrars are the trunk's servers, found as its calls find theirs (NAPTR, SRV), in order.
      registrars = (await trunkServerTargets(trunk, this.options)) ?? [];
      if (registrars.length === 0) throw new Error('the domain offers no SIP service');
    } catch (error) {
      log.warn({ err: error }, 'trunk registrar refused');
      await this.save(trunk.id, {
        state: 'failed',
        status: null,
        reason: 'registrar address refused',
        retryInMs: 0,
      });
      return;
    }
    const { scheme, hostPart, domain } = naming;
    const registration = this.options.ua.register({
      registrars,
      registrarUri: `${scheme}:${hostPart.split(';')[0]}`,
      aor: `${scheme}:${trunk.username}@${domain}`,
      credentials: {
        username: trunk.username,
        password: this.options.secretBox.open(trunk.passwordCiphertext),
      },
      ...this.options.limits,
    });
    registration.on('state', (state) => void this.save(trunk.id, state));
    this.running.set(trunk.id, { registration, fingerprint: fingerprint(trunk) });
    registration.start();
  }

  private async save(trunkId: string, state: RegistrationState): Promise<void> {
    try {
      await this.options.store.trunks.setRegistration(
        trunkId,
        JSON.stringify({ ...state, updated_at: new Date().toISOString() }),
      );
    } catch (error) {
      this.options.logger.warn({ err: error, trunkId }, 'could not save a trunk registration state');
    }
  }
}
