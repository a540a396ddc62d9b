import { Ajv, type ValidateFunction } from 'ajv';
import { ajvLinearRegExp } from './linearPattern.js';
import { isObject, refuse } from './settingsParsing.js';

/**
 * JSON Schemas an agent declares (tool parameters, the analysis data schema): checked once when
 * the agent is saved, used to check what a model produced. One validator, each schema compiled once
 * per schema object (a call's parsed settings hand the same objects to every user).
 */

/** The schemas are the account's: their `pattern`s run on the linear-time engine (linearPattern.ts). */
const validator = new Ajv({ strict: false, allErrors: true, code: { regExp: ajvLinearRegExp } });
const compiled = new WeakMap<object, ValidateFunction>();

function compile(schema: Record<string, unknown>): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = validator.compile(schema);
    compiled.set(schema, validate);
  }
  return validate;
}

/** A JSON Schema of `"type": "object"` of at most `maxBytes` of JSON that compiles; else a 400. */
export function checkObjectSchema(where: string, value: unknown, maxBytes: number): Record<string, unknown> {
  if (!isObject(value) || value.type !== 'object')
    refuse(`${where} must be a JSON Schema of "type": "object"`);
  if (Buffer.byteLength(JSON.stringify(value)) > maxBytes)
    refuse(`${where} must be at most ${maxBytes} bytes of JSON`);
  try {
    compile(value);
  } catch (error) {
    refuse(`${where} is not a valid JSON Schema: ${String((error as Error).message).slice(0, 160)}`);
  }
  return value;
}

/** Why `data` does not fit `schema` (its first three problems, under `root`), or null when it does. */
export function schemaProblems(
  schema: Record<string, unknown>,
  data: unknown,
  root = 'the data',
): string | null {
  let validate: ValidateFunction;
  try {
    validate = compile(schema);
  } catch (error) {
    // A schema stored before its patterns had to run on the linear-time engine: nothing fits it.
    return `${root} cannot be checked: ${String((error as Error).message).slice(0, 160)}`;
  }
  if (validate(data)) return null;
  return (validate.errors ?? [])
    .slice(0, 3)
    .map((problem) => `${problem.instancePath || root} ${problem.message ?? 'is invalid'}`)
    .join('; ');
}
