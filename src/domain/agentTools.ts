import { checkObjectSchema } from './jsonSchema.js';
import { isObject, onlyKnownFields, refuse, wholeNumber } from './settingsParsing.js';
import { checkToolRequestSettings, type ToolRequestSettings } from './toolRequests.js';
import {
  checkTransferExtras,
  defaultTransferExtras,
  type TransferExtras,
  transferExtraFields,
} from './transferSettings.js';

/**
 * The tools an llm agent may call mid-call (`settings.tools`): functions on the customer's own
 * server. callwright POSTs `{call_id, tool, arguments, variables}` to the tool's URL, signed like a
 * webhook, and hands the JSON answer back to the model.
 *
 * ```json
 * { "tools": [{
 *     "name": "lookup_order",
 *     "description": "Looks up an order by its number: status and delivery date.",
 *     "parameters": { "type": "object",
 *                     "properties": { "order_id": { "type": "string" } },
 *                     "required": ["order_id"] },
 *     "url": "https://shop.example.com/callwright/lookup-order",
 *     "timeout_ms": 5000,
 *     "say_while_waiting": "One moment, I'm looking that up.",
 *     "filler": { "after_ms": 1500, "text": "Still checking, bear with me." } }] }
 * ```
 */

/** Names the built-in tools use; a declared tool may not take one. */
export const builtInToolNames = [
  'end_call',
  'send_dtmf',
  'transfer_call',
  'leave_voicemail',
  'add_to_do_not_call',
  'schedule_callback',
] as const;

export const agentToolLimits = {
  toolsMax: 16,
  descriptionMaxChars: 1_000,
  spokenTextMaxChars: 300,
  parametersMaxBytes: 8_192,
  urlMaxChars: 2_048,
  timeoutMinMs: 100,
  timeoutMaxMs: 30_000,
  defaultTimeoutMs: 5_000,
  fillerAfterMinMs: 200,
  defaultDelayedAfterMs: 2_000,
} as const;

export interface AgentTool extends ToolRequestSettings {
  name: string;
  description: string;
  /** A JSON Schema of type object: what the model must pass (checked before the request). */
  parameters: Record<string, unknown>;
  url: string;
  timeoutMs: number;
  /** Said as soon as the tool is called, before its answer is awaited. */
  sayWhileWaiting: string | null;
  /** Said once if the answer takes longer than `afterMs`. */
  filler: { afterMs: number; text: string } | null;
  /** Said when the tool fails or times out (the model is told the error, and that this was said). */
  failedMessage: string | null;
}

const toolNamePattern = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

function spokenText(where: string, value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || value.trim() === '' || value.length > agentToolLimits.spokenTextMaxChars)
    refuse(`${where} must be a text of 1 to ${agentToolLimits.spokenTextMaxChars} characters`);
  return value;
}

function toolUrl(where: string, value: unknown): string {
  if (typeof value !== 'string' || value.length > agentToolLimits.urlMaxChars)
    refuse(`${where} must be an http(s) URL of at most ${agentToolLimits.urlMaxChars} characters`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    refuse(`${where} is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') refuse(`${where} must be an http or https URL`);
  if (url.username || url.password)
    refuse(`${where} must not carry credentials: requests are signed with the account's webhook secret`);
  return url.href;
}

function parseTool(where: string, raw: unknown): AgentTool {
  if (!isObject(raw)) refuse(`${where} must be an object`);
  onlyKnownFields(where, raw, [
    'name',
    'description',
    'parameters',
    'url',
    'timeout_ms',
    'say_while_waiting',
    'filler',
    'messages',
    'method',
    'query',
    'headers',
    'auth',
    'response_variables',
  ]);
  const { name, description, timeout_ms: timeoutMs, filler } = raw;
  if (typeof name !== 'string' || !toolNamePattern.test(name))
    refuse(`${where}.name must be 1 to 64 letters, digits, _ or -, starting with a letter`);
  if ((builtInToolNames as readonly string[]).includes(name))
    refuse(`${where}.name: ${name} is a built-in tool (${builtInToolNames.join(', ')})`);
  if (
    typeof description !== 'string' ||
    description.trim() === '' ||
    description.length > agentToolLimits.descriptionMaxChars
  )
    refuse(`${where}.description must be a text of 1 to ${agentToolLimits.descriptionMaxChars} characters`);
  const { timeoutMinMs, timeoutMaxMs, defaultTimeoutMs, fillerAfterMinMs } = agentToolLimits;
  const timeout = wholeNumber(`${where}.timeout_ms`, timeoutMs, timeoutMinMs, timeoutMaxMs, defaultTimeoutMs);
  let parsedFiller: AgentTool['filler'] = null;
  if (filler !== undefined && filler !== null) {
    if (!isObject(filler)) refuse(`${where}.filler must be an object {after_ms, text}`);
    onlyKnownFields(`${where}.filler`, filler, ['after_ms', 'text']);
    if (filler.after_ms === undefined) refuse(`${where}.filler.after_ms is required`);
    const afterMs = wholeNumber(
      `${where}.filler.after_ms`,
      filler.after_ms,
      fillerAfterMinMs,
      timeoutMaxMs,
      0,
    );
    const text = spokenText(`${where}.filler.text`, filler.text);
    if (text === null) refuse(`${where}.filler.text is required`);
    parsedFiller = { afterMs, text };
  }
  const messages = parseMessages(`${where}.messages`, raw.messages, timeout);
  if (messages && (raw.say_while_waiting !== undefined || filler !== undefined))
    refuse(`${where}.messages replaces say_while_waiting and filler: give one or the other`);
  return {
    name,
    description,
    parameters:
      raw.parameters === undefined
        ? { type: 'object', properties: {}, additionalProperties: false }
        : checkObjectSchema(`${where}.parameters`, raw.parameters, agentToolLimits.parametersMaxBytes),
    url: toolUrl(`${where}.url`, raw.url),
    timeoutMs: timeout,
    sayWhileWaiting: messages
      ? messages.start
      : spokenText(`${where}.say_while_waiting`, raw.say_while_waiting),
    filler: messages ? messages.delayed : parsedFiller,
    failedMessage: messages?.failed ?? null,
    ...checkToolRequestSettings(where, raw),
  };
}

/**
 * `messages: {start, delayed_after_ms, delayed, failed}`: what the agent says when the tool is
 * called, when it is still pending after `delayed_after_ms` (before its timeout, or it could never
 * be heard), and when it failed.
 */
function parseMessages(
  where: string,
  raw: unknown,
  timeoutMs: number,
): { start: string | null; delayed: AgentTool['filler']; failed: string | null } | null {
  if (raw === undefined || raw === null) return null;
  if (!isObject(raw)) refuse(`${where} must be an object {start, delayed_after_ms, delayed, failed}`);
  onlyKnownFields(where, raw, ['start', 'delayed_after_ms', 'delayed', 'failed']);
  const delayedText = spokenText(`${where}.delayed`, raw.delayed);
  if (raw.delayed_after_ms !== undefined && delayedText === null)
    refuse(`${where}.delayed_after_ms needs ${where}.delayed, the text to say`);
  const { fillerAfterMinMs, defaultDelayedAfterMs } = agentToolLimits;
  const afterMs = wholeNumber(
    `${where}.delayed_after_ms`,
    raw.delayed_after_ms,
    fillerAfterMinMs,
    Math.max(fillerAfterMinMs, timeoutMs - 1),
    Math.min(defaultDelayedAfterMs, timeoutMs - 1),
  );
  if (delayedText !== null && afterMs >= timeoutMs)
    refuse(`${where}.delayed_after_ms must be less than the tool's timeout_ms (${timeoutMs})`);
  return {
    start: spokenText(`${where}.start`, raw.start),
    delayed: delayedText === null ? null : { afterMs, text: delayedText },
    failed: spokenText(`${where}.failed`, raw.failed),
  };
}

/** Where `transfer_call` may hand the call: a name the model picks → an E.164 number or a SIP URI. */
export type TransferTargets = Record<string, string>;

export const transferLimits = { targetsMax: 10 } as const;

/** How the agent's transfers go (settings.transfer besides its targets). */
export interface TransferOptions extends TransferExtras {
  /** Warm: callwright dials the target, the agent briefs the person, then the callee joins. */
  warm: boolean;
  /** Said to the person before the callee joins (a template); the model's own summary wins. */
  whisper: string | null;
  /** When the line refuses REFER, callwright dials an E.164 target itself and bridges the legs. */
  bridgeWhenRefused: boolean;
}

export const defaultTransferOptions: TransferOptions = {
  ...defaultTransferExtras,
  warm: false,
  whisper: null,
  bridgeWhenRefused: true,
};

/** Checks the options of `settings.transfer` (`warm`, `whisper`, `bridge_when_refused`). */
export function checkTransferOptions(raw: unknown): TransferOptions {
  if (raw === undefined) return defaultTransferOptions;
  checkTransferTargets(raw);
  const { warm, whisper, bridge_when_refused: bridge } = raw as Record<string, unknown>;
  if (warm !== undefined && typeof warm !== 'boolean') refuse('settings.transfer.warm must be true or false');
  if (bridge !== undefined && typeof bridge !== 'boolean')
    refuse('settings.transfer.bridge_when_refused must be true or false');
  if (
    whisper !== undefined &&
    (typeof whisper !== 'string' || whisper.trim() === '' || whisper.length > 1_000)
  )
    refuse('settings.transfer.whisper must be a text of 1 to 1000 characters');
  return {
    ...checkTransferExtras(raw as Record<string, unknown>),
    warm: warm === true,
    whisper: typeof whisper === 'string' ? whisper : null,
    bridgeWhenRefused: bridge !== false,
  };
}

/** Checks `settings.transfer` (`{"targets": {"human": "+15550100001"}}`); an empty map without it. */
export function checkTransferTargets(raw: unknown): TransferTargets {
  if (raw === undefined) return {};
  if (!isObject(raw)) refuse('settings.transfer must be an object {"targets": {...}}');
  onlyKnownFields('settings.transfer', raw, [
    'targets',
    'warm',
    'whisper',
    'bridge_when_refused',
    ...transferExtraFields,
  ]);
  const { targets } = raw;
  if (
    !isObject(targets) ||
    Object.keys(targets).length === 0 ||
    Object.keys(targets).length > transferLimits.targetsMax
  )
    refuse(
      `settings.transfer.targets must map 1 to ${transferLimits.targetsMax} names to numbers or SIP URIs`,
    );
  for (const [name, destination] of Object.entries(targets)) {
    if (!/^[a-z][a-z0-9_]{0,31}$/.test(name))
      refuse(
        `settings.transfer.targets: "${name.slice(0, 40)}" must be 1 to 32 lower-case letters, digits or _`,
      );
    if (
      typeof destination !== 'string' ||
      !(/^\+[1-9][0-9]{6,14}$/.test(destination) || /^sips?:[^\s<>@]+@[^\s<>;]+$/.test(destination))
    )
      refuse(`settings.transfer.targets.${name} must be an E.164 number or a sip:/sips: URI with a user`);
  }
  return targets as TransferTargets;
}

/** How often one phone-menu prompt may be heard before the call ends `ivr_loop`; 0: never. */
export const defaultIvrMaxPromptRepeats = 3;

/** Checks `settings.ivr` (`{"max_prompt_repeats": 3}`); the default without it. */
export function checkIvrSettings(raw: unknown): { maxPromptRepeats: number } {
  if (raw === undefined) return { maxPromptRepeats: defaultIvrMaxPromptRepeats };
  if (!isObject(raw)) refuse('settings.ivr must be an object {"max_prompt_repeats": N}');
  onlyKnownFields('settings.ivr', raw, ['max_prompt_repeats']);
  const repeats = raw.max_prompt_repeats ?? defaultIvrMaxPromptRepeats;
  if (!Number.isInteger(repeats) || (repeats !== 0 && ((repeats as number) < 2 || (repeats as number) > 20)))
    refuse('settings.ivr.max_prompt_repeats must be 0 (off) or a whole number from 2 to 20');
  return { maxPromptRepeats: repeats as number };
}

/** Checks `settings.tools`; throws a 400 naming the first field that does not fit. */
export function checkAgentTools(raw: unknown, brain?: 'script' | 'llm'): AgentTool[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw) || raw.length > agentToolLimits.toolsMax)
    refuse(`settings.tools must be a list of at most ${agentToolLimits.toolsMax} tools`);
  if (raw.length > 0 && brain === 'script')
    refuse('settings.tools are called by a language model: they need the llm brain');
  const tools = raw.map((entry, index) => parseTool(`settings.tools[${index}]`, entry));
  const names = new Set<string>();
  for (const tool of tools) {
    if (names.has(tool.name)) refuse(`settings.tools: ${tool.name} is declared twice`);
    names.add(tool.name);
  }
  return tools;
}
