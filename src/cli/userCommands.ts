import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { checkPasswordStrength, hashPassword } from '../dashboard/passwords.js';
import { createSetupToken } from '../dashboard/setupToken.js';
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

/** Reads the password: the whole of stdin when piped, or a prompt that does not echo on a terminal. */
async function readPassword(): Promise<string> {
  if (!process.stdin.isTTY) {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk as Buffer));
    return Buffer.concat(chunks)
      .toString('utf8')
      .replace(/\r?\n$/, '');
  }
  let muted = false;
  const output = new Writable({
    write(chunk, _encoding, done) {
      if (!muted) process.stderr.write(chunk);
      done();
    },
  });
  const prompt = createInterface({ input: process.stdin, output, terminal: true });
  const ask = (question: string) =>
    new Promise<string>((resolve) => {
      muted = false;
      process.stderr.write(question);
      muted = true;
      prompt.question('', (answer) => {
        process.stderr.write('\n');
        resolve(answer);
      });
    });
  try {
    const first = await ask('Password: ');
    if ((await ask('Repeat the password: ')) !== first) throw new UsageError('the two passwords differ');
    return first;
  } finally {
    prompt.close();
  }
}

/**
 * `users create`: a person who signs in to the dashboard of one account (the first one too: whoever
 * runs the CLI has the database). `users setup-token`: a one-time token for the first sign-up in
 * the dashboard, printed once.
 */
export const users: Record<string, Verb> = {
  async create(context, args) {
    const { values } = parseOptions(args, { email: { type: 'string' } });
    const email = requiredOption(values, 'email').trim().toLowerCase();
    if (!/^[^\s@]{1,64}@[^\s@]{1,253}$/.test(email)) throw new UsageError('--email must be an email address');
    const account = await resolveAccount(context);
    const password = await readPassword();
    checkPasswordStrength(password);
    const user = await context.store.users.create({
      accountId: account.id,
      email,
      passwordHash: await hashPassword(password),
    });
    print(context, {
      user_id: user.id,
      email: user.email,
      account_id: user.accountId,
      created_at: user.createdAt,
    });
  },
  async list(context, args) {
    parseOptions(args, {});
    const account = await resolveAccount(context);
    const listed = await context.store.users.list(account.id);
    print(context, {
      users: listed.map((user) => ({
        email: user.email,
        user_id: user.id,
        created_at: user.createdAt,
        last_sign_in_at: user.lastSignInAt,
      })),
    });
  },
  async 'reset-password'(context, args) {
    const { values } = parseOptions(args, { email: { type: 'string' } });
    const email = requiredOption(values, 'email').trim().toLowerCase();
    const account = await resolveAccount(context);
    if (!(await context.store.users.list(account.id)).some((user) => user.email === email))
      throw new AppError('not_found', `no user ${email.slice(0, 100)} in this account`);
    const password = await readPassword();
    checkPasswordStrength(password);
    const user = await context.store.users.setPasswordHash(account.id, email, await hashPassword(password));
    if (!user) throw new AppError('not_found', `no user ${email.slice(0, 100)} in this account`);
    print(context, { email: user.email, user_id: user.id, password_reset: true, signed_out: true });
  },
  async remove(context, args) {
    const { values } = parseOptions(args, { email: { type: 'string' } });
    const email = requiredOption(values, 'email').trim().toLowerCase();
    const account = await resolveAccount(context);
    if (!(await context.store.users.remove(account.id, email)))
      throw new AppError('not_found', `no user ${email.slice(0, 100)} in this account`);
    print(context, { email, removed: true });
  },
  async 'setup-token'(context, args) {
    parseOptions(args, {});
    if ((await context.store.users.count()) > 0) {
      throw new AppError(
        'conflict',
        'a dashboard user exists, so sign-up is closed: add users with `callwright users create`',
      );
    }
    const { token, expiresAt } = await createSetupToken(context.store);
    print(context, { setup_token: token, expires_at: expiresAt, sign_up_path: '/sign-up' });
  },
};
