import type { Config } from './config.js';

/**
 * What `serve` prints on a terminal once it listens: where the dashboard and the API are, where
 * the data lives, and the first commands to run. Plain text for a person; the log has the rest.
 */
export function startupBanner(options: {
  config: Config;
  role: 'all' | 'api' | 'worker';
  sipAddress: string | null;
}): string {
  const { config, role } = options;
  const base = config.publicUrl.replace(/\/$/, '');
  const rtpCallPorts = Math.floor((config.telephony.rtpPortMax - config.telephony.rtpPortMin + 1) / 2);
  const mediaCalls = Math.floor(rtpCallPorts / 2);
  const lines = [
    '',
    `callwright is running (${role === 'all' ? 'API, dashboard and call worker' : role === 'api' ? 'API and dashboard' : 'call worker'})`,
  ];
  if (role !== 'worker') {
    lines.push(`  Dashboard  ${base}/`);
    lines.push(`  API        ${base}/v1   reference: ${base}/docs, ${base}/v1/openapi.json`);
  }
  if (options.sipAddress)
    lines.push(`  SIP        udp ${options.sipAddress} (the sandbox carrier is built in)`);
  lines.push(
    config.database.url
      ? '  Data       PostgreSQL (DATABASE_URL); recordings in the database'
      : `  Data       ${config.dataDir} (SQLite database, secret key, recordings)`,
  );
  if (mediaCalls < config.telephony.workerMaxCalls && role !== 'api')
    lines.push(
      `  Note       CALLWRIGHT_RTP_PORTS ${config.telephony.rtpPortMin}-${config.telephony.rtpPortMax} carries ${mediaCalls} calls at once, fewer than CALLWRIGHT_WORKER_MAX_CALLS (${config.telephony.workerMaxCalls}): widen the range to hold more`,
    );
  lines.push(
    '',
    'Next, in another terminal in this folder:',
    '  npx callwright keys create --name first-key     an API key (shown once)',
    '  npx callwright users setup-token                 a token to create the first dashboard user',
    '  then follow "Place a call" in README.md; Ctrl-C here stops the service.',
    '',
  );
  return lines.join('\n');
}
