import { readFileSync } from 'node:fs';

/**
 * A script that never speaks and only listens, for tests of telephony and call lifecycles where
 * the agent's words do not matter. (An agent with neither a script nor a first message is refused:
 * it could never speak. A script is the explicit way to ask for one that does not.)
 */
export const listenOnlyScriptPath = new URL('../fixtures/listen-only-script.json', import.meta.url).pathname;
export const listenOnlyScript: unknown = JSON.parse(readFileSync(listenOnlyScriptPath, 'utf8'));
