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
