/** `{{ name }}` placeholders; names follow the variable-name rule. */
const placeholderPattern = /\{\{\s*([A-Za-z_][A-Za-z0-9_]{0,63})\s*\}\}/g;

export type VariableValue = string | number | boolean;

/**
 * Fills a template. A placeholder whose name has no value renders as empty text, as DESIGN §2
 * says for declared variables with no value and no default.
 */
export function renderTemplate(template: string, values: Readonly<Record<string, VariableValue>>): string {
  return template.replace(placeholderPattern, (_match, name: string) => {
    const value = Object.hasOwn(values, name) ? values[name] : undefined;
    return value === undefined ? '' : String(value);
  });
}

/** The names a template refers to, in order of first use. */
export function placeholderNames(template: string): string[] {
  const names = new Set<string>();
  for (const match of template.matchAll(placeholderPattern)) names.add(match[1] as string);
  return [...names];
}
