import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseScenario, scenarioJsonSchema } from '../../src/domain/scenarios.js';

/** The published scenario schema is the one the service checks with, and every example fits it. */

const root = resolve(import.meta.dirname, '../..');

describe('docs/scenario.schema.json', () => {
  it('is the schema the service validates scenarios with (regenerate it when this fails)', () => {
    const published = JSON.parse(readFileSync(resolve(root, 'docs/scenario.schema.json'), 'utf8'));
    expect(published).toEqual(JSON.parse(JSON.stringify(scenarioJsonSchema)));
  });

  it('accepts every example scenario', () => {
    const dir = resolve(root, 'examples/scenarios/appointment');
    const files = readdirSync(dir).filter((name) => name.endsWith('.json'));
    expect(files.length).toBeGreaterThanOrEqual(8);
    for (const file of files) {
      expect(() => parseScenario(JSON.parse(readFileSync(resolve(dir, file), 'utf8')), file)).not.toThrow();
    }
  });
});
