import { parseArgs } from 'node:util';
import { AppError } from '../domain/errors.js';
import type { AccountRecord } from '../domain/records.js';
import type { RecordingStorage } from '../recordings/recordingStorage.js';
import type { SecretBox } from '../secrets/secretBox.js';
import type { Store } from '../store/types.js';

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
 * objects as aligned `key  value` lines.
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
  const width = Math.max(...Object.keys(value).map((key) => key.length));
  for (const [key, entry] of Object.entries(value)) {
    context.out.stdout(`${key.padEnd(width)}  ${formatValue(entry)}\n`);
  }
}

/** Rows as a table: a header row of the column names, then one aligned line per row. */
export function printTable(context: CommandContext, rows: Record<string, unknown>[]): void {
  if (rows.length === 0) {
    context.out.stdout('(none)\n');
    return;
  }
  const columns = [...new Set(rows.flatMap((row) => Object.keys(row)))];
  const cells = rows.map((row) => columns.map((column) => formatValue(row[column])));
  const widths = columns.map((column, index) =>
    Math.max(column.length, ...cells.map((line) => (line[index] as string).length)),
  );
  const line = (values: string[]) =>
    values
      .map((entry, index) => (index === values.length - 1 ? entry : entry.padEnd(widths[index] as number)))
      .join('  ');
  context.out.stdout(`${line(columns.map((column) => column.toUpperCase()))}\n`);
  for (const row of cells) context.out.stdout(`${line(row)}\n`);
}

function formatValue(value: unknown): string {
  if (value === null || value === undefined) return '-';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}
