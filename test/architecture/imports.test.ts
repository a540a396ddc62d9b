import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/** Where each part of src/ may not reach: the dependency rules of docs/architecture.md. */
const srcDir = join(import.meta.dirname, '..', '..', 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.test.ts') ? [path] : [];
  });
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:import|export)[^'"]*?from\s+['"]([^'"]+)['"]/g)].map((m) => m[1] ?? '');
}

function violations(part: string, forbidden: RegExp): string[] {
  return sourceFiles(join(srcDir, part)).flatMap((file) =>
    importsOf(file)
      .filter((specifier) => forbidden.test(specifier))
      .map((specifier) => `${relative(srcDir, file)} imports ${specifier}`),
  );
}

describe('architecture', () => {
  it('the domain core imports no adapter, no I/O module and no store', () => {
    expect(
      violations(
        'domain',
        /(^|\/)(store|queue|api|calls|telephony|voice|webhooks|dashboard)\/|^node:(fs|net|dgram|http|https|child_process)$/,
      ),
    ).toEqual([]);
  });

  it('the voice pipeline does not import the store', () => {
    expect(violations('voice', /(^|\/)store\//)).toEqual([]);
  });

  it('the dashboard does not reach into the API: what both show comes from presentation/', () => {
    expect(violations('dashboard', /(^|\/)api\//)).toEqual([]);
  });

  it('the job queue does not import the store', () => {
    expect(violations('queue', /(^|\/)store\//)).toEqual([]);
  });

  it('the store imports only the queue port, never a queue implementation (nor pg-boss)', () => {
    expect(violations('store', /(^|\/)queue\/(?!types\.js$)|^pg-boss$/)).toEqual([]);
  });

  it('only src/openStore.ts wires a store to a queue implementation', () => {
    const wiring = [...violations('.', /(^|\/)queue\/(pgBossJobQueue|sqliteJobQueue)\.js$/)];
    expect(wiring.filter((line) => !line.startsWith('queue/'))).toEqual([
      'openStore.ts imports ./queue/pgBossJobQueue.js',
      'openStore.ts imports ./queue/sqliteJobQueue.js',
    ]);
  });

  it('the two store adapters do not import each other', () => {
    expect(violations('store/sqlite', /(^|\/)postgres\//)).toEqual([]);
    expect(violations('store/postgres', /(^|\/)sqlite\//)).toEqual([]);
  });

  it('presentation is pure: records in, resources out', () => {
    expect(
      violations('presentation', /(^|\/)(store|queue|api|dashboard|calls|telephony|voice|webhooks)\/|^node:/),
    ).toEqual([]);
  });

  it('the rule above can fail: the scanner sees imports', () => {
    expect(violations('store', /(^|\/)domain\/records\.js$/).length).toBeGreaterThan(0);
  });
});
