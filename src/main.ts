#!/usr/bin/env node
import { runCli } from './cli/run.js';

const exitCode = await runCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
});
if (exitCode !== 0) process.exitCode = exitCode;
