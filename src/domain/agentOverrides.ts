import type { AgentOverrides, AgentRecord } from './records.js';
import { isObject, onlyKnownFields, refuse } from './settingsParsing.js';

/**
 * What a test run may change of an agent for its own calls only (docs/testing.md): the prompt,
 * any part of the settings (another end-of-turn wait, barge-in thresholds, vendor) and a script
 * agent's whole dialog script (a fixed branch tried before it is saved). The stored
 * agent is never touched; the dispatcher merges these over it for the run's calls.
 */

/** `base` with `patch` merged in: objects key by key, anything else (arrays too) replaced. */
export function mergedSettings(
  base: Record<string, unknown>,
  patch: Record<string, unknown>,
): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(patch)) {
    const current = merged[key];
    merged[key] = isObject(current) && isObject(value) ? mergedSettings(current, value) : value;
  }
  return merged;
}

/** The agent a test call runs with. */
export function agentWithOverrides(agent: AgentRecord, overrides: AgentOverrides | null): AgentRecord {
  if (overrides === null) return agent;
  return {
    ...agent,
    ...(overrides.prompt !== undefined ? { prompt: overrides.prompt } : {}),
    ...(overrides.settings !== undefined
      ? { settings: mergedSettings(agent.settings, overrides.settings) }
      : {}),
    ...(overrides.script !== undefined ? { script: overrides.script } : {}),
  };
}

/** Checks the shape of `agent_overrides`; the merged settings are checked like an agent's by the caller. */
export function parseAgentOverrides(raw: unknown): AgentOverrides | null {
  if (raw === undefined || raw === null) return null;
  if (!isObject(raw)) refuse('agent_overrides must be an object');
  onlyKnownFields('agent_overrides', raw, ['prompt', 'settings', 'script']);
  const overrides: AgentOverrides = {};
  if (raw.prompt !== undefined) {
    if (typeof raw.prompt !== 'string' || raw.prompt.length > 20_000)
      refuse('agent_overrides.prompt must be a string of at most 20000 characters');
    overrides.prompt = raw.prompt;
  }
  if (raw.settings !== undefined) {
    if (!isObject(raw.settings)) refuse('agent_overrides.settings must be an object');
    overrides.settings = raw.settings;
  }
  if (raw.script !== undefined) {
    // Its steps are checked with the merged settings (transfer targets) by the caller.
    if (!isObject(raw.script)) refuse('agent_overrides.script must be a dialog script object');
    overrides.script = raw.script;
  }
  return overrides;
}
