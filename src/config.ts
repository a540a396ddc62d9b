import { resolve } from 'node:path';
import { parseRatePolicy, type RatePolicy } from './domain/rateLimit.js';

/**
 * The service's configuration. This is the only module that reads the environment; everything
 * else receives a Config. A bad value stops start-up with a one-line error naming the variable.
 */
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  sqlitePath: string;
  publicUrl: string;
  ratePolicy: RatePolicy;
  authFailurePolicy: RatePolicy;
  logLevel: LogLevel;
  trustProxy: boolean;
}

export const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof logLevels)[number];

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}

type Environment = Readonly<Record<string, string | undefined>>;

function readValue(env: Environment, name: string): string | undefined {
  const raw = env[name];
  return raw === undefined || raw.trim() === '' ? undefined : raw.trim();
}

function readPort(env: Environment, name: string, fallback: number): number {
  const raw = readValue(env, name);
  if (raw === undefined) return fallback;
  if (!/^[0-9]{1,5}$/.test(raw) || Number(raw) > 65535) {
    throw new ConfigError(name, `must be a port number from 0 to 65535, got "${raw}"`);
  }
  return Number(raw);
}

function readRatePolicy(env: Environment, name: string, fallback: string): RatePolicy {
  const raw = readValue(env, name) ?? fallback;
  const policy = parseRatePolicy(raw);
  if (!policy)
    throw new ConfigError(name, `must look like <requests>/<seconds>s (e.g. 100/10s), got "${raw}"`);
  return policy;
}

function readBoolean(env: Environment, name: string, fallback: boolean): boolean {
  const raw = readValue(env, name);
  if (raw === undefined) return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

function readPublicUrl(env: Environment, name: string, fallback: string): string {
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

export function loadConfig(env: Environment = process.env): Config {
  const port = readPort(env, 'PORT', 3000);
  const host = readValue(env, 'HOST') ?? '127.0.0.1';
  const dataDir = resolve(readValue(env, 'CALLWRIGHT_DATA_DIR') ?? './data');
  const logLevel = (readValue(env, 'LOG_LEVEL') ?? 'info') as LogLevel;
  if (!logLevels.includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `must be one of ${logLevels.join(', ')}, got "${logLevel}"`);
  }
  return {
    port,
    host,
    dataDir,
    sqlitePath: resolve(dataDir, 'callwright.db'),
    publicUrl: readPublicUrl(env, 'CALLWRIGHT_PUBLIC_URL', `http://localhost:${port}`),
    ratePolicy: readRatePolicy(env, 'CALLWRIGHT_RATE_LIMIT', '100/10s'),
    authFailurePolicy: readRatePolicy(env, 'CALLWRIGHT_AUTH_FAILURE_LIMIT', '20/60s'),
    logLevel,
    trustProxy: readBoolean(env, 'CALLWRIGHT_TRUST_PROXY', false),
  };
}
