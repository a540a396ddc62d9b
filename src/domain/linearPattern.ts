import type { Options } from 'ajv';
import { RE2JS } from 're2js';

/**
 * Regular expressions an account supplies (a scenario's `matches`, a `pattern` or
 * `patternProperties` inside any JSON Schema an account stores) run on RE2's linear-time engine
 * (re2js, a pure-JavaScript port): matching costs time proportional to the text, whatever the
 * pattern, so `^(a+)+$` cannot freeze the process the way it does on V8's backtracking engine.
 *
 * A pattern must be valid for both engines (it is documented as a JavaScript pattern) and use only
 * what RE2 can run in linear time: no backreferences (`\1`, `\k<name>`), no lookahead or
 * lookbehind, repeat counts of at most 1,000. Anything else is refused when it is stored, with the
 * reason, so a check never fails later for a pattern that was accepted.
 */

export const patternMaxLength = 500;

/** What a compiled pattern offers (all Ajv needs of one too). */
export interface RegExpLike {
  test(text: string): boolean;
  toString(): string;
}
type AjvRegExpEngine = NonNullable<NonNullable<Options['code']>['regExp']>;

/** Why `source` cannot be used, or null when it can. */
export function linearPatternProblem(source: string): string | null {
  if (source.length > patternMaxLength) return `is longer than ${patternMaxLength} characters`;
  try {
    new RegExp(source, 'u');
  } catch {
    return 'is not a regular expression';
  }
  if (hasBackreference(source)) return 'uses a backreference, which the linear-time engine does not run';
  try {
    RE2JS.compile(RE2JS.translateRegExp(source));
  } catch (error) {
    const reason = String((error as Error).message)
      .replace(/^error parsing regexp: /, '')
      .slice(0, 120);
    return `cannot run on the linear-time engine (RE2: ${reason}); lookahead, lookbehind and backreferences are not supported`;
  }
  return null;
}

/** `\1`…`\9` or `\k<name>` outside an escaped backslash (translateRegExp would drop the `\k`). */
function hasBackreference(source: string): boolean {
  for (let index = 0; index < source.length - 1; index += 1) {
    if (source[index] !== '\\') continue;
    const next = source[index + 1] ?? '';
    if (next === 'k' || (next >= '1' && next <= '9')) return true;
    index += 1;
  }
  return false;
}

/** A compiled pattern (throws when `linearPatternProblem` says why not). */
export function compileLinearPattern(source: string, options: { ignoreCase?: boolean } = {}): RegExpLike {
  const problem = linearPatternProblem(source);
  if (problem !== null) throw new Error(`the pattern ${problem}`);
  const compiled = RE2JS.compile(
    RE2JS.translateRegExp(source),
    options.ignoreCase ? RE2JS.CASE_INSENSITIVE : 0,
  );
  // Ajv keys its per-validator pattern table by `toString()`: each pattern must name itself, or
  // two patterns of one schema would share the first one's matcher.
  const name = `/${source}/${options.ignoreCase ? 'iu' : 'u'}`;
  return { test: (text: string) => compiled.test(text), toString: () => name };
}

/**
 * The engine for Ajv's `code.regExp` option: every `pattern` and `patternProperties` of a schema
 * compiled by that Ajv instance runs on RE2; a pattern RE2 cannot run makes the compile fail
 * (and so the schema is refused when it is stored).
 */
export const ajvLinearRegExp: AjvRegExpEngine = Object.assign(
  (pattern: string, _flags: string): RegExpLike => compileLinearPattern(pattern),
  { code: 'compileLinearPattern' },
);
