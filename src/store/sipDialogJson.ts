import type { SipDialogRecord } from '../domain/records.js';

/**
 * The stored form of a call's SIP dialog (a JSON column on both stores), read back defensively:
 * a value of the wrong shape reads as no dialog rather than as a BYE to a made-up address.
 */
export function sipDialogToJson(dialog: SipDialogRecord): string {
  return JSON.stringify(dialog);
}

function isText(value: unknown): value is string {
  return typeof value === 'string';
}

/** Accepts the column as the driver hands it over: JSON text (SQLite) or a parsed object (jsonb). */
export function sipDialogFromJson(stored: unknown): SipDialogRecord | null {
  let value: unknown = stored;
  if (typeof stored === 'string') {
    try {
      value = JSON.parse(stored);
    } catch {
      return null;
    }
  }
  if (typeof value !== 'object' || value === null) return null;
  const dialog = value as Record<string, unknown>;
  const destination = dialog.destination as Record<string, unknown> | null | undefined;
  const texts = [
    'callId',
    'localTag',
    'remoteTag',
    'localAddress',
    'remoteAddress',
    'remoteTarget',
    'trunkId',
  ];
  if (!texts.every((name) => isText(dialog[name]))) return null;
  if (!Array.isArray(dialog.routeSet) || !dialog.routeSet.every(isText)) return null;
  if (!Number.isSafeInteger(dialog.localSeq)) return null;
  if (typeof destination !== 'object' || destination === null) return null;
  if (!isText(destination.host) || !Number.isInteger(destination.port)) return null;
  return {
    callId: dialog.callId as string,
    localTag: dialog.localTag as string,
    remoteTag: dialog.remoteTag as string,
    localAddress: dialog.localAddress as string,
    remoteAddress: dialog.remoteAddress as string,
    remoteTarget: dialog.remoteTarget as string,
    routeSet: [...(dialog.routeSet as string[])],
    localSeq: dialog.localSeq as number,
    destination: {
      host: destination.host,
      port: destination.port as number,
      ...(destination.transport === 'tcp' || destination.transport === 'tls'
        ? { transport: destination.transport }
        : {}),
    },
    trunkId: dialog.trunkId as string,
  };
}
