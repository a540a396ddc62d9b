import { type ScriptCallback, scriptCallbackProblem } from '../../domain/callbacks.js';
import { AppError } from '../../domain/errors.js';

/**
 * The `script` brain's dialog graph, stored with the agent as JSON:
 *
 * ```json
 * { "start": "greet",
 *   "nodes": {
 *     "greet": { "say": "Hello {{customer_name}} … Can you make it?",
 *                "listen": [ { "phrases": ["yes", "that works"], "set": { "confirmed": true }, "next": "bye" } ],
 *                "otherwise": "again" },
 *     "bye":   { "say": "Goodbye!", "end": true } } }
 * ```
 *
 * A node may `say` a template, `set` extraction fields, then `end`, go to `next`, or `listen`:
 * wait for the callee and take the first option whose phrases match what was heard (`capture`
 * stores the words themselves; an empty `phrases` list listens free-form), else `otherwise`.
 * `dtmf` maps a key to a node. `interruptible: false` reads the node's `say` in full whatever the
 * callee says over it (a legal disclosure). `send_dtmf` presses keys after the node's `say` (a
 * phone menu). `transfer` hands the call to one of the agent's transfer targets (by name) after
 * the `say`; if the transfer fails the script goes on at `transfer_failed`. `leave_voicemail: true`
 * (a node reached when a machine answered, e.g. by the phrases of a recorded greeting) stops, waits
 * for the beep and leaves the agent's voicemail message, then hangs up. `do_not_call: true` puts the
 * callee's number on the account's do-not-call list (the callee asked to be left alone), after the
 * node's `say`, and the node goes on as it says.
 */
export interface DialogOption {
  phrases: string[];
  next: string;
  set?: Record<string, string | number | boolean>;
  capture?: string;
}

export interface DialogNode {
  say?: string;
  interruptible?: boolean;
  set?: Record<string, string | number | boolean>;
  listen?: DialogOption[];
  otherwise?: string;
  next?: string;
  end?: boolean;
  dtmf?: Record<string, string>;
  send_dtmf?: string;
  transfer?: string;
  transfer_failed?: string;
  leave_voicemail?: boolean;
  do_not_call?: boolean;
  /** A callback the callee asked for, after the node's `say` (campaign calls; docs/campaigns.md). */
  schedule_callback?: ScriptCallback;
}

export interface DialogScript {
  start: string;
  nodes: Record<string, DialogNode>;
}

const maxNodes = 200;
const maxPhrases = 200;

function invalid(message: string): AppError {
  return new AppError('validation_error', `script: ${message}`);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function checkValues(where: string, value: unknown): void {
  if (value === undefined) return;
  if (!isRecord(value)) throw invalid(`${where} must be an object of field values`);
  for (const [field, entry] of Object.entries(value)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(field))
      throw invalid(`${where}: "${field}" is not a field name`);
    if (!['string', 'number', 'boolean'].includes(typeof entry))
      throw invalid(`${where}.${field} must be a string, number or boolean`);
  }
}

/** Checks a script's shape and that every node it names exists; returns it typed. */
export function parseDialogScript(value: unknown): DialogScript {
  if (!isRecord(value)) throw invalid('must be a JSON object with "start" and "nodes"');
  const { start, nodes } = value;
  if (typeof start !== 'string') throw invalid('"start" must name a node');
  if (!isRecord(nodes)) throw invalid('"nodes" must be an object');
  const names = Object.keys(nodes);
  if (names.length === 0 || names.length > maxNodes) throw invalid(`needs 1 to ${maxNodes} nodes`);
  const exists = (name: unknown, where: string) => {
    if (typeof name !== 'string' || !Object.hasOwn(nodes, name))
      throw invalid(`${where} names no node: ${String(name)}`);
  };
  exists(start, 'start');
  for (const [name, raw] of Object.entries(nodes)) {
    if (!isRecord(raw)) throw invalid(`node ${name} must be an object`);
    const node = raw as DialogNode;
    if (node.say !== undefined && (typeof node.say !== 'string' || node.say.length > 2000)) {
      throw invalid(`${name}.say must be a text of at most 2000 characters`);
    }
    if (node.interruptible !== undefined && typeof node.interruptible !== 'boolean')
      throw invalid(`${name}.interruptible must be true or false`);
    checkValues(`${name}.set`, node.set);
    if (node.next !== undefined) exists(node.next, `${name}.next`);
    if (node.otherwise !== undefined) exists(node.otherwise, `${name}.otherwise`);
    for (const [digit, target] of Object.entries(node.dtmf ?? {})) {
      if (!/^[0-9*#A-D]$/.test(digit)) throw invalid(`${name}.dtmf: "${digit}" is not a DTMF key`);
      exists(target, `${name}.dtmf.${digit}`);
    }
    if (
      node.send_dtmf !== undefined &&
      (typeof node.send_dtmf !== 'string' || !/^[0-9*#A-D]{1,32}$/.test(node.send_dtmf))
    )
      throw invalid(`${name}.send_dtmf must be 1 to 32 DTMF keys (0-9 * # A-D)`);
    if (node.transfer !== undefined) {
      if (typeof node.transfer !== 'string' || !/^[a-z][a-z0-9_]{0,31}$/.test(node.transfer))
        throw invalid(`${name}.transfer must name one of the agent's transfer targets`);
      exists(node.transfer_failed, `${name}.transfer_failed`);
    } else if (node.transfer_failed !== undefined) throw invalid(`${name}.transfer_failed needs "transfer"`);
    if (node.do_not_call !== undefined && node.do_not_call !== true)
      throw invalid(`${name}.do_not_call must be true when given`);
    if (node.schedule_callback !== undefined) {
      const problem = scriptCallbackProblem(node.schedule_callback);
      if (problem) throw invalid(`${name}.schedule_callback ${problem}`);
    }
    if (node.leave_voicemail !== undefined && node.leave_voicemail !== true)
      throw invalid(`${name}.leave_voicemail must be true when given`);
    if (node.listen !== undefined) {
      if (!Array.isArray(node.listen) || node.listen.length === 0)
        throw invalid(`${name}.listen must be a list of options`);
      for (const [index, option] of node.listen.entries()) {
        if (!isRecord(option) || !Array.isArray(option.phrases))
          throw invalid(`${name}.listen[${index}] needs "phrases"`);
        if (
          option.phrases.length > maxPhrases ||
          option.phrases.some((phrase) => typeof phrase !== 'string')
        ) {
          throw invalid(`${name}.listen[${index}].phrases must be at most ${maxPhrases} texts`);
        }
        exists(option.next, `${name}.listen[${index}].next`);
        checkValues(`${name}.listen[${index}].set`, option.set);
      }
    }
    const moves = [
      node.end === true,
      node.next !== undefined,
      node.listen !== undefined,
      node.transfer !== undefined,
      node.leave_voicemail === true,
    ].filter(Boolean).length;
    if (moves !== 1)
      throw invalid(
        `node ${name} needs exactly one of "end", "next", "listen", "transfer" or "leave_voicemail"`,
      );
  }
  return value as unknown as DialogScript;
}

/** The transfer targets a script's nodes name, to check against the agent's `settings.transfer`. */
export function scriptTransferTargets(script: DialogScript): string[] {
  return [
    ...new Set(
      Object.values(script.nodes)
        .map((node) => node.transfer)
        .filter((target): target is string => target !== undefined),
    ),
  ];
}

/** Lower case, letters, digits and single spaces: how heard text and phrases are compared. */
export function normalizeSpeech(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9' ]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}
