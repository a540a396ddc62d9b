import { describe, expect, it } from 'vitest';
import { BargeInStopWatch } from './bargeInStopWatch.js';

const loud = new Int16Array(160).fill(4000);
const quiet = new Int16Array(160);

describe('BargeInStopWatch', () => {
  it('measures to the end of the last audible frame sent within 200 ms of the decision', () => {
    const watch = new BargeInStopWatch();
    watch.decided(1_000);
    watch.agentFrame(loud, 1_005); // on the wire already: ends at 1,025
    watch.agentFrame(quiet, 1_025);
    watch.agentFrame(quiet, 1_045);
    watch.closeAfterWindow(1_150);
    expect(watch.stopsMs).toEqual([]);
    watch.closeAfterWindow(1_200);
    expect(watch.stopsMs).toEqual([25]);
  });

  it('is 0 when nothing audible followed the decision, and counts a late audible frame', () => {
    const watch = new BargeInStopWatch();
    watch.decided(0);
    watch.agentFrame(quiet, 20);
    watch.close();
    watch.decided(500);
    watch.agentFrame(quiet, 520);
    watch.agentFrame(loud, 640); // audio that should have stopped: ends at 660
    watch.agentFrame(quiet, 700); // the window is over: closes
    watch.agentFrame(loud, 720); // no longer measured
    watch.close();
    expect(watch.stopsMs).toEqual([0, 160]);
  });

  it('notes an open measurement when the next barge-in is decided', () => {
    const watch = new BargeInStopWatch();
    watch.decided(0);
    watch.agentFrame(loud, 10);
    watch.decided(100);
    watch.close();
    expect(watch.stopsMs).toEqual([30, 0]);
  });
});
