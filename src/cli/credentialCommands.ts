import { createInterface } from 'node:readline';
import {
  addCredential,
  describeCredential,
  describeCredentialTest,
  removeCredential,
  testCredential,
} from '../admin/credentials.js';
import { AppError } from '../domain/errors.js';
import {
  type CommandContext,
  parseOptions,
  print,
  requiredOption,
  resolveAccount,
  UsageError,
} from './context.js';

type Verb = (context: CommandContext, args: string[]) => Promise<void>;

/** The key from standard input (piped, or typed at a prompt), so it stays out of the shell's history. */
async function readKey(context: CommandContext): Promise<string> {
  if (!process.stdin.isTTY) {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk as Buffer));
    return Buffer.concat(chunks).toString('utf8').trim();
  }
  context.out.stderr('API key (piping it in keeps it off the screen): ');
  const prompt = createInterface({ input: process.stdin, terminal: false });
  try {
    return await new Promise<string>((resolve) => prompt.once('line', (line) => resolve(line.trim())));
  } finally {
    prompt.close();
    context.out.stderr('\n');
  }
}

/** `credentials`: the account's own voice-vendor keys (bring your own key). */
export const credentials: Record<string, Verb> = {
  async add(context, args) {
    const { values } = parseOptions(args, {
      name: { type: 'string' },
      provider: { type: 'string' },
      'base-url': { type: 'string' },
    });
    const name = requiredOption(values, 'name');
    const provider = requiredOption(values, 'provider');
    const account = await resolveAccount(context);
    const apiKey = await readKey(context);
    if (apiKey === '') throw new UsageError('give the API key on standard input');
    const credential = await addCredential(
      context.store,
      await context.secretBox(),
      account.id,
      { name, provider, apiKey, baseUrl: (values['base-url'] as string | undefined) ?? null },
      { allowPrivate: context.providerAllowPrivate === true },
    );
    print(context, describeCredential(credential));
  },
  async list(context, args) {
    parseOptions(args, {});
    const account = await resolveAccount(context);
    print(context, {
      credentials: (await context.store.credentials.list(account.id)).map(describeCredential),
    });
  },
  async remove(context, args) {
    const { positionals } = parseOptions(args, {}, ['credential name or id']);
    const account = await resolveAccount(context);
    const removed = await removeCredential(context.store, account.id, positionals[0] as string);
    print(context, { ...describeCredential(removed), removed: true });
  },
  async test(context, args) {
    const { positionals } = parseOptions(args, {}, ['credential name or id']);
    const account = await resolveAccount(context);
    const { credential, result } = await testCredential(
      context.store,
      await context.secretBox(),
      account.id,
      positionals[0] as string,
      { allowPrivate: context.providerAllowPrivate === true },
    );
    print(context, describeCredentialTest(credential, result));
    if (!result.ok) throw new AppError('unavailable', `the key did not work: ${result.message}`);
  },
};
