import { readFileSync } from 'node:fs';
import {
  type AgentInput,
  checkToolUrls,
  createAgent,
  describeAgent,
  parseExtractionField,
  parseVariableDeclaration,
  setAgentActive,
  updateAgent,
} from '../admin/agents.js';
import { createApiKey, describeApiKey, revokeApiKey } from '../admin/apiKeys.js';
import { addPhoneNumber, describePhoneNumber, removePhoneNumber } from '../admin/numbers.js';
import { addTrunk, describeTrunk, removeTrunk } from '../admin/trunks.js';
import { AppError } from '../domain/errors.js';
import { formatRatePolicy, parseRatePolicy } from '../domain/rateLimit.js';
import type { AccountRecord } from '../domain/records.js';
import { calls } from './callCommands.js';
import { campaigns } from './campaignCommands.js';
import {
  type CommandContext,
  parseOptions,
  print,
  printList,
  printTable,
  requiredOption,
  resolveAccount,
  UsageError,
} from './context.js';
import { credentials } from './credentialCommands.js';
import { doNotCall } from './doNotCallCommands.js';
import { nearestName } from './help.js';
import { callingRules, privacy } from './privacyCommands.js';
import { users } from './userCommands.js';
import { webhookCommandGroups } from './webhookCommands.js';

type Verb = (context: CommandContext, args: string[]) => Promise<void>;

function describeAccount(account: AccountRecord) {
  return {
    account_id: account.id,
    name: account.name,
    default: account.isDefault,
    rate_limit: account.ratePolicy ? formatRatePolicy(account.ratePolicy) : null,
    max_live_calls: account.maxLiveCalls,
    created_at: account.createdAt,
  };
}

const accounts: Record<string, Verb> = {
  async create(context, args) {
    const { values } = parseOptions(args, {
      name: { type: 'string' },
      'rate-limit': { type: 'string' },
      'max-live-calls': { type: 'string' },
    });
    const name = requiredOption(values, 'name').trim();
    if (name.length === 0 || name.length > 200) throw new UsageError('--name must be 1 to 200 characters');
    const rateText = values['rate-limit'] as string | undefined;
    const ratePolicy = rateText === undefined ? null : parseRatePolicy(rateText);
    if (rateText !== undefined && !ratePolicy) throw new UsageError('--rate-limit must look like 100/10s');
    const liveText = values['max-live-calls'] as string | undefined;
    if (liveText !== undefined && !/^[1-9][0-9]{0,4}$/.test(liveText)) {
      throw new UsageError('--max-live-calls must be a whole number from 1 to 99999');
    }
    const account = await context.store.accounts.create({
      name,
      ratePolicy,
      ...(liveText ? { maxLiveCalls: Number(liveText) } : {}),
    });
    print(context, describeAccount(account));
  },
  async list(context, args) {
    parseOptions(args, {});
    print(context, { accounts: (await context.store.accounts.list()).map(describeAccount) });
  },
};

const keys: Record<string, Verb> = {
  async create(context, args) {
    const { values } = parseOptions(args, { name: { type: 'string' } });
    const account = await resolveAccount(context);
    const { record, key } = await createApiKey(context.store, account.id, requiredOption(values, 'name'));
    print(context, { id: record.id, name: record.name, key, created_at: record.createdAt });
    if (!context.json) context.out.stderr('Store this key now: it is shown only once.\n');
  },
  async list(context, args) {
    parseOptions(args, {});
    const account = await resolveAccount(context);
    print(context, { keys: (await context.store.apiKeys.list(account.id)).map(describeApiKey) });
  },
  async revoke(context, args) {
    const { positionals } = parseOptions(args, {}, ['key id']);
    const account = await resolveAccount(context);
    print(context, describeApiKey(await revokeApiKey(context.store, account.id, positionals[0] as string)));
  },
};

function readScriptFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    throw new UsageError(`cannot read the script file ${path}`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(`the script file ${path} is not valid JSON`);
  }
}

/** `--settings`: the settings JSON itself, or `@FILE` to read it from a file. */
function settingsOption(text: string | undefined): Record<string, unknown> {
  if (text === undefined) return {};
  const json = text.startsWith('@') ? readTextFile(text.slice(1), 'settings') : text;
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    throw new UsageError('--settings is not valid JSON (give the JSON, or @FILE)');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new UsageError('--settings must be a JSON object');
  return parsed as Record<string, unknown>;
}

function readTextFile(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    throw new UsageError(`cannot read the ${what} file ${path}`);
  }
}

function agentSettingsFromOptions(
  values: Record<string, unknown>,
  current: Record<string, unknown>,
): Record<string, unknown> {
  const settings =
    values.settings === undefined ? { ...current } : settingsOption(values.settings as string | undefined);
  const part = (name: string) =>
    typeof settings[name] === 'object' && settings[name] !== null
      ? (settings[name] as Record<string, unknown>)
      : {};
  if (typeof values.voice === 'string') settings.tts = { ...part('tts'), voice: values.voice };
  if (typeof values['llm-model'] === 'string') settings.llm = { ...part('llm'), model: values['llm-model'] };
  if (typeof values['voicemail-message'] === 'string') {
    settings.voicemail = { action: 'leave_message', message: values['voicemail-message'] };
  }
  return settings;
}

/** The flags of `agents create` and `agents update`. */
const agentOptionSpec = {
  name: { type: 'string' },
  prompt: { type: 'string' },
  'first-message': { type: 'string' },
  variable: { type: 'string', multiple: true },
  inactive: { type: 'boolean' },
  'max-duration': { type: 'string' },
  'silence-timeout': { type: 'string' },
  brain: { type: 'string' },
  script: { type: 'string' },
  extract: { type: 'string', multiple: true },
  voice: { type: 'string' },
  'llm-model': { type: 'string' },
  'voicemail-message': { type: 'string' },
  settings: { type: 'string' },
} as const;

/** The agent fields the flags give (only those given; `variable` and `extract` replace the lists). */
function agentFieldsFromOptions(values: Record<string, unknown>): Partial<AgentInput> {
  const seconds = (name: 'max-duration' | 'silence-timeout') => {
    const text = values[name];
    if (typeof text !== 'string') return {};
    if (!/^[0-9]{1,6}$/.test(text)) throw new UsageError(`--${name} takes whole seconds`);
    return { [name === 'max-duration' ? 'maxDurationS' : 'silenceTimeoutS']: Number(text) };
  };
  const text = (name: string) => (typeof values[name] === 'string' ? (values[name] as string) : undefined);
  const variables = values.variable as string[] | undefined;
  const extract = values.extract as string[] | undefined;
  return {
    ...(text('name') !== undefined ? { name: text('name') } : {}),
    ...(text('prompt') !== undefined ? { prompt: text('prompt') } : {}),
    ...(text('first-message') !== undefined ? { firstMessage: text('first-message') } : {}),
    ...(variables ? { variables: variables.map(parseVariableDeclaration) } : {}),
    ...seconds('max-duration'),
    ...seconds('silence-timeout'),
    ...(text('brain') !== undefined ? { brain: text('brain') as 'script' | 'llm' } : {}),
    ...(text('script') !== undefined ? { script: readScriptFile(text('script') as string) } : {}),
    ...(extract ? { extraction: extract.map(parseExtractionField) } : {}),
  };
}

/** The key that seals the secrets of the settings' tools; only loaded when there are tools. */
async function secretBoxForTools(context: CommandContext, settings: Record<string, unknown>) {
  return Array.isArray(settings.tools) && settings.tools.length > 0 ? await context.secretBox() : null;
}

/** True when a flag that sets part of the settings is given. */
function givesSettings(values: Record<string, unknown>): boolean {
  return ['settings', 'voice', 'llm-model', 'voicemail-message'].some((name) => values[name] !== undefined);
}

const agents: Record<string, Verb> = {
  async create(context, args) {
    const { values } = parseOptions(args, agentOptionSpec);
    const account = await resolveAccount(context);
    const settings = agentSettingsFromOptions(values, {});
    checkToolUrls(settings, { allowPrivate: context.webhookAllowPrivate === true });
    const agent = await createAgent(
      context.store,
      account.id,
      {
        ...agentFieldsFromOptions(values),
        name: requiredOption(values, 'name'),
        prompt: requiredOption(values, 'prompt'),
        active: values.inactive !== true,
        settings,
      },
      // Only an agent whose tools carry secrets needs the key that seals them.
      { secretBox: await secretBoxForTools(context, settings) },
    );
    print(context, describeAgent(agent));
  },
  /**
   * Changes what the flags give and keeps the rest; `--settings` replaces the settings, `--voice`,
   * `--llm-model` and `--voicemail-message` change their part of them.
   */
  async update(context, args) {
    const { values, positionals } = parseOptions(args, agentOptionSpec, ['agent id']);
    const account = await resolveAccount(context);
    const agentId = positionals[0] as string;
    const current = await context.store.agents.get(account.id, agentId);
    if (!current) throw new AppError('not_found', `no agent ${agentId.slice(0, 64)} in this account`);
    const patch = agentFieldsFromOptions(values);
    if (givesSettings(values)) {
      patch.settings = agentSettingsFromOptions(values, current.settings);
      checkToolUrls(patch.settings, { allowPrivate: context.webhookAllowPrivate === true });
    }
    if (Object.keys(patch).length === 0 && values.inactive === undefined)
      throw new UsageError('nothing to change: give the flags of `agents create` to change');
    let agent = await updateAgent(context.store, account.id, agentId, patch, {
      secretBox: patch.settings ? await secretBoxForTools(context, patch.settings) : null,
    });
    if (values.inactive === true) agent = await setAgentActive(context.store, account.id, agentId, false);
    print(context, describeAgent(agent));
  },
  async list(context, args) {
    parseOptions(args, {});
    const account = await resolveAccount(context);
    const described = (await context.store.agents.list(account.id)).map(describeAgent);
    printList(context, 'agents', described, (agent) => ({
      agent_id: agent.agent_id,
      name: agent.name,
      active: agent.active,
      brain: agent.brain,
      created_at: agent.created_at,
      variables: agent.variables.map((variable) => variable.name),
      prompt: agent.prompt,
    }));
  },
  async show(context, args) {
    const { positionals } = parseOptions(args, {}, ['agent id']);
    const account = await resolveAccount(context);
    const agentId = positionals[0] as string;
    const agent = await context.store.agents.get(account.id, agentId);
    if (!agent) throw new AppError('not_found', `no agent ${agentId.slice(0, 64)} in this account`);
    if (context.json) {
      print(context, describeAgent(agent));
      return;
    }
    const { variables, script, ...rest } = describeAgent(agent);
    print(context, { ...rest, script: script === null ? null : 'yes (use --json to read it)' });
    context.out.stdout(variables.length === 0 ? '\nvariables: none\n' : '\nvariables:\n');
    printTable(
      context,
      variables.map((variable) => ({
        name: variable.name,
        type: variable.type ?? 'any',
        required: variable.required ? 'yes' : 'no',
        default: variable.default == null ? '-' : JSON.stringify(variable.default),
      })),
    );
  },
  async activate(context, args) {
    const { positionals } = parseOptions(args, {}, ['agent id']);
    const account = await resolveAccount(context);
    print(
      context,
      describeAgent(await setAgentActive(context.store, account.id, positionals[0] as string, true)),
    );
  },
  async deactivate(context, args) {
    const { positionals } = parseOptions(args, {}, ['agent id']);
    const account = await resolveAccount(context);
    print(
      context,
      describeAgent(await setAgentActive(context.store, account.id, positionals[0] as string, false)),
    );
  },
};

const numbers: Record<string, Verb> = {
  async add(context, args) {
    const { values, positionals } = parseOptions(args, { route: { type: 'string' } }, ['phone number']);
    const account = await resolveAccount(context);
    const route = (values.route as string | undefined) ?? 'sandbox';
    print(
      context,
      describePhoneNumber(await addPhoneNumber(context.store, account.id, positionals[0] as string, route)),
    );
  },
  async list(context, args) {
    parseOptions(args, {});
    const account = await resolveAccount(context);
    print(context, { numbers: (await context.store.numbers.list(account.id)).map(describePhoneNumber) });
  },
  async remove(context, args) {
    const { positionals } = parseOptions(args, {}, ['phone number']);
    const account = await resolveAccount(context);
    const number = positionals[0] as string;
    await removePhoneNumber(context.store, account.id, number);
    print(context, { number, removed: true });
  },
};

const trunks: Record<string, Verb> = {
  async add(context, args) {
    const { values } = parseOptions(args, {
      name: { type: 'string' },
      uri: { type: 'string' },
      username: { type: 'string' },
      password: { type: 'string' },
      'from-domain': { type: 'string' },
      'tls-ca': { type: 'string' },
      'tls-insecure': { type: 'boolean' },
      'symmetric-rtp': { type: 'boolean' },
      'asserted-identity': { type: 'boolean' },
      privacy: { type: 'boolean' },
      register: { type: 'boolean' },
      'outbound-proxy': { type: 'string' },
      srtp: { type: 'string' },
      'public-address': { type: 'string' },
      'inbound-sources': { type: 'string' },
      'inbound-challenge': { type: 'boolean' },
    });
    const account = await resolveAccount(context);
    const caFile = typeof values['tls-ca'] === 'string' ? values['tls-ca'] : undefined;
    const tlsCaPem = caFile === undefined ? undefined : readTextFile(caFile, 'TLS CA');
    const optional = (name: string) =>
      typeof values[name] === 'string' ? (values[name] as string) : undefined;
    const username = optional('username');
    const password = optional('password');
    const fromDomain = optional('from-domain');
    const trunk = await addTrunk(
      context.store,
      await context.secretBox(),
      account.id,
      {
        name: requiredOption(values, 'name'),
        uri: requiredOption(values, 'uri'),
        ...(username !== undefined ? { username } : {}),
        ...(password !== undefined ? { password } : {}),
        ...(fromDomain !== undefined ? { fromDomain } : {}),
        ...(tlsCaPem !== undefined ? { tlsCaPem } : {}),
        ...(values['tls-insecure'] === true ? { tlsVerify: false } : {}),
        ...(values['symmetric-rtp'] === true ? { symmetricRtp: true } : {}),
        ...(values['asserted-identity'] === true ? { assertedIdentity: true } : {}),
        ...(values.privacy === true ? { privacy: true } : {}),
        ...(values.register === true ? { register: true } : {}),
        ...(typeof values['outbound-proxy'] === 'string' ? { outboundProxy: values['outbound-proxy'] } : {}),
        ...(typeof values.srtp === 'string' ? { srtp: values.srtp } : {}),
        ...(typeof values['public-address'] === 'string' ? { publicAddress: values['public-address'] } : {}),
        ...(values['inbound-challenge'] === true ? { inboundChallenge: true } : {}),
        // Issue 40: the carrier's addresses its inbound INVITEs come from, comma-separated.
        ...(typeof values['inbound-sources'] === 'string'
          ? { inboundSources: values['inbound-sources'].split(',').map((entry) => entry.trim()) }
          : {}),
      },
      { allowPrivate: context.trunkAllowPrivate === true },
    );
    print(context, describeTrunk(trunk));
  },
  async list(context, args) {
    parseOptions(args, {});
    const account = await resolveAccount(context);
    print(context, { trunks: (await context.store.trunks.list(account.id)).map(describeTrunk) });
  },
  async remove(context, args) {
    const { positionals } = parseOptions(args, {}, ['trunk name or id']);
    const account = await resolveAccount(context);
    print(context, {
      ...describeTrunk(await removeTrunk(context.store, account.id, positionals[0] as string)),
      removed: true,
    });
  },
};

/** The administrative verbs, by group. `serve` lives in main.ts: it is not a store edit. */
export const commandGroups: Record<string, Record<string, Verb>> = {
  accounts,
  keys,
  agents,
  numbers,
  trunks,
  calls,
  credentials,
  'do-not-call': doNotCall,
  campaigns,
  privacy,
  'calling-rules': callingRules,
  ...webhookCommandGroups,
  users,
};

export async function runCommand(
  context: CommandContext,
  group: string,
  verb: string | undefined,
  args: string[],
) {
  const verbs = commandGroups[group];
  if (!verbs) {
    const nearest = nearestName(group, [...Object.keys(commandGroups), 'serve', 'test']);
    throw new UsageError(
      `unknown command "${group.slice(0, 40)}"${nearest ? ` (did you mean ${nearest}?)` : ''}`,
    );
  }
  const run = verb ? verbs[verb] : undefined;
  if (!run) {
    const nearest = verb ? nearestName(verb, Object.keys(verbs)) : null;
    throw new UsageError(
      `${group} takes one of: ${Object.keys(verbs).join(', ')}${nearest ? ` (did you mean ${group} ${nearest}?)` : ''}`,
    );
  }
  await run(context, args);
}
