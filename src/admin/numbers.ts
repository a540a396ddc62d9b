import { AppError } from '../domain/errors.js';
import { isE164 } from '../domain/phone.js';
import type { PhoneNumberRecord } from '../domain/records.js';
import type { Store } from '../store/types.js';

export const sandboxRoute = 'sandbox';

export async function addPhoneNumber(
  store: Store,
  accountId: string,
  number: string,
  route: string = sandboxRoute,
): Promise<PhoneNumberRecord> {
  if (!isE164(number))
    throw new AppError('invalid_phone', `${number.slice(0, 40)} is not an E.164 number such as +14155550123`);
  let routeId = sandboxRoute;
  if (route !== sandboxRoute) {
    const trunk = await store.trunks.get(accountId, route);
    if (!trunk) {
      throw new AppError(
        'validation_error',
        `unknown route "${route.slice(0, 40)}": give "sandbox" or a trunk's name`,
      );
    }
    routeId = trunk.id;
  }
  return store.numbers.add({ accountId, number, route: routeId });
}

export async function removePhoneNumber(store: Store, accountId: string, number: string): Promise<void> {
  if (!(await store.numbers.remove(accountId, number))) {
    throw new AppError('not_found', `${number.slice(0, 40)} is not configured in this account`);
  }
}

export function describePhoneNumber(record: PhoneNumberRecord) {
  return {
    number: record.number,
    route: record.route,
    inbound_agent_id: record.inboundAgentId,
    inbound_fallback: record.inboundFallback,
    max_live_calls: record.maxLiveCalls,
    created_at: record.createdAt,
  };
}
