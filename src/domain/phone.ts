/** E.164: a plus, a non-zero country digit, at most 15 digits in all. */
export const e164Pattern = /^\+[1-9][0-9]{1,14}$/;

export function isE164(value: string): boolean {
  return e164Pattern.test(value);
}

/**
 * A phone number as logs show it: country and area digits kept, the subscriber part hidden
 * except its last two digits (`+1555*****01`). Anything that is not E.164 is hidden whole.
 */
export function maskPhone(value: string): string {
  if (!isE164(value)) return '[redacted]';
  // Short numbers show no tail; at least four digits stay hidden whenever the number has them.
  const tailLength = value.length >= 8 ? 2 : 0;
  const headLength = Math.min(5, Math.max(2, value.length - tailLength - 4));
  const hiddenLength = value.length - headLength - tailLength;
  return value.slice(0, headLength) + '*'.repeat(hiddenLength) + value.slice(value.length - tailLength);
}
