import { parseArgs } from 'node:util';
import { AppError } from '../domain/errors.js';
import type { AccountRecord } from '../domain/records.js';
import type { RecordingStorage } from '../recordings/recordingStorage.js';
import type { SecretBox } from '../secrets/secretBox.js';
import type { Store } from '../store/types.js';
import { keyValueLines, recordsTable } from './table.js';

/** A usage mistake: printed as one line, exit status 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export interface CliOutput {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

export interface CommandContext {
  store: Store;
  /**
   * The key that seals trunk passwords and webhook secrets, loaded (and checked against the
   * database) only for the verbs that need it.
   */
  secretBox: () => Promise<SecretBox>;
  json: boolean;
  accountId: string | undefined;
  /** Where the store's recordings live (erasure deletes them). */
  recordings?: RecordingStorage;
  out: CliOutput;
  /** CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE: webhook URLs may point at private addresses. */
  webhookAllowPrivate?: boolean;
  /** CALLWRIGHT_TRUNK_ALLOW_PRIVATE: trunks may point at private addresses. */
  trunkAllowPrivate?: boolean;
  /** CALLWRIGHT_PROVIDER_ALLOW_PRIVATE: credential base URLs may point at private addresses. */
  providerAllowPrivate?: boolean;
}

export type OptionSpec = Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }>;

/** Strict option parsing: unknown options and stray arguments are usage errors. */
export function parseOptions(args: string[], options: OptionSpec, positionalNames: string[] = []) {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message.split('\n')[0] ?? 'bad arguments');
  }
  if (parsed.positionals.length > positionalNames.length) {
    throw new UsageError(`unexpected argument "${parsed.positionals[positionalNames.length]}"`);
  }
  if (parsed.positionals.length < positionalNames.length) {
    throw new UsageError(`missing ${positionalNames[parsed.positionals.length]}`);
  }
  return {
    values: parsed.values as Record<string, string | boolean | string[] | undefined>,
    positionals: parsed.positionals,
  };
}

export function requiredOption(values: Record<string, unknown>, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value.length === 0) throw new UsageError(`--${name} is required`);
  return value;
}

/** The account a verb acts on: `--account ID`, or the default account (made on first use). */
export async function resolveAccount(context: CommandContext): Promise<AccountRecord> {
  if (context.accountId === undefined) return context.store.accounts.getOrCreateDefault();
  const account = await context.store.accounts.get(context.accountId);
  if (!account) throw new AppError('not_found', `no account ${context.accountId.slice(0, 64)}`);
  return account;
}

/**
 * Prints one JSON object with --json. For people: a single list as a table with a header row, other
 * objects as aligned `key  value` lines; every line fits 120 columns (src/cli/table.ts).
 */
export function print(context: CommandContext, value: Record<string, unknown>): void {
  if (context.json) {
    context.out.stdout(`${JSON.stringify(value)}\n`);
    return;
  }
  const lists = Object.values(value).filter(Array.isArray);
  if (Object.keys(value).length === 1 && lists.length === 1) {
    printTable(context, lists[0] as Record<string, unknown>[]);
    return;
  }
  for (const line of keyValueLines(value)) context.out.stdout(`${line}\n`);
}

/** Rows as a table: a header row of the column names, then one aligned line per row. */
export function printTable(context: CommandContext, rows: Record<string, unknown>[]): void {
  if (rows.length === 0) {
    context.out.stdout('(none)\n');
    return;
  }
  for (const line of recordsTable(rows)) context.out.stdout(`${line}\n`);
}

/**
 * A list verb's output: with --json the full records as `{"<name>": [...]}` (and `extra`, e.g. a
 * page's cursor); for people a table of the short columns `row` picks from each record.
 */
export function printList<T>(
  context: CommandContext,
  name: string,
  records: T[],
  row: (record: T) => Record<string, unknown>,
  extra: Record<string, unknown> = {},
): void {
  if (context.json) print(context, { [name]: records, ...extra });
  else printTable(context, records.map(row));
}

/** A refused request's message with its bad rows, one per line (the first 50). */
export function withRows(error: AppError): AppError {
  if (!error.rows) return error;
  const lines = error.rows
    .slice(0, 50)
    .map(
      (row) => `  ${row.line !== undefined ? `line ${row.line}` : `contact ${row.index}`}: ${row.message}`,
    );
  const more = error.rows.length > 50 ? [`  … and ${error.rows.length - 50} more`] : [];
  return new AppError(error.code, `${error.message}\n${[...lines, ...more].join('\n')}`);
}
