import { existsSync, readFileSync } from 'node:fs';
import { type Config, ConfigError, loadConfig } from '../config.js';
import { isAppError } from '../domain/errors.js';
import { createLogger, logFormatFor, prettyDestination } from '../logger.js';
import { openConfiguredStore, recordingStorageFor, type ServiceStore } from '../openStore.js';
import { loadSecretBox, type SecretBox } from '../secrets/secretBox.js';
import { checkSecretKey } from '../secrets/secretsAtRest.js';
import { startupErrorOf } from '../startupErrors.js';
import { runCommand } from './commands.js';
import { type CliOutput, UsageError } from './context.js';
import { commandHelp, commandUsage, globalUsage, nearestName } from './help.js';

/** The whole usage, as `callwright --help` prints it. */
export const usage = globalUsage();

/** The package's version, read from its package.json (two folders up from src/cli or dist/cli). */
function packageVersion(): string {
  const text = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
  return (JSON.parse(text) as { version: string }).version;
}

/** Pulls the global options out of the argument list, wherever they stand. */
function splitGlobalOptions(argv: string[]) {
  const rest: string[] = [];
  let json = false;
  let help = false;
  let version = false;
  let accountId: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--json') json = true;
    else if (arg === '--help' || arg === '-h') help = true;
    else if (arg === '--version' || arg === '-V') version = true;
    else if (arg === '--account') {
      const value = argv[i + 1];
      if (value === undefined || value.startsWith('--'))
        throw new UsageError('--account needs an account id');
      accountId = value;
      i++;
    } else if (arg.startsWith('--account=')) accountId = arg.slice('--account='.length);
    else rest.push(arg);
  }
  return { rest, json, help, version, accountId };
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** Runs one command line; resolves to the exit status. Errors are one line on stderr. */
export async function runCli(argv: string[], out: CliOutput): Promise<number> {
  let store: ServiceStore | undefined;
  let config: Config | undefined;
  try {
    const { rest, json, help, version, accountId } = splitGlobalOptions(argv);
    const [group, verb, ...args] = rest;
    if (version) {
      out.stdout(
        json ? `${JSON.stringify({ version: packageVersion() })}\n` : `callwright ${packageVersion()}\n`,
      );
      return 0;
    }
    if (group === 'help' || (help && group === undefined)) {
      const topic = group === 'help' ? verb : undefined;
      const text = topic === undefined ? usage : commandUsage(topic, args[0]);
      if (text === null) throw new UsageError(`no command "${[topic, args[0]].filter(Boolean).join(' ')}"`);
      out.stdout(text);
      return 0;
    }
    if (group === undefined) {
      out.stdout(usage);
      return 2;
    }
    if (help) {
      const text = commandUsage(group, group === 'serve' || group === 'test' ? '' : verb);
      if (text === null) {
        const nearest = nearestName(group, Object.keys(commandHelp));
        throw new UsageError(
          `no command "${[group, verb].filter(Boolean).join(' ').slice(0, 60)}"${nearest && nearest !== group ? ` (did you mean ${nearest}?)` : ''}`,
        );
      }
      out.stdout(text);
      return 0;
    }
    if (group === 'test') {
      // A client of a running service over HTTP: no database, no service configuration.
      const { runTestCommand } = await import('./testCommand.js');
      const testArgs = [verb, ...args].filter((arg): arg is string => arg !== undefined);
      return await runTestCommand(testArgs, { json, accountId, out });
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
    // Run from another folder, the default ./data would be a second, empty database: say so.
    if (loaded.database.url === null && !loaded.dataDirChosen && !existsSync(loaded.sqlitePath)) {
      throw new ConfigError(
        'CALLWRIGHT_DATA_DIR',
        `no callwright database in ${loaded.dataDir}: run this in the folder where \`callwright serve\` runs, or set CALLWRIGHT_DATA_DIR to its data folder`,
      );
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
    const providerAllowPrivate = loaded.voice.providerAllowPrivate;
    await runCommand(
      {
        store,
        json,
        accountId,
        out,
        secretBox,
        recordings: recordingStorageFor(store, loaded.dataDir),
        webhookAllowPrivate,
        trunkAllowPrivate,
        providerAllowPrivate,
      },
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
      // One line, or a first line and the refused rows under it (one per line).
      const [first, ...rows] = error.message.split('\n');
      out.stderr(`callwright: ${oneLine(first ?? '')}\n${rows.map((row) => `${row.trimEnd()}\n`).join('')}`);
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
