import { keyForCallsPlacedBy } from '../admin/apiKeys.js';
import { completedEventBuilder } from '../calls/completedEvents.js';
import { createOutboundCall } from '../calls/createOutboundCall.js';
import { cancelThroughStore } from '../calls/remoteCallControl.js';
import { type CallStatus, callStatuses, isTerminal } from '../domain/callStatus.js';
import { AppError } from '../domain/errors.js';
import { isIdOf } from '../domain/ids.js';
import { parseOutboundCallRequest } from '../domain/outboundCallRequest.js';
import type { CallRecord } from '../domain/records.js';
import { toCallResource } from '../presentation/callResource.js';
import {
  type CommandContext,
  parseOptions,
  print,
  requiredOption,
  resolveAccount,
  UsageError,
} from './context.js';
import { maxLineChars, wrapText } from './table.js';

type Verb = (context: CommandContext, args: string[]) => Promise<void>;

/** The key calls placed from the command line are recorded under. */
export const commandLineKeyName = 'Command line calls';

/** `NAME=VALUE`: the value as the JSON it reads as when it is a number or true/false, else text. */
function parseVariable(text: string): [string, string | number | boolean] {
  const at = text.indexOf('=');
  if (at <= 0) throw new UsageError(`--var takes NAME=VALUE, got "${text.slice(0, 60)}"`);
  const name = text.slice(0, at);
  const raw = text.slice(at + 1);
  if (raw === 'true' || raw === 'false') return [name, raw === 'true'];
  if (/^-?[0-9]+(\.[0-9]+)?$/.test(raw) && Number.isFinite(Number(raw))) return [name, Number(raw)];
  return [name, raw];
}

async function callOf(context: CommandContext, callId: string): Promise<CallRecord> {
  const account = await resolveAccount(context);
  const call = isIdOf('call', callId) ? await context.store.calls.get(account.id, callId) : null;
  if (!call) throw new AppError('not_found', `no call ${callId.slice(0, 64)} in this account`);
  return call;
}

function summary(call: CallRecord) {
  const resource = toCallResource(call);
  return {
    call_id: call.id,
    status: call.status,
    end_reason: call.endReason,
    to_number: call.toNumber,
    duration_seconds: resource.duration_seconds,
    created_at: call.createdAt,
  };
}

/**
 * `calls place` goes through the API's own steps (the request's shape and phone format, the agent,
 * the caller ID, the variables) and `createOutboundCall`; only the key and the rate limit, which
 * guard the HTTP door, do not apply to whoever holds the database. A running `serve` dials it.
 */
export const calls: Record<string, Verb> = {
  async place(context, args) {
    const { values } = parseOptions(args, {
      agent: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      'first-message': { type: 'string' },
      context: { type: 'string' },
      var: { type: 'string', multiple: true },
    });
    const variables = Object.fromEntries(((values.var as string[] | undefined) ?? []).map(parseVariable));
    const request = parseOutboundCallRequest({
      agent_id: requiredOption(values, 'agent'),
      from_number: requiredOption(values, 'from'),
      to_number: requiredOption(values, 'to'),
      ...(typeof values['first-message'] === 'string' ? { first_message: values['first-message'] } : {}),
      ...(typeof values.context === 'string' ? { context: values.context } : {}),
      ...(Object.keys(variables).length > 0 ? { variables } : {}),
    });
    const account = await resolveAccount(context);
    const key = await keyForCallsPlacedBy(context.store, account.id, commandLineKeyName);
    const call = await createOutboundCall(context.store, { account, apiKeyId: key.id }, request);
    print(context, summary(call));
    if (!context.json)
      context.out.stderr(
        'Queued: a running `callwright serve` dials it. Follow it with `callwright calls show ID`.\n',
      );
  },
  async list(context, args) {
    const { values } = parseOptions(args, { status: { type: 'string' }, limit: { type: 'string' } });
    const status = values.status as string | undefined;
    if (status !== undefined && !(callStatuses as readonly string[]).includes(status))
      throw new UsageError(`--status must be one of ${callStatuses.join(', ')}`);
    const limitText = (values.limit as string | undefined) ?? '20';
    if (!/^[0-9]{1,3}$/.test(limitText) || Number(limitText) < 1 || Number(limitText) > 100)
      throw new UsageError('--limit must be a whole number from 1 to 100');
    const account = await resolveAccount(context);
    const rows = await context.store.calls.list(account.id, {
      limit: Number(limitText),
      ...(status ? { status: status as CallStatus } : {}),
    });
    print(context, { calls: rows.map(summary) });
  },
  async show(context, args) {
    const { positionals } = parseOptions(args, {}, ['call id']);
    const call = await callOf(context, positionals[0] as string);
    if (context.json) {
      print(context, { ...toCallResource(call), recording_path: call.recordingPath });
      return;
    }
    const resource = toCallResource(call);
    print(context, {
      call_id: call.id,
      status: call.status,
      end_reason: call.endReason,
      answered_by: call.answeredBy,
      agent_id: call.agentId,
      from_number: call.fromNumber,
      to_number: call.toNumber,
      duration_seconds: resource.duration_seconds,
      timeline: resource.timeline.map((entry) => `${entry.status} ${entry.at}`).join(', '),
      extracted_data: call.extractedData,
      recording: call.recordingPath,
    });
    context.out.stdout(call.transcript.length === 0 ? '\n(no transcript)\n' : '\ntranscript:\n');
    // `   3.2 s  agent   text`, the text wrapped under itself.
    const indent = ' '.repeat(18);
    for (const line of call.transcript) {
      const [first, ...rest] = wrapText(line.text.replace(/\s+/g, ' '), maxLineChars - indent.length);
      context.out.stdout(
        `${(line.start_ms / 1000).toFixed(1).padStart(6)} s  ${line.role.padEnd(6)}  ${first}\n`,
      );
      for (const more of rest) context.out.stdout(`${indent}${more}\n`);
    }
  },
  async cancel(context, args) {
    const { positionals } = parseOptions(args, {}, ['call id']);
    const call = await callOf(context, positionals[0] as string);
    if (isTerminal(call.status))
      throw new AppError('conflict', `call ${call.id} has already ended (${call.status})`);
    // Only a queued call is finished here (it has no recording); a live one is hung up by its worker.
    const ended = await cancelThroughStore(
      context.store,
      call,
      completedEventBuilder(() => null),
    );
    print(context, summary(ended ?? call));
  },
};
