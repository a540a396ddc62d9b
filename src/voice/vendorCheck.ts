import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { AppError } from '../domain/errors.js';
import { resolveVettedHost } from '../net/hostGuard.js';
import { unbracketed } from '../net/ipRanges.js';
import { cartesiaVersion } from './providers/tts/cartesiaTextToSpeech.js';

/** The result of one cheap request to a vendor with a stored key. */
export interface VendorCheckResult {
  ok: boolean;
  /** The vendor's HTTP status, when it answered. */
  status: number | null;
  /** What happened, for a person: never the key. */
  message: string;
  latencyMs: number;
}

interface CheckRequest {
  url: URL;
  headers: Record<string, string>;
}

/** `https:` for the `wss:` base URLs the socket vendors are often given, and the vendor's own when none. */
function restBase(baseUrl: string | null, vendorDefault: string): string {
  return (baseUrl ?? vendorDefault).replace(/\/+$/, '').replace(/^ws(s?):/, 'http$1:');
}

/**
 * Each vendor's cheapest documented authenticated read: OpenAI (and compatible servers) list models,
 * Deepgram lists the key's projects, ElevenLabs reads the key's user, Cartesia lists voices.
 */
function checkRequestOf(provider: string, apiKey: string, baseUrl: string | null): CheckRequest {
  switch (provider) {
    case 'openai':
      return {
        url: new URL(`${restBase(baseUrl, 'https://api.openai.com/v1')}/models`),
        headers: { Authorization: `Bearer ${apiKey}` },
      };
    case 'deepgram':
      return {
        url: new URL(`${restBase(baseUrl, 'https://api.deepgram.com')}/v1/projects`),
        headers: { Authorization: `Token ${apiKey}` },
      };
    case 'elevenlabs':
      return {
        url: new URL(`${restBase(baseUrl, 'https://api.elevenlabs.io')}/v1/user`),
        headers: { 'xi-api-key': apiKey },
      };
    case 'cartesia':
      return {
        url: new URL(`${restBase(baseUrl, 'https://api.cartesia.ai')}/voices`),
        headers: { Authorization: `Bearer ${apiKey}`, 'Cartesia-Version': cartesiaVersion },
      };
    default:
      throw new AppError('validation_error', `no check is known for provider ${provider.slice(0, 40)}`);
  }
}

/** A short, key-free account of a vendor's error body (its `message`/`detail` when JSON). */
function vendorSays(body: string, apiKey: string): string {
  let text = body;
  try {
    const parsed = JSON.parse(body) as Record<string, unknown>;
    const error = parsed.error as Record<string, unknown> | string | undefined;
    const detail = parsed.detail as Record<string, unknown> | string | undefined;
    text = String(
      (typeof error === 'object' ? error?.message : error) ??
        (typeof detail === 'object' ? detail?.message : detail) ??
        parsed.err_msg ??
        parsed.message ??
        body,
    );
  } catch {
    // not JSON: the text itself
  }
  return text.split(apiKey).join('[key]').replace(/\s+/g, ' ').trim().slice(0, 200);
}

/**
 * Makes one cheap authenticated request to a vendor with a key and reports success or the vendor's
 * error. The host is resolved and vetted at use time (private addresses refused unless allowed) and
 * the connection pinned to the vetted address; the request gives up after `timeoutMs`.
 */
export async function checkVendorKey(
  provider: string,
  credential: { apiKey: string; baseUrl: string | null },
  options: { allowPrivate: boolean; allowPrivateSetting: string; timeoutMs?: number },
): Promise<VendorCheckResult> {
  const { url, headers } = checkRequestOf(provider, credential.apiKey, credential.baseUrl);
  const startedMs = performance.now();
  const elapsed = () => Math.round(performance.now() - startedMs);
  let vetted: { address: string; family: 4 | 6 };
  try {
    vetted = await resolveVettedHost(unbracketed(url.hostname), {
      allowPrivate: options.allowPrivate,
      subject: 'the credential base_url',
      allowPrivateSetting: options.allowPrivateSetting,
    });
  } catch (error) {
    return { ok: false, status: null, message: (error as Error).message, latencyMs: elapsed() };
  }
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    const outgoing = send(
      url,
      {
        method: 'GET',
        headers: { ...headers, Accept: 'application/json' },
        timeout: options.timeoutMs ?? 5_000,
        lookup: (_hostname, lookupOptions, callback) => {
          if ((lookupOptions as { all?: boolean }).all)
            (callback as (error: null, addresses: { address: string; family: number }[]) => void)(null, [
              vetted,
            ]);
          else callback(null, vetted.address, vetted.family);
        },
      },
      (response) => {
        const status = response.statusCode ?? 0;
        const parts: Buffer[] = [];
        let size = 0;
        response.on('data', (part: Buffer) => {
          size += part.length;
          if (size <= 16_384) parts.push(part);
        });
        response.on('end', () => {
          const ok = status >= 200 && status < 300;
          resolve({
            ok,
            status,
            message: ok
              ? `${provider} accepted the key (HTTP ${status})`
              : `${provider} answered HTTP ${status}: ${vendorSays(Buffer.concat(parts).toString('utf8'), credential.apiKey) || 'no detail'}`,
            latencyMs: elapsed(),
          });
        });
        response.on('error', () =>
          resolve({ ok: false, status, message: `${provider}: the answer broke off`, latencyMs: elapsed() }),
        );
      },
    );
    outgoing.on('timeout', () => outgoing.destroy(new Error('timeout')));
    outgoing.on('error', (error) =>
      resolve({
        ok: false,
        status: null,
        message:
          error.message === 'timeout'
            ? `${provider} did not answer within ${options.timeoutMs ?? 5_000} ms`
            : `${provider} could not be reached: ${error.message.slice(0, 120)}`,
        latencyMs: elapsed(),
      }),
    );
    outgoing.end();
  });
}
