import { readCsvRecords } from './csvRecords.js';
import { isE164 } from './phone.js';

/** Limits of one do-not-call CSV import. */
export const doNotCallCsvLimits = {
  rowsMax: 100_000,
  bytesMax: 5 * 1024 * 1024,
  reasonMaxChars: 200,
  columnsMax: 16,
  /** A number and its reason fit; a longer cell is refused while the file is read. */
  cellCharsMax: 1_000,
  rowCharsMax: 4 * 1024,
} as const;

export interface DoNotCallCsvResult {
  /** The numbers to list (each once), with their reasons; empty when any row has a problem. */
  entries: { number: string; reason: string | null }[];
  /** Every row that cannot be taken, by its line number in the file (1 = the first line). */
  problems: { line: number; message: string }[];
}

/**
 * Reads a do-not-call list from CSV: one number per row, E.164, in the first column (a `number`
 * header is allowed), an optional reason in the second. Every row is checked before anything is
 * taken: one bad row and the import takes nothing, and the report names each bad row.
 */
export async function parseDoNotCallCsv(text: string): Promise<DoNotCallCsvResult> {
  const problems: DoNotCallCsvResult['problems'] = [];
  if (Buffer.byteLength(text, 'utf8') > doNotCallCsvLimits.bytesMax)
    return { entries: [], problems: [{ line: 1, message: 'the file is larger than 5 MiB' }] };
  if (text.includes('\uFFFD'))
    return { entries: [], problems: [{ line: 1, message: 'the file is not UTF-8 text' }] };
  const read = await readCsvRecords(text, {
    // A header row may come first.
    recordsMax: doNotCallCsvLimits.rowsMax + 1,
    columnsMax: doNotCallCsvLimits.columnsMax,
    cellCharsMax: doNotCallCsvLimits.cellCharsMax,
    rowCharsMax: doNotCallCsvLimits.rowCharsMax,
  });
  if (read.problem) return { entries: [], problems: [read.problem] };
  const rows = read.records;
  if (rows[0] && /^(number|phone|phone_number|to_number)$/i.test(rows[0].record[0] ?? '')) rows.shift();
  if (rows.length > doNotCallCsvLimits.rowsMax)
    return { entries: [], problems: [{ line: 1, message: `more than ${doNotCallCsvLimits.rowsMax} rows` }] };
  const entries = new Map<string, string | null>();
  for (const { record, line } of rows) {
    const [number = '', reason = ''] = record;
    if (record.length > 2) problems.push({ line, message: 'a row has at most two columns: number, reason' });
    else if (!isE164(number))
      problems.push({ line, message: `"${number.slice(0, 30)}" is not an E.164 number` });
    else if (reason.length > doNotCallCsvLimits.reasonMaxChars)
      problems.push({
        line,
        message: `the reason is longer than ${doNotCallCsvLimits.reasonMaxChars} characters`,
      });
    else if (!entries.has(number)) entries.set(number, reason || null);
  }
  if (rows.length === 0) problems.push({ line: 1, message: 'no numbers in the file' });
  if (problems.length > 0) return { entries: [], problems };
  return { entries: [...entries].map(([number, reason]) => ({ number, reason })), problems };
}
