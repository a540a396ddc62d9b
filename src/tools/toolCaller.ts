import { randomBytes } from 'node:crypto';
import type { AgentTool } from '../domain/agentTools.js';
import { schemaProblems } from '../domain/jsonSchema.js';
import type { VariableValue } from '../domain/templates.js';
import { variablesFromAnswer } from '../domain/toolRequests.js';
import type { Logger } from '../logger.js';
import { deliverOnce } from '../webhooks/httpDelivery.js';
import { webhookHeaders } from '../webhooks/signing.js';
import type { HostnameLookup } from '../webhooks/urlGuard.js';

/**
 * Calls an agent's tools on the customer's server during a call: checks the model's arguments
 * against the tool's schema, POSTs `{call_id, tool, arguments, variables}` signed with the
 * account's webhook secrets in the Standard Webhooks scheme (the customer verifies it with the same
 * code as events), through the same private-address guard, one deadline, a bounded read. Every
 * failure — arguments that do not fit, no secret to sign with, a timeout, a non-2xx answer, a body
 * that is not JSON or too large — comes back as a tool error the model can talk around; nothing
 * throws.
 */

/** The largest answer handed to the model. */
export const toolResultMaxBytes = 16_384;
/** The most of a call or result a transcript entry keeps. */
export const toolTranscriptMaxChars = 1_000;

export type ToolOutcome =
  | { ok: true; result: unknown; status: number; latencyMs: number }
  | { ok: false; error: string; status: number | null; latencyMs: number };

/** One call of a tool as the call's metrics keep it: no arguments, no answer, no URL. */
export interface ToolCallTiming {
  tool: string;
  outcome: 'ok' | 'error';
  /** The tool server's HTTP status; null when none answered (or the call was not made). */
  http_status: number | null;
  started_at: string;
  duration_ms: number;
}

export interface ToolCallerOptions {
  callId: string;
  variables: Readonly<Record<string, VariableValue>>;
  tools: readonly AgentTool[];
  /** The account's active webhook secrets (`whsec_…`), or null when it has no webhook endpoint. */
  signingSecrets: readonly string[] | null;
  allowPrivate: boolean;
  logger: Logger;
  lookup?: HostnameLookup;
  /** Opens a sealed secret of a tool (headers, auth); none: a tool with secrets fails. */
  openSecret?: ((sealed: string) => string) | null;
}

export class ToolCaller {
  /** The call's variables as tools' answers changed them (`response_variables`), sent with each request. */
  private variables: Record<string, VariableValue>;
  /** Only the variables tools' answers set, for the call's record. */
  private readonly mapped: Record<string, VariableValue> = {};
  private readonly made: ToolCallTiming[] = [];

  constructor(private readonly options: ToolCallerOptions) {
    this.variables = { ...options.variables };
  }

  /** The variables the tools' answers set so far (`response_variables`). */
  mappedVariables(): Readonly<Record<string, VariableValue>> {
    return this.mapped;
  }

  get tools(): readonly AgentTool[] {
    return this.options.tools;
  }

  find(name: string): AgentTool | undefined {
    return this.options.tools.find((tool) => tool.name === name);
  }

  private request(tool: AgentTool, args: unknown, secrets: readonly string[]) {
    const made = toolRequest(tool, {
      args,
      callId: this.options.callId,
      variables: this.variables,
      secrets,
      openSecret: this.options.openSecret ?? null,
    });
    if (typeof made === 'string')
      this.options.logger.warn({ tool: tool.name }, "the tool's secrets could not be opened");
    return made;
  }

  /** Each call made so far: when, how long, how it went (`metrics.tool_calls`, the call's `tool` spans). */
  timings(): readonly ToolCallTiming[] {
    return this.made;
  }

  async call(tool: AgentTool, argumentsJson: string): Promise<ToolOutcome> {
    const startedAtMs = Date.now();
    const outcome = await this.attempt(tool, argumentsJson);
    this.made.push({
      tool: tool.name,
      outcome: outcome.ok ? 'ok' : 'error',
      http_status: outcome.status,
      started_at: new Date(startedAtMs).toISOString(),
      duration_ms: Date.now() - startedAtMs,
    });
    return outcome;
  }

  private async attempt(tool: AgentTool, argumentsJson: string): Promise<ToolOutcome> {
    const failed = (error: string, status: number | null = null, latencyMs = 0): ToolOutcome => {
      this.options.logger.info({ tool: tool.name, status, latencyMs, error }, 'tool call failed');
      return { ok: false, error, status, latencyMs };
    };
    let args: unknown;
    try {
      args = argumentsJson.trim() === '' ? {} : JSON.parse(argumentsJson);
    } catch {
      return failed('the arguments are not JSON');
    }
    const problems = schemaProblems(tool.parameters, args, 'arguments');
    if (problems) return failed(`the arguments do not fit the tool's parameters: ${problems}`);
    const secrets = this.options.signingSecrets;
    if (!secrets || secrets.length === 0)
      return failed("the account has no webhook secret to sign the tool's request with");
    const request = this.request(tool, args, secrets);
    if (typeof request === 'string') return failed(request);
    const attempt = await deliverOnce({
      ...request,
      timeoutMs: tool.timeoutMs,
      allowPrivate: this.options.allowPrivate,
      maxResponseBytes: toolResultMaxBytes + 1,
      ...(this.options.lookup ? { lookup: this.options.lookup } : {}),
    });
    if (!attempt.ok) {
      const why =
        attempt.status === null
          ? forTheModel(attempt.error ?? 'no answer')
          : `the tool answered HTTP ${attempt.status}`;
      if (attempt.status === null && why !== attempt.error)
        this.options.logger.warn({ tool: tool.name, error: attempt.error }, 'tool address refused');
      return failed(why, attempt.status, attempt.latencyMs);
    }
    if (Buffer.byteLength(attempt.responseExcerpt) > toolResultMaxBytes)
      return failed(
        `the answer is larger than ${toolResultMaxBytes} bytes`,
        attempt.status,
        attempt.latencyMs,
      );
    // The headers came in time but the body did not finish within timeout_ms (or the connection
    // closed mid-body): a partial answer is no answer.
    if (!attempt.responseComplete)
      return failed(
        `the answer did not arrive in full within ${tool.timeoutMs} ms`,
        attempt.status,
        attempt.latencyMs,
      );
    let result: unknown;
    try {
      result = attempt.responseExcerpt.trim() === '' ? null : JSON.parse(attempt.responseExcerpt);
    } catch {
      return failed('the answer is not JSON', attempt.status, attempt.latencyMs);
    }
    const mapped = variablesFromAnswer(result, tool.responseVariables);
    Object.assign(this.variables, mapped);
    Object.assign(this.mapped, mapped);
    this.options.logger.info(
      {
        tool: tool.name,
        status: attempt.status,
        latencyMs: attempt.latencyMs,
        ...(tool.responseVariables.length > 0 ? { variablesSet: Object.keys(mapped) } : {}),
      },
      'tool called',
    );
    return { ok: true, result, status: attempt.status as number, latencyMs: attempt.latencyMs };
  }
}

/**
 * The tool's request: its method; the arguments as a JSON body `{call_id, tool, arguments,
 * variables}`, or for GET and DELETE as query parameters (with `call_id`) after the tool's static
 * ones (which win); signed in the Standard Webhooks scheme over the body, or over the path and
 * query of a bodyless request; the tool's headers and credentials, opened. A text: why it cannot be
 * made.
 */
function toolRequest(
  tool: AgentTool,
  parts: {
    args: unknown;
    callId: string;
    variables: Readonly<Record<string, VariableValue>>;
    secrets: readonly string[];
    openSecret: ((sealed: string) => string) | null;
  },
): { url: URL; method: AgentTool['method']; body: string; headers: Record<string, string> } | string {
  const url = new URL(tool.url);
  for (const [name, value] of Object.entries(tool.query)) url.searchParams.set(name, value);
  const bodyless = tool.method === 'GET' || tool.method === 'DELETE';
  let body = '';
  if (bodyless) {
    const args = (parts.args ?? {}) as Record<string, unknown>;
    for (const [name, value] of Object.entries(args)) {
      if (Object.hasOwn(tool.query, name) || value === null || value === undefined) continue;
      for (const item of Array.isArray(value) ? value : [value])
        url.searchParams.append(name, typeof item === 'object' ? JSON.stringify(item) : String(item));
    }
    if (!Object.hasOwn(tool.query, 'call_id')) url.searchParams.set('call_id', parts.callId);
  } else {
    body = JSON.stringify({
      call_id: parts.callId,
      tool: tool.name,
      arguments: parts.args,
      variables: parts.variables,
    });
  }
  const id = `tool_${randomBytes(12).toString('hex')}`;
  const signed = bodyless ? `${url.pathname}${url.search}` : body;
  const { 'content-type': contentType, ...signature } = webhookHeaders({
    secrets: parts.secrets,
    id,
    timestampS: Math.floor(Date.now() / 1000),
    body: signed,
  });
  const headers: Record<string, string> = bodyless
    ? signature
    : { ...signature, 'content-type': contentType };
  try {
    const open = (sealed: string) => {
      if (!parts.openSecret) throw new Error('no key to open the secret with');
      return parts.openSecret(sealed);
    };
    for (const header of tool.headers)
      headers[header.name] = header.sealed ? open(header.value) : header.value;
    const auth = tool.auth;
    if (auth?.type === 'bearer') headers.authorization = `Bearer ${open(auth.token)}`;
    if (auth?.type === 'basic')
      headers.authorization = `Basic ${Buffer.from(`${auth.username}:${open(auth.password)}`).toString('base64')}`;
    if (auth?.type === 'header') headers[auth.name] = open(auth.value);
  } catch {
    return "the tool's credentials could not be opened";
  }
  return { url, method: tool.method, body, headers };
}

/**
 * A delivery error as the model reads it: the address guard's advice to the operator (which
 * setting would allow the address) is the operator's, in the log, not the model's or the callee's.
 */
function forTheModel(error: string): string {
  return error.replace(/^webhook URL/, "the tool's URL").replace(/;\s*set [A-Z0-9_]+=\S+ to allow it/g, '');
}

/** What the model reads back: the tool's JSON, or `{"error": …}`. */
export function toolOutcomeForModel(outcome: ToolOutcome): string {
  return JSON.stringify(outcome.ok ? outcome.result : { error: outcome.error });
}

/** The transcript line of a tool call: its name and JSON arguments, cut. */
export function toolCallTranscriptText(name: string, argumentsJson: string): string {
  return toolTranscriptText(`${name} ${argumentsJson || '{}'}`);
}

/** The transcript line of a tool's answer: its JSON, or `error: …`, cut. */
export function toolResultTranscriptText(outcome: ToolOutcome): string {
  return toolTranscriptText(outcome.ok ? toolOutcomeForModel(outcome) : `error: ${outcome.error}`);
}

/** A tool call or result as a transcript line, cut to `toolTranscriptMaxChars`. */
export function toolTranscriptText(text: string): string {
  return text.length > toolTranscriptMaxChars ? `${text.slice(0, toolTranscriptMaxChars - 1)}…` : text;
}
