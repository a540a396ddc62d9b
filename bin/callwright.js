#!/usr/bin/env node
// The command's entry point. The CLI itself is compiled TypeScript under dist/; in a clone that
// has not been built yet, say what to run instead of failing with a module-not-found trace.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const packageRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
const entry = join(packageRoot, 'dist', 'main.js');
if (existsSync(entry)) {
  await import(entry);
} else {
  process.stderr.write(
    `callwright: not built yet (no ${join('dist', 'main.js')}) — run \`npm run build\` (or \`npm start\`) in ${packageRoot} first\n`,
  );
  process.exitCode = 1;
}
