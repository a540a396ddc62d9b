import { relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

// The counts are taken when the run ends and printed last, after the default reporter's summary.

const SLOWEST_FILES_SHOWN = 15;

/**
 * Ends the run with one plain line, `vitest: N passed, N failed, N skipped`, that tools reading
 * only the last lines of a log can count.
 */
export default class SummaryReporter implements Reporter {
  private line = '';
  private slowest = '';

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    const durations: Array<{ file: string; ms: number }> = [];
    for (const module of testModules) {
      durations.push({ file: relative(process.cwd(), module.moduleId), ms: module.diagnostic().duration });
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
      }
      if (module.state() === 'failed' && [...module.children.allTests()].length === 0) failed++;
    }
    this.line = `vitest: ${passed} passed, ${failed} failed, ${skipped} skipped`;
    durations.sort((a, b) => b.ms - a.ms);
    this.slowest = durations
      .slice(0, SLOWEST_FILES_SHOWN)
      .map(({ file, ms }) => `  ${(ms / 1000).toFixed(1).padStart(7)} s  ${file}`)
      .join('\n');
  }

  onFinished(): void {
    if (!this.line) return;
    // The slowest files first, so a run that grows slower shows where the time went.
    setImmediate(() => process.stdout.write(`\nslowest files:\n${this.slowest}\n\n${this.line}\n`));
  }
}
