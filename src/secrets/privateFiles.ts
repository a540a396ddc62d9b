import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../logger.js';

/**
 * What the data directory holds (the database, the secret key, recordings) is for the service's
 * own user only: folders 0700, files 0600, whatever the umask. Files an earlier version left
 * readable by others are tightened at start; when that fails (another owner, a read-only mount)
 * the service warns and goes on.
 */

export const privateDirectoryMode = 0o700;
export const privateFileMode = 0o600;

/** Creates the folder (and missing parents) as 0700; an existing one is left as it is. */
export function makePrivateDirectory(path: string): void {
  if (existsSync(path)) return;
  mkdirSync(path, { recursive: true, mode: privateDirectoryMode });
  // The mode given to mkdir is filtered by the umask; set it exactly.
  chmodSync(path, privateDirectoryMode);
}

/** Creates an empty file as 0600 unless it exists (so a library that opens it later keeps that mode). */
export function createPrivateFile(path: string): void {
  try {
    closeSync(openSync(path, 'wx', privateFileMode));
    chmodSync(path, privateFileMode);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

/**
 * Takes every group and other permission off `path` if it has any. False when it was already
 * private, missing, or could not be changed (then a warning is logged).
 */
export function tightenToPrivate(path: string, logger: Pick<Logger, 'warn'>): boolean {
  let mode: number;
  try {
    mode = statSync(path).mode & 0o777;
  } catch {
    return false;
  }
  if ((mode & 0o077) === 0) return false;
  try {
    chmodSync(path, mode & ~0o077);
    return true;
  } catch (error) {
    logger.warn(
      { path, mode: mode.toString(8), err: error },
      'cannot make this file private to the service user: others may read it',
    );
    return false;
  }
}

/**
 * At start: the data directory, the SQLite file (and its -wal and -shm), the key file and the
 * recordings become private. Recordings are walked only when their folder was open to others.
 */
export function tightenDataDirectory(
  options: { dataDir: string; sqlitePath: string | null },
  logger: Pick<Logger, 'warn' | 'info'>,
): void {
  const { dataDir, sqlitePath } = options;
  const tightened: string[] = [];
  const tighten = (path: string) => {
    if (tightenToPrivate(path, logger)) tightened.push(path);
  };
  tighten(dataDir);
  if (sqlitePath) for (const suffix of ['', '-wal', '-shm']) tighten(`${sqlitePath}${suffix}`);
  tighten(join(dataDir, 'secret.key'));
  const recordings = join(dataDir, 'recordings');
  if (tightenToPrivate(recordings, logger)) {
    tightened.push(recordings);
    let names: string[] = [];
    try {
      names = readdirSync(recordings);
    } catch (error) {
      logger.warn({ path: recordings, err: error }, 'cannot list the recordings to make them private');
    }
    let files = 0;
    for (const name of names) if (tightenToPrivate(join(recordings, name), logger)) files++;
    if (files > 0) tightened.push(`${files} recording(s)`);
  }
  if (tightened.length > 0) logger.info({ tightened }, 'made data files private to the service user');
}
