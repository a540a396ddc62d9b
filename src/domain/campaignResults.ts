import type { CallAnalysis } from './callAnalysis.js';
import type { AttemptOutcome, ContactState } from './campaigns.js';

/**
 * The results export of a campaign (issue 37): one row per contact, in list order, with its
 * latest call. Written as CSV (RFC 4180 quoting; cells that a spreadsheet would read as a formula
 * neutralised as OWASP advises) or as JSON Lines.
 */

/** A contact and its latest call, as the store reads them for the export. */
export interface ContactResult {
  contactId: string;
  position: number;
  toNumber: string;
  state: ContactState;
  removed: boolean;
  attempts: number;
  lastOutcome: AttemptOutcome | null;
  lastCall: {
    id: string;
    status: string;
    inProgressAt: string | null;
    endedAt: string | null;
    extractedData: Record<string, unknown> | null;
    analysis: CallAnalysis | null;
    costUsd: number | null;
  } | null;
}

export const resultFormats = ['csv', 'jsonl'] as const;
export type ResultFormat = (typeof resultFormats)[number];
export const resultMediaTypes: Record<ResultFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  jsonl: 'application/jsonl; charset=utf-8',
};

export const resultColumns = [
  'contact_id',
  'to_number',
  'status',
  'last_outcome',
  'attempts',
  'last_call_id',
  'last_call_duration_seconds',
  'extracted_data',
  'summary',
  'success',
  'cost_usd',
] as const;

function durationSeconds(call: NonNullable<ContactResult['lastCall']>): number | null {
  if (!call.inProgressAt || !call.endedAt) return null;
  return Math.round((Date.parse(call.endedAt) - Date.parse(call.inProgressAt)) / 100) / 10;
}

/** One export row: `status` is the contact's state, or `removed` for a contact a live edit removed. */
export function describeResult(result: ContactResult) {
  const call = result.lastCall;
  const extracted = call?.extractedData;
  return {
    contact_id: result.contactId,
    to_number: result.toNumber,
    status: result.removed ? 'removed' : result.state,
    last_outcome: result.lastOutcome,
    attempts: result.attempts,
    last_call_id: call?.id ?? null,
    last_call_duration_seconds: call ? durationSeconds(call) : null,
    extracted_data: extracted && Object.keys(extracted).length > 0 ? extracted : null,
    summary: call?.analysis?.summary ?? null,
    success: call?.analysis?.success?.passed ?? null,
    cost_usd: call?.costUsd ?? null,
  };
}

export type ResultRow = ReturnType<typeof describeResult>;

/** Characters that make a spreadsheet read a cell as a formula (OWASP "CSV Injection"). */
const formulaStarts = new Set(['=', '+', '-', '@', '\t', '\r']);

/**
 * One CSV cell: a text that begins like a formula gets a leading `'` (numbers written by the
 * export itself, e.g. a negative amount, are not text and stay as they are); a cell holding a
 * comma, quote or line break is quoted with its quotes doubled.
 */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  let text: string;
  if (typeof value === 'number' || typeof value === 'boolean') text = String(value);
  else {
    text = typeof value === 'string' ? value : JSON.stringify(value);
    if (formulaStarts.has(text.charAt(0))) text = `'${text}`;
  }
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function csvHeaderLine(): string {
  return `${resultColumns.join(',')}\r\n`;
}

export function csvLine(row: ResultRow): string {
  return `${resultColumns.map((column) => csvCell(row[column])).join(',')}\r\n`;
}

export function jsonLine(row: ResultRow): string {
  return `${JSON.stringify(row)}\n`;
}
