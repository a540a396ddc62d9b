import type { Config } from './config.js';
import type { Store } from './store/types.js';

/** Which first steps the store shows done, in any account: the banner names only the others. */
export interface SetupProgress {
  apiKey: boolean;
  dashboardUser: boolean;
  agent: boolean;
  callerId: boolean;
  call: boolean;
}

/** Reads the first steps' state from the store; a store that cannot say counts as nothing done. */
export async function setupProgress(store: Store): Promise<SetupProgress> {
  try {
    const accounts = await store.accounts.list();
    const anyIn = async (list: (accountId: string) => Promise<unknown[]>) => {
      for (const account of accounts) if ((await list(account.id)).length > 0) return true;
      return false;
    };
    const callCounts = await store.calls.countByStatus();
    return {
      apiKey: await anyIn(async (id) =>
        (await store.apiKeys.list(id)).filter((key) => key.revokedAt === null),
      ),
      dashboardUser: (await store.users.count()) > 0,
      agent: await anyIn((id) => store.agents.list(id)),
      callerId: await anyIn((id) => store.numbers.list(id)),
      call: Object.values(callCounts).some((count) => count > 0),
    };
  } catch {
    return { apiKey: false, dashboardUser: false, agent: false, callerId: false, call: false };
  }
}

/** The next steps still to do, one line each (none when everything is done). */
function nextSteps(progress: SetupProgress): string[] {
  const steps: string[] = [];
  if (!progress.apiKey)
    steps.push('  npx callwright keys create --name first-key     an API key (shown once)');
  if (!progress.dashboardUser)
    steps.push(
      '  npx callwright users setup-token                 a token to create the first dashboard user',
    );
  if (!progress.agent)
    steps.push(
      '  npx callwright agents create --name … --prompt …  an agent ("Place a call" in README.md has one)',
    );
  if (!progress.callerId)
    steps.push('  npx callwright numbers add +15550009999          a caller ID on the sandbox carrier');
  if (!progress.call) steps.push('  then follow "Place a call" in README.md');
  return steps;
}

/**
 * What `serve` prints on a terminal once it listens: where the dashboard and the API are, where
 * the data lives, and the first commands to run. Plain text for a person; the log has the rest.
 */
export function startupBanner(options: {
  config: Config;
  role: 'all' | 'api' | 'worker';
  sipAddress: string | null;
  /** What is already set up (setupProgress); the banner does not repeat those steps. */
  progress: SetupProgress;
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
  const steps = nextSteps(options.progress);
  if (steps.length > 0) lines.push('', 'Next, in another terminal in this folder:', ...steps);
  else
    lines.push(
      '',
      'Set up: API keys, agents, caller IDs and calls exist; `npx callwright calls list` or the dashboard shows them.',
    );
  lines.push('Ctrl-C here stops the service.', '');
  return lines.join('\n');
}
