import { AppError } from './errors.js';

/** Small checks shared by the parsers of an agent's settings: each failure is a 400 naming the field. */

export type RawSettings = Record<string, unknown>;

export function refuse(message: string): never {
  throw new AppError('validation_error', message);
}

export function isObject(value: unknown): value is RawSettings {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function onlyKnownFields(where: string, value: RawSettings, known: readonly string[]): void {
  for (const key of Object.keys(value)) {
    if (!known.includes(key))
      refuse(`${where}.${key.slice(0, 60)} is not a setting (known: ${known.join(', ')})`);
  }
}

/** A whole number in [min, max]; `otherwise` when absent. */
export function wholeNumber(
  where: string,
  value: unknown,
  min: number,
  max: number,
  otherwise: number,
): number {
  if (value === undefined) return otherwise;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
    refuse(`${where} must be a whole number from ${min} to ${max}`);
  return value;
}

/** true or false; `otherwise` when absent. */
export function flag(where: string, value: unknown, otherwise: boolean): boolean {
  if (value === undefined) return otherwise;
  if (typeof value !== 'boolean') refuse(`${where} must be true or false`);
  return value;
}
