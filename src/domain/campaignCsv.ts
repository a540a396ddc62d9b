import { readCsvRecords } from './csvRecords.js';
import type { RowError } from './errors.js';
import { variableNamePattern } from './outboundCallRequest.js';

/** Limits of one campaign CSV file. */
export const campaignCsvLimits = {
  bytesMax: 32 * 1024 * 1024,
  rowsMax: 100_000,
  /** The four contact columns and up to 50 variables fit. */
  columnsMax: 64,
  /** The longest contact field (`context`) fits. */
  cellCharsMax: 10_000,
  rowCharsMax: 64 * 1024,
} as const;

/** The columns that are contact fields; every other column is a variable of that name. */
const contactColumns = new Set(['to_number', 'first_message', 'context', 'time_zone', 'priority']);

export interface CampaignCsvResult {
  /** Each data row as a contact object (the JSON form), with its line in the file. */
  rows: { line: number; contact: Record<string, unknown> }[];
  /** Problems of the file, its header, or a row's shape; the rows' fields are checked later, as contacts. */
  problems: RowError[];
}

/**
 * Reads campaign contacts from CSV: a header row naming `to_number` and, optionally,
 * `first_message`, `context`, `time_zone`, `priority`, and any variables the agent declares (one column each,
 * named as the variable). An empty cell leaves its field out (a variable's default applies).
 * Values stay text here; the caller types them by the agent's declarations and checks each row
 * as a JSON contact would be checked.
 */
export async function parseCampaignCsv(bytes: Uint8Array): Promise<CampaignCsvResult> {
  const fail = (message: string, line = 1): CampaignCsvResult => ({
    rows: [],
    problems: [{ line, message }],
  });
  if (bytes.byteLength > campaignCsvLimits.bytesMax)
    return fail(`the file is larger than ${campaignCsvLimits.bytesMax / 1024 / 1024} MiB`);
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return fail('the file is not UTF-8 text (save it as "CSV UTF-8")');
  }
  const read = await readCsvRecords(bytes, {
    recordsMax: campaignCsvLimits.rowsMax + 1,
    columnsMax: campaignCsvLimits.columnsMax,
    cellCharsMax: campaignCsvLimits.cellCharsMax,
    rowCharsMax: campaignCsvLimits.rowCharsMax,
  });
  if (read.problem) return { rows: [], problems: [read.problem] };
  const records = read.records.map(({ record, line }) => ({ record, info: { lines: line } }));
  const [header, ...data] = records;
  if (!header) return fail('the file is empty');
  const columns = header.record.map((name) => name.trim());
  if (!columns.includes('to_number')) return fail('the header row must name a to_number column');
  const problems: RowError[] = [];
  const seen = new Set<string>();
  for (const name of columns) {
    if (seen.has(name))
      problems.push({ line: header.info.lines, message: `the column ${name.slice(0, 64)} appears twice` });
    seen.add(name);
    if (!contactColumns.has(name) && !variableNamePattern.test(name))
      problems.push({
        line: header.info.lines,
        message: `"${name.slice(0, 64)}" is not a valid variable name`,
      });
  }
  if (data.length === 0) problems.push({ line: header.info.lines, message: 'no contacts below the header' });
  if (problems.length > 0) return { rows: [], problems };
  const rows: CampaignCsvResult['rows'] = [];
  for (const { record, info } of data) {
    if (record.length > columns.length) {
      problems.push({
        line: info.lines,
        message: `the row has ${record.length} cells; the header names ${columns.length} columns`,
      });
      continue;
    }
    const contact: Record<string, unknown> = {};
    const variables: Record<string, string> = {};
    columns.forEach((name, column) => {
      const text = record[column] ?? '';
      if (text === '') return;
      // A whole number in the priority column is the number (anything else is reported as a contact).
      const value = name === 'priority' && /^-?\d{1,9}$/.test(text.trim()) ? Number(text.trim()) : text;
      // Defined, not assigned: a column named __proto__ stays an ordinary key (and a bad variable).
      Object.defineProperty(contactColumns.has(name) ? contact : variables, name, {
        value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    });
    if (Object.keys(variables).length > 0) contact.variables = variables;
    rows.push({ line: info.lines, contact });
  }
  return { rows, problems };
}
