import { type Logger, pino } from 'pino';
import type { LogLevel } from './config.js';

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
