import { AppError } from '../domain/errors.js';
import type { TrunkRecord } from '../domain/records.js';
import type { SecretBox } from '../secrets/secretBox.js';
import type { Store } from '../store/types.js';

const trunkUriPattern = /^sips?:([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(:[0-9]{1,5})?(;[A-Za-z0-9=;.-]*)?$/;

export interface TrunkInput {
  name: string;
  uri: string;
  username?: string;
  password?: string;
  fromDomain?: string;
}

/** Adds a SIP trunk; its password is encrypted before it is stored and is never shown again. */
export async function addTrunk(
  store: Store,
  secretBox: SecretBox,
  accountId: string,
  input: TrunkInput,
): Promise<TrunkRecord> {
  const name = input.name.trim();
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(name)) {
    throw new AppError(
      'validation_error',
      'trunk names are 1 to 64 letters, digits, dots, dashes or underscores',
    );
  }
  if (name === 'sandbox')
    throw new AppError('validation_error', '"sandbox" is the built-in route, not a trunk name');
  if (!trunkUriPattern.test(input.uri))
    throw new AppError('validation_error', 'the trunk URI must look like sip:HOST[:PORT]');
  const port = Number(/:([0-9]{1,5})(;|$)/.exec(input.uri.replace(/^sips?:/, ''))?.[1] ?? 5060);
  if (port < 1 || port > 65535)
    throw new AppError('validation_error', 'the trunk port must be from 1 to 65535');
  if ((input.username === undefined) !== (input.password === undefined)) {
    throw new AppError('validation_error', 'give both --username and --password, or neither');
  }
  if (input.fromDomain !== undefined && !/^[A-Za-z0-9.-]{1,253}$/.test(input.fromDomain)) {
    throw new AppError('validation_error', 'the from-domain must be a host name');
  }
  return store.trunks.create({
    accountId,
    name,
    uri: input.uri,
    username: input.username ?? null,
    passwordCiphertext: input.password === undefined ? null : secretBox.seal(input.password),
    fromDomain: input.fromDomain ?? null,
  });
}

export async function removeTrunk(store: Store, accountId: string, idOrName: string): Promise<TrunkRecord> {
  const trunk = await store.trunks.get(accountId, idOrName);
  if (!trunk) throw new AppError('not_found', `no trunk ${idOrName.slice(0, 64)} in this account`);
  await store.trunks.remove(accountId, trunk.id);
  return trunk;
}

/** A trunk as lists show it: the password only as "set" or not. */
export function describeTrunk(trunk: TrunkRecord) {
  return {
    trunk_id: trunk.id,
    name: trunk.name,
    uri: trunk.uri,
    username: trunk.username,
    password: trunk.passwordCiphertext ? 'set' : null,
    from_domain: trunk.fromDomain,
    created_at: trunk.createdAt,
  };
}
