import { AppError } from './errors.js';
import type { AgentVariable, AgentVariableType } from './records.js';
import type { VariableValue } from './templates.js';

/**
 * A call's `variables` against the ones its agent declares, in a fixed order: an undeclared name,
 * then a value of the wrong type, then a required variable with neither a value nor a default.
 * The first problem is the 400 the caller gets; null when there is none.
 */
export function variablesProblem(
  declared: readonly AgentVariable[],
  given: Readonly<Record<string, VariableValue>> | undefined,
): AppError | null {
  const values = given ?? {};
  const byName = new Map(declared.map((variable) => [variable.name, withDefaults(variable)]));
  for (const name of Object.keys(values)) {
    if (!byName.has(name)) return undeclaredVariable(name);
  }
  for (const [name, value] of Object.entries(values)) {
    const type = byName.get(name)?.type ?? 'any';
    if (type !== 'any' && typeof value !== type) {
      return new AppError('validation_error', `variables.${name} must be a ${type}`);
    }
  }
  for (const variable of byName.values()) {
    if (variable.required && variable.default === null && !Object.hasOwn(values, variable.name)) {
      return new AppError('validation_error', `variables.${variable.name} is required by the agent`);
    }
  }
  return null;
}

export function undeclaredVariable(name: string): AppError {
  return new AppError('validation_error', `variables.${name} is not declared by the agent`);
}

/** An agent stored before `required` and `type` existed reads as optional and untyped. */
export function withDefaults(variable: Partial<AgentVariable> & Pick<AgentVariable, 'name'>): AgentVariable {
  return {
    name: variable.name,
    default: variable.default ?? null,
    description: variable.description ?? '',
    required: variable.required ?? false,
    type: variable.type ?? 'any',
  };
}

/** Whether a default (always text) can stand for a value of `type`. */
export function defaultFitsType(defaultText: string, type: AgentVariableType): boolean {
  if (type === 'number') return defaultText.trim() !== '' && Number.isFinite(Number(defaultText));
  if (type === 'boolean') return defaultText === 'true' || defaultText === 'false';
  return true;
}

/**
 * Variables given as text (a form's fields, a CSV's cells) typed by the agent's declarations: a
 * number or boolean variable's text becomes one when it reads as one — otherwise it stays text and
 * the call's own check names the variable and its type. Empty texts are left out (defaults apply).
 */
export function typedVariablesFromText(
  declared: readonly AgentVariable[],
  texts: Readonly<Record<string, string>>,
): Record<string, VariableValue> {
  const types = new Map(declared.map((variable) => [variable.name, variable.type ?? 'any']));
  const variables: Record<string, VariableValue> = {};
  for (const [name, raw] of Object.entries(texts)) {
    const text = raw.trim();
    if (text === '') continue;
    const type = types.get(name);
    let value: VariableValue = text;
    if (type === 'number' && Number.isFinite(Number(text))) value = Number(text);
    else if (type === 'boolean' && (text === 'true' || text === 'false')) value = text === 'true';
    // Defined, not assigned: a name such as __proto__ stays an ordinary (and undeclared) key.
    Object.defineProperty(variables, name, { value, enumerable: true, writable: true, configurable: true });
  }
  return variables;
}
