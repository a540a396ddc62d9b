import { AppError } from '../domain/errors.js';
import { isObject } from '../domain/settingsParsing.js';
import { authSecretFields, toolRequestLimits } from '../domain/toolRequests.js';
import type { SecretBox } from '../secrets/secretBox.js';

/**
 * Seals the secrets of an agent's tools before the agent is stored (src/domain/toolRequests.ts):
 * a secret header `{"secret": "…"}` and each secret field of `auth` (a text) become
 * `{"sealed": "v1.…"}`; `{"sealed": true}` (what the API and the dashboard show) keeps the secret
 * the stored agent has for the same tool name and header name (or auth type). Anything else is
 * left for the settings check to refuse.
 */

const printableSecret = /^[\x20-\x7e]+$/;

function refuse(message: string): never {
  throw new AppError('validation_error', message);
}

function sealText(where: string, plain: string, box: SecretBox | null): { sealed: string } {
  if (plain.length === 0 || plain.length > toolRequestLimits.valueMaxChars || !printableSecret.test(plain))
    refuse(`${where} must be a secret of 1 to ${toolRequestLimits.valueMaxChars} printable characters`);
  if (!box) refuse(`${where}: this process cannot seal secrets (no secret key)`);
  return { sealed: box.seal(plain) };
}

function keepStored(where: string, stored: unknown): { sealed: string } {
  if (isObject(stored) && typeof stored.sealed === 'string') return { sealed: stored.sealed };
  refuse(`${where}: there is no stored secret to keep; send the secret itself`);
}

function previousTool(previous: unknown, name: unknown): Record<string, unknown> | undefined {
  const tools = isObject(previous) && Array.isArray(previous.tools) ? previous.tools : [];
  return tools.find((tool: unknown) => isObject(tool) && tool.name === name) as
    | Record<string, unknown>
    | undefined;
}

function storedHeader(tool: Record<string, unknown> | undefined, name: string): unknown {
  if (!tool || !isObject(tool.headers)) return undefined;
  const match = Object.keys(tool.headers).find((key) => key.toLowerCase() === name.toLowerCase());
  return match === undefined ? undefined : tool.headers[match];
}

/**
 * A stored sealed value sent back as it is (settings read from the store and changed elsewhere, as
 * `agents update --voice` does): kept only when it is the stored agent's own, never a ciphertext
 * brought from elsewhere.
 */
function sameAsStored(value: unknown, stored: unknown): boolean {
  return (
    isObject(value) &&
    typeof value.sealed === 'string' &&
    Object.keys(value).length === 1 &&
    isObject(stored) &&
    stored.sealed === value.sealed
  );
}

/** `{"sealed": true}`: the caller asks to keep the stored secret. */
function asksToKeep(value: unknown): boolean {
  return isObject(value) && value.sealed === true && Object.keys(value).length === 1;
}

function sealHeaders(
  where: string,
  headers: Record<string, unknown>,
  before: Record<string, unknown> | undefined,
  box: SecretBox | null,
): Record<string, unknown> {
  const sealed: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers)) {
    const field = `${where}.${name.slice(0, 64)}`;
    if (isObject(value) && typeof value.secret === 'string' && Object.keys(value).length === 1)
      sealed[name] = sealText(field, value.secret, box);
    else if (asksToKeep(value)) sealed[name] = keepStored(field, storedHeader(before, name));
    else if (sameAsStored(value, storedHeader(before, name))) sealed[name] = value;
    else if (isObject(value) && 'sealed' in value)
      refuse(`${field} must be a text, {"secret": "…"} or {"sealed": true}`);
    else sealed[name] = value;
  }
  return sealed;
}

function sealAuth(
  where: string,
  auth: Record<string, unknown>,
  before: Record<string, unknown> | undefined,
  box: SecretBox | null,
): Record<string, unknown> {
  const fields = (authSecretFields as Record<string, readonly string[]>)[String(auth.type)] ?? [];
  const sealed: Record<string, unknown> = { ...auth };
  const storedAuth =
    before && isObject(before.auth) && before.auth.type === auth.type ? before.auth : undefined;
  for (const field of fields) {
    const value = auth[field];
    if (typeof value === 'string') sealed[field] = sealText(`${where}.${field}`, value, box);
    else if (asksToKeep(value)) sealed[field] = keepStored(`${where}.${field}`, storedAuth?.[field]);
    else if (sameAsStored(value, storedAuth?.[field])) sealed[field] = value;
    else if (value !== undefined) refuse(`${where}.${field} must be a text or {"sealed": true}`);
  }
  return sealed;
}

/**
 * The settings with every new secret of their tools sealed and every kept one copied from
 * `previous` (the stored agent's settings; none for a new agent).
 */
export function sealToolSecrets(
  settings: Record<string, unknown> | undefined,
  previous: Record<string, unknown> | undefined,
  box: SecretBox | null,
): Record<string, unknown> | undefined {
  if (!settings || !Array.isArray(settings.tools)) return settings;
  const tools = settings.tools.map((tool: unknown, index: number) => {
    if (!isObject(tool)) return tool;
    const where = `settings.tools[${index}]`;
    const before = previousTool(previous, tool.name);
    const sealed: Record<string, unknown> = { ...tool };
    if (isObject(tool.headers)) sealed.headers = sealHeaders(`${where}.headers`, tool.headers, before, box);
    if (isObject(tool.auth)) sealed.auth = sealAuth(`${where}.auth`, tool.auth, before, box);
    return sealed;
  });
  return { ...settings, tools };
}
