import type { CallRecord } from '../domain/records.js';
import type { VariableValue } from '../domain/templates.js';

/** What an agent answering a callback is told of the earlier call (issue 40). */
export interface CallbackBrief {
  /** Appended to the agent's system prompt for this call, like a request's `context`. */
  context: string;
  /** The earlier call's variables (and what its tools set), for the prompt and script templates. */
  variables: Record<string, VariableValue> | null;
}

const maxContextChars = 10_000;

/**
 * The earlier call, told to the agent that answers its callback: when it was, how it ended, its
 * summary and the data extracted from it. The earlier variables come back as this call's, so a
 * script's or prompt's `{{customer_name}}` still renders.
 */
export function callbackBrief(earlier: CallRecord): CallbackBrief {
  const lines = [
    'This caller is calling back: we called them earlier from this number.',
    `Earlier call: ${earlier.createdAt}, ended ${earlier.status}${earlier.endReason ? ` (${earlier.endReason})` : ''}.`,
  ];
  const summary = earlier.analysis?.summary;
  if (summary) lines.push(`Summary of the earlier call: ${summary}`);
  if (Object.keys(earlier.extractedData).length > 0)
    lines.push(`Data gathered on the earlier call: ${JSON.stringify(earlier.extractedData)}`);
  if (earlier.context) lines.push(`Context of the earlier call: ${earlier.context}`);
  return { context: lines.join('\n').slice(0, maxContextChars), variables: earlier.variables };
}
