import { variableNamePattern } from './outboundCallRequest.js';
import { isObject, onlyKnownFields, refuse } from './settingsParsing.js';
import type { VariableValue } from './templates.js';

/**
 * How a tool's HTTP request is made and what its answer does to the call (settings.tools[] fields
 * besides name, description, parameters and url): the method, static query parameters, headers
 * (secret values sealed at rest), per-tool credentials, the `response → variables` mapping and the
 * messages said while the tool runs. Pure checks; sealing is done where the agent is saved
 * (src/admin/toolSecrets.ts), opening where the tool is called (src/tools/toolCaller.ts).
 *
 * A secret is stored as `{"sealed": "v1.…"}` and shown as `{"sealed": true}`; sending
 * `{"sealed": true}` back keeps the stored one.
 */

export const toolMethods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type ToolMethod = (typeof toolMethods)[number];

export const toolRequestLimits = {
  headersMax: 20,
  queryMax: 20,
  nameMaxChars: 64,
  valueMaxChars: 1_024,
  responseVariablesMax: 20,
  pathMaxChars: 200,
  pathStepsMax: 12,
  /** The most of one text a mapped variable keeps. */
  variableValueMaxChars: 1_000,
  /** The most indexed into an array by one path step. */
  arrayIndexMax: 999,
} as const;

/** A header value: plain text, or a secret the store keeps sealed (`v1.…`). */
export interface ToolHeader {
  name: string;
  value: string;
  sealed: boolean;
}

/** Per-tool credentials; each secret field is sealed (`v1.…`). */
export type ToolAuth =
  | { type: 'bearer'; token: string }
  | { type: 'basic'; username: string; password: string }
  | { type: 'header'; name: string; value: string };

/** One `variable ← $.path` of `response_variables`. */
export interface ResponseVariable {
  variable: string;
  path: string;
  steps: Array<string | number>;
}

export interface ToolRequestSettings {
  method: ToolMethod;
  query: Record<string, string>;
  headers: ToolHeader[];
  auth: ToolAuth | null;
  responseVariables: ResponseVariable[];
}

/** The secret fields of each kind of auth. */
export const authSecretFields = { bearer: ['token'], basic: ['password'], header: ['value'] } as const;

const headerNamePattern = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/;
/** Printable ASCII and tab: no CR/LF (header injection), no control characters. */
const headerValuePattern = /^[\t\x20-\x7e]*$/;

/**
 * Headers a tool may not set: hop-by-hop headers (RFC 9110 §7.6.1), the ones the request itself
 * sets (Host, length, content type) and the signature callwright vouches for.
 */
export const reservedToolHeaders: ReadonlySet<string> = new Set([
  'host',
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'expect',
  'content-length',
  'content-type',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
]);

/** A sealed value as the store keeps it. */
function isSealedSecret(value: unknown): value is { sealed: string } {
  return isObject(value) && typeof value.sealed === 'string' && value.sealed.startsWith('v1.');
}

function sealedSecret(where: string, value: unknown): string {
  if (!isSealedSecret(value) || Object.keys(value).length !== 1)
    refuse(
      `${where} must be a secret: a text of 1 to ${toolRequestLimits.valueMaxChars} printable characters, ` +
        'or {"sealed": true} to keep the stored one',
    );
  return value.sealed;
}

/** A header (or auth header) name a tool may set. */
export function checkToolHeaderName(where: string, name: string): string {
  if (!headerNamePattern.test(name)) refuse(`${where} must be a header name (1 to 64 token characters)`);
  if (reservedToolHeaders.has(name.toLowerCase()))
    refuse(`${where}: ${name} is set by callwright (hop-by-hop, Host, content or signature header)`);
  return name;
}

/** A plain header or query value: printable, at most valueMaxChars. */
export function checkToolHeaderValue(where: string, value: unknown): string {
  if (
    typeof value !== 'string' ||
    value.length > toolRequestLimits.valueMaxChars ||
    !headerValuePattern.test(value)
  )
    refuse(`${where} must be a text of at most ${toolRequestLimits.valueMaxChars} printable characters`);
  return value;
}

function parseMethod(where: string, raw: unknown): ToolMethod {
  if (raw === undefined) return 'POST';
  if (typeof raw !== 'string' || !(toolMethods as readonly string[]).includes(raw.toUpperCase()))
    refuse(`${where} must be one of ${toolMethods.join(', ')}`);
  return raw.toUpperCase() as ToolMethod;
}

function parseQuery(where: string, raw: unknown): Record<string, string> {
  if (raw === undefined) return {};
  if (!isObject(raw) || Object.keys(raw).length > toolRequestLimits.queryMax)
    refuse(`${where} must map at most ${toolRequestLimits.queryMax} parameter names to values`);
  const query: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (name === '' || name.length > toolRequestLimits.nameMaxChars)
      refuse(`${where} names are 1 to ${toolRequestLimits.nameMaxChars} characters`);
    if (typeof value === 'number' || typeof value === 'boolean') query[name] = String(value);
    else query[name] = checkToolHeaderValue(`${where}.${name.slice(0, 64)}`, value);
  }
  return query;
}

function parseHeaders(where: string, raw: unknown): ToolHeader[] {
  if (raw === undefined) return [];
  if (!isObject(raw) || Object.keys(raw).length > toolRequestLimits.headersMax)
    refuse(`${where} must map at most ${toolRequestLimits.headersMax} header names to values`);
  const seen = new Set<string>();
  return Object.entries(raw).map(([name, value]) => {
    const field = `${where}.${name.slice(0, 64)}`;
    checkToolHeaderName(field, name);
    if (seen.has(name.toLowerCase())) refuse(`${field} is given twice`);
    seen.add(name.toLowerCase());
    if (typeof value === 'string') return { name, value: checkToolHeaderValue(field, value), sealed: false };
    return { name, value: sealedSecret(field, value), sealed: true };
  });
}

function parseAuth(where: string, raw: unknown): ToolAuth | null {
  if (raw === undefined || raw === null) return null;
  if (!isObject(raw)) refuse(`${where} must be an object {"type": "bearer" | "basic" | "header", …}`);
  switch (raw.type) {
    case 'bearer':
      onlyKnownFields(where, raw, ['type', 'token']);
      return { type: 'bearer', token: sealedSecret(`${where}.token`, raw.token) };
    case 'basic': {
      onlyKnownFields(where, raw, ['type', 'username', 'password']);
      const username = checkToolHeaderValue(`${where}.username`, raw.username);
      if (username === '' || username.includes(':'))
        refuse(`${where}.username must be 1 or more printable characters without ":"`);
      return { type: 'basic', username, password: sealedSecret(`${where}.password`, raw.password) };
    }
    case 'header': {
      onlyKnownFields(where, raw, ['type', 'name', 'value']);
      if (typeof raw.name !== 'string') refuse(`${where}.name must be a header name`);
      const name = checkToolHeaderName(`${where}.name`, raw.name);
      return { type: 'header', name, value: sealedSecret(`${where}.value`, raw.value) };
    }
    default:
      refuse(`${where}.type must be "bearer", "basic" or "header"`);
  }
}

/**
 * A response path: `$`, then `.name` or `[index]` steps (`$.delivery.eta`, `$.items[0].sku`). No
 * wildcards, filters or expressions: a path names one value or nothing.
 */
export function parseResponsePath(where: string, raw: unknown): Array<string | number> {
  if (typeof raw !== 'string' || raw.length > toolRequestLimits.pathMaxChars || !raw.startsWith('$'))
    refuse(
      `${where} must be a path like "$.status" or "$.items[0].sku" of at most ${toolRequestLimits.pathMaxChars} characters`,
    );
  const steps: Array<string | number> = [];
  const step = /\.([A-Za-z_][A-Za-z0-9_-]{0,63})|\[([0-9]{1,3})\]/y;
  step.lastIndex = 1;
  while (step.lastIndex < raw.length) {
    const match = step.exec(raw);
    if (!match)
      refuse(
        `${where}: "${raw.slice(0, 60)}" is not a path ($ then .name or [index] steps, e.g. "$.items[0].sku")`,
      );
    steps.push(match[1] ?? Number(match[2]));
  }
  if (steps.length === 0 || steps.length > toolRequestLimits.pathStepsMax)
    refuse(`${where} must have 1 to ${toolRequestLimits.pathStepsMax} steps after $`);
  return steps;
}

function parseResponseVariables(where: string, raw: unknown): ResponseVariable[] {
  if (raw === undefined) return [];
  if (!isObject(raw) || Object.keys(raw).length > toolRequestLimits.responseVariablesMax)
    refuse(`${where} must map at most ${toolRequestLimits.responseVariablesMax} variable names to paths`);
  return Object.entries(raw).map(([variable, path]) => {
    if (!variableNamePattern.test(variable))
      refuse(`${where}: "${variable.slice(0, 64)}" is not a variable name (letters, digits, _)`);
    const field = `${where}.${variable}`;
    return { variable, path: path as string, steps: parseResponsePath(field, path) };
  });
}

/** Checks the request settings of the tool at `where` (`settings.tools[i]`). */
export function checkToolRequestSettings(where: string, raw: Record<string, unknown>): ToolRequestSettings {
  const headers = parseHeaders(`${where}.headers`, raw.headers);
  const auth = parseAuth(`${where}.auth`, raw.auth);
  if (auth) {
    const authHeader = auth.type === 'header' ? auth.name.toLowerCase() : 'authorization';
    if (headers.some((header) => header.name.toLowerCase() === authHeader))
      refuse(`${where}.headers: ${authHeader} is set by ${where}.auth`);
  }
  return {
    method: parseMethod(`${where}.method`, raw.method),
    query: parseQuery(`${where}.query`, raw.query),
    headers,
    auth,
    responseVariables: parseResponseVariables(`${where}.response_variables`, raw.response_variables),
  };
}

/**
 * The value a path names in a tool's JSON answer, as a call variable: a text (cut to
 * variableValueMaxChars), a number or true/false; undefined when the path names nothing, null, an
 * object or a list.
 */
export function valueAtPath(
  answer: unknown,
  steps: ReadonlyArray<string | number>,
): VariableValue | undefined {
  let value: unknown = answer;
  for (const step of steps) {
    if (typeof step === 'number') {
      if (!Array.isArray(value) || step >= value.length) return undefined;
      value = value[step];
    } else {
      if (!isObject(value) || !Object.hasOwn(value, step)) return undefined;
      value = value[step];
    }
  }
  if (typeof value === 'string') return value.slice(0, toolRequestLimits.variableValueMaxChars);
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'boolean') return value;
  return undefined;
}

/** The variables a tool's answer sets, by its `response_variables`. */
export function variablesFromAnswer(
  answer: unknown,
  mapping: readonly ResponseVariable[],
): Record<string, VariableValue> {
  const variables: Record<string, VariableValue> = {};
  for (const { variable, steps } of mapping) {
    const value = valueAtPath(answer, steps);
    if (value !== undefined) variables[variable] = value;
  }
  return variables;
}

/**
 * An agent's settings as they are shown (API, dashboard, command line): every sealed secret of its
 * tools replaced by `{"sealed": true}`. Never the ciphertext either: it is nobody's business.
 */
export function redactToolSecrets(settings: Record<string, unknown>): Record<string, unknown> {
  if (!Array.isArray(settings.tools)) return settings;
  const tools = settings.tools.map((tool: unknown) => {
    if (!isObject(tool)) return tool;
    const shown: Record<string, unknown> = { ...tool };
    if (isObject(tool.headers))
      shown.headers = Object.fromEntries(
        Object.entries(tool.headers).map(([name, value]) => [
          name,
          typeof value === 'string' ? value : { sealed: true },
        ]),
      );
    if (isObject(tool.auth)) {
      const auth: Record<string, unknown> = { ...tool.auth };
      for (const field of ['token', 'password', 'value']) if (field in auth) auth[field] = { sealed: true };
      shown.auth = auth;
    }
    return shown;
  });
  return { ...settings, tools };
}
