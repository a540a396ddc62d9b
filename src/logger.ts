import { type Logger, pino } from 'pino';
import type { LogFormatSetting, LogLevel } from './config.js';

export type { Logger };

/**
 * The service's logger. It is created once in main and passed down; nothing imports a global.
 * Secrets never reach it by construction (requests are logged field by field), and these paths are
 * censored as a second line of defence.
 */
export function createLogger(level: LogLevel, destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    base: { service: 'callwright' },
    redact: {
      paths: [
        'key',
        'apiKey',
        'password',
        'secret',
        '*.key',
        '*.apiKey',
        '*.password',
        '*.secret',
        'headers["x-api-key"]',
        '*.headers["x-api-key"]',
        'headers.authorization',
        '*.headers.authorization',
        'transcript',
        '*.transcript',
      ],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}

const levelNames: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO ',
  40: 'WARN ',
  50: 'ERROR',
  60: 'FATAL',
};

/** One field as a person reads it: plain words bare, anything else as JSON. */
function fieldText(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  if (value && typeof value === 'object' && 'message' in value && 'type' in value) {
    const error = value as { type: string; message: string };
    return JSON.stringify(`${error.type}: ${error.message}`);
  }
  return JSON.stringify(value);
}

/**
 * A log line for a person at a terminal: `14:03:07.512 INFO  [calls] call worker ready sip=…`.
 * It formats the JSON line pino wrote (after redaction), so what is hidden stays hidden.
 */
export function prettyLogLine(jsonLine: string): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(jsonLine) as Record<string, unknown>;
  } catch {
    return jsonLine;
  }
  const {
    level,
    time,
    msg,
    component,
    service: _service,
    pid: _pid,
    hostname: _hostname,
    ...fields
  } = record;
  const clock = typeof time === 'number' ? new Date(time).toISOString().slice(11, 23) : '';
  const where = typeof component === 'string' ? ` [${component}]` : '';
  const extra = Object.entries(fields)
    .map(([key, value]) => `${key}=${fieldText(value)}`)
    .join(' ');
  return `${clock} ${levelNames[level as number] ?? String(level)}${where} ${String(msg ?? '')}${extra ? ` ${extra}` : ''}\n`;
}

/** A pino destination writing `prettyLogLine`s to `out` (standard output by default). */
export function prettyDestination(
  out: { write(text: string): unknown } = process.stdout,
): pino.DestinationStream {
  return {
    write(line: string) {
      out.write(prettyLogLine(line));
    },
  };
}

/** `auto` resolved for where the logs go: pretty on a terminal, JSON lines otherwise. */
export function logFormatFor(setting: LogFormatSetting, toTerminal: boolean): 'pretty' | 'json' {
  return setting === 'auto' ? (toTerminal ? 'pretty' : 'json') : setting;
}
