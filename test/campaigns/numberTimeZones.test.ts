import { describe, expect, it } from 'vitest';
import { timeZonesOfNumber } from '../../src/campaigns/numberTimeZones.js';

describe("a number's time zones from libphonenumber's metadata", () => {
  it('maps an area code to its zone, east and west of UTC', () => {
    expect(timeZonesOfNumber('+12125550123')).toEqual(['America/New_York']);
    expect(timeZonesOfNumber('+13105550123')).toEqual(['America/Los_Angeles']);
    expect(timeZonesOfNumber('+81312345678')).toEqual(['Asia/Tokyo']);
  });

  it('keeps every zone of a prefix that spans several (the window must hold in all)', () => {
    const alaska = timeZonesOfNumber('+19075550123');
    expect(alaska).toContain('America/Anchorage');
    expect(alaska?.length).toBeGreaterThan(1);
  });

  it('says nothing for a number known only by its multi-zone country (+1 555)', () => {
    expect(timeZonesOfNumber('+15550100001')).toBeNull();
  });
});
