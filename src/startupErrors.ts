import { type Config, ConfigError } from './config.js';

interface SystemError {
  code?: string;
  syscall?: string;
  port?: number;
  address?: string;
  path?: string;
  message?: string;
}

/**
 * A start-up failure of the operating system (a port taken, a folder that is a file or not ours),
 * turned into the setting a person changes to fix it. Null when the error is not one of those.
 */
export function startupErrorOf(error: unknown, config: Config): ConfigError | null {
  const failure = error as SystemError | null;
  if (!failure || typeof failure !== 'object' || typeof failure.code !== 'string') return null;
  const { code, port, path } = failure;
  if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
    const why =
      code === 'EADDRINUSE'
        ? 'is already in use by another program (another callwright?)'
        : code === 'EACCES'
          ? 'may not be opened by this user (ports below 1024 need privileges)'
          : 'is not an address of this machine';
    if (port !== undefined && port === config.port && failure.syscall === 'listen')
      return new ConfigError('PORT', `${config.host}:${port} ${why}; set PORT (and HOST) to a free one`);
    if (port !== undefined && port === config.telephony.sipPort)
      return new ConfigError(
        'CALLWRIGHT_SIP_PORT',
        `UDP ${config.telephony.bindAddress}:${port} ${why}; set CALLWRIGHT_SIP_PORT (and CALLWRIGHT_SIP_BIND)`,
      );
    if (port !== undefined && port === config.metrics.port)
      return new ConfigError('CALLWRIGHT_METRICS_PORT', `port ${port} ${why}`);
    if (port !== undefined && port >= config.telephony.rtpPortMin && port <= config.telephony.rtpPortMax)
      return new ConfigError(
        'CALLWRIGHT_RTP_PORTS',
        `media port ${port} ${why}; give callwright a range no other program uses`,
      );
  }
  const inDataDir = typeof path === 'string' && path.startsWith(config.dataDir);
  if (inDataDir && (code === 'ENOTDIR' || code === 'EEXIST'))
    return new ConfigError(
      'CALLWRIGHT_DATA_DIR',
      `${config.dataDir} is not a folder (${path} is in the way); point CALLWRIGHT_DATA_DIR at a folder`,
    );
  if (inDataDir && (code === 'EACCES' || code === 'EPERM' || code === 'EROFS'))
    return new ConfigError(
      'CALLWRIGHT_DATA_DIR',
      `${config.dataDir} cannot be written by this user (${code} on ${path}); point CALLWRIGHT_DATA_DIR at a folder it owns`,
    );
  return null;
}
