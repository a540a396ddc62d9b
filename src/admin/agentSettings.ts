import { AppError } from '../domain/errors.js';
import {
  type AgentBrain,
  type AgentRecord,
  type AgentVariable,
  type ExtractionField,
  extractionFieldTypes,
  type NewAgent,
} from '../domain/records.js';
import { redactToolSecrets } from '../domain/toolRequests.js';
import type { SecretBox } from '../secrets/secretBox.js';
import type { Store } from '../store/types.js';
import {
  agentLimits,
  checkSettingsAndScript,
  formatVariableDeclaration,
  parseVariableDeclaration,
} from './agents.js';
import { sealToolSecrets } from './toolSecrets.js';

/** Every editable field of an agent, as the dashboard's agent form sends them. */
export type AgentFields = Omit<NewAgent, 'accountId' | 'active'>;

export interface AgentFormText {
  name: string;
  prompt: string;
  firstMessage: string;
  /** One `NAME[:TYPE][!][=DEFAULT]` per line (parseVariableDeclaration). */
  variables: string;
  /** One `name:type:description` per line. */
  extraction: string;
  brain: string;
  /** JSON, or empty for none. */
  script: string;
  /** A JSON object. */
  settings: string;
  maxDurationS: string;
  silenceTimeoutS: string;
}

function lines(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line.length > 0);
}

function parseJson(label: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new AppError('validation_error', `${label} is not valid JSON`);
  }
}

function seconds(label: string, text: string): number {
  if (!/^[0-9]{1,5}$/.test(text.trim()) || Number(text) < 1 || Number(text) > 14_400) {
    throw new AppError('validation_error', `${label} must be a whole number of seconds from 1 to 14400`);
  }
  return Number(text);
}

function parseExtraction(text: string): ExtractionField[] {
  const fields: ExtractionField[] = [];
  for (const line of lines(text)) {
    const [name = '', type = 'string', ...rest] = line.split(':');
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(name.trim())) {
      throw new AppError(
        'validation_error',
        `extraction field "${name.slice(0, 40)}" needs a name of letters, digits, _`,
      );
    }
    if (!(extractionFieldTypes as readonly string[]).includes(type.trim())) {
      throw new AppError(
        'validation_error',
        `extraction field ${name} has type "${type.slice(0, 20)}": use ${extractionFieldTypes.join(', ')}`,
      );
    }
    fields.push({
      name: name.trim(),
      type: type.trim() as ExtractionField['type'],
      description: rest.join(':').trim(),
    });
  }
  if (new Set(fields.map((entry) => entry.name)).size !== fields.length)
    throw new AppError('validation_error', 'an extraction field is declared twice');
  return fields;
}

/**
 * Validates the agent form; the same limits as `createAgent`, plus brain, script and settings. The
 * tools' new secrets are sealed with `secretBox`; `{"sealed": true}` keeps those of `previous`.
 */
export function parseAgentForm(
  form: AgentFormText,
  secrets: { secretBox?: SecretBox | null; previous?: Record<string, unknown> } = {},
): AgentFields {
  const name = form.name.trim();
  if (name.length === 0 || name.length > agentLimits.nameMaxChars)
    throw new AppError('validation_error', `the name must be 1 to ${agentLimits.nameMaxChars} characters`);
  if (form.prompt.trim().length === 0 || form.prompt.length > agentLimits.promptMaxChars)
    throw new AppError(
      'validation_error',
      `the prompt must be 1 to ${agentLimits.promptMaxChars} characters`,
    );
  if (form.firstMessage.length > agentLimits.firstMessageMaxChars)
    throw new AppError(
      'validation_error',
      `the first message is at most ${agentLimits.firstMessageMaxChars} characters`,
    );
  const variables: AgentVariable[] = lines(form.variables).map(parseVariableDeclaration);
  if (variables.length > agentLimits.variablesMax)
    throw new AppError('validation_error', `an agent declares at most ${agentLimits.variablesMax} variables`);
  if (new Set(variables.map((entry) => entry.name)).size !== variables.length)
    throw new AppError('validation_error', 'a variable is declared twice');
  for (const variable of variables) {
    if ((variable.default ?? '').length > agentLimits.variableDefaultMaxChars)
      throw new AppError('validation_error', `the default of ${variable.name} is too long`);
  }
  if (form.brain !== 'script' && form.brain !== 'llm')
    throw new AppError('validation_error', 'the brain is "script" or "llm"');
  const brain: AgentBrain = form.brain;
  const script = form.script.trim() === '' ? null : parseJson('the script', form.script);
  const parsedSettings = form.settings.trim() === '' ? {} : parseJson('the settings', form.settings);
  const settings =
    parsedSettings !== null && typeof parsedSettings === 'object' && !Array.isArray(parsedSettings)
      ? sealToolSecrets(
          parsedSettings as Record<string, unknown>,
          secrets.previous,
          secrets.secretBox ?? null,
        )
      : parsedSettings;
  checkSettingsAndScript(settings, brain, brain === 'script' ? script : null);
  return {
    name,
    prompt: form.prompt,
    firstMessage: form.firstMessage,
    variables,
    extraction: parseExtraction(form.extraction),
    brain,
    script: brain === 'script' ? script : null,
    settings: settings as Record<string, unknown>,
    maxDurationS: seconds('max duration', form.maxDurationS),
    silenceTimeoutS: seconds('silence timeout', form.silenceTimeoutS),
  };
}

export async function createAgentFromForm(
  store: Store,
  accountId: string,
  form: AgentFormText,
  secretBox: SecretBox | null = null,
): Promise<AgentRecord> {
  return store.agents.create({ accountId, active: true, ...parseAgentForm(form, { secretBox }) });
}

export async function updateAgentFromForm(
  store: Store,
  accountId: string,
  agentId: string,
  form: AgentFormText,
  secretBox: SecretBox | null = null,
): Promise<AgentRecord> {
  // The form has no place for a variable's description: a variable kept by name keeps its own.
  const current = await store.agents.get(accountId, agentId);
  // New secrets sealed; {"sealed": true} keeps the stored agent's.
  const fields = parseAgentForm(form, { secretBox, ...(current ? { previous: current.settings } : {}) });
  const descriptions = new Map(current?.variables.map((entry) => [entry.name, entry.description]));
  fields.variables = fields.variables.map((entry) => ({
    ...entry,
    description: descriptions.get(entry.name) ?? entry.description,
  }));
  const updated = current ? await store.agents.update(accountId, agentId, fields) : null;
  if (!updated) throw new AppError('not_found', `no agent ${agentId.slice(0, 64)} in this account`);
  return updated;
}

/**
 * The form as sent, to show again with its error: each secret typed into the tools' settings is
 * blanked (`{"secret": ""}`, `"token": ""`), so a refused save never sends a secret back to the page.
 */
export function formWithoutTypedSecrets(form: AgentFormText): AgentFormText {
  let settings: unknown;
  try {
    settings = JSON.parse(form.settings);
  } catch {
    // Not JSON: it cannot be read as secrets either, but neither can it be shown safely.
    return /"(secret|token|password|value)"/.test(form.settings) ? { ...form, settings: '' } : form;
  }
  const tools = (settings as { tools?: unknown } | null)?.tools;
  if (!Array.isArray(tools)) return form;
  for (const tool of tools as Array<Record<string, unknown> | null>) {
    const headers = tool?.headers as Record<string, unknown> | undefined;
    for (const [name, value] of Object.entries(headers ?? {}))
      if (value !== null && typeof value === 'object' && 'secret' in value && headers)
        headers[name] = { secret: '' };
    const auth = tool?.auth as Record<string, unknown> | undefined;
    for (const field of ['token', 'password', 'value'])
      if (auth && typeof auth[field] === 'string') auth[field] = '';
  }
  return { ...form, settings: JSON.stringify(settings, null, 2) };
}

/** The form's text for an existing agent (the inverse of parseAgentForm). */
export function agentFormText(agent: AgentRecord): AgentFormText {
  return {
    name: agent.name,
    prompt: agent.prompt,
    firstMessage: agent.firstMessage,
    variables: agent.variables.map(formatVariableDeclaration).join('\n'),
    extraction: agent.extraction
      .map((entry) => `${entry.name}:${entry.type}:${entry.description}`)
      .join('\n'),
    brain: agent.brain,
    script: agent.script === null || agent.script === undefined ? '' : JSON.stringify(agent.script, null, 2),
    // The tools' secrets are write-only: shown (and sent back) as {"sealed": true}.
    settings: JSON.stringify(redactToolSecrets(agent.settings), null, 2),
    maxDurationS: String(agent.maxDurationS),
    silenceTimeoutS: String(agent.silenceTimeoutS),
  };
}
