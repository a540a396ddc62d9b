import { createReadStream } from 'node:fs';
import { chmod, rm, stat, writeFile } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { makePrivateDirectory, privateFileMode } from '../secrets/privateFiles.js';
import type { PgPool } from '../store/postgres/database.js';

/** A stored recording, ready to send. */
export interface StoredRecording {
  sizeBytes: number;
  body: Buffer | Readable;
}

/**
 * Where call recordings live. The embedded mode keeps WAV files in the data directory; the
 * scale-out mode keeps them in PostgreSQL, so any API process can serve a recording that any
 * worker process made.
 */
export interface RecordingStorage {
  /** Stores the WAV of a call; returns its location (what the call record keeps). */
  save(callId: string, wav: Buffer): Promise<string>;
  /** The recording at `location`, or null when it is not there. */
  open(location: string): Promise<StoredRecording | null>;
  /** Deletes the recording at `location` (nothing when it is already gone). */
  remove(location: string): Promise<void>;
}

/** WAV files in a folder of the data directory, private to the service user (0700, files 0600). */
export class FileRecordingStorage implements RecordingStorage {
  constructor(private readonly directory: string) {}

  async save(callId: string, wav: Buffer): Promise<string> {
    makePrivateDirectory(this.directory);
    const path = join(this.directory, `${callId}.wav`);
    await writeFile(path, wav, { mode: privateFileMode });
    // The mode above applies only to a new file, and through the umask: set it exactly.
    await chmod(path, privateFileMode);
    return path;
  }

  async open(location: string): Promise<StoredRecording | null> {
    const path = isAbsolute(location) ? location : resolve(this.directory, location);
    const found = await stat(path).catch(() => null);
    if (!found?.isFile()) return null;
    return { sizeBytes: found.size, body: createReadStream(path) };
  }

  async remove(location: string): Promise<void> {
    const path = isAbsolute(location) ? location : resolve(this.directory, location);
    await rm(path, { force: true });
  }
}

const postgresLocationPrefix = 'postgres:recordings/';

export class PostgresRecordingStorage implements RecordingStorage {
  constructor(private readonly pool: PgPool) {}

  async save(callId: string, wav: Buffer): Promise<string> {
    await this.pool.query(
      `INSERT INTO recordings (call_id, wav, created_at) VALUES ($1, $2, now())
       ON CONFLICT (call_id) DO UPDATE SET wav = EXCLUDED.wav`,
      [callId, wav],
    );
    return `${postgresLocationPrefix}${callId}`;
  }

  async open(location: string): Promise<StoredRecording | null> {
    if (!location.startsWith(postgresLocationPrefix)) return null;
    const { rows } = await this.pool.query<{ wav: Buffer }>('SELECT wav FROM recordings WHERE call_id = $1', [
      location.slice(postgresLocationPrefix.length),
    ]);
    const wav = rows[0]?.wav;
    return wav ? { sizeBytes: wav.length, body: wav } : null;
  }

  async remove(location: string): Promise<void> {
    if (!location.startsWith(postgresLocationPrefix)) return;
    await this.pool.query('DELETE FROM recordings WHERE call_id = $1', [
      location.slice(postgresLocationPrefix.length),
    ]);
  }
}
