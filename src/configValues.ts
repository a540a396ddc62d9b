import { parseRatePolicy, type RatePolicy } from './domain/rateLimit.js';

/**
 * The value readers of the service's configuration (config.ts): each reads one variable of the
 * environment it is given and stops start-up with a one-line error naming the variable when the
 * value is bad. Only config.ts passes them the process's environment.
 */

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}

export type Environment = Readonly<Record<string, string | undefined>>;

export function readValue(env: Environment, name: string): string | undefined {
  const raw = env[name];
  return raw === undefined || raw.trim() === '' ? undefined : raw.trim();
}

export function readPort(env: Environment, name: string, fallback: number): number {
  const raw = readValue(env, name);
  if (raw === undefined) return fallback;
  if (!/^[0-9]{1,5}$/.test(raw) || Number(raw) > 65535) {
    throw new ConfigError(name, `must be a port number from 0 to 65535, got "${raw}"`);
  }
  return Number(raw);
}

export function readRatePolicy(env: Environment, name: string, fallback: string): RatePolicy {
  const raw = readValue(env, name) ?? fallback;
  const policy = parseRatePolicy(raw);
  if (!policy)
    throw new ConfigError(name, `must look like <requests>/<seconds>s (e.g. 100/10s), got "${raw}"`);
  return policy;
}

export function readBoolean(env: Environment, name: string, fallback: boolean): boolean {
  const raw = readValue(env, name);
  if (raw === undefined) return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

export function readPublicUrl(env: Environment, name: string, fallback: string): string {
  const raw = readValue(env, name) ?? fallback;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, `must be an absolute http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(name, `must use http or https, got "${url.protocol}"`);
  }
  if (url.search || url.hash) throw new ConfigError(name, 'must not carry a query or fragment');
  return url.toString().replace(/\/+$/, '');
}

export function readChoice<T extends string>(
  env: Environment,
  name: string,
  choices: readonly T[],
  fallback: T,
): T {
  const raw = readValue(env, name);
  if (raw === undefined) return fallback;
  if (!(choices as readonly string[]).includes(raw))
    throw new ConfigError(name, `must be one of ${choices.join(', ')}, got "${raw}"`);
  return raw as T;
}

export function readInteger(
  env: Environment,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const raw = readValue(env, name);
  if (raw === undefined) return fallback;
  if (!/^[0-9]{1,9}$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(name, `must be a whole number from ${min} to ${max}, got "${raw}"`);
  }
  return Number(raw);
}
