/**
 * Signed, expiring links to a call's recording, so a webhook receiver can fetch the WAV without an
 * API key: `{publicUrl}/v1/calls/{call_id}/recording?expires={unix s}&signature={base64url}` where
 * the signature is HMAC-SHA256 over `{call_id}.{expires}` with a key the service made for itself.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { CallRecord } from '../domain/records.js';

export const recordingLinkKeyName = 'recording-url-key';
export const defaultRecordingLinkExpiresInS = 7 * 24 * 3600;

export type RecordingLinkCheck = 'valid' | 'expired' | 'invalid';

export interface RecordingLinks {
  /** The signed link, or null when the call has no recording. */
  urlFor(call: Pick<CallRecord, 'id' | 'recordingPath'>, nowMs?: number): string | null;
  /** Whether `expires` and `signature` from a request are a valid, unexpired link to this call. */
  check(
    callId: string,
    expires: string | undefined,
    signature: string | undefined,
    nowMs?: number,
  ): RecordingLinkCheck;
}

export function createRecordingLinks(options: {
  publicUrl: string;
  /** Base64 of the HMAC key (at least 32 bytes). */
  keyBase64: string;
  expiresInS?: number;
}): RecordingLinks {
  const key = Buffer.from(options.keyBase64, 'base64');
  if (key.length < 32) throw new Error('the recording link key must be at least 32 bytes');
  const expiresInS = options.expiresInS ?? defaultRecordingLinkExpiresInS;
  const base = options.publicUrl.replace(/\/+$/, '');
  const sign = (callId: string, expiresS: string) =>
    createHmac('sha256', key).update(`${callId}.${expiresS}`).digest('base64url');

  return {
    urlFor(call, nowMs = Date.now()) {
      if (call.recordingPath === null) return null;
      const expiresS = String(Math.floor(nowMs / 1000) + expiresInS);
      const signature = sign(call.id, expiresS);
      return `${base}/v1/calls/${encodeURIComponent(call.id)}/recording?expires=${expiresS}&signature=${signature}`;
    },
    check(callId, expires, signature, nowMs = Date.now()) {
      if (expires === undefined || signature === undefined || !/^[0-9]{1,12}$/.test(expires))
        return 'invalid';
      const expected = Buffer.from(sign(callId, expires));
      const presented = Buffer.from(signature);
      if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) return 'invalid';
      return Number(expires) * 1000 <= nowMs ? 'expired' : 'valid';
    },
  };
}
