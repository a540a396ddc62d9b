import { readFileSync } from 'node:fs';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

/**
 * What makes `npm ci` quiet and complete: no locked package refuses the Node we support
 * (EBADENGINE), and every package whose install script must run is named in `allowScripts`
 * (newer npm skips the others silently).
 */

const repoRoot = new URL('../../', import.meta.url).pathname;
const manifest = JSON.parse(readFileSync(`${repoRoot}package.json`, 'utf8')) as {
  engines: { node: string };
  allowScripts?: Record<string, boolean>;
};
const lock = JSON.parse(readFileSync(`${repoRoot}package-lock.json`, 'utf8')) as {
  packages: Record<
    string,
    { engines?: { node?: string } | string[]; hasInstallScript?: boolean; optional?: boolean }
  >;
};

function nameOf(lockPath: string): string {
  return lockPath.slice(lockPath.lastIndexOf('node_modules/') + 'node_modules/'.length);
}

describe('npm hygiene', () => {
  // Optional packages (platform binaries) that refuse a Node are skipped by npm without a warning.
  it('every locked package that is not optional accepts the lowest Node our engines field allows', () => {
    const lowestNode = semver.minVersion(manifest.engines.node)?.version ?? '';
    expect(lowestNode).toMatch(/^20\./);
    const refusing = Object.entries(lock.packages)
      .filter(([path, entry]) => path !== '' && !entry.optional)
      .flatMap(([path, entry]) => {
        const wanted = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
        if (!wanted || semver.satisfies(lowestNode, wanted)) return [];
        return [`${nameOf(path)} wants node ${wanted}`];
      });
    expect(refusing).toEqual([]);
  });

  it('every locked package with an install script is approved or denied in allowScripts', () => {
    const declared = manifest.allowScripts ?? {};
    const undeclared = Object.entries(lock.packages)
      .filter(([path, entry]) => path !== '' && entry.hasInstallScript)
      .map(([path]) => nameOf(path))
      .filter((name) => !(name in declared));
    expect(undeclared).toEqual([]);
  });
});
