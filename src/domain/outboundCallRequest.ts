import { AppError } from './errors.js';
import { isE164 } from './phone.js';
import type { VariableValue } from './templates.js';

/** The body of `POST /v1/calls/outbound` once it has passed DESIGN §1 steps 4 and 5. */
export interface OutboundCallRequest {
  agent_id: string;
  from_number: string;
  to_number: string;
  first_message?: string;
  context?: string;
  variables?: Record<string, VariableValue>;
}

export const outboundCallLimits = {
  idMaxChars: 64,
  firstMessageMaxChars: 2_000,
  contextMaxChars: 10_000,
  variablesMaxKeys: 50,
  variableValueMaxChars: 1_000,
} as const;

export const variableNamePattern = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

const knownFields: ReadonlySet<string> = new Set([
  'agent_id',
  'from_number',
  'to_number',
  'first_message',
  'context',
  'variables',
]);

/** Length in Unicode code points, so an emoji counts as one character. */
export function charCount(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

function exceeds(text: string, maxChars: number): boolean {
  // A UTF-16 length within the limit means the code-point count is too; only long strings are walked.
  return text.length > maxChars && charCount(text) > maxChars;
}

function invalid(message: string): AppError {
  return new AppError('validation_error', message);
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function requiredString(body: Record<string, unknown>, field: string, maxChars: number): string {
  const value = body[field];
  if (value === undefined) throw invalid(`${field} is required`);
  if (typeof value !== 'string') throw invalid(`${field} must be a string`);
  if (value.length === 0) throw invalid(`${field} must not be empty`);
  if (exceeds(value, maxChars)) throw invalid(`${field} must be at most ${maxChars} characters`);
  return value;
}

function optionalString(body: Record<string, unknown>, field: string, maxChars: number): string | undefined {
  const value = body[field];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw invalid(`${field} must be a string`);
  if (exceeds(value, maxChars)) throw invalid(`${field} must be at most ${maxChars} characters`);
  return value;
}

export function parseVariables(value: unknown): Record<string, VariableValue> | undefined {
  if (value === undefined) return undefined;
  if (!isPlainObject(value)) throw invalid('variables must be an object');
  const names = Object.keys(value);
  if (names.length > outboundCallLimits.variablesMaxKeys) {
    throw invalid(`variables must have at most ${outboundCallLimits.variablesMaxKeys} keys`);
  }
  const parsed: Record<string, VariableValue> = {};
  for (const name of names) {
    if (!variableNamePattern.test(name)) {
      throw invalid(`variables: "${name.slice(0, 70)}" is not a valid variable name`);
    }
    const entry = value[name];
    if (typeof entry === 'string') {
      if (exceeds(entry, outboundCallLimits.variableValueMaxChars)) {
        throw invalid(
          `variables.${name} must be at most ${outboundCallLimits.variableValueMaxChars} characters`,
        );
      }
    } else if (typeof entry === 'number') {
      if (!Number.isFinite(entry)) throw invalid(`variables.${name} must be a finite number`);
    } else if (typeof entry !== 'boolean') {
      throw invalid(`variables.${name} must be a string, number or boolean`);
    }
    Object.defineProperty(parsed, name, {
      value: entry,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return parsed;
}

/**
 * DESIGN §1 step 4 (shape: 400 validation_error) and then step 5 (E.164: 422 invalid_phone).
 * Throws the AppError of the first failing rule; never throws anything else.
 */
export function parseOutboundCallRequest(body: unknown): OutboundCallRequest {
  if (!isPlainObject(body)) throw invalid('request body must be a JSON object');
  for (const field of Object.keys(body)) {
    if (!knownFields.has(field)) throw invalid(`unknown field: ${field.slice(0, 70)}`);
  }
  const request: OutboundCallRequest = {
    agent_id: requiredString(body, 'agent_id', outboundCallLimits.idMaxChars),
    // Phone numbers have no length rule of their own: E.164 (step 5) bounds them at 16 characters.
    from_number: requiredString(body, 'from_number', Number.POSITIVE_INFINITY),
    to_number: requiredString(body, 'to_number', Number.POSITIVE_INFINITY),
  };
  const firstMessage = optionalString(body, 'first_message', outboundCallLimits.firstMessageMaxChars);
  if (firstMessage !== undefined) request.first_message = firstMessage;
  const context = optionalString(body, 'context', outboundCallLimits.contextMaxChars);
  if (context !== undefined) request.context = context;
  const variables = parseVariables(body.variables);
  if (variables !== undefined) request.variables = variables;

  for (const field of ['to_number', 'from_number'] as const) {
    if (!isE164(request[field])) {
      throw new AppError('invalid_phone', `${field} must be an E.164 phone number such as +14155550123`);
    }
  }
  return request;
}
