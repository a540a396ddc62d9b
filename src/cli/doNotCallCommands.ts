import { readFileSync, statSync } from 'node:fs';
import { doNotCallCsvLimits, parseDoNotCallCsv } from '../domain/doNotCallCsv.js';
import { AppError } from '../domain/errors.js';
import { isE164 } from '../domain/phone.js';
import type { DoNotCallEntry } from '../domain/records.js';
import {
  type CommandContext,
  parseOptions,
  print,
  requiredOption,
  resolveAccount,
  UsageError,
} from './context.js';

type Verb = (context: CommandContext, args: string[]) => Promise<void>;

function describe(entry: DoNotCallEntry) {
  return { number: entry.number, reason: entry.reason, source: entry.source, created_at: entry.createdAt };
}

function e164(value: string | undefined): string {
  if (!value || !isE164(value))
    throw new UsageError(`"${(value ?? '').slice(0, 30)}" is not an E.164 number`);
  return value;
}

/** `do-not-call …`: numbers the account never dials. */
export const doNotCall: Record<string, Verb> = {
  async add(context, args) {
    const { values, positionals } = parseOptions(args, { reason: { type: 'string' } }, ['NUMBER']);
    const number = e164(positionals[0]);
    const account = await resolveAccount(context);
    const reason = typeof values.reason === 'string' ? values.reason.slice(0, 200) : null;
    const added = await context.store.doNotCall.add(account.id, [{ number, reason, source: 'cli' }]);
    print(context, { number, added: added === 1 });
  },
  async import(context, args) {
    const { values } = parseOptions(args, { csv: { type: 'string' }, reason: { type: 'string' } });
    const path = requiredOption(values, 'csv');
    let text: string;
    try {
      // The size first: a file over the limit is refused without being read into memory.
      if (statSync(path).size > doNotCallCsvLimits.bytesMax)
        throw new UsageError(
          `${path} is larger than ${doNotCallCsvLimits.bytesMax / 1024 / 1024} MiB (the limit of one do-not-call CSV)`,
        );
      text = readFileSync(path, 'utf8');
    } catch (error) {
      if (error instanceof UsageError) throw error;
      throw new UsageError(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
    }
    const parsed = await parseDoNotCallCsv(text);
    if (parsed.problems.length > 0) {
      const lines = parsed.problems
        .slice(0, 50)
        .map((problem) => `  line ${problem.line}: ${problem.message}`);
      const more = parsed.problems.length > 50 ? [`  … and ${parsed.problems.length - 50} more`] : [];
      throw new AppError(
        'validation_error',
        `nothing was added: ${parsed.problems.length} row(s) need fixing\n${[...lines, ...more].join('\n')}`,
      );
    }
    const account = await resolveAccount(context);
    const reason = typeof values.reason === 'string' ? values.reason.slice(0, 200) : null;
    const added = await context.store.doNotCall.add(
      account.id,
      parsed.entries.map((entry) => ({ ...entry, reason: entry.reason ?? reason, source: 'cli' as const })),
    );
    print(context, { rows: parsed.entries.length, added, already_listed: parsed.entries.length - added });
  },
  async list(context, args) {
    const { values } = parseOptions(args, { limit: { type: 'string' }, after: { type: 'string' } });
    const limit = values.limit === undefined ? 100 : Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1_000) throw new UsageError('--limit is 1 to 1000');
    const after = values.after === undefined ? undefined : e164(values.after as string);
    const account = await resolveAccount(context);
    const entries = await context.store.doNotCall.list(account.id, {
      limit,
      ...(after ? { afterNumber: after } : {}),
    });
    print(context, { numbers: entries.map(describe) });
  },
  async remove(context, args) {
    const { positionals } = parseOptions(args, {}, ['NUMBER']);
    const number = e164(positionals[0]);
    const account = await resolveAccount(context);
    if (!(await context.store.doNotCall.remove(account.id, number)))
      throw new AppError('not_found', `${number} is not on the do-not-call list`);
    print(context, { number, removed: true });
  },
};
