import type { Logger } from '../logger.js';
import type { Store } from '../store/types.js';
import { randomToken, sameToken, sha256Hex } from './security.js';

/**
 * The first dashboard user proves they run this service with a one-time setup token: `serve`
 * prints one at start while no user exists, `callwright users setup-token` makes one on demand.
 * Only its SHA-256 is stored; it expires, and a sign-up spends it.
 */
export const setupTokenLifetimeMs = 24 * 3600 * 1000;

const setupTokenPattern = /^[A-Za-z0-9_-]{43}$/;

export async function createSetupToken(
  store: Store,
  now = new Date(),
): Promise<{ token: string; expiresAt: string }> {
  const token = randomToken();
  const expiresAt = new Date(now.getTime() + setupTokenLifetimeMs).toISOString();
  await store.setupTokens.create(sha256Hex(token), expiresAt, now.toISOString());
  return { token, expiresAt };
}

/**
 * Spends `presented` when it is a live setup token. Its hash is compared in constant time with
 * every live one (no early exit), and only one of any number of racing sign-ups can spend it.
 */
export async function consumeSetupToken(store: Store, presented: string, now = new Date()): Promise<boolean> {
  if (!setupTokenPattern.test(presented)) return false;
  const presentedHash = sha256Hex(presented);
  const nowIso = now.toISOString();
  let matched: string | null = null;
  for (const liveHash of await store.setupTokens.listLive(nowIso)) {
    if (sameToken(liveHash, presentedHash)) matched = liveHash;
  }
  return matched !== null && (await store.setupTokens.consume(matched, nowIso));
}

export interface SetupTokenAnnouncement {
  store: Store;
  logger: Logger;
  /** Where the first user signs up, e.g. https://calls.example.com/sign-up. */
  signUpUrl: string;
  /** Writes to the terminal `serve` runs in; null when it runs without one. */
  terminal: ((text: string) => void) | null;
}

/**
 * At start: while no user exists, a new setup token, printed once on the terminal and logged once
 * (a service started without a terminal is read through its log). Once a user exists, none, and
 * any left unused are forgotten. Resolves to the token printed, or null.
 */
export async function announceSetupToken(options: SetupTokenAnnouncement): Promise<string | null> {
  const { store, logger, signUpUrl } = options;
  if ((await store.users.count()) > 0) {
    await store.setupTokens.deleteAll();
    return null;
  }
  const { token, expiresAt } = await createSetupToken(store);
  // At warn, so a service run at LOG_LEVEL=warn without a terminal still shows it.
  logger.warn(
    { event: 'dashboard_setup_token', setupToken: token, signUpUrl, expiresAt },
    'no dashboard user yet: the first one signs up with this one-time setup token',
  );
  options.terminal?.(
    [
      '',
      `No dashboard user yet. Create the first one at ${signUpUrl}`,
      `with this one-time setup token (it expires at ${expiresAt}):`,
      '',
      `    ${token}`,
      '',
      'Or run `callwright users create --email EMAIL` where the service runs.',
      '',
    ].join('\n'),
  );
  return token;
}
