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
  const visibleHead = Math.min(5, value.length - 2);
  return value.slice(0, visibleHead) + '*'.repeat(value.length - visibleHead - 2) + value.slice(-2);
}
