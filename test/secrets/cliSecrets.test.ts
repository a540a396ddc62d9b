import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, runCliJson } from '../helpers/cli.js';
import { dropTestSchema, newTestSchema, testPostgresUrl } from '../helpers/postgres.js';

/**
 * The command line seals what it writes and checks its key against the database before it
 * opens or seals anything: a stray key file (or none, with PostgreSQL) stops it with one line.
 */

const dataDirs: string[] = [];
const schemas: string[] = [];

afterAll(async () => {
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  for (const schema of schemas) await dropTestSchema(schema);
});

function newDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'callwright-cli-secrets-'));
  dataDirs.push(dir);
  return dir;
}

const allowPrivate = { CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE: 'true' };

describe('callwright webhook and the secret key', () => {
  it('embedded: the secret is sealed in the file; another key file stops the CLI with one line', async () => {
    const dataDir = newDataDir();
    const set = await runCliJson(dataDir, ['webhook', 'set', 'http://127.0.0.1:4000/hook'], allowPrivate);
    const secret = String(set.secret);
    expect(secret).toMatch(/^whsec_/);
    const db = new Database(join(dataDir, 'callwright.db'), { readonly: true });
    const stored = db.prepare('SELECT secret FROM webhook_endpoints').pluck().get() as string;
    db.close();
    expect(stored).toMatch(/^v1\./);
    expect(stored).not.toContain(secret.slice(6));
    expect((await runCliJson(dataDir, ['webhook', 'show'])).secret).toBe(secret);

    writeFileSync(join(dataDir, 'secret.key'), randomBytes(32).toString('base64'));
    const refused = await runCli(dataDir, ['webhook', 'show']);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(/^callwright: CALLWRIGHT_SECRET_KEY: .*not the one that sealed/);
  });

  it('PostgreSQL: CALLWRIGHT_SECRET_KEY is required to set a webhook, and then the secret is sealed', async () => {
    const schema = newTestSchema();
    schemas.push(schema);
    const database = { DATABASE_URL: testPostgresUrl(), CALLWRIGHT_DATABASE_SCHEMA: schema, ...allowPrivate };
    const refused = await runCli(newDataDir(), ['webhook', 'set', 'http://127.0.0.1:4000/hook'], database);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^callwright: CALLWRIGHT_SECRET_KEY: is required with DATABASE_URL/);
    const key = { ...database, CALLWRIGHT_SECRET_KEY: Buffer.alloc(32, 5).toString('base64') };
    const set = await runCliJson(newDataDir(), ['webhook', 'set', 'http://127.0.0.1:4000/hook'], key);
    const shown = await runCliJson(newDataDir(), ['webhook', 'show'], key);
    expect(shown.secret).toBe(set.secret);
  });
});
