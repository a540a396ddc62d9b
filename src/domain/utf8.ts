/**
 * Strict UTF-8: a byte sequence that is not UTF-8 is an error, not a U+FFFD stored in a field
 * (issue 12, defect 9). A BOM is kept as U+FEFF, so a JSON body that starts with one stays invalid.
 */
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The text of `bytes`, or null when they are not UTF-8. */
export function decodeUtf8OrNull(bytes: Uint8Array): string | null {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return null;
  }
}
