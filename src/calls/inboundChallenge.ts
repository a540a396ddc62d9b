import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { TrunkRecord } from '../domain/records.js';
import type { SecretBox } from '../secrets/secretBox.js';
import {
  buildDigestChallenge,
  headerValue,
  type IncomingCall,
  verifyDigestAuthorization,
} from '../telephony/sip/index.js';

const nonceLifetimeMs = 5 * 60_000;

/**
 * The digest challenge of a trunk's inbound INVITEs (trunk setting `inboundChallenge`): 401 with a
 * `WWW-Authenticate` whose nonce is its issue time and an HMAC of it under a per-process key (so no
 * nonce is stored, and one is good for 5 minutes), then the INVITE that answers it is checked
 * against the trunk's own username and password, the hash compared in constant time.
 */
export class InboundChallenge {
  private readonly key = randomBytes(32);

  constructor(
    private readonly secretBox: SecretBox,
    private readonly realm = 'callwright',
  ) {}

  /** True when the INVITE may go on; otherwise it has been answered 401 (or 403 without credentials). */
  admit(incoming: IncomingCall, trunk: TrunkRecord, nowMs = Date.now()): boolean {
    if (!trunk.settings.inboundChallenge) return true;
    if (!trunk.username || !trunk.passwordCiphertext) {
      incoming.reject(403, { reason: 'Trunk Has No Credentials' });
      return false;
    }
    const authorization = headerValue(incoming.request, 'Authorization');
    if (authorization !== undefined) {
      const nonce = /(?:^|[\s,])nonce="([^"]+)"/i.exec(authorization)?.[1];
      if (
        nonce !== undefined &&
        this.nonceIsFresh(nonce, nowMs) &&
        verifyDigestAuthorization(authorization, {
          method: 'INVITE',
          realm: this.realm,
          nonce,
          credentials: { username: trunk.username, password: this.secretBox.open(trunk.passwordCiphertext) },
        })
      )
        return true;
    }
    incoming.reject(401, {
      headers: [
        {
          name: 'WWW-Authenticate',
          value: buildDigestChallenge({ realm: this.realm, nonce: this.nonce(nowMs), algorithm: 'MD5' }),
        },
      ],
    });
    return false;
  }

  private nonce(nowMs: number): string {
    const issued = String(nowMs);
    return `${issued}.${this.mac(issued)}`;
  }

  private nonceIsFresh(nonce: string, nowMs: number): boolean {
    const [issued = '', mac = ''] = nonce.split('.');
    const expected = Buffer.from(this.mac(issued));
    const given = Buffer.from(mac);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return false;
    const issuedMs = Number(issued);
    return Number.isFinite(issuedMs) && nowMs - issuedMs >= 0 && nowMs - issuedMs <= nonceLifetimeMs;
  }

  private mac(text: string): string {
    return createHmac('sha256', this.key).update(text).digest('hex').slice(0, 32);
  }
}
