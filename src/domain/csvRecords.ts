import { parse } from 'csv-parse';

/**
 * Reads CSV text an account uploads (campaign contacts, do-not-call lists) within limits, without
 * holding the event loop: the text is parsed in chunks with a turn of the event loop between them,
 * and a limit is enforced while parsing, so a 40 MB header of millions of columns stops at the
 * first oversized row instead of being split, stored and reported column by column.
 */

export interface CsvLimits {
  /** Records, the header included. */
  recordsMax: number;
  /** Cells in any one record. */
  columnsMax: number;
  /** Characters in any one record (all its cells). */
  rowCharsMax: number;
  /** Characters in any one cell. */
  cellCharsMax: number;
}

export interface CsvRecord {
  record: string[];
  /** The line (1-based) the record ends on. */
  line: number;
}

/** One problem that stops the read, by its line (1 = the first line). */
export interface CsvProblem {
  line: number;
  message: string;
}

export type CsvReadResult = { records: CsvRecord[]; problem: null } | { records: []; problem: CsvProblem };

/** Bytes handed to the parser per turn of the event loop. */
const chunkBytes = 256 * 1024;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Bytes are handed over as bytes (the parser decodes UTF-8 across chunk edges). */
export async function readCsvRecords(input: string | Uint8Array, limits: CsvLimits): Promise<CsvReadResult> {
  const bytes =
    typeof input === 'string'
      ? Buffer.from(input, 'utf8')
      : Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  const parser = parse({
    bom: true,
    relax_column_count: true,
    skip_empty_lines: true,
    trim: true,
    info: true,
    max_record_size: limits.rowCharsMax,
  });
  let failure: CsvProblem | null = null;
  parser.on('error', (error: Error & { code?: string; lines?: number }) => {
    failure ??= {
      line: error.lines ?? 1,
      message:
        error.code === 'CSV_MAX_RECORD_SIZE'
          ? `a row is longer than ${limits.rowCharsMax.toLocaleString('en-US')} characters (the limit of one CSV row)`
          : `the CSV cannot be read: ${error.message.slice(0, 200)}`,
    };
  });
  const records: CsvRecord[] = [];
  const take = () => {
    for (;;) {
      const item = parser.read() as { record: string[]; info: { lines: number } } | null;
      if (item === null || failure) return;
      const { record, info } = item;
      if (records.length >= limits.recordsMax) {
        failure = {
          line: info.lines,
          message: `more than ${(limits.recordsMax - 1).toLocaleString('en-US')} rows (the limit of one file)`,
        };
        return;
      }
      if (record.length > limits.columnsMax) {
        failure = {
          line: info.lines,
          message: `a row has ${record.length} cells; at most ${limits.columnsMax} columns are allowed`,
        };
        return;
      }
      if (record.some((cell) => cell.length > limits.cellCharsMax)) {
        failure = {
          line: info.lines,
          message: `a cell is longer than ${limits.cellCharsMax.toLocaleString('en-US')} characters (the limit of one CSV cell)`,
        };
        return;
      }
      records.push({ record, line: info.lines });
    }
  };
  for (let start = 0; start < bytes.byteLength && !failure; start += chunkBytes) {
    parser.write(bytes.subarray(start, start + chunkBytes));
    take();
    await nextTurn();
  }
  if (!failure) {
    parser.end();
    take();
    await nextTurn();
    take();
  }
  parser.destroy();
  return failure ? { records: [], problem: failure } : { records, problem: null };
}
