import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // vitest's default is one fork fewer than the cores: on CI's two cores, one file at a time. Most
    // files wait on the wire (SIP, RTP in real time, child processes), so three at a time cut the
    // run from 34 to ~20 min; every file makes its own ports, data directories and schemas.
    poolOptions: { forks: { minForks: 1, maxForks: 3 } },
    globalSetup: ['./test/postgresGlobalSetup.ts'],
    reporters: ['default', './test/summaryReporter.ts'],
  },
});
