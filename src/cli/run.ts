import { type Config, ConfigError, loadConfig } from '../config.js';
import { isAppError } from '../domain/errors.js';
import { createLogger, logFormatFor, prettyDestination } from '../logger.js';
import { openConfiguredStore, type ServiceStore } from '../openStore.js';
import { loadSecretBox, type SecretBox } from '../secrets/secretBox.js';
import { checkSecretKey } from '../secrets/secretsAtRest.js';
import { startupErrorOf } from '../startupErrors.js';
import { runCommand } from './commands.js';
import { type CliOutput, UsageError } from './context.js';

export const usage = `Usage: callwright <command> [options]

  serve [--role all|api|worker]            run the service; with DATABASE_URL, api and worker processes apart
  accounts create --name NAME [--rate-limit 100/10s] [--max-live-calls N]
  accounts list
  keys create --name NAME                  prints the key once; store it
  keys list
  keys revoke KEY_ID
  agents create --name N --prompt TEXT [--first-message TEXT] [--variable NAME[=DEFAULT]]... [--inactive]
                [--max-duration SECONDS] [--silence-timeout SECONDS] [--brain script|llm] [--script FILE]
                [--extract NAME:TYPE:DESCRIPTION]... [--voice VOICE] [--llm-model MODEL] [--voicemail-message TEXT]
  agents list | activate AGENT_ID | deactivate AGENT_ID
  numbers add +E164 [--route sandbox|TRUNK]
  numbers list | remove +E164
  trunks add --name N --uri sip:HOST[:PORT] [--username U --password P] [--from-domain D]
  trunks list | remove TRUNK
  users create --email EMAIL              a dashboard user of the account; password from stdin or a prompt
  users setup-token                      a one-time token for the first sign-up in the dashboard
  webhook set URL | show | rotate-secret | disable [--reason TEXT] | enable
  events list [--limit N] [--cursor EVENT_ID] | show EVENT_ID | resend EVENT_ID

Global options: --json (one JSON object on stdout), --account ACCOUNT_ID (default: the default account)
Environment: see the README's Configuration section
`;

/** Pulls the global options out of the argument list, wherever they stand. */
function splitGlobalOptions(argv: string[]) {
  const rest: string[] = [];
  let json = false;
  let help = false;
  let accountId: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--json') json = true;
    else if (arg === '--help' || arg === '-h') help = true;
    else if (arg === '--account') {
      const value = argv[i + 1];
      if (value === undefined || value.startsWith('--'))
        throw new UsageError('--account needs an account id');
      accountId = value;
      i++;
    } else if (arg.startsWith('--account=')) accountId = arg.slice('--account='.length);
    else rest.push(arg);
  }
  return { rest, json, help, accountId };
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** Runs one command line; resolves to the exit status. Errors are one line on stderr. */
export async function runCli(argv: string[], out: CliOutput): Promise<number> {
  let store: ServiceStore | undefined;
  let config: Config | undefined;
  try {
    const { rest, json, help, accountId } = splitGlobalOptions(argv);
    const [group, verb, ...args] = rest;
    if (help || group === undefined || group === 'help') {
      out.stdout(usage);
      return group === undefined && !help ? 2 : 0;
    }
    const loaded = loadConfig();
    config = loaded;
    if (group === 'serve') {
      const serveArgs = [verb, ...args].filter((arg): arg is string => arg !== undefined);
      const roleArg = serveArgs[0] === '--role' ? serveArgs[1] : serveArgs[0]?.replace(/^--role=/, '');
      const expectedArgs = serveArgs[0] === '--role' ? 2 : serveArgs[0]?.startsWith('--role=') ? 1 : 0;
      if (serveArgs.length !== expectedArgs)
        throw new UsageError(`serve takes only --role, got "${serveArgs[0]}"`);
      // Loaded only here: admin verbs should not pay for the HTTP stack at start-up.
      const { serviceRoles, startService } = await import('../server.js');
      const role = serviceRoles.find((candidate) => candidate === (roleArg ?? 'all'));
      if (!role) throw new UsageError(`--role must be one of ${serviceRoles.join(', ')}`);
      const format = logFormatFor(loaded.logFormat, process.stdout.isTTY === true);
      const logger = createLogger(loaded.logLevel, format === 'pretty' ? prettyDestination() : undefined);
      await startService(loaded, logger, {
        handleSignals: true,
        role,
        terminal: process.stderr.isTTY ? out.stderr : null,
      });
      return 0;
    }
    store = await openConfiguredStore(loaded, createLogger('silent'));
    const openedStore = store;
    let checkedBox: Promise<SecretBox> | undefined;
    const secretBox = () => {
      checkedBox ??= (async () => {
        const box = loadSecretBox({
          configuredKeyBase64: loaded.secretKeyBase64,
          dataDir: loaded.dataDir,
          sharedDatabase: loaded.database.url !== null,
          logger: createLogger('warn', process.stderr),
        });
        await checkSecretKey(openedStore, box);
        return box;
      })();
      return checkedBox;
    };
    const webhookAllowPrivate = loaded.webhookAllowPrivate;
    const trunkAllowPrivate = loaded.telephony.trunkAllowPrivate;
    await runCommand(
      { store, json, accountId, out, secretBox, webhookAllowPrivate, trunkAllowPrivate },
      group,
      verb,
      args,
    );
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      out.stderr(`callwright: ${oneLine(error.message)} (see callwright --help)\n`);
      return 2;
    }
    if (error instanceof ConfigError || isAppError(error)) {
      out.stderr(`callwright: ${oneLine(error.message)}\n`);
      return 1;
    }
    // A port taken, a data folder that is a file or not ours: say which setting to change.
    const setting = config ? startupErrorOf(error, config) : null;
    if (setting) {
      out.stderr(`callwright: ${oneLine(setting.message)}\n`);
      return 1;
    }
    out.stderr(`callwright: unexpected error: ${oneLine(String((error as Error)?.message ?? error))}\n`);
    return 1;
  } finally {
    await store?.close();
  }
}
