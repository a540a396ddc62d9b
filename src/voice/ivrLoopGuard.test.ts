import { describe, expect, it } from 'vitest';
import { IvrLoopGuard } from './ivrLoopGuard.js';

describe('IvrLoopGuard', () => {
  it('trips on the same prompt heard N times, recognised with small differences', () => {
    const guard = new IvrLoopGuard(3);
    expect(guard.note('For sales press one. For support press two.')).toBe(false);
    expect(guard.note('Thank you for calling, please hold.')).toBe(false);
    expect(guard.note('for sales press one for support press to')).toBe(false);
    expect(guard.note('For sales, press one. For support, press two.')).toBe(true);
  });

  it('never counts short answers, and is off at 0', () => {
    const guard = new IvrLoopGuard(2);
    for (let i = 0; i < 5; i++) expect(guard.note('yes that works')).toBe(false);
    const off = new IvrLoopGuard(0);
    for (let i = 0; i < 5; i++) expect(off.note('for sales press one for support press two')).toBe(false);
  });
});
