import type { Reporter, TestModule } from 'vitest/node';

// The counts are taken when the run ends and printed last, after the default reporter's summary.

/**
 * Ends the run with one plain line, `vitest: N passed, N failed, N skipped`, that tools reading
 * only the last lines of a log can count.
 */
export default class SummaryReporter implements Reporter {
  private line = '';

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
      }
      if (module.state() === 'failed' && [...module.children.allTests()].length === 0) failed++;
    }
    this.line = `vitest: ${passed} passed, ${failed} failed, ${skipped} skipped`;
  }

  onFinished(): void {
    if (this.line) setImmediate(() => process.stdout.write(`\n${this.line}\n`));
  }
}
