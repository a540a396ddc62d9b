import { isIP } from 'node:net';
import { resolve } from 'node:path';
import type { QuietHours } from './campaigns/callingHoursGate.js';
import {
  ConfigError,
  type Environment,
  readBoolean,
  readChoice,
  readInteger,
  readPort,
  readPublicUrl,
  readRatePolicy,
  readValue,
} from './configValues.js';
import { callingWindowOf, callingWindowProblem, isTimeZone } from './domain/callingWindow.js';
import type { RatePolicy } from './domain/rateLimit.js';
import { parseWebIceServers, type WebIceServer } from './domain/webCalls.js';

export { ConfigError } from './configValues.js';

/**
 * The service's configuration. This is the only module that reads the environment (with the value
 * readers of configValues.ts); everything else receives a Config. A bad value stops start-up with a
 * one-line error naming the variable.
 */
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** False when CALLWRIGHT_DATA_DIR is unset and `./data` was assumed (the CLI then looks before it creates). */
  dataDirChosen: boolean;
  sqlitePath: string;
  publicUrl: string;
  ratePolicy: RatePolicy;
  authFailurePolicy: RatePolicy;
  /** Web call connections per client address (POST /v1/web-calls/connect). */
  webCallConnectPolicy: RatePolicy;
  /** STUN/TURN servers for web calls (CALLWRIGHT_WEB_ICE_SERVERS, JSON; none: host candidates). */
  webCallIceServers: WebIceServer[];
  /**
   * Answer a browser's Opus (CALLWRIGHT_WEB_CALL_OPUS, default false: PCMU). Off by default until
   * the offline recogniser hears Opus-coded speech as well as PCMU (docs/decisions.md).
   */
  webCallOpus: boolean;
  logLevel: LogLevel;
  /** CALLWRIGHT_LOG_FORMAT: `pretty` lines for a person, `json` lines for a collector; `auto`: pretty on a terminal. */
  logFormat: LogFormatSetting;
  /** Whose X-Forwarded-For entries name the client (CALLWRIGHT_TRUST_PROXY); false: none, the socket's address. */
  trustProxy: TrustProxySetting;
  /** How long the HTTP listeners wait for slow clients. */
  httpTimeouts: HttpTimeouts;
  /** Where and for whom GET /metrics is served. */
  metrics: MetricsEndpointConfig;
  /** Dashboard session cookies carry Secure (CALLWRIGHT_COOKIE_SECURE; default: the public URL is https). */
  cookieSecure: boolean;
  /** Base64 of 32 bytes; null means a key file in the data directory. */
  secretKeyBase64: string | null;
  telephony: TelephonyConfig;
  webhookAllowPrivate: boolean;
  voice: VoiceConfig;
  database: DatabaseConfig;
  /** OpenTelemetry traces over OTLP/HTTP; null URL: off (no SDK loaded). */
  tracing: TracingSettings;
  /** The metrics over OTLP/HTTP as well as on /metrics; null URL: off (no SDK loaded). */
  otlpMetrics: OtlpMetricsSettings;
}

export interface OtlpMetricsSettings {
  otlpMetricsUrl: string | null;
  exportIntervalMs: number;
  serviceName: string;
}

/**
 * CALLWRIGHT_OTLP_METRICS_URL, else OTEL_EXPORTER_OTLP_METRICS_ENDPOINT (a full URL), else
 * OTEL_EXPORTER_OTLP_ENDPOINT (a base URL: `/v1/metrics` is appended, as the OTLP spec says).
 * OTEL_METRIC_EXPORT_INTERVAL: ms between exports (the spec's default, 60000).
 */
export function readOtlpMetrics(env: Environment): OtlpMetricsSettings {
  const full = env.CALLWRIGHT_OTLP_METRICS_URL || env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const url = full || (base ? `${base.replace(/\/+$/, '')}/v1/metrics` : null);
  if (url && !/^https?:\/\//.test(url))
    throw new ConfigError('CALLWRIGHT_OTLP_METRICS_URL', `must be an http(s) URL, got "${url}"`);
  return {
    otlpMetricsUrl: url || null,
    exportIntervalMs: readInteger(env, 'OTEL_METRIC_EXPORT_INTERVAL', 60_000, 100, 3_600_000),
    serviceName: env.OTEL_SERVICE_NAME || 'callwright',
  };
}

export interface TracingSettings {
  otlpTracesUrl: string | null;
  serviceName: string;
}

/**
 * CALLWRIGHT_OTLP_TRACES_URL, else the standard OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (a full URL),
 * else OTEL_EXPORTER_OTLP_ENDPOINT (a base URL: `/v1/traces` is appended, as the OTLP spec says).
 * OTEL_SERVICE_NAME names the service (default `callwright`).
 */
export function readTracing(env: Environment): TracingSettings {
  const full = env.CALLWRIGHT_OTLP_TRACES_URL || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const url = full || (base ? `${base.replace(/\/+$/, '')}/v1/traces` : null);
  if (url && !/^https?:\/\//.test(url))
    throw new ConfigError('CALLWRIGHT_OTLP_TRACES_URL', `must be an http(s) URL, got "${url}"`);
  return { otlpTracesUrl: url || null, serviceName: env.OTEL_SERVICE_NAME || 'callwright' };
}

/**
 * CALLWRIGHT_TRUST_PROXY. `hops`: that many proxies in front of the service each append the
 * address they received from (X-Forwarded-For is read from the right, `hops` entries deep).
 * `addresses`: hops are trusted while they are one of these addresses or CIDR ranges (or
 * proxy-addr's names loopback, linklocal, uniquelocal). `true`: the leftmost entry, which the
 * client writes itself — only behind a proxy that replaces the header.
 */
export type TrustProxySetting = boolean | { hops: number } | { addresses: string[] };

export interface HttpTimeouts {
  /** The whole request, headers and body, must have arrived within this (CALLWRIGHT_HTTP_REQUEST_TIMEOUT_S). */
  requestTimeoutMs: number;
  /** The request line and headers must have arrived within this. */
  headersTimeoutMs: number;
  /** A connection with no bytes either way for this long is closed (CALLWRIGHT_HTTP_IDLE_TIMEOUT_S). */
  idleTimeoutMs: number;
  /** An idle keep-alive connection is closed after this (CALLWRIGHT_HTTP_KEEP_ALIVE_TIMEOUT_S). */
  keepAliveTimeoutMs: number;
}

export interface MetricsEndpointConfig {
  /** CALLWRIGHT_METRICS_TOKEN: scrapes send `Authorization: Bearer <token>`; null: no token. */
  token: string | null;
  /** CALLWRIGHT_METRICS_PORT: /metrics on a listener of its own (and not on the API port); null: none. */
  port: number | null;
  /** CALLWRIGHT_METRICS_HOST: the address that listener binds to. */
  host: string;
}

/** DATABASE_URL switches storage and the queue to PostgreSQL (scale-out); null is the embedded SQLite. */
export interface DatabaseConfig {
  url: string | null;
  /** CALLWRIGHT_DATABASE_SCHEMA: where the tables live; pg-boss's jobs go in `<schema>_jobs`. */
  schema: string;
}

export interface VoiceConfig {
  /** An OpenAI-compatible server for agents that use HTTP providers or the llm brain. */
  openAiBaseUrl: string | null;
  openAiApiKey: string | null;
  /** The chat model of llm agents that name none. */
  llmModel: string;
  /** Offline speech recognisers working in parallel: one engine process each, ~200 MB. */
  sttWorkers: number;
  /** Streaming vendors' service-wide credentials (CALLWRIGHT_<VENDOR>_API_KEY, _BASE_URL); null: not set. */
  deepgram: VendorCredential | null;
  elevenLabs: VendorCredential | null;
  cartesia: VendorCredential | null;
  /** CALLWRIGHT_SERVICE_VENDOR_KEYS=false: only the accounts' own keys are used, never the ones above. */
  serviceVendorKeys: boolean;
  /** CALLWRIGHT_PROVIDER_ALLOW_PRIVATE: accounts' credential base URLs may name private and loopback addresses. */
  providerAllowPrivate: boolean;
  /** A vendor's first audio of a reply must arrive within this, or the next choice speaks (CALLWRIGHT_TTS_FIRST_AUDIO_TIMEOUT_MS). */
  vendorFirstAudioTimeoutMs: number;
  /** A vendor's final transcript must arrive this soon after the callee stops (CALLWRIGHT_STT_FINAL_TIMEOUT_MS). */
  vendorFinalTranscriptTimeoutMs: number;
  /** Once a speech vendor has started a sentence, it may not go quiet longer than this (CALLWRIGHT_TTS_CHUNK_GAP_TIMEOUT_MS). */
  vendorChunkGapTimeoutMs: number;
  /** The language model's first streamed token must arrive within this (CALLWRIGHT_LLM_FIRST_TOKEN_TIMEOUT_MS). */
  llmFirstTokenTimeoutMs: number;
  /** Once streaming, the language model may not go quiet longer than this (CALLWRIGHT_LLM_CHUNK_GAP_TIMEOUT_MS). */
  llmChunkGapTimeoutMs: number;
  /** A Realtime session that answers no WebSocket ping for this long has failed (CALLWRIGHT_REALTIME_PONG_TIMEOUT_MS). */
  realtimePongTimeoutMs: number;
  /** The post-call analysis by the language model gives up after this (CALLWRIGHT_ANALYSIS_TIMEOUT_MS). */
  analysisTimeoutMs: number;
}

export interface VendorCredential {
  apiKey: string;
  /** The vendor's own address when null; a self-hosted or test endpoint (http(s) or ws(s)) otherwise. */
  baseUrl: string | null;
  /**
   * An account's own credential: its base URL is checked against CALLWRIGHT_PROVIDER_ALLOW_PRIVATE
   * (as it is then) at every connection. Absent: the operator's own (CALLWRIGHT_<VENDOR>_*), trusted.
   */
  accountOwned?: boolean;
}

export interface TelephonyConfig {
  /** Address the SIP and RTP sockets bind to. */
  bindAddress: string;
  /** Address written into Via, Contact and SDP (a public IP behind NAT). */
  publicAddress: string;
  sipPort: number;
  rtpPortMin: number;
  rtpPortMax: number;
  ringTimeoutMs: number;
  /** CALLWRIGHT_CALLBACK_WINDOW_DAYS: an inbound call within it of an outbound call to the caller is its callback (issue 40). */
  callbackWindowMs: number;
  /** Live calls one worker process holds at most. */
  workerMaxCalls: number;
  /** On SIGTERM, how long live calls may go on before they are hung up. */
  shutdownGraceMs: number;
  /** CALLWRIGHT_TRUNK_ALLOW_PRIVATE: trunks may name private, loopback and other internal addresses. */
  trunkAllowPrivate: boolean;
  /**
   * CALLWRIGHT_QUIET_HOURS (e.g. `21:00-08:00`): no call starts then in the callee's zone (from the
   * number, else CALLWRIGHT_QUIET_HOURS_TIME_ZONE); calls queued in them wait. Off when unset.
   */
  quietHours: QuietHours | null;
  /** What SIP over TCP lets unauthenticated peers hold (CALLWRIGHT_SIP_TCP_*). */
  sipTcp: SipTcpLimits;
  /** How often trunk registrations may go out, whatever the registrar answers (CALLWRIGHT_REGISTRATION_*). */
  registration: RegistrationLimits;
}

export interface RegistrationLimits {
  /** CALLWRIGHT_REGISTRATION_MIN_REFRESH_S: no refresh sooner than this, whatever the grant. */
  minRefreshMs: number;
  /** CALLWRIGHT_REGISTRATION_MAX_ATTEMPTS_PER_MINUTE: rounds of REGISTER per trunk and process in any minute. */
  maxAttemptsPerMinute: number;
}

/**
 * Connections accepted on the SIP TCP port: caps and timeouts, so that peers nobody authenticated
 * cannot hold the descriptors the HTTP API, webhooks, media and the database need.
 */
export interface SipTcpLimits {
  /** CALLWRIGHT_SIP_TCP_MAX_CONNECTIONS: accepted connections held at once; more are closed. */
  maxConnections: number;
  /** CALLWRIGHT_SIP_TCP_MAX_CONNECTIONS_PER_ADDRESS: of those, from one address (an IPv6 /64). */
  maxConnectionsPerAddress: number;
  /** CALLWRIGHT_SIP_TCP_FIRST_REQUEST_TIMEOUT_S: a connection without a complete SIP message by then is closed. */
  firstRequestTimeoutMs: number;
  /** CALLWRIGHT_SIP_TCP_IDLE_TIMEOUT_S: a connection that carried no SIP message this long is closed. */
  idleTimeoutMs: number;
}

export const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof logLevels)[number];
export const logFormatSettings = ['auto', 'pretty', 'json'] as const;
export type LogFormatSetting = (typeof logFormatSettings)[number];

function readWebIceServers(env: Environment): WebIceServer[] {
  const servers = parseWebIceServers(readValue(env, 'CALLWRIGHT_WEB_ICE_SERVERS') ?? '[]');
  if (typeof servers === 'string') throw new ConfigError('CALLWRIGHT_WEB_ICE_SERVERS', servers);
  return servers;
}

/** CALLWRIGHT_<VENDOR>_API_KEY and, optionally, CALLWRIGHT_<VENDOR>_BASE_URL (http, https, ws or wss). */
function readVendorCredential(env: Environment, vendor: string): VendorCredential | null {
  const apiKey = readValue(env, `CALLWRIGHT_${vendor}_API_KEY`);
  const urlName = `CALLWRIGHT_${vendor}_BASE_URL`;
  const rawUrl = readValue(env, urlName);
  if (apiKey === undefined) {
    if (rawUrl !== undefined)
      throw new ConfigError(urlName, `is set but CALLWRIGHT_${vendor}_API_KEY is not`);
    return null;
  }
  if (rawUrl === undefined) return { apiKey, baseUrl: null };
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw new ConfigError(urlName, `must be an absolute URL, got "${rawUrl}"`);
  }
  if (!['http:', 'https:', 'ws:', 'wss:'].includes(url.protocol))
    throw new ConfigError(urlName, `must use http, https, ws or wss, got "${url.protocol}"`);
  if (url.search || url.hash) throw new ConfigError(urlName, 'must not carry a query or fragment');
  return { apiKey, baseUrl: url.toString().replace(/\/+$/, '') };
}

function readRtpPorts(env: Environment): { rtpPortMin: number; rtpPortMax: number } {
  const name = 'CALLWRIGHT_RTP_PORTS';
  const raw = readValue(env, name) ?? '10000-20000';
  const match = /^([0-9]{1,5})-([0-9]{1,5})$/.exec(raw);
  const min = Number(match?.[1]);
  const max = Number(match?.[2]);
  if (!match || min < 1024 || max > 65535 || min > max) {
    throw new ConfigError(name, `must be a range like 10000-20000 within 1024-65535, got "${raw}"`);
  }
  // Each call takes an even RTP port and the odd one after it, and the sandbox carrier takes the
  // upper half of the range: fewer than 8 ports leave no pair for calls.
  if (max - min + 1 < 8) {
    throw new ConfigError(
      name,
      `${raw} holds ${max - min + 1} ports, too few for any call: each call needs an even and an odd port, and the sandbox carrier takes half the range; give at least 8 (e.g. ${min}-${min + 99})`,
    );
  }
  return { rtpPortMin: min, rtpPortMax: max };
}

function readSecretKey(env: Environment): string | null {
  const name = 'CALLWRIGHT_SECRET_KEY';
  const raw = readValue(env, name);
  if (raw === undefined) return null;
  if (Buffer.from(raw, 'base64').length !== 32)
    throw new ConfigError(name, 'must be the base64 of 32 random bytes');
  return raw;
}

/**
 * Secure cookies unless told otherwise; the default follows CALLWRIGHT_PUBLIC_URL (https: secure).
 * Plain-http cookies are allowed only for a localhost public URL, where browsers would drop Secure ones.
 */
function readCookieSecure(env: Environment, port: number): boolean {
  const publicUrl = new URL(readPublicUrl(env, 'CALLWRIGHT_PUBLIC_URL', `http://localhost:${port}`));
  const secure = readBoolean(env, 'CALLWRIGHT_COOKIE_SECURE', publicUrl.protocol === 'https:');
  const local = ['localhost', '127.0.0.1', '[::1]'].includes(publicUrl.hostname);
  if (!secure && !local && publicUrl.protocol === 'https:') {
    throw new ConfigError(
      'CALLWRIGHT_COOKIE_SECURE',
      'may be false only when CALLWRIGHT_PUBLIC_URL is plain http',
    );
  }
  return secure;
}

const proxyAddressNames = ['loopback', 'linklocal', 'uniquelocal'];

function isAddressOrRange(entry: string): boolean {
  if (proxyAddressNames.includes(entry)) return true;
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^[0-9]{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

function readTrustProxy(env: Environment): TrustProxySetting {
  const name = 'CALLWRIGHT_TRUST_PROXY';
  const raw = readValue(env, name);
  if (raw === undefined || raw === 'false') return false;
  if (raw === 'true') return true;
  if (/^[0-9]{1,2}$/.test(raw)) return Number(raw) === 0 ? false : { hops: Number(raw) };
  const addresses = raw.split(',').map((entry) => entry.trim());
  const bad = addresses.find((entry) => !isAddressOrRange(entry));
  if (bad !== undefined) {
    throw new ConfigError(
      name,
      `must be false, a hop count (e.g. 1), or proxy addresses/CIDR ranges separated by commas; "${bad}" is none`,
    );
  }
  return { addresses };
}

/** Keep-alive above the 60 s idle timeout of common load balancers, so they close first. */
export const defaultHttpTimeouts: HttpTimeouts = {
  requestTimeoutMs: 30_000,
  headersTimeoutMs: 10_000,
  idleTimeoutMs: 60_000,
  keepAliveTimeoutMs: 72_000,
};

function readHttpTimeouts(env: Environment): HttpTimeouts {
  const seconds = (name: string, fallbackMs: number) =>
    readInteger(env, name, fallbackMs / 1000, 1, 3600) * 1000;
  const requestTimeoutMs = seconds('CALLWRIGHT_HTTP_REQUEST_TIMEOUT_S', defaultHttpTimeouts.requestTimeoutMs);
  return {
    requestTimeoutMs,
    headersTimeoutMs: Math.min(requestTimeoutMs, defaultHttpTimeouts.headersTimeoutMs),
    idleTimeoutMs: seconds('CALLWRIGHT_HTTP_IDLE_TIMEOUT_S', defaultHttpTimeouts.idleTimeoutMs),
    keepAliveTimeoutMs: seconds(
      'CALLWRIGHT_HTTP_KEEP_ALIVE_TIMEOUT_S',
      defaultHttpTimeouts.keepAliveTimeoutMs,
    ),
  };
}

function readMetricsEndpoint(env: Environment): MetricsEndpointConfig {
  const token = readValue(env, 'CALLWRIGHT_METRICS_TOKEN') ?? null;
  if (token !== null && !/^[\x21-\x7e]{16,200}$/.test(token)) {
    throw new ConfigError(
      'CALLWRIGHT_METRICS_TOKEN',
      'must be 16 to 200 printable characters without spaces',
    );
  }
  const port =
    readValue(env, 'CALLWRIGHT_METRICS_PORT') === undefined
      ? null
      : readPort(env, 'CALLWRIGHT_METRICS_PORT', 0);
  return { token, port, host: readValue(env, 'CALLWRIGHT_METRICS_HOST') ?? '127.0.0.1' };
}

function readDatabase(env: Environment): DatabaseConfig {
  const url = readValue(env, 'DATABASE_URL') ?? null;
  if (url !== null && !/^postgres(ql)?:\/\/./.test(url)) {
    throw new ConfigError('DATABASE_URL', 'must be a postgres:// or postgresql:// URL');
  }
  const schema = readValue(env, 'CALLWRIGHT_DATABASE_SCHEMA') ?? 'callwright';
  if (!/^[a-z_][a-z0-9_]{0,50}$/.test(schema)) {
    throw new ConfigError(
      'CALLWRIGHT_DATABASE_SCHEMA',
      'must be lower-case letters, digits and _ (at most 51)',
    );
  }
  return { url, schema };
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
    dataDirChosen: readValue(env, 'CALLWRIGHT_DATA_DIR') !== undefined,
    sqlitePath: resolve(dataDir, 'callwright.db'),
    publicUrl: readPublicUrl(env, 'CALLWRIGHT_PUBLIC_URL', `http://localhost:${port}`),
    ratePolicy: readRatePolicy(env, 'CALLWRIGHT_RATE_LIMIT', '100/10s'),
    authFailurePolicy: readRatePolicy(env, 'CALLWRIGHT_AUTH_FAILURE_LIMIT', '20/60s'),
    webCallConnectPolicy: readRatePolicy(env, 'CALLWRIGHT_WEB_CALL_CONNECT_LIMIT', '10/60s'),
    webCallIceServers: readWebIceServers(env),
    webCallOpus: readBoolean(env, 'CALLWRIGHT_WEB_CALL_OPUS', false),
    logLevel,
    logFormat: readChoice(env, 'CALLWRIGHT_LOG_FORMAT', logFormatSettings, 'auto'),
    trustProxy: readTrustProxy(env),
    httpTimeouts: readHttpTimeouts(env),
    metrics: readMetricsEndpoint(env),
    cookieSecure: readCookieSecure(env, port),
    secretKeyBase64: readSecretKey(env),
    webhookAllowPrivate: readBoolean(env, 'CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE', false),
    tracing: readTracing(env),
    otlpMetrics: readOtlpMetrics(env),
    database: readDatabase(env),
    voice: {
      openAiBaseUrl: readValue(env, 'CALLWRIGHT_OPENAI_BASE_URL')
        ? readPublicUrl(env, 'CALLWRIGHT_OPENAI_BASE_URL', '')
        : null,
      openAiApiKey: readValue(env, 'CALLWRIGHT_OPENAI_API_KEY') ?? null,
      llmModel: readValue(env, 'CALLWRIGHT_LLM_MODEL') ?? 'gpt-4o-mini',
      sttWorkers: readInteger(env, 'CALLWRIGHT_STT_WORKERS', 1, 1, 16),
      deepgram: readVendorCredential(env, 'DEEPGRAM'),
      elevenLabs: readVendorCredential(env, 'ELEVENLABS'),
      cartesia: readVendorCredential(env, 'CARTESIA'),
      serviceVendorKeys: readBoolean(env, 'CALLWRIGHT_SERVICE_VENDOR_KEYS', true),
      providerAllowPrivate: readBoolean(env, 'CALLWRIGHT_PROVIDER_ALLOW_PRIVATE', false),
      vendorFirstAudioTimeoutMs: readInteger(env, 'CALLWRIGHT_TTS_FIRST_AUDIO_TIMEOUT_MS', 3000, 100, 60_000),
      vendorFinalTranscriptTimeoutMs: readInteger(env, 'CALLWRIGHT_STT_FINAL_TIMEOUT_MS', 3000, 100, 60_000),
      vendorChunkGapTimeoutMs: readInteger(env, 'CALLWRIGHT_TTS_CHUNK_GAP_TIMEOUT_MS', 1500, 100, 60_000),
      llmFirstTokenTimeoutMs: readInteger(env, 'CALLWRIGHT_LLM_FIRST_TOKEN_TIMEOUT_MS', 3000, 100, 120_000),
      llmChunkGapTimeoutMs: readInteger(env, 'CALLWRIGHT_LLM_CHUNK_GAP_TIMEOUT_MS', 3000, 100, 120_000),
      realtimePongTimeoutMs: readInteger(env, 'CALLWRIGHT_REALTIME_PONG_TIMEOUT_MS', 3000, 500, 60_000),
      analysisTimeoutMs: readInteger(env, 'CALLWRIGHT_ANALYSIS_TIMEOUT_MS', 30_000, 1_000, 300_000),
    },
    telephony: {
      bindAddress: readValue(env, 'CALLWRIGHT_SIP_BIND') ?? '0.0.0.0',
      publicAddress: readValue(env, 'CALLWRIGHT_PUBLIC_IP') ?? '127.0.0.1',
      sipPort: readPort(env, 'CALLWRIGHT_SIP_PORT', 5060),
      ...readRtpPorts(env),
      ringTimeoutMs: readInteger(env, 'CALLWRIGHT_RING_TIMEOUT_S', 30, 5, 300) * 1000,
      callbackWindowMs: readInteger(env, 'CALLWRIGHT_CALLBACK_WINDOW_DAYS', 14, 0, 365) * 86_400_000,
      workerMaxCalls: readInteger(env, 'CALLWRIGHT_WORKER_MAX_CALLS', 200, 1, 5000),
      shutdownGraceMs: readInteger(env, 'CALLWRIGHT_SHUTDOWN_GRACE_S', 10, 0, 3600) * 1000,
      trunkAllowPrivate: readBoolean(env, 'CALLWRIGHT_TRUNK_ALLOW_PRIVATE', false),
      quietHours: readQuietHours(env),
      sipTcp: {
        maxConnections: readInteger(env, 'CALLWRIGHT_SIP_TCP_MAX_CONNECTIONS', 256, 1, 100_000),
        maxConnectionsPerAddress: readInteger(
          env,
          'CALLWRIGHT_SIP_TCP_MAX_CONNECTIONS_PER_ADDRESS',
          16,
          1,
          100_000,
        ),
        firstRequestTimeoutMs:
          readInteger(env, 'CALLWRIGHT_SIP_TCP_FIRST_REQUEST_TIMEOUT_S', 10, 1, 300) * 1000,
        idleTimeoutMs: readInteger(env, 'CALLWRIGHT_SIP_TCP_IDLE_TIMEOUT_S', 600, 1, 86_400) * 1000,
      },
      registration: {
        minRefreshMs: readInteger(env, 'CALLWRIGHT_REGISTRATION_MIN_REFRESH_S', 60, 1, 86_400) * 1000,
        maxAttemptsPerMinute: readInteger(env, 'CALLWRIGHT_REGISTRATION_MAX_ATTEMPTS_PER_MINUTE', 6, 1, 600),
      },
    },
  };
}

/** What `callwright test` reads: where the running service is, and the API key to use there. */
export interface TestRunnerConfig {
  /** CALLWRIGHT_URL: the service's address (default http://127.0.0.1:3000, where `serve` listens by default). */
  url: string;
  /** CALLWRIGHT_API_KEY; null when unset. */
  apiKey: string | null;
}

export function loadTestRunnerConfig(env: Environment = process.env): TestRunnerConfig {
  return {
    url: readPublicUrl(env, 'CALLWRIGHT_URL', 'http://127.0.0.1:3000'),
    apiKey: readValue(env, 'CALLWRIGHT_API_KEY') ?? null,
  };
}

function readQuietHours(env: Environment): QuietHours | null {
  const raw = readValue(env, 'CALLWRIGHT_QUIET_HOURS');
  if (raw === undefined) return null;
  const match = /^(\d{2}:\d{2})-(\d{2}:\d{2})$/.exec(raw.trim());
  // Calls may start from the end of the quiet hours to their start.
  const window = match ? { start: match[2] as string, end: match[1] as string } : null;
  if (!window || callingWindowProblem(window))
    throw new ConfigError(
      'CALLWRIGHT_QUIET_HOURS',
      `must look like 21:00-08:00 (local HH:MM-HH:MM), got "${raw}"`,
    );
  const timeZone = readValue(env, 'CALLWRIGHT_QUIET_HOURS_TIME_ZONE') ?? 'UTC';
  if (!isTimeZone(timeZone))
    throw new ConfigError('CALLWRIGHT_QUIET_HOURS_TIME_ZONE', `must be an IANA time zone, got "${timeZone}"`);
  return { window: callingWindowOf(window), timeZone };
}
