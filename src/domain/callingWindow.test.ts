import { describe, expect, it } from 'vitest';
import { callingWindowOf, callingWindowProblem, isWindowOpen, nextWindowOpening } from './callingWindow.js';

const weekdaysNineToFive = callingWindowOf({ start: '09:00', end: '17:00', weekdays: [1, 2, 3, 4, 5] });
const at = (iso: string) => Date.parse(iso);

describe('calling windows in local time', () => {
  it('opens at 09:00 New York time on both sides of the March DST change', () => {
    // Friday 6 March 2026 is EST (UTC-5); Monday 9 March is EDT (UTC-4).
    expect(isWindowOpen(weekdaysNineToFive, ['America/New_York'], at('2026-03-06T13:59:59Z'))).toBe(false);
    expect(isWindowOpen(weekdaysNineToFive, ['America/New_York'], at('2026-03-06T14:00:00Z'))).toBe(true);
    expect(isWindowOpen(weekdaysNineToFive, ['America/New_York'], at('2026-03-09T12:59:59Z'))).toBe(false);
    expect(isWindowOpen(weekdaysNineToFive, ['America/New_York'], at('2026-03-09T13:00:00Z'))).toBe(true);
    expect(isWindowOpen(weekdaysNineToFive, ['America/New_York'], at('2026-03-09T20:59:59Z'))).toBe(true);
    expect(isWindowOpen(weekdaysNineToFive, ['America/New_York'], at('2026-03-09T21:00:00Z'))).toBe(false);
  });

  it('holds east of UTC across the April DST end in Sydney and in Tokyo, which has none', () => {
    // Sydney leaves AEDT (UTC+11) for AEST (UTC+10) on Sunday 5 April 2026.
    expect(nextWindowOpening(weekdaysNineToFive, ['Australia/Sydney'], at('2026-04-03T07:00:00Z'))).toBe(
      at('2026-04-05T23:00:00Z'),
    );
    expect(isWindowOpen(weekdaysNineToFive, ['Australia/Sydney'], at('2026-04-02T22:00:00Z'))).toBe(true);
    expect(isWindowOpen(weekdaysNineToFive, ['Asia/Tokyo'], at('2026-04-06T00:00:00Z'))).toBe(true);
    expect(isWindowOpen(weekdaysNineToFive, ['Asia/Tokyo'], at('2026-04-06T08:00:00Z'))).toBe(false);
  });

  it('skips the weekend: Friday after hours opens on Monday morning', () => {
    expect(nextWindowOpening(weekdaysNineToFive, ['America/Chicago'], at('2026-11-27T23:30:00Z'))).toBe(
      at('2026-11-30T15:00:00Z'),
    );
  });

  it('takes the most restrictive of several zones: New York and Los Angeles overlap noon to five Eastern', () => {
    const zones = ['America/New_York', 'America/Los_Angeles'];
    expect(isWindowOpen(weekdaysNineToFive, zones, at('2026-06-03T15:00:00Z'))).toBe(false);
    expect(nextWindowOpening(weekdaysNineToFive, zones, at('2026-06-03T13:00:00Z'))).toBe(
      at('2026-06-03T16:00:00Z'),
    );
    expect(isWindowOpen(weekdaysNineToFive, zones, at('2026-06-03T20:59:00Z'))).toBe(true);
    expect(isWindowOpen(weekdaysNineToFive, zones, at('2026-06-03T21:00:00Z'))).toBe(false);
  });

  it('finds no opening when the zones never share the window', () => {
    const hour = callingWindowOf({ start: '09:00', end: '10:00' });
    expect(
      nextWindowOpening(hour, ['Pacific/Kiritimati', 'Pacific/Pago_Pago'], at('2026-06-03T00:00:00Z')),
    ).toBeNull();
  });

  it('runs a window past midnight on the weekday it starts', () => {
    const evening = callingWindowOf({ start: '21:00', end: '08:00', weekdays: [5] });
    // Friday 21:00 Berlin (CET, UTC+1) to Saturday 08:00.
    expect(isWindowOpen(evening, ['Europe/Berlin'], at('2026-11-27T19:59:00Z'))).toBe(false);
    expect(isWindowOpen(evening, ['Europe/Berlin'], at('2026-11-27T20:00:00Z'))).toBe(true);
    expect(isWindowOpen(evening, ['Europe/Berlin'], at('2026-11-28T06:59:00Z'))).toBe(true);
    expect(isWindowOpen(evening, ['Europe/Berlin'], at('2026-11-28T07:00:00Z'))).toBe(false);
    expect(isWindowOpen(evening, ['Europe/Berlin'], at('2026-11-28T20:30:00Z'))).toBe(false);
  });

  it('moves a start inside the spring-forward gap to the first valid instant', () => {
    // 02:30 does not exist in New York on 8 March 2026: clocks go from 02:00 EST to 03:00 EDT.
    const early = callingWindowOf({ start: '02:30', end: '05:00' });
    expect(nextWindowOpening(early, ['America/New_York'], at('2026-03-08T06:00:00Z'))).toBe(
      at('2026-03-08T07:30:00Z'),
    );
  });

  it('rejects malformed windows with a message naming the field', () => {
    expect(callingWindowProblem({ start: '9:00', end: '17:00' })).toMatch(/start/);
    expect(callingWindowProblem({ start: '09:00', end: '24:00' })).toMatch(/end/);
    expect(callingWindowProblem({ start: '09:00', end: '17:00', weekdays: [0] })).toMatch(/weekdays/);
    expect(callingWindowProblem({ start: '09:00', end: '09:00' })).toMatch(/differ/);
    expect(callingWindowProblem({ start: '09:00', end: '17:00', days: [1] })).toMatch(/unknown field days/);
    expect(callingWindowProblem({ start: '09:00', end: '17:00', weekdays: [1, 7] })).toBeNull();
  });
});
