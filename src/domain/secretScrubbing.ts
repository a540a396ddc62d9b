/**
 * Keeps keys out of every message that is kept, shown or logged about a vendor's failure: a vendor
 * that echoes the key in an error ("Incorrect API key provided: sk-…") must not put it into the
 * call record, the calls list, the dashboard or the log. Two rules: the keys we know are replaced
 * wherever they appear, and anything that looks like a key (an auth header value, a `key=…` pair, a
 * vendor-prefixed token, a long opaque token) is replaced too — so a key we were not told about is
 * caught as well. Pure functions, no I/O.
 */

const redacted = '[redacted]';

/** Credentials in the forms they travel in: auth schemes, `name: value` / `name=value` pairs. */
const labelledSecret =
  /\b(Bearer|Token|Basic)\s+[^\s"',;]{4,}|\b(api[_-]?key|xi[_-]api[_-]key|access[_-]?token|auth[_-]?token|token|secret|password|authorization)(["']?\s*[:=]\s*["']?)(?:(?:Bearer|Token|Basic)\s+)?[^\s"',;&]{4,}/gi;

/** Vendor-prefixed keys: OpenAI `sk-…`/`sk-proj-…`, ElevenLabs `sk_…`, Groq `gsk_…`, our `cw_live_…`, `whsec_…`. */
const prefixedKey = /\b(?:sk|gsk|pk|rk|xai|sk_car|cw_live|whsec)[-_][A-Za-z0-9_-]{8,}/g;

/** A long run of key characters with letters and digits both (Deepgram's 40 hex, JWTs, base64 keys). */
const opaqueToken = /[A-Za-z0-9_\-+/=.]{32,}/g;

function looksLikeToken(run: string): boolean {
  return /[A-Za-z]/.test(run) && /[0-9]/.test(run) && !/^[a-z]+(?:[._-][a-z]+)*$/i.test(run);
}

/**
 * `text` with the given secrets and anything that looks like a key replaced by `[redacted]`. Known
 * secrets shorter than 4 characters are ignored (they would blank out ordinary words).
 */
export function scrubSecrets(
  text: string,
  knownSecrets: readonly (string | null | undefined)[] = [],
): string {
  let scrubbed = text;
  for (const secret of knownSecrets) {
    if (secret && secret.length >= 4) scrubbed = scrubbed.split(secret).join(redacted);
  }
  return scrubbed
    .replace(
      labelledSecret,
      (_match, scheme: string | undefined, label: string | undefined, gap: string | undefined) =>
        scheme ? `${scheme} ${redacted}` : `${label}${gap ?? ''}${redacted}`,
    )
    .replace(prefixedKey, redacted)
    .replace(opaqueToken, (run) => (looksLikeToken(run) ? redacted : run));
}

/**
 * A vendor's error code as it may be kept (`invalid_api_key`, `NET-0001`, `model_not_found`): a
 * short word of code characters, scrubbed; anything else (free text, an echoed key) is dropped.
 */
export function vendorErrorCode(
  value: unknown,
  knownSecrets: readonly (string | null | undefined)[] = [],
): string | null {
  if (typeof value === 'number' && Number.isInteger(value)) return String(value);
  if (typeof value !== 'string' || !/^[A-Za-z0-9_.:-]{1,48}$/.test(value)) return null;
  const scrubbed = scrubSecrets(value, knownSecrets);
  return scrubbed === value ? value : null;
}
