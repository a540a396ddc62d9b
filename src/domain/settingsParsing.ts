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
