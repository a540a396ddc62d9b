import { defaultFitsType } from '../domain/agentVariables.js';
import { checkAgentVoiceSettings } from '../domain/agentVoiceSettings.js';
import { AppError } from '../domain/errors.js';
import { variableNamePattern } from '../domain/outboundCallRequest.js';
import {
  type AgentBrain,
  type AgentRecord,
  type AgentVariable,
  type AgentVariableType,
  agentVariableTypes,
  type ExtractionField,
  extractionFieldTypes,
  type NewAgent,
} from '../domain/records.js';
import { redactToolSecrets } from '../domain/toolRequests.js';
import type { SecretBox } from '../secrets/secretBox.js';
import type { Store } from '../store/types.js';
import { parseDialogScript, scriptTransferTargets } from '../voice/brains/dialogScript.js';
import { checkWebhookUrl } from '../webhooks/urlGuard.js';
import { sealToolSecrets } from './toolSecrets.js';

export const agentLimits = {
  nameMaxChars: 200,
  promptMaxChars: 20_000,
  firstMessageMaxChars: 2_000,
  variablesMax: 50,
  variableDefaultMaxChars: 1_000,
} as const;

export interface AgentInput {
  name: string;
  prompt: string;
  firstMessage?: string;
  /** `NAME` or `NAME=DEFAULT`, as the command line takes them. */
  variables?: AgentVariable[];
  active?: boolean;
  maxDurationS?: number;
  silenceTimeoutS?: number;
  brain?: AgentBrain;
  /** The dialog graph of a script brain (see src/voice/brains/dialogScript.ts). */
  script?: unknown;
  extraction?: ExtractionField[];
  /** Voice, STT, LLM and voicemail settings (see src/domain/agentVoiceSettings.ts). */
  settings?: Record<string, unknown>;
}

/** Parses `NAME:TYPE:DESCRIPTION` (TYPE one of string, number, boolean, date). */
export function parseExtractionField(text: string): ExtractionField {
  const [name = '', type = '', ...description] = text.split(':');
  if (!variableNamePattern.test(name))
    throw new AppError('validation_error', `"${name.slice(0, 70)}" is not a valid field name`);
  if (!(extractionFieldTypes as readonly string[]).includes(type)) {
    throw new AppError(
      'validation_error',
      `field ${name}: type must be one of ${extractionFieldTypes.join(', ')}`,
    );
  }
  return { name, type: type as ExtractionField['type'], description: description.join(':').trim() };
}

/**
 * An agent's settings and script checked together (a 400 naming the first field that does not fit):
 * the script's shape, and every `transfer` it names one of `settings.transfer.targets`.
 */
export function checkSettingsAndScript(settings: unknown, brain: AgentBrain, script: unknown): void {
  const checked = checkAgentVoiceSettings(settings ?? {}, brain);
  if (script === null || script === undefined) return;
  for (const target of scriptTransferTargets(parseDialogScript(script))) {
    if (!Object.hasOwn(checked.transferTargets, target))
      throw new AppError(
        'validation_error',
        `script: transfer to "${target}", which is not one of settings.transfer.targets`,
      );
  }
}

function checkBrain(input: AgentInput): { brain: AgentBrain; script: unknown } {
  const brain = input.brain ?? 'script';
  if (brain !== 'script' && brain !== 'llm')
    throw new AppError('validation_error', 'brain must be "script" or "llm"');
  if (brain === 'llm' && input.script !== undefined && input.script !== null) {
    throw new AppError('validation_error', 'an llm agent has no script');
  }
  const script = input.script === undefined || input.script === null ? null : parseDialogScript(input.script);
  // Without a script, a script agent says its first message and then only listens: with no first
  // message either, every call would be silence until the silence timeout.
  if (brain === 'script' && script === null && (input.firstMessage ?? '').trim() === '') {
    throw new AppError(
      'validation_error',
      'this agent would never speak: give it a script (--script FILE), a first message (--first-message), or an LLM (--brain llm)',
    );
  }
  return { brain, script };
}

/**
 * Parses a declaration as the command line and the dashboard take it: `NAME[:TYPE][!][=DEFAULT]`
 * (TYPE one of any, string, number, boolean; `!` marks it required), e.g. `customer_name!`,
 * `party_size:number=2`, `appointment_day=Tuesday`.
 */
export function parseVariableDeclaration(text: string): AgentVariable {
  const separator = text.indexOf('=');
  let head = separator === -1 ? text : text.slice(0, separator);
  const defaultValue = separator === -1 ? null : text.slice(separator + 1);
  const required = head.endsWith('!');
  if (required) head = head.slice(0, -1);
  const [name = '', type = 'any', ...extra] = head.split(':');
  if (!variableNamePattern.test(name)) {
    throw new AppError(
      'validation_error',
      `"${name.slice(0, 70)}" is not a valid variable name (letters, digits, _)`,
    );
  }
  if (extra.length > 0 || !(agentVariableTypes as readonly string[]).includes(type)) {
    throw new AppError(
      'validation_error',
      `variable ${name}: the type must be one of ${agentVariableTypes.join(', ')} (NAME:TYPE!=DEFAULT)`,
    );
  }
  const variableType = type as AgentVariableType;
  if (defaultValue !== null && !defaultFitsType(defaultValue, variableType)) {
    throw new AppError(
      'validation_error',
      `variable ${name}: the default "${defaultValue.slice(0, 70)}" is not a ${type}`,
    );
  }
  return { name, default: defaultValue, description: '', required, type: variableType };
}

/** The inverse of parseVariableDeclaration: `NAME[:TYPE][!][=DEFAULT]` (the description is not in it). */
export function formatVariableDeclaration(variable: AgentVariable): string {
  const type = variable.type === 'any' ? '' : `:${variable.type}`;
  const required = variable.required ? '!' : '';
  const fallback = variable.default === null ? '' : `=${variable.default}`;
  return `${variable.name}${type}${required}${fallback}`;
}

function checkLength(field: string, value: string, maxChars: number, required: boolean): void {
  if (required && value.trim().length === 0)
    throw new AppError('validation_error', `${field} must not be empty`);
  if (value.length > maxChars)
    throw new AppError('validation_error', `${field} must be at most ${maxChars} characters`);
}

/** Validates and stores a new agent with the embedded defaults (script brain, 600 s, 20 s). */
/**
 * The agent's tool URLs (settings.tools[].url) vetted as at call time, when the agent is saved: a
 * tool on a private, loopback or reserved address is refused now (unless the service allows
 * private addresses, CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE), not discovered on a live call.
 */
export function checkToolUrls(settings: unknown, options: { allowPrivate: boolean }): void {
  const tools = (settings as { tools?: unknown } | null | undefined)?.tools;
  if (!Array.isArray(tools)) return;
  tools.forEach((tool, index) => {
    const url = (tool as { url?: unknown } | null)?.url;
    if (typeof url !== 'string') return;
    try {
      checkWebhookUrl(url, options);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      throw new AppError(
        'validation_error',
        `settings.tools[${index}].url: ${error.message.replace(/^webhook URL /, '')}`,
      );
    }
  });
}

/** How an agent is saved: the box that seals its tools' secrets (none: an agent with secrets is refused). */
export interface AgentSaveOptions {
  secretBox?: SecretBox | null;
}

export async function createAgent(
  store: Store,
  accountId: string,
  input: AgentInput,
  options: AgentSaveOptions = {},
): Promise<AgentRecord> {
  const settings = sealToolSecrets(input.settings, undefined, options.secretBox ?? null);
  return store.agents.create({
    accountId,
    active: input.active ?? true,
    ...checkedAgentFields({ ...input, ...(settings ? { settings } : {}) }),
  });
}

/**
 * Changes the fields `patch` gives of an agent (the others stay), checked as a new agent is; the
 * calls already queued keep the agent they read when they are dialled.
 */
export async function updateAgent(
  store: Store,
  accountId: string,
  agentId: string,
  patch: Partial<AgentInput>,
  options: AgentSaveOptions = {},
): Promise<AgentRecord> {
  const current = await store.agents.get(accountId, agentId);
  if (!current) throw new AppError('not_found', `no agent ${agentId.slice(0, 64)} in this account`);
  // New secrets sealed, `{"sealed": true}` kept from the stored agent's tools.
  if (patch.settings !== undefined)
    patch = {
      ...patch,
      settings: sealToolSecrets(patch.settings, current.settings, options.secretBox ?? null),
    };
  const merged: AgentInput = {
    name: current.name,
    prompt: current.prompt,
    firstMessage: current.firstMessage,
    variables: current.variables,
    maxDurationS: current.maxDurationS,
    silenceTimeoutS: current.silenceTimeoutS,
    brain: current.brain,
    script: current.script,
    extraction: current.extraction,
    settings: current.settings,
    ...Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined)),
  };
  // A brain changed to llm drops the script it no longer has (unless one is given).
  if (patch.brain === 'llm' && patch.script === undefined) merged.script = null;
  const updated = await store.agents.update(accountId, agentId, checkedAgentFields(merged));
  if (!updated) throw new AppError('not_found', `no agent ${agentId.slice(0, 64)} in this account`);
  return updated;
}

/** An agent's fields checked (a 400 naming the first that does not fit), with the defaults. */
function checkedAgentFields(input: AgentInput): Omit<NewAgent, 'accountId' | 'active'> {
  checkLength('name', input.name, agentLimits.nameMaxChars, true);
  checkLength('prompt', input.prompt, agentLimits.promptMaxChars, true);
  checkLength('first message', input.firstMessage ?? '', agentLimits.firstMessageMaxChars, false);
  const variables = input.variables ?? [];
  if (variables.length > agentLimits.variablesMax) {
    throw new AppError('validation_error', `an agent declares at most ${agentLimits.variablesMax} variables`);
  }
  const seen = new Set<string>();
  for (const variable of variables) {
    if (seen.has(variable.name))
      throw new AppError('validation_error', `variable ${variable.name} is declared twice`);
    seen.add(variable.name);
    if ((variable.default ?? '').length > agentLimits.variableDefaultMaxChars) {
      throw new AppError('validation_error', `the default of ${variable.name} is too long`);
    }
  }
  for (const [label, seconds] of [
    ['max duration', input.maxDurationS],
    ['silence timeout', input.silenceTimeoutS],
  ] as const) {
    if (seconds !== undefined && (!Number.isInteger(seconds) || seconds < 1 || seconds > 14_400)) {
      throw new AppError('validation_error', `${label} must be a whole number of seconds from 1 to 14400`);
    }
  }
  const { brain, script } = checkBrain(input);
  checkSettingsAndScript(input.settings, brain, script);
  const extraction = input.extraction ?? [];
  if (new Set(extraction.map((field) => field.name)).size !== extraction.length) {
    throw new AppError('validation_error', 'an extraction field is declared twice');
  }
  return {
    name: input.name.trim(),
    prompt: input.prompt,
    firstMessage: input.firstMessage ?? '',
    variables,
    extraction,
    brain,
    script,
    settings: input.settings ?? {},
    maxDurationS: input.maxDurationS ?? 600,
    silenceTimeoutS: input.silenceTimeoutS ?? 20,
  };
}

export async function setAgentActive(
  store: Store,
  accountId: string,
  agentId: string,
  active: boolean,
): Promise<AgentRecord> {
  const agent = await store.agents.setActive(accountId, agentId, active);
  if (!agent) throw new AppError('not_found', `no agent ${agentId} in this account`);
  return agent;
}

export function describeAgent(agent: AgentRecord) {
  return {
    agent_id: agent.id,
    name: agent.name,
    active: agent.active,
    prompt: agent.prompt,
    first_message: agent.firstMessage,
    variables: agent.variables,
    extraction: agent.extraction,
    brain: agent.brain,
    script: agent.script,
    // The tools' secrets are write-only: shown as {"sealed": true}.
    settings: redactToolSecrets(agent.settings),
    max_duration_s: agent.maxDurationS,
    silence_timeout_s: agent.silenceTimeoutS,
    created_at: agent.createdAt,
    updated_at: agent.updatedAt,
  };
}
